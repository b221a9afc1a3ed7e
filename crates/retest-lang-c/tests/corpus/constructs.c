/* Every C statement form the front end must handle. */
#include <stdlib.h>
#include <setjmp.h>
#include "constructs.h"

int counter = 0;
static const int table[4] = { 1, 2, 3, 4 };
enum color { RED, GREEN = 5, BLUE };
static jmp_buf env;

void fail(int line)
{
    (void)line;
    exit(3);
}

int loops(int n)
{
    int i, s = 0;
    for (i = 0; i < n; i++) {
        if (i == 3)
            continue;
        if (i > 7)
            break;
        s += i;
    }
    for (;;) {
        if (s > 100) break;
        s *= 2;
    }
    for (int j = n; j; j--)
        s--;
    while (n-- > 0)
        s++;
    do {
        s--;
    } while (s > 10);
    do { } while (0);
    while (1) {
        if (s-- < 0) return s;
    }
}

int choose(int c)
{
    int r = 0;
    switch (c) {
    case 0:
        r = 1;
        /* fall through */
    case 1:
    case 2:
        r += 2;
        break;
    case 3 ... 5:
        r = 3;
        __attribute__((fallthrough));
    case 'x':
        r++;
        break;
    default:
        r = -1;
    }
    switch (c & 3) {
    case 0:
        r *= 2;
        break;
    case 1:
        return r;
    }
    return r;
}

int jumps(int *p, int n)
{
    int i = 0;
again:
    if (i >= n)
        goto out;
    if (p[i] < 0)
        goto fail_;
    i++;
    goto again;
fail_:
    return -1;
out:
    return i;
}

int exprs(int a, int b, int c)
{
    int x = a && b || !c;
    int y = a ? b : c;
    int z = a ?: c;
    int m = MAX(a, b);
    x = (a, b) ? twice(y) : z;
    if (a > 0 && (b < 0 || c == 0))
        x++;
    CHECK(x >= 0);
    if (__builtin_expect(a == b && c, 0))
        x = m;
    ;
    return x + table[c & 3] + GREEN;
}

int dispatch(int op)
{
    static void *targets[] = { &&l_add, &&l_sub };
    int acc = 0;
    goto *targets[op & 1];
l_add:
    acc += 1;
    return acc;
l_sub:
    acc -= 1;
    return acc;
}

int asm_jump(int v)
{
    asm goto ("" : : : : taken);
    return v;
taken:
    return -v;
}

int noreturns(int v)
{
    if (v < 0)
        abort();
    if (v == 0) {
        fail(__LINE__);
    }
    if (setjmp(env) != 0)
        return 1;
    if (v > 1000)
        longjmp(env, 1);
    return v;
}

int empty_forever(void)
{
    for (;;)
        ;
}

pair_t swap(pair_t p)
{
    pair_t q;
    q.a = p.b;
    q.b = p.a;
    counter++;
    return q;
}

int (*pick(int k))(int)
{
    return k ? twice : 0;
}

int callptr(int (*f)(int), int v)
{
    return f(v) + pick(1)(v);
}
