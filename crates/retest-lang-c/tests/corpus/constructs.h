#ifndef CONSTRUCTS_H
#define CONSTRUCTS_H
#define CHECK(x) do { if (!(x)) fail(__LINE__); } while (0)
#define MAX(a, b) ({ int _a = (a), _b = (b); _a > _b ? _a : _b; })
typedef struct pair { int a, b; } pair_t;
extern int counter;
void fail(int line) __attribute__((noreturn));
static inline int twice(int v)
{
    return v * 2;
}
#endif
