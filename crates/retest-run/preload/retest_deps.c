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
 *   R <path>          a file opened for reading, or opened for update
 *                     without truncation
 *   S <path>          a file stat'ed or access'ed (its metadata was asked:
 *                     its content may matter, as for R, to a program that
 *                     compares times; `retest` treats it as R for tests)
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
#include <sys/uio.h>
#include <unistd.h>

#define RETEST_DEPS_ENV_DIR "RETEST_DEPS_DIR"
#define RETEST_DEPS_ENV_EXEC "RETEST_DEPS_EXEC"

static int log_fd = -1;
static int log_pid = -1;
static char trace_dir[PATH_MAX];
static char lib_path[PATH_MAX];
static unsigned long exec_counter;
/* Built at start-up from the two above, so that the exec path builds nothing
   long (see "exec" below). */
static char log_prefix[PATH_MAX + 8];     /* <trace_dir>/deps. */
static size_t log_prefix_len;
static char dir_entry[PATH_MAX + 32];     /* RETEST_DEPS_DIR=<trace_dir> */
static char preload_entry[PATH_MAX + 16]; /* LD_PRELOAD=<lib_path> */

/* ---- raw system calls -------------------------------------------------- */

static int raw_open(const char *path, int flags, int mode) {
    return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

/* Writes `v` in decimal at `out` (room for 21 bytes); returns its length. */
static size_t put_dec(char *out, unsigned long v) {
    char tmp[24];
    size_t i = sizeof tmp, n;
    do {
        tmp[--i] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v);
    n = sizeof tmp - i;
    memcpy(out, tmp + i, n);
    return n;
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

/* After a fork the child writes a file of its own. The name is built on the
   stack at its exact size: a child that only exec's may run on a few KiB. */
static void open_log(void) {
    int pid = (int)syscall(SYS_getpid);
    if (log_fd >= 0 && log_pid == pid) return;
    if (!trace_dir[0]) return;
    {
        char name[log_prefix_len + 32];
        size_t n = log_prefix_len;
        memcpy(name, log_prefix, n);
        n += put_dec(name + n, (unsigned long)pid);
        memcpy(name + n, ".log", 5);
        log_fd = raw_open(name, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    }
    log_pid = pid;
}

/* Writes one line, given in pieces, with one writev(2). */
static void emit_pieces(const struct iovec *iov, int n) {
    int saved = errno;
    open_log();
    if (log_fd >= 0 && syscall(SYS_writev, log_fd, iov, n) < 0) {
        /* the program closed our descriptor: open again and retry once */
        log_fd = -1;
        log_pid = -1;
        open_log();
        if (log_fd >= 0) syscall(SYS_writev, log_fd, iov, n);
    }
    errno = saved;
}

static void emit_line(const char *line, size_t n) {
    struct iovec iov;
    iov.iov_base = (void *)line;
    iov.iov_len = n;
    emit_pieces(&iov, 1);
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
        emit(is_dir(abs) ? 'E' : 'S', abs);
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

/*
 * An exec may come from a process that may run nothing but async-signal-safe
 * code, on a small stack: a vfork child, or the clone() child of a GoogleTest
 * threadsafe death test, which runs on 8 KiB and exec's the test binary (with
 * 24 KiB of buffers here it died of a stack overflow before the death test's
 * statement ran). So the exec path takes no lock and calls no malloc (but for
 * an environment of thousands of entries), no stdio and no dlsym (the next
 * functions are looked up at start-up); the entries it passes on are built at
 * start-up or at their exact size, and each line goes out with one writev,
 * the working directory of a relative path read into a short buffer first.
 */

extern char **environ;

static int (*next_execve)(const char *, char *const[], char *const[]);
static int (*next_posix_spawn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                               const posix_spawnattr_t *, char *const[], char *const[]);
static int (*next_posix_spawnp)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                                const posix_spawnattr_t *, char *const[], char *const[]);

#define PRELOAD_KEY "LD_PRELOAD="
#define EXEC_KEY RETEST_DEPS_ENV_EXEC "="
/* Environments up to this many entries are copied on the stack. */
#define ENV_ON_STACK 1024

static void resolve_exec(void) {
    *(void **)&next_execve = dlsym(RTLD_NEXT, "execve");
    *(void **)&next_posix_spawn = dlsym(RTLD_NEXT, "posix_spawn");
    *(void **)&next_posix_spawnp = dlsym(RTLD_NEXT, "posix_spawnp");
}

static int call_execve(const char *path, char *const argv[], char *const envp[]) {
    if (!next_execve) resolve_exec(); /* an exec from a constructor that ran before ours */
    if (next_execve) return next_execve(path, argv, envp);
    return (int)syscall(SYS_execve, path, argv, envp);
}

static int has_prefix(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

/* What the next image's environment takes from `envp`: `n` entries at most,
   and an LD_PRELOAD entry: `preload` (this library is in it, or there was
   none), or NULL for one of `joined` bytes that puts this library before
   the program's `program_preload`. */
struct env_plan {
    size_t n;
    const char *preload;
    const char *program_preload;
    size_t joined;
};

static void plan_env(char *const envp[], struct env_plan *p) {
    const char *lp = NULL;
    size_t n = 0;
    while (envp && envp[n]) {
        if (has_prefix(envp[n], PRELOAD_KEY)) lp = envp[n] + strlen(PRELOAD_KEY);
        n++;
    }
    p->n = n;
    p->program_preload = lp;
    p->joined = 1;
    if (!lp || !lp[0]) {
        p->preload = preload_entry;
    } else if (strstr(lp, lib_path)) {
        p->preload = lp - strlen(PRELOAD_KEY);
    } else {
        p->preload = NULL;
        p->joined = strlen(PRELOAD_KEY) + strlen(lib_path) + 1 + strlen(lp) + 1;
    }
}

/* Fills `out` (room for p->n + 4) with a copy of `envp` that carries what the
   next image needs: this library in LD_PRELOAD (`joined`, of p->joined
   bytes, holds the entry when it is a new one), the trace directory, and
   the exec's nonce (`exec_entry`). */
static void fill_env(char *const envp[], const struct env_plan *p, char **out, char *joined, char *exec_entry) {
    size_t i, k = 0;
    const char *preload = p->preload;
    for (i = 0; i < p->n; i++) {
        if (has_prefix(envp[i], PRELOAD_KEY) || has_prefix(envp[i], RETEST_DEPS_ENV_DIR "=") ||
            has_prefix(envp[i], EXEC_KEY))
            continue;
        out[k++] = envp[i];
    }
    if (!preload) {
        size_t a = strlen(PRELOAD_KEY), b = strlen(lib_path);
        memcpy(joined, PRELOAD_KEY, a);
        memcpy(joined + a, lib_path, b);
        joined[a + b] = ':';
        memcpy(joined + a + b + 1, p->program_preload, p->joined - a - b - 1);
        preload = joined;
    }
    out[k++] = (char *)preload;
    out[k++] = dir_entry;
    out[k++] = exec_entry;
    out[k] = NULL;
}

/* Writes RETEST_DEPS_EXEC=<pid>.<count> into `entry` (64 bytes); returns the
   nonce, the part after `=`. */
static char *new_nonce(char *entry) {
    size_t k = strlen(EXEC_KEY), n;
    memcpy(entry, EXEC_KEY, k);
    n = k + put_dec(entry + k, (unsigned long)syscall(SYS_getpid));
    entry[n++] = '.';
    n += put_dec(entry + n, __sync_add_and_fetch(&exec_counter, 1));
    entry[n] = 0;
    return entry + k;
}

/* Writes "<head><nonce> <path>\n" (`nonce` may be NULL: "<head><path>\n"),
   `path` made absolute against the working directory, which is read into
   `cwd` (`cap` bytes). Returns 0, or -1 when `cwd` is too short. */
static int emit_path_in(const char *head, const char *nonce, const char *path, char *cwd, size_t cap) {
    struct iovec iov[7];
    int n = 0, saved = errno;
    iov[n].iov_base = (void *)head;
    iov[n++].iov_len = strlen(head);
    if (nonce) {
        iov[n].iov_base = (void *)nonce;
        iov[n++].iov_len = strlen(nonce);
        iov[n].iov_base = (void *)" ";
        iov[n++].iov_len = 1;
    }
    if (path[0] != '/') {
        if (syscall(SYS_getcwd, cwd, cap) < 0) {
            int err = errno;
            errno = saved;
            return err == ERANGE ? -1 : 0;
        }
        iov[n].iov_base = cwd;
        iov[n++].iov_len = strlen(cwd);
        iov[n].iov_base = (void *)"/";
        iov[n++].iov_len = 1;
    }
    iov[n].iov_base = (void *)path;
    iov[n++].iov_len = strlen(path);
    iov[n].iov_base = (void *)"\n";
    iov[n++].iov_len = 1;
    emit_pieces(iov, n);
    errno = saved;
    return 0;
}

__attribute__((noinline)) static void emit_path_long(const char *head, const char *nonce, const char *path) {
    char cwd[PATH_MAX];
    (void)emit_path_in(head, nonce, path, cwd, sizeof cwd);
}

static void emit_path(const char *head, const char *nonce, const char *path) {
    char cwd[256];
    if (emit_path_in(head, nonce, path, cwd, sizeof cwd) != 0) emit_path_long(head, nonce, path);
}

/* The exec's F line, and, for a candidate of a PATH search that is not there,
   an M line: a program that appears there later runs instead. Not deduplicated
   as emit() does: that takes a lock, which a forked child may find held. */
static void exec_failed(const char *nonce, const char *path, int err) {
    struct iovec iov[3];
    iov[0].iov_base = (void *)"F ";
    iov[0].iov_len = 2;
    iov[1].iov_base = (void *)nonce;
    iov[1].iov_len = strlen(nonce);
    iov[2].iov_base = (void *)"\n";
    iov[2].iov_len = 1;
    emit_pieces(iov, 3);
    if (path && path[0] && (err == ENOENT || err == ENOTDIR)) emit_path("M ", NULL, path);
}

static int traced_execve(const char *path, char *const argv[], char *const envp[], const struct env_plan *p,
                         char **env, char *joined) {
    char exec_entry[64];
    const char *nonce = new_nonce(exec_entry);
    int r, saved;
    fill_env(envp, p, env, joined, exec_entry);
    emit_path("X ", nonce, path);
    r = call_execve(path, argv, env);
    saved = errno;
    exec_failed(nonce, path, saved);
    errno = saved;
    return r;
}

/* An environment too large for the stack. */
__attribute__((noinline)) static int traced_execve_heap(const char *path, char *const argv[], char *const envp[],
                                                        const struct env_plan *p) {
    char **env = (char **)malloc((p->n + 4) * sizeof *env);
    char *joined = (char *)malloc(p->joined);
    int r, saved;
    if (!env || !joined) {
        free(env);
        free(joined);
        return call_execve(path, argv, envp);
    }
    r = traced_execve(path, argv, envp, p, env, joined);
    saved = errno;
    free(env);
    free(joined);
    errno = saved;
    return r;
}

int execve(const char *path, char *const argv[], char *const envp[]) {
    struct env_plan p;
    if (!trace_dir[0]) return call_execve(path, argv, envp);
    plan_env(envp, &p);
    if (p.n + 4 <= ENV_ON_STACK && p.joined <= PATH_MAX) {
        char *env[p.n + 4];
        char joined[p.joined];
        return traced_execve(path, argv, envp, &p, env, joined);
    }
    return traced_execve_heap(path, argv, envp, &p);
}

int execv(const char *path, char *const argv[]) { return execve(path, argv, environ); }

/* The PATH search of execvp, so that each candidate goes through execve. */
int execvpe(const char *file, char *const argv[], char *const envp[]) {
    const char *p, *path;
    size_t flen = strlen(file);
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
        if (len + 1 + flen < PATH_MAX) {
            char cand[len + 1 + flen + 1]; /* its exact size: see "exec" above */
            size_t k = 0;
            memcpy(cand, p, len);
            k = len;
            if (len) cand[k++] = '/';
            memcpy(cand + k, file, flen + 1);
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
    char exec_entry[64];
    const char *nonce;
    struct env_plan p;
    char **env = NULL, *joined = NULL;
    int r;
    if (!next_posix_spawn || !next_posix_spawnp) resolve_exec();
    if (!trace_dir[0])
        return search ? next_posix_spawnp(pid, file, fa, attr, argv, envp) : next_posix_spawn(pid, file, fa, attr, argv, envp);
    /* the parent's side: an ordinary context, where malloc is fine */
    plan_env(envp, &p);
    env = (char **)malloc((p.n + 4) * sizeof *env);
    joined = (char *)malloc(p.joined);
    nonce = new_nonce(exec_entry);
    if (env && joined) fill_env(envp, &p, env, joined, exec_entry);
    emit_path("X ", nonce, file);
    r = search ? next_posix_spawnp(pid, file, fa, attr, argv, env && joined ? env : (char **)envp)
               : next_posix_spawn(pid, file, fa, attr, argv, env && joined ? env : (char **)envp);
    if (r != 0) exec_failed(nonce, search ? NULL : file, r);
    free(env);
    free(joined);
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
    resolve_exec();
    if (!d || !d[0] || strlen(d) >= sizeof trace_dir) return;
    strcpy(trace_dir, d);
    /* this library's own path, to put back into LD_PRELOAD where a program drops it */
    if (dladdr((void *)retest_deps_start, &self) && self.dli_fname && strlen(self.dli_fname) < sizeof lib_path)
        strcpy(lib_path, self.dli_fname);
    log_prefix_len = (size_t)snprintf(log_prefix, sizeof log_prefix, "%s/deps.", trace_dir);
    snprintf(dir_entry, sizeof dir_entry, RETEST_DEPS_ENV_DIR "=%s", trace_dir);
    snprintf(preload_entry, sizeof preload_entry, PRELOAD_KEY "%s", lib_path);
    n = syscall(SYS_readlinkat, AT_FDCWD, "/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    len = (size_t)snprintf(line, sizeof line, "P %s %s\n", nonce && nonce[0] ? nonce : "-", exe);
    if (len < sizeof line) emit_line(line, len);
    /* a process this one starts without an exec seen here does not claim the nonce */
    unsetenv(RETEST_DEPS_ENV_EXEC);
    dl_iterate_phdr(each_object, NULL);
}
