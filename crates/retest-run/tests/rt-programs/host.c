/* No instrumented code of its own: loads plugin.so (which carries its own
 * runtime) with dlopen, from one thread or while a second thread runs, and
 * prints what each signal's disposition is afterwards:
 *   host PLUGIN [thread]  ->  "PIPE=ign INT=ign TERM=rt SEGV=own" and so on,
 * where "dfl" is SIG_DFL, "ign" SIG_IGN, "own" the handler host installed and
 * "rt" any other (the runtime's). */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void own_handler(int sig) { (void) sig; }

static void *idle(void *arg)
{
    (void) arg;
    pause();
    return NULL;
}

static const char *disposition(int sig)
{
    struct sigaction sa;
    if (sigaction(sig, NULL, &sa) != 0) return "?";
    if (sa.sa_flags & SA_SIGINFO) return "rt";
    if (sa.sa_handler == SIG_DFL) return "dfl";
    if (sa.sa_handler == SIG_IGN) return "ign";
    if (sa.sa_handler == own_handler) return "own";
    return "rt";
}

int main(int argc, char **argv)
{
    struct sigaction sa;
    pthread_t th;
    void *h;
    int (*run)(int);
    if (argc < 2) return 2;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = own_handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    if (argc > 2 && strcmp(argv[2], "thread") == 0 && pthread_create(&th, NULL, idle, NULL) != 0) return 3;
    h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) return 4;
    run = (int (*)(int)) dlsym(h, "plugin_run");
    if (run == NULL || run(5) != 5) return 5;
    printf("PIPE=%s INT=%s USR1=%s TERM=%s SEGV=%s\n", disposition(SIGPIPE), disposition(SIGINT),
           disposition(SIGUSR1), disposition(SIGTERM), disposition(SIGSEGV));
    fflush(stdout);
    dlclose(h);
    printf("after dlclose: TERM=%s SEGV=%s\n", disposition(SIGTERM), disposition(SIGSEGV));
    fflush(stdout);
    return 0;
}
