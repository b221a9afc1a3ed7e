/*
 * LD_PRELOAD shim for the runtime tests: writes "cmdline-open" to stderr
 * for every open of /proc/self/cmdline (at once, so a killed process has
 * told).  Every open goes on to the real one.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

int open(const char *path, int flags, ...)
{
    static int (*real)(const char *, int, ...);
    mode_t mode = 0;
    if (flags & O_CREAT) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t) va_arg(ap, int);
        va_end(ap);
    }
    if (real == NULL) {
        real = (int (*)(const char *, int, ...)) dlsym(RTLD_NEXT, "open");
    }
    if (strcmp(path, "/proc/self/cmdline") == 0) {
        static const char line[] = "cmdline-open\n";
        (void) !write(2, line, sizeof line - 1);
    }
    return real(path, flags, mode);
}
