/*
 * retest_deps.c — what a test's processes read and run.
 *
 * Loaded with LD_PRELOAD into every dynamically linked process of a test
 * (`retest run` sets it for the test's shell; this library puts it back into
 * the environment of every program it starts, with $RETEST_DEPS_DIR — a
 * variable of its own, so that a program run with `env -i` or without
 * $RETEST_TRACE_DIR still loses the coverage runtime's trace directory, as
 * it would without this library). It records, one line per event, in a file
 * of its own under $RETEST_DEPS_DIR:
 *
 *   P <nonce> <exe>   this process image started; <nonce> is the one its
 *                     parent gave the exec that made it (`root` for the
 *                     test's shell, `-` when it was not started by an exec
 *                     this library saw)
 *   X <nonce> <path>  an exec of <path> is about to happen
 *   F <nonce>         that exec failed (the process goes on)
 *   R <path>          a file opened for reading (or stat'ed: its content may
 *                     matter), or opened for update without truncation
 *   W <path>          a file the test created or truncated: its output
 *   M <path>          a path probed and not found (open, stat, access or
 *                     an exec failed with ENOENT or ENOTDIR: a program
 *                     that appears there later is run instead)
 *   E <path>          a directory whose existence was checked
 *   D <path>          a directory whose entries were listed
 *   L <path>          a shared object loaded into the process
 *
 * Paths are absolute: relative ones are resolved against the working
 * directory, or the directory an `*at` call names. Each line is one write(2)
 * to a file opened with O_APPEND, so lines from processes and threads never
 * mix, and a process that dies at any point keeps every line it wrote.
 * The library's own file operations are raw system calls: they neither
 * recurse into its wrappers nor touch the program's errno.
 *
 * An exec that has an X line and neither a P line with the same nonce nor
 * an F line started an image this library could not observe (statically
 * linked, setuid, or run with the library removed from its environment in a
 * way it could not undo): `retest` then treats the test's dependencies as
 * unknown.
 *
 * Plain C99 with GNU/Linux extensions (dlsym, dl_iterate_phdr); libc and
 * libdl only.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define RETEST_DEPS_ENV_DIR "RETEST_DEPS_DIR"
#define RETEST_DEPS_ENV_EXEC "RETEST_DEPS_EXEC"

static int log_fd = -1;
static int log_pid = -1;
static char trace_dir[PATH_MAX];
static char lib_path[PATH_MAX];
static unsigned long exec_counter;

/* ---- raw system calls -------------------------------------------------- */

static long raw_write(int fd, const void *buf, size_t n) { return syscall(SYS_write, fd, buf, n); }

static int raw_open(const char *path, int flags, int mode) {
    return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}


/* ---- seen set: one line per (kind, path) and process -------------------- */

#define SEEN_SLOTS 8192
static uint64_t seen[SEEN_SLOTS];
static volatile int seen_lock;

static uint64_t fnv(char kind, const char *s) {
    uint64_t h = 1469598103934665603ULL ^ (unsigned char)kind;
    h *= 1099511628211ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h ? h : 1;
}

/* 1 if (kind, path) was not seen before in this process (and now is). */
static int first_time(char kind, const char *path) {
    uint64_t h = fnv(kind, path);
    size_t i = (size_t)(h % SEEN_SLOTS);
    size_t probes;
    int fresh = 1;
    while (__sync_lock_test_and_set(&seen_lock, 1)) {
    }
    for (probes = 0; probes < 64; probes++) {
        if (seen[i] == h) {
            fresh = 0;
            break;
        }
        if (seen[i] == 0) {
            seen[i] = h;
            break;
        }
        i = (i + 1) % SEEN_SLOTS;
    }
    __sync_lock_release(&seen_lock);
    return fresh;
}

/* ---- the log ---------------------------------------------------------- */

static void open_log(void) {
    char name[PATH_MAX + 64];
    int pid = (int)syscall(SYS_getpid);
    if (log_fd >= 0 && log_pid == pid) return;
    if (!trace_dir[0]) return;
    /* after a fork the child writes a file of its own */
    snprintf(name, sizeof name, "%s/deps.%d.log", trace_dir, pid);
    log_fd = raw_open(name, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    log_pid = pid;
}

static void emit_line(const char *line, size_t n) {
    int saved = errno;
    open_log();
    if (log_fd >= 0 && raw_write(log_fd, line, n) < 0) {
        /* the program closed our descriptor: open again and retry once */
        log_fd = -1;
        log_pid = -1;
        open_log();
        if (log_fd >= 0) raw_write(log_fd, line, n);
    }
    errno = saved;
}

static void emit(char kind, const char *path) {
    char line[PATH_MAX + 8];
    size_t n;
    if (!trace_dir[0] || !path || !path[0]) return;
    if (!first_time(kind, path)) return;
    n = (size_t)snprintf(line, sizeof line, "%c %s\n", kind, path);
    if (n >= sizeof line) return;
    emit_line(line, n);
}

/* Absolute form of `path` relative to `dirfd` into `out` (PATH_MAX). */
static const char *absolute(int dirfd, const char *path, char *out) {
    char base[PATH_MAX];
    int saved = errno;
    if (!path) return NULL;
    if (path[0] == '/') {
        errno = saved;
        return path;
    }
    if (dirfd == AT_FDCWD) {
        if (syscall(SYS_getcwd, base, sizeof base) < 0) {
            errno = saved;
            return NULL;
        }
    } else {
        char link[64];
        long n;
        snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
        n = syscall(SYS_readlinkat, AT_FDCWD, link, base, sizeof base - 1);
        if (n < 0) {
            errno = saved;
            return NULL;
        }
        base[n] = 0;
    }
    errno = saved;
    if ((size_t)snprintf(out, PATH_MAX, "%s/%s", base, path) >= PATH_MAX) return NULL;
    return out;
}

static int is_dir(const char *abs) {
    struct stat st;
    int saved = errno;
    int r = (int)syscall(SYS_newfstatat, AT_FDCWD, abs, &st, 0);
    errno = saved;
    return r == 0 && S_ISDIR(st.st_mode);
}

/* Records a lookup of `path` (relative to `dirfd`) that returned `ok`. */
static void looked_up(int dirfd, const char *path, int ok, int err) {
    char buf[PATH_MAX];
    const char *abs = absolute(dirfd, path, buf);
    if (!abs) return;
    if (ok)
        emit(is_dir(abs) ? 'E' : 'R', abs);
    else if (err == ENOENT || err == ENOTDIR)
        emit('M', abs);
}

/* Records an open of `path` with `flags`: `existed` says whether it was there. */
static void opened(int dirfd, const char *path, int flags, int ok, int err, int existed) {
    char buf[PATH_MAX];
    const char *abs = absolute(dirfd, path, buf);
    int acc = flags & O_ACCMODE;
    if (!abs) return;
    if (!ok) {
        if (err == ENOENT || err == ENOTDIR) emit('M', abs);
        return;
    }
    if (acc == O_RDONLY && !(flags & (O_CREAT | O_TRUNC))) {
        emit(is_dir(abs) ? 'E' : 'R', abs);
    } else if (!existed || (flags & O_TRUNC)) {
        emit('W', abs);
    } else {
        emit('R', abs); /* an update of a file that was there: its content is an input */
    }
}

static int writes(int flags) {
    return (flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC));
}

static int existed_before(int dirfd, const char *path, int flags) {
    struct stat st;
    int saved = errno, r;
    if (!writes(flags)) return 1;
    r = (int)syscall(SYS_newfstatat, dirfd, path, &st, 0);
    errno = saved;
    return r == 0;
}

/* ---- real functions ----------------------------------------------------- */

#define REAL(name) \
    static __typeof__(name) *real_##name; \
    if (!real_##name) real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

/* ---- open ---------------------------------------------------------------- */

static mode_t mode_arg(int flags, va_list ap) {
    return (flags & (O_CREAT | O_TMPFILE)) == 0 ? 0 : (mode_t)va_arg(ap, int);
}

int open(const char *path, int flags, ...) {
    va_list ap;
    mode_t mode;
    int fd, existed;
    REAL(open);
    va_start(ap, flags);
    mode = mode_arg(flags, ap);
    va_end(ap);
    existed = existed_before(AT_FDCWD, path, flags);
    fd = real_open(path, flags, mode);
    opened(AT_FDCWD, path, flags, fd >= 0, errno, existed);
    return fd;
}

int open64(const char *path, int flags, ...) {
    va_list ap;
    mode_t mode;
    int fd, existed;
    REAL(open64);
    va_start(ap, flags);
    mode = mode_arg(flags, ap);
    va_end(ap);
    existed = existed_before(AT_FDCWD, path, flags);
    fd = real_open64(path, flags, mode);
    opened(AT_FDCWD, path, flags, fd >= 0, errno, existed);
    return fd;
}

int openat(int dirfd, const char *path, int flags, ...) {
    va_list ap;
    mode_t mode;
    int fd, existed;
    REAL(openat);
    va_start(ap, flags);
    mode = mode_arg(flags, ap);
    va_end(ap);
    existed = existed_before(dirfd, path, flags);
    fd = real_openat(dirfd, path, flags, mode);
    opened(dirfd, path, flags, fd >= 0, errno, existed);
    return fd;
}

int openat64(int dirfd, const char *path, int flags, ...) {
    va_list ap;
    mode_t mode;
    int fd, existed;
    REAL(openat64);
    va_start(ap, flags);
    mode = mode_arg(flags, ap);
    va_end(ap);
    existed = existed_before(dirfd, path, flags);
    fd = real_openat64(dirfd, path, flags, mode);
    opened(dirfd, path, flags, fd >= 0, errno, existed);
    return fd;
}

/* _FORTIFY_SOURCE spellings */
int __open_2(const char *path, int flags) { return open(path, flags); }
int __open64_2(const char *path, int flags) { return open64(path, flags); }
int __openat_2(int dirfd, const char *path, int flags) { return openat(dirfd, path, flags); }
int __openat64_2(int dirfd, const char *path, int flags) { return openat64(dirfd, path, flags); }

int creat(const char *path, mode_t mode) { return open(path, O_CREAT | O_WRONLY | O_TRUNC, mode); }
int creat64(const char *path, mode_t mode) { return open64(path, O_CREAT | O_WRONLY | O_TRUNC, mode); }

static int fopen_flags(const char *mode) {
    int f = 0;
    if (!mode) return 0;
    switch (mode[0]) {
    case 'r': f = strchr(mode, '+') ? O_RDWR : O_RDONLY; break;
    case 'w': f = (strchr(mode, '+') ? O_RDWR : O_WRONLY) | O_CREAT | O_TRUNC; break;
    case 'a': f = (strchr(mode, '+') ? O_RDWR : O_WRONLY) | O_CREAT | O_APPEND; break;
    default: f = O_RDONLY;
    }
    return f;
}

FILE *fopen(const char *path, const char *mode) {
    FILE *f;
    int flags = fopen_flags(mode), existed;
    REAL(fopen);
    existed = existed_before(AT_FDCWD, path, flags);
    f = real_fopen(path, mode);
    opened(AT_FDCWD, path, flags, f != NULL, errno, existed);
    return f;
}

FILE *fopen64(const char *path, const char *mode) {
    FILE *f;
    int flags = fopen_flags(mode), existed;
    REAL(fopen64);
    existed = existed_before(AT_FDCWD, path, flags);
    f = real_fopen64(path, mode);
    opened(AT_FDCWD, path, flags, f != NULL, errno, existed);
    return f;
}

FILE *freopen(const char *path, const char *mode, FILE *stream) {
    FILE *f;
    int flags = fopen_flags(mode), existed;
    REAL(freopen);
    existed = path ? existed_before(AT_FDCWD, path, flags) : 1;
    f = real_freopen(path, mode, stream);
    if (path) opened(AT_FDCWD, path, flags, f != NULL, errno, existed);
    return f;
}

FILE *freopen64(const char *path, const char *mode, FILE *stream) {
    FILE *f;
    int flags = fopen_flags(mode), existed;
    REAL(freopen64);
    existed = path ? existed_before(AT_FDCWD, path, flags) : 1;
    f = real_freopen64(path, mode, stream);
    if (path) opened(AT_FDCWD, path, flags, f != NULL, errno, existed);
    return f;
}

/* ---- lookups --------------------------------------------------------------- */

int stat(const char *path, struct stat *st) {
    int r;
    REAL(stat);
    r = real_stat(path, st);
    looked_up(AT_FDCWD, path, r == 0, errno);
    return r;
}

int lstat(const char *path, struct stat *st) {
    int r;
    REAL(lstat);
    r = real_lstat(path, st);
    looked_up(AT_FDCWD, path, r == 0, errno);
    return r;
}

int fstatat(int dirfd, const char *path, struct stat *st, int flags) {
    int r;
    REAL(fstatat);
    r = real_fstatat(dirfd, path, st, flags);
    if (!(flags & AT_EMPTY_PATH) || path[0]) looked_up(dirfd, path, r == 0, errno);
    return r;
}

int stat64(const char *path, struct stat64 *st) {
    int r;
    REAL(stat64);
    r = real_stat64(path, st);
    looked_up(AT_FDCWD, path, r == 0, errno);
    return r;
}

int lstat64(const char *path, struct stat64 *st) {
    int r;
    REAL(lstat64);
    r = real_lstat64(path, st);
    looked_up(AT_FDCWD, path, r == 0, errno);
    return r;
}

int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags) {
    int r;
    REAL(fstatat64);
    r = real_fstatat64(dirfd, path, st, flags);
    if (!(flags & AT_EMPTY_PATH) || path[0]) looked_up(dirfd, path, r == 0, errno);
    return r;
}

int statx(int dirfd, const char *path, int flags, unsigned int mask, struct statx *st) {
    int r;
    REAL(statx);
    r = real_statx(dirfd, path, flags, mask, st);
    if (!(flags & AT_EMPTY_PATH) || path[0]) looked_up(dirfd, path, r == 0, errno);
    return r;
}

int access(const char *path, int mode) {
    int r;
    REAL(access);
    r = real_access(path, mode);
    looked_up(AT_FDCWD, path, r == 0, errno);
    return r;
}

int faccessat(int dirfd, const char *path, int mode, int flags) {
    int r;
    REAL(faccessat);
    r = real_faccessat(dirfd, path, mode, flags);
    looked_up(dirfd, path, r == 0, errno);
    return r;
}

DIR *opendir(const char *path) {
    DIR *d;
    char buf[PATH_MAX];
    const char *abs;
    REAL(opendir);
    d = real_opendir(path);
    abs = absolute(AT_FDCWD, path, buf);
    if (abs) {
        if (d)
            emit('D', abs);
        else if (errno == ENOENT || errno == ENOTDIR)
            emit('M', abs);
    }
    return d;
}

/* ---- shared objects ---------------------------------------------------------- */

static int each_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    (void)data;
    if (info->dlpi_name && info->dlpi_name[0] == '/' && strcmp(info->dlpi_name, lib_path) != 0)
        emit('L', info->dlpi_name);
    return 0;
}

void *dlopen(const char *file, int mode) {
    void *h;
    REAL(dlopen);
    h = real_dlopen(file, mode);
    if (h) dl_iterate_phdr(each_object, NULL);
    return h;
}

/* ---- exec --------------------------------------------------------------------- */

extern char **environ;

static int has_prefix(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

/*
 * A copy of `envp` that carries what the next image needs: this library in
 * LD_PRELOAD, the trace directory, and the exec's nonce. `storage` holds the
 * new strings; the result is malloc'ed (freed by the caller if exec fails).
 */
static char **child_env(char *const envp[], const char *nonce, char storage[3][PATH_MAX + 64]) {
    size_t n = 0, i, k = 0;
    char **out;
    const char *preload = NULL;
    while (envp && envp[n]) n++;
    out = (char **)malloc((n + 4) * sizeof *out);
    if (!out) return NULL;
    for (i = 0; i < n; i++) {
        if (has_prefix(envp[i], "LD_PRELOAD=")) {
            preload = envp[i] + strlen("LD_PRELOAD=");
            continue;
        }
        if (has_prefix(envp[i], RETEST_DEPS_ENV_DIR "=") || has_prefix(envp[i], RETEST_DEPS_ENV_EXEC "=")) continue;
        out[k++] = envp[i];
    }
    if (preload && strstr(preload, lib_path))
        snprintf(storage[0], sizeof storage[0], "LD_PRELOAD=%s", preload);
    else if (preload && preload[0])
        snprintf(storage[0], sizeof storage[0], "LD_PRELOAD=%s:%s", lib_path, preload);
    else
        snprintf(storage[0], sizeof storage[0], "LD_PRELOAD=%s", lib_path);
    out[k++] = storage[0];
    snprintf(storage[1], sizeof storage[1], RETEST_DEPS_ENV_DIR "=%s", trace_dir);
    out[k++] = storage[1];
    snprintf(storage[2], sizeof storage[2], RETEST_DEPS_ENV_EXEC "=%s", nonce);
    out[k++] = storage[2];
    out[k] = NULL;
    return out;
}

static void next_nonce(char *nonce, size_t size) {
    snprintf(nonce, size, "%d.%lu", (int)syscall(SYS_getpid), __sync_add_and_fetch(&exec_counter, 1));
}

static void about_to_exec(const char *nonce, const char *path) {
    char line[PATH_MAX + 96];
    char buf[PATH_MAX];
    const char *abs = absolute(AT_FDCWD, path, buf);
    size_t n = (size_t)snprintf(line, sizeof line, "X %s %s\n", nonce, abs ? abs : path);
    if (n < sizeof line) emit_line(line, n);
}

static void exec_failed(const char *nonce, const char *path, int err) {
    char line[96];
    size_t n = (size_t)snprintf(line, sizeof line, "F %s\n", nonce);
    emit_line(line, n);
    /* a candidate of a PATH search that is not there: a program that
       appears there later runs instead */
    if (path && (err == ENOENT || err == ENOTDIR)) {
        char buf[PATH_MAX];
        const char *abs = absolute(AT_FDCWD, path, buf);
        if (abs) emit('M', abs);
    }
}

int execve(const char *path, char *const argv[], char *const envp[]) {
    char nonce[64];
    char storage[3][PATH_MAX + 64];
    char **env;
    int r, saved;
    REAL(execve);
    if (!trace_dir[0]) return real_execve(path, argv, envp);
    next_nonce(nonce, sizeof nonce);
    env = child_env(envp, nonce, storage);
    about_to_exec(nonce, path);
    r = real_execve(path, argv, env ? env : (char **)envp);
    saved = errno;
    exec_failed(nonce, path, saved);
    free(env);
    errno = saved;
    return r;
}

int execv(const char *path, char *const argv[]) { return execve(path, argv, environ); }

/* The PATH search of execvp, so that each candidate goes through execve. */
int execvpe(const char *file, char *const argv[], char *const envp[]) {
    const char *p, *path;
    char cand[PATH_MAX];
    int last = ENOENT;
    if (!file[0]) {
        errno = ENOENT;
        return -1;
    }
    if (strchr(file, '/')) return execve(file, argv, envp);
    path = getenv("PATH");
    if (!path) path = "/bin:/usr/bin";
    for (p = path;; p++) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if ((size_t)snprintf(cand, sizeof cand, "%.*s%s%s", (int)len, p, len ? "/" : "", file) < sizeof cand) {
            execve(cand, argv, envp);
            if (errno == EACCES) last = EACCES;
            else if (errno != ENOENT && errno != ENOTDIR) return -1;
        }
        if (!end) break;
        p = end;
    }
    errno = last;
    return -1;
}

int execvp(const char *file, char *const argv[]) { return execvpe(file, argv, environ); }

/* The argument vector of an execl-style call: `first`, then the variadic
 * arguments up to a null pointer; for execle, `envp` gets the pointer after it. */
static char **argv_from(const char *first, va_list *ap, char ***envp) {
    size_t n = 1, i;
    char **argv;
    va_list c;
    va_copy(c, *ap);
    while (va_arg(c, char *)) n++;
    va_end(c);
    argv = (char **)malloc((n + 1) * sizeof *argv);
    if (!argv) return NULL;
    argv[0] = (char *)first;
    for (i = 1; i < n; i++) argv[i] = va_arg(*ap, char *);
    argv[n] = NULL;
    (void)va_arg(*ap, char *);
    if (envp) *envp = va_arg(*ap, char **);
    return argv;
}

int execl(const char *path, const char *arg, ...) {
    va_list ap;
    char **argv;
    int r;
    va_start(ap, arg);
    argv = argv_from(arg, &ap, NULL);
    va_end(ap);
    if (!argv) return -1;
    r = execve(path, argv, environ);
    free(argv);
    return r;
}

int execlp(const char *file, const char *arg, ...) {
    va_list ap;
    char **argv;
    int r;
    va_start(ap, arg);
    argv = argv_from(arg, &ap, NULL);
    va_end(ap);
    if (!argv) return -1;
    r = execvp(file, argv);
    free(argv);
    return r;
}

int execle(const char *path, const char *arg, ...) {
    va_list ap;
    char **argv;
    char **envp = NULL;
    int r;
    va_start(ap, arg);
    argv = argv_from(arg, &ap, &envp);
    va_end(ap);
    if (!argv) return -1;
    r = execve(path, argv, envp);
    free(argv);
    return r;
}

static int spawn(int search, pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                 const posix_spawnattr_t *attr, char *const argv[], char *const envp[]) {
    char nonce[64];
    char storage[3][PATH_MAX + 64];
    char **env;
    int r;
    REAL(posix_spawn);
    REAL(posix_spawnp);
    if (!trace_dir[0])
        return search ? real_posix_spawnp(pid, file, fa, attr, argv, envp) : real_posix_spawn(pid, file, fa, attr, argv, envp);
    next_nonce(nonce, sizeof nonce);
    env = child_env(envp, nonce, storage);
    about_to_exec(nonce, file);
    r = search ? real_posix_spawnp(pid, file, fa, attr, argv, env ? env : (char **)envp)
               : real_posix_spawn(pid, file, fa, attr, argv, env ? env : (char **)envp);
    if (r != 0) exec_failed(nonce, search ? NULL : file, r);
    free(env);
    return r;
}

int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
                char *const argv[], char *const envp[]) {
    return spawn(0, pid, path, fa, attr, argv, envp);
}

int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
                 char *const argv[], char *const envp[]) {
    return spawn(1, pid, file, fa, attr, argv, envp);
}

/* ---- start-up ------------------------------------------------------------------- */

__attribute__((constructor)) static void retest_deps_start(void) {
    const char *d = getenv(RETEST_DEPS_ENV_DIR);
    const char *nonce = getenv(RETEST_DEPS_ENV_EXEC);
    Dl_info self;
    char exe[PATH_MAX];
    char line[PATH_MAX + 96];
    long n;
    size_t len;
    if (!d || !d[0] || strlen(d) >= sizeof trace_dir) return;
    strcpy(trace_dir, d);
    /* this library's own path, to put back into LD_PRELOAD where a program drops it */
    if (dladdr((void *)retest_deps_start, &self) && self.dli_fname && strlen(self.dli_fname) < sizeof lib_path)
        strcpy(lib_path, self.dli_fname);
    n = syscall(SYS_readlinkat, AT_FDCWD, "/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    len = (size_t)snprintf(line, sizeof line, "P %s %s\n", nonce && nonce[0] ? nonce : "-", exe);
    if (len < sizeof line) emit_line(line, len);
    /* a process this one starts without an exec seen here does not claim the nonce */
    unsetenv(RETEST_DEPS_ENV_EXEC);
    dl_iterate_phdr(each_object, NULL);
}
