/* Test program, TU "B" (hash 16 x 0xB2): 300 edge cells, 8 path cells.
 * Its constructor(101) runs before any default-priority constructor, i.e.
 * before this TU registers: it hits B.edges[0] and records path id 42 of
 * function 1, which must not be lost. */
#include "../../../retest-lang-c/runtime/retest_rt.h"

static unsigned char __retest_e[300];
static unsigned char __retest_p[8];
static struct retest_sect __retest_s[2] = {
    { RETEST_SECT_EDGES, 300, __retest_e },
    { RETEST_SECT_PATHS, 8, __retest_p },
};
static struct retest_tu __retest_tu = {
    RETEST_ABI, 2,
    { 0xB2, 0xB2, 0xB2, 0xB2, 0xB2, 0xB2, 0xB2, 0xB2, 0xB2, 0xB2, 0xB2, 0xB2, 0xB2, 0xB2, 0xB2, 0xB2 },
    __retest_s, 0, 0, 0
};
__attribute__((constructor)) static void __retest_ctor(void) { __retest_register(&__retest_tu); }
__attribute__((destructor)) static void __retest_dtor(void) { __retest_unregister(&__retest_tu); }

__attribute__((constructor(101))) static void early(void)
{
    __retest_e[0] = 1;
    __retest_path_hit(&__retest_tu, 1, 42);
}

void util_hit(int k)
{
    __retest_e[k] = 1;
}

/* Thread t hits edges [1 + 64t, 1 + 64t + 64) and path cell t, and records
 * path ids t * 1000000 + i (i < 3000) of function 2 plus ids 0..999 of
 * function 3, which every thread records: the set must hold each once. */
void util_thread_work(int t)
{
    int round, i;
    for (round = 0; round < 50; round++) {
        for (i = 0; i < 64; i++) {
            __retest_e[1 + 64 * t + i] = 1;
        }
    }
    __retest_p[t] = 1;
    for (i = 0; i < 3000; i++) {
        __retest_path_hit(&__retest_tu, 2, (unsigned long long) t * 1000000ULL + (unsigned long long) i);
        __retest_path_hit(&__retest_tu, 3, (unsigned long long) (i % 1000));
    }
}
