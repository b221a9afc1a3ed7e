/* GNU attributes after declarators, as real code writes them (uthash's
   utarray.h: `static const UT_icd ut_str_icd UTARRAY_UNUSED = {...};`). */
typedef struct { int a, b; } S;
#define UNUSED __attribute__((__unused__))
static const S s1 UNUSED = {1, 2};
static const S s2 __attribute__((unused)) = {3, 4};
static int table[4] __attribute__((aligned(16))), count;
struct packet { char tag; int len __attribute__((aligned(4))); } __attribute__((packed));
void fatal(const char *why) __attribute__((noreturn));

int first(int x)
{
    int local __attribute__((unused)) = x * 2;
    if (x < 0)
        fatal("negative");
    return x + s1.a;
}

int second(int y)
{
    table[0] = y;
    return table[0] + s2.b + count;
}
