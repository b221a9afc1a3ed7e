/* Shared library, TU "D" (hash 16 x 0xD4), loaded with dlopen and unloaded
 * with dlclose before the program exits: its cells must survive in the
 * runtime's shadow.  D.edges: 0 = plugin_run ran, k = plugin_run(k).  Its
 * edge cells are words whose first byte the probe sets, as `retest cc` emits
 * them (RETEST_SECT_EDGE_WORDS); traces hold them as byte edge cells. */
#include "../../../retest-lang-c/runtime/retest_rt.h"

static unsigned char __retest_e[40] __attribute__((aligned(4)));
static struct retest_sect __retest_s[1] = { { RETEST_SECT_EDGE_WORDS, 10, __retest_e } };
static struct retest_tu __retest_tu = {
    RETEST_ABI, 1,
    { 0xD4, 0xD4, 0xD4, 0xD4, 0xD4, 0xD4, 0xD4, 0xD4, 0xD4, 0xD4, 0xD4, 0xD4, 0xD4, 0xD4, 0xD4, 0xD4 },
    __retest_s, 0, 0, 0
};
__attribute__((constructor)) static void __retest_ctor(void) { __retest_register(&__retest_tu); }
__attribute__((destructor)) static void __retest_dtor(void) { __retest_unregister(&__retest_tu); }

int plugin_run(int k)
{
    __retest_e[0] = 1;
    __retest_e[4 * k] = 1;
    __retest_path_hit(&__retest_tu, 2, 77);
    return k;
}
