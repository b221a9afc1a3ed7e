/* Test program, TU "A" (hash 16 x 0xA1): main() and the scenarios.
 * Instrumented by hand exactly as the instrumenter would: static cells, a
 * static descriptor, a constructor that registers, a destructor that
 * unregisters.  A.edges[k] = 1 marks "scenario step k ran".
 * Usage: prog <scenario> [args...]; see the table in main(). */
#define _GNU_SOURCE 1
#include "../../../retest-lang-c/runtime/retest_rt.h"
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static unsigned char __retest_e[64];
static unsigned char __retest_m[4];
static struct retest_sect __retest_s[2] = {
    { RETEST_SECT_EDGES, 64, __retest_e },
    { RETEST_SECT_MCDC, 4, __retest_m },
};
static struct retest_tu __retest_tu = {
    RETEST_ABI, 2,
    { 0xA1, 0xA1, 0xA1, 0xA1, 0xA1, 0xA1, 0xA1, 0xA1, 0xA1, 0xA1, 0xA1, 0xA1, 0xA1, 0xA1, 0xA1, 0xA1 },
    __retest_s, 0, 0, 0
};
__attribute__((constructor)) static void __retest_ctor(void) { __retest_register(&__retest_tu); }
__attribute__((destructor)) static void __retest_dtor(void) { __retest_unregister(&__retest_tu); }

#define E(k) (__retest_e[k] = 1)

/* TU "B" (util_tu.c) */
void util_hit(int k);
void util_thread_work(int t);

static char *const *exec_env(void)
{
    static char dir[4200];
    static char *env[3];
    snprintf(dir, sizeof dir, "RETEST_TRACE_DIR=%s", getenv("RETEST_TRACE_DIR") ? getenv("RETEST_TRACE_DIR") : "");
    env[0] = "RT_ENV_TEST=yes";
    env[1] = dir;
    env[2] = NULL;
    return env;
}

/* An environment without RETEST_TRACE_DIR: the runtime must add it back. */
static char *const *exec_env_bare(void)
{
    static char *env[2];
    env[0] = "RT_ENV_TEST=yes";
    env[1] = NULL;
    return env;
}

/* exec <variant> <abs path> <name for PATH search> */
static int do_exec(const char *variant, const char *path, const char *name)
{
    char *argv[] = { (char *) "prog2", (char *) "exec2-arg", NULL };
    if (strcmp(variant, "v") == 0) execv(path, argv);
    else if (strcmp(variant, "ve") == 0) execve(path, argv, exec_env());
    else if (strcmp(variant, "ve0") == 0) execve(path, argv, exec_env_bare());
    else if (strcmp(variant, "vp") == 0) execvp(name, argv);
    else if (strcmp(variant, "vpe") == 0) execvpe(name, argv, exec_env());
    else if (strcmp(variant, "l") == 0) execl(path, "prog2", "exec2-arg", (char *) NULL);
    else if (strcmp(variant, "lp") == 0) execlp(name, "prog2", "exec2-arg", (char *) NULL);
    else if (strcmp(variant, "le") == 0) execle(path, "prog2", "exec2-arg", (char *) NULL, exec_env());
    else if (strcmp(variant, "f") == 0) {
        int fd = open(path, O_RDONLY);
        if (fd >= 0) fexecve(fd, argv, environ);
    }
    perror("exec");
    return 1;
}

static pthread_barrier_t barrier;

static int clone_child(void *arg)
{
    char **args = (char **) arg;
    execv(args[0], args);
    return 127;
}

static void *thread_main(void *arg)
{
    int t = (int) (long) arg;
    pthread_barrier_wait(&barrier);
    util_thread_work(t);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *s = argc > 1 ? argv[1] : "return";
    E(0);
    if (strcmp(s, "return") == 0) {
        E(1);
        util_hit(1);
        __retest_m[2] = 1;
        return 0;
    }
    if (strcmp(s, "exit") == 0) {
        E(2);
        exit(3);
    }
    if (strcmp(s, "abort") == 0) {
        E(3);
        abort();
    }
    if (strcmp(s, "segv") == 0) {
        E(4);
        *(volatile int *) 0 = 1;
        return 99;
    }
    if (strcmp(s, "_exit") == 0) {
        E(5);
        _exit(4);
    }
    if (strcmp(s, "_Exit") == 0) {
        E(6);
        _Exit(5);
    }
    if (strcmp(s, "fork") == 0) {
        pid_t child;
        int status;
        E(7);
        fflush(stdout);
        child = fork();
        if (child == 0) {
            E(8);
            util_hit(8);
            exit(0);
        }
        waitpid(child, &status, 0);
        E(9);
        util_hit(9);
        printf("%ld\n", (long) child);
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
    }
    if (strcmp(s, "exec") == 0 && argc == 5) {
        E(10);
        util_hit(10);
        do_exec(argv[2], argv[3], argv[4]);
        E(11);
        return 1;
    }
    if (strcmp(s, "execfail") == 0) {
        char *args[] = { (char *) "x", NULL };
        E(12);
        execv("/nonexistent/retest-no-such-program", args);
        E(13);
        execvp("retest-no-such-program-either", args);
        E(14);
        return 0;
    }
    if (strcmp(s, "sleep") == 0) {
        E(15);
        printf("ready\n");
        fflush(stdout);
        for (;;) pause();
    }
    if (strcmp(s, "threads") == 0) {
        pthread_t th[4];
        long t;
        E(16);
        pthread_barrier_init(&barrier, NULL, 4);
        for (t = 0; t < 4; t++) pthread_create(&th[t], NULL, thread_main, (void *) t);
        for (t = 0; t < 4; t++) pthread_join(th[t], NULL);
        return 0;
    }
    if (strcmp(s, "dlopen") == 0 && argc == 3) {
        void *h;
        int (*run)(int);
        E(17);
        h = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
        if (h == NULL) { fprintf(stderr, "%s\n", dlerror()); return 1; }
        *(void **) (&run) = dlsym(h, "plugin_run");
        if (run(5) != 5) return 1;
        if (dlclose(h) != 0) return 1;
        E(18);
        return 0;
    }
    if (strcmp(s, "paths") == 0) {
        E(19);
        __retest_path_hit(&__retest_tu, 3, 0);
        __retest_path_hit(&__retest_tu, 3, 18446744073709551615ULL);
        __retest_path_hit(&__retest_tu, 3, 12345);
        __retest_path_hit(&__retest_tu, 3, 12345);
        __retest_path_hit(&__retest_tu, 0, 7);
        return 0;
    }
    if (strcmp(s, "vfork") == 0 && argc == 3) {
        /* The vfork child shares our memory: its execv must neither write a
           trace nor remove our marker. */
        char *args[] = { (char *) "prog2", (char *) "exec2-arg", NULL };
        pid_t child;
        int status;
        E(20);
        child = vfork();
        if (child == 0) {
            execv(argv[2], args);
            _exit(127);
        }
        waitpid(child, &status, 0);
        E(21);
        printf("%ld\n", (long) child);
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
    }
    if (strcmp(s, "clone") == 0 && argc == 4) {
        /* What GoogleTest's threadsafe death tests do: a raw clone() child,
           on a stack of its own of argv[2] pages (GoogleTest gives it two)
           with an inaccessible page below, exec's at once. */
        char *args[] = { argv[3], (char *) "exec2-arg", NULL };
        long page = sysconf(_SC_PAGESIZE), pages = atol(argv[2]);
        char *stack;
        pid_t child;
        int status;
        E(23);
        stack = (char *) mmap(NULL, (size_t) ((pages + 1) * page), PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (stack == MAP_FAILED || mprotect(stack, (size_t) page, PROT_NONE) != 0) return 1;
        child = clone(clone_child, stack + (pages + 1) * page - 64, SIGCHLD, args);
        if (child < 0) return 1;
        waitpid(child, &status, 0);
        E(24);
        printf("%ld\n", (long) child);
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
    }
    if (strcmp(s, "badabi") == 0) {
        /* A unit from a future ABI: not understood, so the trace must say
           it is incomplete. */
        static struct retest_tu future = { RETEST_ABI + 1, 0, { 0 }, 0, 0, 0, 0 };
        E(22);
        __retest_register(&future);
        return 0;
    }
    fprintf(stderr, "unknown scenario %s\n", s);
    return 2;
}
