/* Types where the grammar expects expressions and expressions where it expects
   types, as real code writes them after preprocessing: C11 atomics (GCC's
   <stdatomic.h> declares temporaries with `__typeof__ ((void)0, *ptr)`),
   typeof of an expression, va_arg and offsetof with a type argument, and an
   attribute before the second declarator of a declaration (redismodule.h). */
#include <stdarg.h>
#include <stddef.h>
#include <stdatomic.h>

struct pair { int key; long value; };
static _Atomic long hits;
static const struct pair first_pair = { 1, 2 },
    __attribute__((unused)) second_pair = { 3, 4 };

long bump(long by)
{
    long seen = atomic_load_explicit(&hits, memory_order_relaxed);
    if (seen > 100)
        atomic_store_explicit(&hits, 0, memory_order_relaxed);
    else
        atomic_fetch_add_explicit(&hits, by, memory_order_relaxed);
    return seen;
}

int count_until_zero(int n, ...)
{
    va_list ap;
    int k = 0;
    va_start(ap, n);
    while (k < n && va_arg(ap, unsigned int) != 0)
        k++;
    if (va_arg(ap, char *) == NULL)
        k = -k;
    va_end(ap);
    return k;
}

int last_is_set(int n, ...)
{
    va_list ap;
    char **last = NULL;
    va_start(ap, n);
    while (n-- > 0)
        last = va_arg(ap, char **);
    va_end(ap);
    return last != NULL;
}

size_t where(int which)
{
    if (which == 0 || offsetof(struct pair, value) > 16)
        return offsetof(struct pair, key);
    return offsetof(struct pair, value);
}

int twice(int *p)
{
    typeof(*p) copy = *p;
    __typeof__ (copy + 1) sum = copy + copy;
    __typeof__((void)0, *p) tmp = sum;
    return tmp > 0 ? tmp : (int)sizeof(typeof(*p));
}
