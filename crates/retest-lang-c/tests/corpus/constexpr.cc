// Functions that may run while compiling as well as at run time: constexpr
// functions and constructors, a lambda evaluated in a constant expression, a
// consteval function (-DCXX11: the C++11 forms). Run as `./constexpr N`.
#include <cstdio>
#include <cstdlib>

#ifdef CXX11
constexpr int triangle(int n) { return n == 0 ? -1 : n * (n + 1) / 2; }
#else
constexpr int triangle(int n) {
    int s = 0;
    for (int i = 1; i <= n; ++i) {
        if (i % 2 == 0)
            s += i;
        else
            s += i * 1;
    }
    switch (n) {
    case 0:
        return -1;
    default:
        break;
    }
    return s;
}
#endif

struct Point {
    int x, y;
    constexpr Point(int a, int b) : x(a), y(b) {}
    constexpr int sum() const { return x + y; }
};

#ifdef CXX11
int twice(int v) { return 2 * v; }
#else
consteval int twice(int v) { return 2 * v; }
#endif

static_assert(triangle(4) == 10, "folded while compiling");
constexpr Point origin(1, 2);
static_assert(origin.sum() == 3, "");

int main(int argc, char **argv) {
#ifdef CXX11
    const int k = 21;
#else
    constexpr int k = [](int x) { return x * 3; }(7);
#endif
    int n = argc > 1 ? std::atoi(argv[1]) : 3;
    auto add = [n](int v) { return v + n; };
    Point p(n, k);
    std::printf("%d %d %d %d\n", triangle(n), p.sum(), add(twice(5)), k);
    return 0;
}
