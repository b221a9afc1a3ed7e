/* GNU C idioms of systems code, written for this corpus: an iterator macro whose
 * loop head holds statement expressions with _Static_assert, _Generic and
 * typeof; a switch inside a statement expression on the right of `&&`; asm
 * qualifier spellings; attributes after a pointer's star. */
struct item { struct item *next; int value; };
struct holder { int tag; struct item link; };

#define read_once(x) (*(const volatile __typeof__(_Generic((x), char: (char)0, default: (x))) *)&(x))
#define owner_of(ptr, type, member) ({ \
    void *p_ = (void *)(ptr); \
    _Static_assert(__builtin_types_compatible_p(__typeof__(*(ptr)), __typeof__(((type *)0)->member)) || \
                   __builtin_types_compatible_p(__typeof__(*(ptr)), __typeof__(void)), "type mismatch"); \
    ((type *)(p_ - __builtin_offsetof(type, member))); })
#define for_each_holder(pos, head) \
    for (pos = owner_of(read_once((head)->next), struct holder, link); \
         &pos->link != (head); \
         pos = owner_of(read_once(pos->link.next), struct holder, link))

int g(int);

int sum_tags(struct item *head)
{
    struct holder *h;
    int total = 0;
    for_each_holder(h, head) {
        do {
            __attribute__((__noreturn__)) extern void never_called(void) __attribute__((__error__("bad size")));
            if (sizeof(h->tag) > 8)
                never_called();
        } while (0);
        total += h->tag;
    }
    return total;
}

int switch_in_rhs(int x)
{
    if (x && g(({ int r; switch (x) { case 1: r = 1; break; default: r = 2; } r; })))
        return 1;
    return 0;
}

int loop_in_rhs(int x)
{
    return x && ({ int r = 0; while (r < x) { if (g(r)) break; r++; } r; });
}

static inline void and_bits(volatile unsigned long *p, unsigned long v)
{
    __asm__ __volatile("" : "=m"(*p) : "r"(v) : "memory");
    __asm__ __inline __volatile__("" ::: "memory");
}

static inline void * __attribute__((__warn_unused_result__)) as_pointer(long v)
{
    return (void *)v;
}

typedef __signed__ char s8;

int after_all(int x) { if (x) return 1; return 0; }
