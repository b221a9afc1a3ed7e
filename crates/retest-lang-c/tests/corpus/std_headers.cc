// Project code after each standard header: tree-sitter-cpp misreads parts of
// some of them (`extern template`, attributes after a namespace's name), and
// the code that follows an `#include` must not be read as part of a header.
#include <utility>
namespace after_utility {
int pick(int x) { if (x > 0) return 1; return 2; }
}
#include <iostream>
namespace after_iostream {
int sign(int x) { return x < 0 ? -1 : x > 0; }
}
#include <sstream>
int after_sstream(int y) {
    std::ostringstream o;
    o << y;
    return static_cast<int>(o.str().size());
}
#include <fstream>
static int after_fstream(const char *path) {
    std::ifstream in(path);
    return in.good() ? 1 : 0;
}
#include <iomanip>
struct AfterIomanip {
    int width(int w) const { return w > 8 ? 8 : w; }
};
#include <vector>
#include <string>
#include <map>
#include <algorithm>
#include <functional>
#include <memory>
#include <cmath>
int after_many(const std::vector<std::string> &v) {
    std::map<std::string, int> m;
    for (const auto &s : v)
        m[s]++;
    auto big = std::count_if(v.begin(), v.end(), [](const std::string &s) { return s.size() > 3; });
    return static_cast<int>(m.size() + big);
}
int main(int argc, char **argv) {
    std::vector<std::string> v(argv, argv + argc);
    std::cout << after_utility::pick(argc) << after_iostream::sign(argc) << after_sstream(argc)
              << after_fstream(argv[0]) << AfterIomanip().width(argc) << after_many(v) << '\n';
    return 0;
}
