// Every C++ statement form the front end models: namespaces, classes,
// constructors with member initialisers, destructors run at scope exits,
// if with an initialiser and with a declaration, if constexpr, range for,
// try/catch/throw, lambdas, templates, operators, coroutines left opaque.
#include <cstddef>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace shapes {
struct Guard {
    explicit Guard(int *c) : count(c) { ++*count; }
    ~Guard() { --*count; }
    int *count;
};

class Base {
public:
    virtual ~Base() {}
    virtual int area() const { return 0; }
};

class Rect : public Base {
public:
    Rect(int w, int h) : width(w), height(h > 0 ? h : 0) {}
    int area() const override { return width * height; }
    bool operator<(const Rect &o) const { return area() < o.area(); }
private:
    int width, height;
};
}  // namespace shapes

int find(const std::vector<int> &v, int key) {
    int live = 0;
    for (int x : v) {
        shapes::Guard g(&live);
        if (x == key)
            return x;
        if (x < 0)
            break;
        if (x == 0)
            continue;
    }
    return -1;
}

int parse(const std::string &s) {
    try {
        if (s.empty())
            throw std::invalid_argument("empty");
        return std::stoi(s);
    } catch (const std::invalid_argument &e) {
        return -1;
    } catch (...) {
        throw;
    }
}

int chooser(int a) {
    if (int b = a * 2; b > 10)
        return b;
    if (int *p = &a)
        return *p + 1;
    return 0;
}

template <typename T> T biggest(const std::vector<T> &v) {
    T best = v.at(0);
    for (const T &x : v)
        if (best < x)
            best = x;
    return best;
}

template <int N> int kind() {
    if constexpr (N > 0)
        return 1;
    else
        return 2;
}

int total(const std::vector<int> &v) {
    int sum = 0;
    auto add = [&sum](int x) { if (x > 0) sum += x; };
    for (int x : v)
        add(x);
    return sum;
}

// GoogleTest's assertions: a switch whose body is a labelled statement
#define CHECK(c) switch (0) case 0: default: if (c) ; else return -__LINE__
#define SHOW(x) #x

int checks(int a) {
    CHECK(a > 0);
    CHECK(a < 100 /* "quoted" in a comment */);
    auto twice = [](int x) { CHECK(x != 7); return x * 2; };
    return twice(a) / 2;
}

enum class Colour { Red, Green, Blue };

int hue(Colour c, int n) {
    switch (c) {
    case Colour::Red: return 1;
    case Colour::Green: return 2;
    default: break;
    }
    switch (int twice = n * 2) {
    case 4: return twice;
    default: return 0;
    }
}

struct Table {
    // a null pointer constant, a braced initialiser and `new T*[n]` as
    // member initialisers
    Table(int n) : rows(NULL), count{n}, cells(new int *[n]) {}
    ~Table() { delete[] cells; }
    int *rows;
    int count;
    int **cells;
};

int main() {
    std::vector<int> v{3, 0, 5, -1};
    shapes::Rect a(2, 3), b(1, 1);
    Table t(3);
    std::printf("%d %d %d %d %d %d\n", find(v, 5), parse("12"), chooser(7),
                biggest(v), kind<1>() + kind<0>(), total(v) + (b < a));
    std::printf("%d %d %d %d %d %s\n", checks(5), checks(-1), checks(500), hue(Colour::Green, 0),
                hue(Colour::Blue, 2) + t.count, SHOW(a /* "x" */ + b));
    return 0;
}
