/* Exec target, one TU "C" (hash 16 x 0xC3).  C.edges: 0 = ran,
 * 1 = got argv[1] == "exec2-arg", 2 = environment had RT_ENV_TEST=yes.
 * Its descriptor is of ABI version 1, the oldest the runtime takes. */
#include "../../../retest-lang-c/runtime/retest_rt.h"
#include <stdlib.h>
#include <string.h>

static unsigned char __retest_e[16];
static struct retest_sect __retest_s[1] = { { RETEST_SECT_EDGES, 16, __retest_e } };
static struct retest_tu __retest_tu = {
    RETEST_ABI_OLDEST, 1,
    { 0xC3, 0xC3, 0xC3, 0xC3, 0xC3, 0xC3, 0xC3, 0xC3, 0xC3, 0xC3, 0xC3, 0xC3, 0xC3, 0xC3, 0xC3, 0xC3 },
    __retest_s, 0, 0, 0
};
__attribute__((constructor)) static void __retest_ctor(void) { __retest_register(&__retest_tu); }
__attribute__((destructor)) static void __retest_dtor(void) { __retest_unregister(&__retest_tu); }

int main(int argc, char **argv)
{
    const char *env = getenv("RT_ENV_TEST");
    __retest_e[0] = 1;
    if (argc == 2 && strcmp(argv[1], "exec2-arg") == 0) __retest_e[1] = 1;
    if (env != NULL && strcmp(env, "yes") == 0) __retest_e[2] = 1;
    return 0;
}
