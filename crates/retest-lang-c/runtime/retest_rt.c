/*
 * retest coverage runtime (ABI version 1).
 *
 * Collects the probe cells of every registered translation unit and writes
 * them as one trace file per process image.  The trace format, the file
 * names, the environment variables and the points at which traces are
 * written are documented in docs/trace-format.md; keep the two in sync.
 *
 * Model:
 *   - Inert unless RETEST_TRACE_DIR is set when the first TU registers.
 *   - First registration: create the live marker <dir>/<pid>-<nonce>.live,
 *     install handlers for fatal signals whose disposition is SIG_DFL, and
 *     a pthread_atfork child handler.
 *   - A trace is written at normal exit (a priority-101 destructor), from the
 *     fatal-signal handler, from the _exit/_Exit interposers and before every
 *     exec* (interposers).  Each is the image's final trace: it is written
 *     over the live marker, which is then renamed to the trace's name.
 *   - Every record the runtime owns lives in mmap'ed memory that is never
 *     unmapped, so it outlives a dlclose'd object, is inherited by fork, and
 *     can be allocated from a signal handler.
 *
 * Invariants:
 *   - The write path is async-signal-safe: static buffers and
 *     open/write/close/rename/unlink/mmap/munmap only; no malloc, no stdio.
 *   - After __retest_unregister(tu) the runtime never touches *tu or its
 *     cells again (the object may be unmapped); it writes the shadow.
 *   - Only __retest_register/__retest_unregister/__retest_path_hit,
 *     __retest_st and the exec/_exit and signal-handler interposers have
 *     external linkage;
 *     everything else is static, so several copies of this file in one
 *     process never clash.
 *
 * Compile-time options:
 *   RETEST_RT_NO_INTERPOSE  leave out the exec, _exit and signal-handler
 *                           interposers (for static links, where they would
 *                           clash with libc.a)
 *   RETEST_RT_NO_DLSYM      never use dlsym(RTLD_NEXT); always exec through
 *                           the raw system call, and leave out the
 *                           signal-handler interposers (used by the tests)
 *   RETEST_RT_UNRECORDED    a directory (string literal): an image that
 *                           registers instrumented code without a usable
 *                           RETEST_TRACE_DIR in its environment creates
 *                           <dir>/<pgid>-<pid>-<nonce> there, holding its
 *                           command line, if the directory exists (it does
 *                           while `retest run` runs), so a test whose process
 *                           lost the variable (`env -i`) is not taken for one
 *                           that ran no instrumented code; and every image
 *                           that creates a live marker logs it in
 *                           <dir>/.images, so a trace the test deleted is
 *                           not taken for one never written
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include "retest_rt.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h> /* rename() only: stdio itself is never used */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#if !defined(RETEST_RT_NO_INTERPOSE) && !defined(RETEST_RT_NO_DLSYM)
#include <dlfcn.h>
/* Weak, so that no -ldl is needed where dlsym is not in libc (glibc < 2.34,
   static links): then the address is null and the system call is used. */
#pragma weak dlsym
#endif

/* Where the runtime interposes the signal-handler functions (glibc, dynamic
   links), its own calls go to glibc's __sigaction: they skip every copy's
   interposer, so no copy takes another's handler for the program's. */
#if defined(__GLIBC__) && !defined(RETEST_RT_NO_INTERPOSE) && !defined(RETEST_RT_NO_DLSYM)
#define RT_INTERPOSE_HANDLERS 1
#ifdef __cplusplus
extern "C" int __sigaction(int, const struct sigaction *, struct sigaction *);
#else
extern int __sigaction(int, const struct sigaction *, struct sigaction *);
#endif
#define rt_sigaction __sigaction
#else
#define rt_sigaction sigaction
#endif

/* ------------------------------------------------------------------------ */
/* Portability                                                               */
/* ------------------------------------------------------------------------ */

#ifdef __GNUC__
#define RT_EXPORT __attribute__((visibility("default")))
#define RT_LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define RT_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define RT_CAS(p, o, n) __sync_bool_compare_and_swap((p), (o), (n))
#define RT_ADD(p, v) __sync_fetch_and_add((p), (v))
#define RT_OR(p, v) __sync_fetch_and_or((p), (v))
#define RT_FENCE_ACQUIRE() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#define RT_NOINLINE __attribute__((noinline))
#else
/* Without GNU builtins the runtime is correct for single-threaded
   programs only. */
#define RT_EXPORT
#define RT_LOAD(p) (*(p))
#define RT_STORE(p, v) ((void) (*(p) = (v)))
#define RT_CAS(p, o, n) ((*(p) == (o)) ? (*(p) = (n), 1) : 0)
#define RT_ADD(p, v) ((*(p) += (v)) - (v))
#define RT_OR(p, v) (*(p) |= (v))
#define RT_FENCE_ACQUIRE() ((void) 0)
#define RT_NOINLINE
#endif

/* glibc declares most exec functions `noexcept` in C++; a definition must
   repeat that.  In C __THROW is an attribute, which a definition may not
   carry after its declarator. */
#if defined(__cplusplus) && defined(__THROW)
#define RT_THROW __THROW
#else
#define RT_THROW
#endif

#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif
#ifndef MAP_ANONYMOUS
#define MAP_ANONYMOUS MAP_ANON
#endif

#define RT_U64(hi, lo) ((((retest_u64) (hi)) << 32) | (retest_u64) (lo))

/* ------------------------------------------------------------------------ */
/* Constants                                                                 */
/* ------------------------------------------------------------------------ */

#define RT_FORMAT_VERSION 1u

/* Trace flags (docs/trace-format.md). */
#define RT_FLAG_SIGNAL 0x01u
#define RT_FLAG_EXEC 0x02u
#define RT_FLAG_UEXIT 0x04u
#define RT_FLAG_EXIT 0x08u
#define RT_FLAG_INCOMPLETE 0x10u
#define RT_FLAG_THREADS 0x20u    /* other threads may have been running */
#define RT_FLAG_HANDLER 0x40u    /* the program installed a signal handler */
#define RT_FLAG_CLOBBERED 0x80u  /* the program wrote into the runtime's guard */
#define RT_FLAG_SIGNO_SHIFT 8

#define RT_ENC_RAW 0u
#define RT_ENC_SPARSE 1u
#define RT_ENC_IDSET 2u
#define RT_ENC_COUNTS 3u

/* Runtime modes (g_mode). */
#define MODE_UNINIT 0
#define MODE_INITIALISING 1
#define MODE_INERT 2
#define MODE_ACTIVE 3

/* struct retest_tu.state */
#define ST_NONE 0u
#define ST_CLAIMED 1u
#define ST_REGISTERED 2u
#define ST_DETACHED 3u

#define RT_DIR_MAX 4000
#define RT_NAME_MAX 96
#define RT_PATH_MAX (RT_DIR_MAX + RT_NAME_MAX)
#define RT_CMDLINE_MAX 1024
#define RT_ARENA_CHUNK (1024u * 1024u)
#define RT_ALTSTACK_SIZE (64u * 1024u)
#define RT_PSET_INITIAL 1024u
#define RT_ARGV_STACK 256
#define RT_CLAIM_SPINS 100000
/* Descriptor versions this runtime interprets (retest_rt.h). */
#define RT_ABI_KNOWN(abi) ((abi) >= RETEST_ABI_OLDEST && (abi) <= RETEST_ABI)

/* ------------------------------------------------------------------------ */
/* Runtime-owned records                                                     */
/* ------------------------------------------------------------------------ */

struct rt_sect {
    unsigned int kind;
    unsigned int len;
    const volatile unsigned char *live; /* the TU's cells; not touched once detached */
    unsigned char *shadow; /* 0/1 copy: the snapshot written to traces */
    retest_u64 *counts;    /* edge counts sections: the counters as last read */
};

struct rt_unit {
    struct rt_unit *next;
    unsigned int index;    /* 1-based registration number; key of path ids */
    unsigned int nsect;
    unsigned int detached; /* set by __retest_unregister */
    unsigned char hash[16];
    struct rt_sect *sect;
};

/* Insert-only bump arena in mmap'ed chunks that are never unmapped. */
struct rt_chunk {
    size_t size;
    size_t used;
};

/* Path-id set: open-addressing hash tables, insert-only.  When the newest
   table is half full a table of twice the size is created, the old
   entries are copied, and the new one is published; older tables are kept
   (the writer reads them all and removes duplicates). */
struct rt_pentry {
    unsigned int state;    /* 0 empty, 1 being written, 2 ready */
    unsigned int unit;
    unsigned int func;
    unsigned int pad;
    retest_u64 id;
};

struct rt_ptable {
    struct rt_ptable *prev;
    size_t cap;            /* power of two */
    size_t used;
    size_t bytes;
    struct rt_pentry *e;
};

/* A path id as the writer sorts it. */
struct rt_pid {
    unsigned int unit;
    unsigned int func;
    retest_u64 id;
};

/* ------------------------------------------------------------------------ */
/* State (all static: one instance per copy of this file)                    */
/* ------------------------------------------------------------------------ */

/* A guard between the data before this object's (the program's, when the
   runtime is linked last, as `retest cc` links it) and the runtime's own
   state: the only variable of this object's `.bss`.  A program that writes
   past the end of its last arrays writes here first: the runtime's state
   stays intact, reads there find zeros whatever the address layout, and the
   trace is flagged CLOBBERED when a byte is no longer zero
   (docs/trace-format.md). */
#define RT_GUARD_BYTES 16384
static volatile unsigned char rt_guard[RT_GUARD_BYTES] __attribute__((aligned(64), used));
/* Every other zero-initialised variable of the runtime lives in a section of
   its own, which the linker places after this object's `.bss` as long as
   `.bss` is the first of the two the compiler emits: GCC emits `.bss` first,
   Clang emits sections in the order of the first variable it emits in each,
   and it emits the variables of an external function (the one below) before
   those that only static functions use. */
#define RT_STATE __attribute__((section(".bss.retest_state")))

/* Whether a byte of the guard is no longer zero.  External, hidden, and
   defined before any other function: see RT_STATE. */
__attribute__((visibility("hidden"))) int retest_rt_guard_clobbered(void);
__attribute__((visibility("hidden"))) int retest_rt_guard_clobbered(void)
{
    const volatile unsigned long *w = (const volatile unsigned long *) (const volatile void *) rt_guard;
    size_t i;

    for (i = 0; i < RT_GUARD_BYTES / sizeof(unsigned long); i++) {
        if (w[i] != 0) {
            return 1;
        }
    }
    return 0;
}

static RT_STATE int g_mode;
static RT_STATE long g_init_tid;
static RT_STATE struct rt_unit *g_units;
static RT_STATE unsigned int g_next_index;
static RT_STATE unsigned int g_incomplete;
static RT_STATE int g_user_handler;            /* a handler of the program was installed */
static RT_STATE struct rt_chunk *g_chunk;
static RT_STATE struct rt_ptable *g_ptab;

static RT_STATE pid_t g_pid;
static RT_STATE char g_dir[RT_DIR_MAX];
static RT_STATE char g_stem[RT_NAME_MAX];      /* "<pid>-<nonce>" */
static RT_STATE char g_marker[RT_PATH_MAX];
static RT_STATE int g_marker_present;
static RT_STATE unsigned int g_seq;
static RT_STATE unsigned int g_nonce_counter;
static RT_STATE char g_cmdline[RT_CMDLINE_MAX];
static RT_STATE size_t g_cmdline_len;

static RT_STATE long g_wlock;                  /* tid of the thread writing a trace */
static RT_STATE unsigned int g_crc_table[256];
static RT_STATE unsigned char g_buf[65536];
static RT_STATE size_t g_buflen;
static RT_STATE unsigned int g_crc;
static RT_STATE int g_fd;
static RT_STATE int g_werr;
static RT_STATE char g_tmp_path[RT_PATH_MAX];
static RT_STATE char g_final_path[RT_PATH_MAX];

static const int rt_signals[] = {
    SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT, SIGHUP,
    SIGQUIT, SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ,
#ifdef SIGSYS
    SIGSYS,
#endif
#ifdef SIGTRAP
    SIGTRAP,
#endif
#ifdef SIGVTALRM
    SIGVTALRM,
#endif
#ifdef SIGPROF
    SIGPROF,
#endif
#ifdef SIGIO
    SIGIO,
#endif
#ifdef SIGPWR
    SIGPWR,
#endif
#ifdef SIGSTKFLT
    SIGSTKFLT,
#endif
    0
};
#define RT_NSIGNALS (sizeof rt_signals / sizeof rt_signals[0] - 1)
static RT_STATE unsigned char g_sig_installed[RT_NSIGNALS];
static RT_STATE void *g_altstack;

/* ------------------------------------------------------------------------ */
/* Small helpers                                                             */
/* ------------------------------------------------------------------------ */

static long rt_gettid(void)
{
    return (long) syscall(SYS_gettid);
}

/* Whether the process has never had a second thread, as glibc (2.32 and
   later) knows it; 0 where that is not known (another libc, an older glibc,
   a compiler without weak symbols).  Where the headers are glibc 2.32 or
   later the reference is strong, so a static link takes the variable from
   libc.a; elsewhere weak, so a later glibc may still provide it. */
#if defined(__GLIBC__) && defined(__GLIBC_PREREQ)
#if __GLIBC_PREREQ(2, 32)
#define RT_HAVE_SINGLE_THREADED 1
#endif
#endif
#ifdef RT_HAVE_SINGLE_THREADED
#include <sys/single_threaded.h>
static int rt_single_threaded(void)
{
    return __libc_single_threaded != 0;
}
#elif defined(__GNUC__) && defined(__linux__)
extern char __libc_single_threaded __attribute__((weak));
static int rt_single_threaded(void)
{
    return &__libc_single_threaded != 0 && __libc_single_threaded != 0;
}
#else
static int rt_single_threaded(void)
{
    return 0;
}
#endif

/* Path-profiled code counts its calls in flight with plain arithmetic while
   *__retest_st is not zero, with atomic read-modify-writes otherwise:
   glibc's __libc_single_threaded, which glibc keeps nonzero only while the
   process is certainly single-threaded and clears before pthread_create or
   thrd_create starts a thread; where the headers do not promise it, a zero
   byte (never null: the test costs on every call). */
#ifdef __cplusplus
#define RT_EXTERN_C extern "C" /* C++ gives a const object internal linkage */
#else
#define RT_EXTERN_C
#endif
#ifdef RT_HAVE_SINGLE_THREADED
RT_EXTERN_C RT_EXPORT const char *const __retest_st = &__libc_single_threaded;
#else
static const char rt_not_known_single = 0;
RT_EXTERN_C RT_EXPORT const char *const __retest_st = &rt_not_known_single;
#endif

/* Reads up to `cap` bytes of the file at `path` into `buf` (async-signal-
   safe): the number of bytes read, or -1 if the file cannot be opened. */
static long rt_read_file(const char *path, char *buf, size_t cap)
{
    size_t len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    while (len < cap) {
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        len += (size_t) n;
    }
    close(fd);
    return (long) len;
}

/* Whether another thread of the process may be running now: none if the
   process never had one; otherwise the count in /proc/self/status (threads
   already joined are gone), and "may" where that cannot be read. */
static int rt_other_threads(void)
{
    char buf[4096];
    long len;
    const char *p;
    if (rt_single_threaded()) {
        return 0;
    }
    len = rt_read_file("/proc/self/status", buf, sizeof buf - 1);
    if (len < 0) {
        return 1;
    }
    buf[len] = '\0';
    p = strstr(buf, "\nThreads:");
    if (p == NULL) {
        return 1;
    }
    p += 9;
    while (*p == ' ' || *p == '\t') {
        p++;
    }
    return !(p[0] == '1' && p[1] == '\n');
}

static retest_u64 rt_mix(retest_u64 z)
{
    z = (z ^ (z >> 30)) * RT_U64(0xbf58476dUL, 0x1ce4e5b9UL);
    z = (z ^ (z >> 27)) * RT_U64(0x94d049bbUL, 0x133111ebUL);
    return z ^ (z >> 31);
}

static void rt_diag(const char *a, const char *b)
{
    static const char prefix[] = "retest runtime: ";
    ssize_t r;
    r = write(2, prefix, sizeof prefix - 1);
    r = write(2, a, strlen(a));
    if (b != NULL) {
        r = write(2, b, strlen(b));
    }
    r = write(2, "\n", 1);
    (void) r;
}

/* Bounded string building. */
struct rt_str {
    char *p;
    size_t len;
    size_t cap;
    int overflow;
};

static void rt_str_init(struct rt_str *s, char *buf, size_t cap)
{
    s->p = buf;
    s->len = 0;
    s->cap = cap;
    s->overflow = 0;
    buf[0] = '\0';
}

static void rt_str_putn(struct rt_str *s, const char *src, size_t n)
{
    if (s->len + n + 1 > s->cap) {
        s->overflow = 1;
        return;
    }
    memcpy(s->p + s->len, src, n);
    s->len += n;
    s->p[s->len] = '\0';
}

static void rt_str_put(struct rt_str *s, const char *src)
{
    rt_str_putn(s, src, strlen(src));
}

static void rt_str_dec(struct rt_str *s, retest_u64 v)
{
    char tmp[24];
    size_t i = sizeof tmp;
    do {
        tmp[--i] = (char) ('0' + (int) (v % 10u));
        v /= 10u;
    } while (v != 0);
    rt_str_putn(s, tmp + i, sizeof tmp - i);
}

static void rt_str_hex16(struct rt_str *s, retest_u64 v)
{
    static const char digits[] = "0123456789abcdef";
    char tmp[16];
    int i;
    for (i = 15; i >= 0; i--) {
        tmp[i] = digits[(int) (v & 15u)];
        v >>= 4;
    }
    rt_str_putn(s, tmp, 16);
}

/* ------------------------------------------------------------------------ */
/* Memory: mmap'ed, never unmapped, async-signal-safe                        */
/* ------------------------------------------------------------------------ */

static void *rt_map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* Zeroed memory from the arena; NULL when out of memory. */
static void *rt_alloc(size_t n)
{
    size_t hdr = (sizeof(struct rt_chunk) + 15u) & ~(size_t) 15u;
    if (n > (size_t) -1 - hdr - 15u) {
        return NULL;
    }
    n = (n + 15u) & ~(size_t) 15u;
    for (;;) {
        struct rt_chunk *c = RT_LOAD(&g_chunk);
        struct rt_chunk *nc;
        size_t size;
        if (c != NULL) {
            size_t off = RT_LOAD(&c->used);
            if (off + n <= c->size) {
                if (RT_CAS(&c->used, off, off + n)) {
                    return (char *) c + off;
                }
                continue;
            }
        }
        size = hdr + n > RT_ARENA_CHUNK ? hdr + n : RT_ARENA_CHUNK;
        nc = (struct rt_chunk *) rt_map(size);
        if (nc == NULL) {
            return NULL;
        }
        nc->size = size;
        nc->used = hdr + n;
        if (RT_CAS(&g_chunk, c, nc)) {
            return (char *) nc + hdr;
        }
        munmap((void *) nc, size);
    }
}

/* ------------------------------------------------------------------------ */
/* Path-id sets                                                              */
/* ------------------------------------------------------------------------ */

static size_t rt_phash(unsigned int unit, unsigned int func, retest_u64 id)
{
    return (size_t) rt_mix(id ^ rt_mix(RT_U64(unit, func)));
}

/* 1 = present or inserted, 0 = table too full. */
static int rt_pset_try(struct rt_ptable *t, unsigned int unit, unsigned int func, retest_u64 id)
{
    size_t mask = t->cap - 1;
    size_t i = rt_phash(unit, func, id) & mask;
    size_t n;
    for (n = 0; n < t->cap; n++, i = (i + 1) & mask) {
        struct rt_pentry *e = &t->e[i];
        unsigned int s = RT_LOAD(&e->state);
        if (s == 0) {
            if (RT_LOAD(&t->used) >= t->cap / 2) {
                return 0;
            }
            if (RT_CAS(&e->state, 0u, 1u)) {
                e->unit = unit;
                e->func = func;
                e->id = id;
                RT_STORE(&e->state, 2u);
                RT_ADD(&t->used, (size_t) 1);
                return 1;
            }
            s = RT_LOAD(&e->state);
        }
        /* A slot being written (s == 1) is skipped rather than waited for:
           the writer may be the thread this signal handler interrupted.  A
           duplicate can result; the trace writer removes duplicates. */
        if (s == 2 && e->unit == unit && e->func == func && e->id == id) {
            return 1;
        }
    }
    return 0;
}

static struct rt_ptable *rt_pset_grow(struct rt_ptable *old)
{
    struct rt_ptable *cur = RT_LOAD(&g_ptab);
    struct rt_ptable *t;
    size_t cap, bytes, hdr, i;
    char *mem;
    if (cur != old) {
        return cur;
    }
    cap = old != NULL ? old->cap * 2 : RT_PSET_INITIAL;
    hdr = (sizeof(struct rt_ptable) + 15u) & ~(size_t) 15u;
    if (cap == 0 || cap > ((size_t) -1 - hdr) / sizeof(struct rt_pentry)) {
        return NULL;
    }
    bytes = hdr + cap * sizeof(struct rt_pentry);
    mem = (char *) rt_map(bytes);
    if (mem == NULL) {
        return NULL;
    }
    t = (struct rt_ptable *) (void *) mem;
    t->prev = old;
    t->cap = cap;
    t->used = 0;
    t->bytes = bytes;
    t->e = (struct rt_pentry *) (void *) (mem + hdr);
    if (old != NULL) {
        for (i = 0; i < old->cap; i++) {
            struct rt_pentry *e = &old->e[i];
            if (RT_LOAD(&e->state) == 2u) {
                (void) rt_pset_try(t, e->unit, e->func, e->id);
            }
        }
    }
    if (!RT_CAS(&g_ptab, old, t)) {
        munmap((void *) mem, bytes);
        return RT_LOAD(&g_ptab);
    }
    return t;
}

static void rt_pset_insert(unsigned int unit, unsigned int func, retest_u64 id)
{
    struct rt_ptable *t = RT_LOAD(&g_ptab);
    int saved;
    if (t != NULL && rt_pset_try(t, unit, func, id)) {
        return; /* the fast path: no system call, errno untouched */
    }
    saved = errno;
    for (;;) {
        t = rt_pset_grow(t);
        if (t == NULL) {
            RT_OR(&g_incomplete, RT_FLAG_INCOMPLETE);
            break;
        }
        if (rt_pset_try(t, unit, func, id)) {
            break;
        }
    }
    errno = saved;
}

static int rt_pid_less(const struct rt_pid *a, const struct rt_pid *b)
{
    if (a->unit != b->unit) {
        return a->unit < b->unit;
    }
    if (a->func != b->func) {
        return a->func < b->func;
    }
    return a->id < b->id;
}

static void rt_sift_down(struct rt_pid *v, size_t root, size_t n)
{
    for (;;) {
        size_t child = 2 * root + 1;
        struct rt_pid tmp;
        if (child >= n) {
            return;
        }
        if (child + 1 < n && rt_pid_less(&v[child], &v[child + 1])) {
            child++;
        }
        if (!rt_pid_less(&v[root], &v[child])) {
            return;
        }
        tmp = v[root];
        v[root] = v[child];
        v[child] = tmp;
        root = child;
    }
}

/* Heapsort: no recursion, no allocation. */
static void rt_pid_sort(struct rt_pid *v, size_t n)
{
    size_t i;
    struct rt_pid tmp;
    if (n < 2) {
        return;
    }
    for (i = n / 2; i > 0; i--) {
        rt_sift_down(v, i - 1, n);
    }
    for (i = n - 1; i > 0; i--) {
        tmp = v[0];
        v[0] = v[i];
        v[i] = tmp;
        rt_sift_down(v, 0, i);
    }
}

/* Snapshot of all path ids, sorted by (unit, func, id), without duplicates.
   Returns 0, or -1 when the scratch memory could not be mapped. */
static int rt_pids_collect(struct rt_pid **out, size_t *count, size_t *bytes)
{
    struct rt_ptable *head = RT_LOAD(&g_ptab);
    struct rt_ptable *t;
    struct rt_pid *v;
    size_t n = 0, k = 0, i, j;
    *out = NULL;
    *count = 0;
    *bytes = 0;
    for (t = head; t != NULL; t = t->prev) {
        for (i = 0; i < t->cap; i++) {
            if (RT_LOAD(&t->e[i].state) == 2u) {
                n++;
            }
        }
    }
    if (n == 0) {
        return 0;
    }
    if (n > (size_t) -1 / sizeof(struct rt_pid)) {
        return -1;
    }
    v = (struct rt_pid *) rt_map(n * sizeof(struct rt_pid));
    if (v == NULL) {
        return -1;
    }
    for (t = head; t != NULL && k < n; t = t->prev) {
        for (i = 0; i < t->cap && k < n; i++) {
            struct rt_pentry *e = &t->e[i];
            if (RT_LOAD(&e->state) == 2u) {
                v[k].unit = e->unit;
                v[k].func = e->func;
                v[k].id = e->id;
                k++;
            }
        }
    }
    rt_pid_sort(v, k);
    for (i = 0, j = 0; i < k; i++) {
        if (j == 0 || rt_pid_less(&v[j - 1], &v[i])) {
            v[j++] = v[i];
        }
    }
    *out = v;
    *count = j;
    *bytes = n * sizeof(struct rt_pid);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Trace writer (async-signal-safe)                                          */
/* ------------------------------------------------------------------------ */

static void rt_crc_init(void)
{
    unsigned int n, k, c;
    for (n = 0; n < 256; n++) {
        c = n;
        for (k = 0; k < 8; k++) {
            c = (c & 1u) ? 0xedb88320u ^ (c >> 1) : c >> 1;
        }
        g_crc_table[n] = c & 0xffffffffu;
    }
}

static void rt_out_flush(void)
{
    size_t off = 0;
    while (off < g_buflen && !g_werr) {
        ssize_t w = write(g_fd, g_buf + off, g_buflen - off);
        if (w < 0) {
            if (errno == EINTR) {
                continue;
            }
            g_werr = 1;
        } else {
            off += (size_t) w;
        }
    }
    g_buflen = 0;
}

static void rt_out(const void *src, size_t n)
{
    const unsigned char *p = (const unsigned char *) src;
    unsigned int c = g_crc;
    while (n > 0) {
        size_t room = sizeof g_buf - g_buflen;
        size_t chunk = n < room ? n : room;
        size_t i;
        for (i = 0; i < chunk; i++) {
            c = g_crc_table[(c ^ p[i]) & 0xffu] ^ (c >> 8);
        }
        memcpy(g_buf + g_buflen, p, chunk);
        g_buflen += chunk;
        p += chunk;
        n -= chunk;
        if (g_buflen == sizeof g_buf) {
            rt_out_flush();
        }
    }
    g_crc = c;
}

static void rt_out_u32(unsigned int v)
{
    unsigned char b[4];
    b[0] = (unsigned char) (v & 0xffu);
    b[1] = (unsigned char) ((v >> 8) & 0xffu);
    b[2] = (unsigned char) ((v >> 16) & 0xffu);
    b[3] = (unsigned char) ((v >> 24) & 0xffu);
    rt_out(b, 4);
}

static void rt_out_u64(retest_u64 v)
{
    rt_out_u32((unsigned int) (v & 0xffffffffu));
    rt_out_u32((unsigned int) ((v >> 32) & 0xffffffffu));
}

/* First index in v[0..n) whose unit is >= unit. */
static size_t rt_pid_lower(const struct rt_pid *v, size_t n, unsigned int unit)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].unit < unit) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* ORs a section's live cells into its shadow.  Cells are hit when nonzero.
   Byte cells, except in two kinds that hold unsigned int cells: word edges
   (RETEST_SECT_EDGE_WORDS), and frames (RETEST_SECT_FRAMES), one counter per
   function -- calls in flight -- whose cell is hit when the counter is not
   zero: a path of that function was cut off (exit, longjmp, a signal, exec)
   and never recorded.  OR-ing keeps the shadow monotonic, so a count seen
   once stays reported. */
static void rt_snapshot_sect(struct rt_sect *sc)
{
    unsigned int k;
    if (sc->kind == RETEST_SECT_EDGE_COUNTS) {
        /* counters only grow: the larger of two reads is the later one */
        const volatile retest_u64 *c = (const volatile retest_u64 *) (const volatile void *) sc->live;
        for (k = 0; k < sc->len; k++) {
            retest_u64 v = c[k];
            if (v > sc->counts[k]) {
                sc->counts[k] = v;
            }
            if (v != 0 && sc->shadow[k] == 0) {
                sc->shadow[k] = 1;
            }
        }
        return;
    }
    if (sc->kind == RETEST_SECT_FRAMES || sc->kind == RETEST_SECT_EDGE_WORDS) {
        const volatile unsigned int *c = (const volatile unsigned int *) (const volatile void *) sc->live;
        for (k = 0; k < sc->len; k++) {
            if (c[k] != 0 && sc->shadow[k] == 0) {
                sc->shadow[k] = 1;
            }
        }
        return;
    }
    for (k = 0; k < sc->len; k++) {
        if (sc->live[k] != 0 && sc->shadow[k] == 0) {
            sc->shadow[k] = 1;
        }
    }
}

/* Snapshots a unit's frames sections (`frames` nonzero) or its other
   sections.  Every caller reads the counters first, then an acquire fence,
   then the cells and id sets: a call leaves its counter (release) only after
   recording its last path, so a counter seen at zero means that path is in
   what is read after it, even while other threads still run -- a path is
   never missing from a snapshot without its procedure counted in flight. */
static void rt_snapshot_sects(struct rt_unit *u, int frames)
{
    unsigned int s;
    for (s = 0; s < u->nsect; s++) {
        if ((u->sect[s].kind == RETEST_SECT_FRAMES) == (frames != 0)) {
            rt_snapshot_sect(&u->sect[s]);
        }
    }
}

/* Writes a unit; rt_write_trace has read its frames counters already. */
static void rt_write_unit(struct rt_unit *u, const struct rt_pid *ids, size_t nids)
{
    unsigned int s, k, nfunc = 0, ncounts = 0;
    size_t lo, hi, i;
    int detached = (int) RT_LOAD(&u->detached);

    /* Snapshot live cells into the shadow.  OR-ing keeps the shadow
       monotonic if __retest_unregister copies concurrently. */
    if (!detached) {
        rt_snapshot_sects(u, 0);
    }

    lo = rt_pid_lower(ids, nids, u->index);
    hi = rt_pid_lower(ids, nids, u->index + 1);
    for (i = lo; i < hi; i++) {
        if (i == lo || ids[i].func != ids[i - 1].func) {
            nfunc++;
        }
    }

    for (s = 0; s < u->nsect; s++) {
        if (u->sect[s].kind == RETEST_SECT_EDGE_COUNTS) {
            ncounts++;
        }
    }

    rt_out(u->hash, 16);
    rt_out_u32(u->nsect + ncounts + nfunc);
    for (s = 0; s < u->nsect; s++) {
        struct rt_sect *sc = &u->sect[s];
        unsigned int count = 0, written = 0;
        for (k = 0; k < sc->len; k++) {
            if (sc->shadow[k] != 0) {
                count++;
            }
        }
        /* the shadow is byte cells whatever the live cells' width */
        rt_out_u32(sc->kind == RETEST_SECT_EDGE_WORDS || sc->kind == RETEST_SECT_EDGE_COUNTS
                       ? (unsigned int) RETEST_SECT_EDGES
                       : sc->kind);
        rt_out_u32(sc->len);
        if (4 + 4 * (retest_u64) count < (retest_u64) sc->len) {
            rt_out_u32(RT_ENC_SPARSE);
            rt_out_u32(count);
            /* The shadow only gains cells, so stopping at `count` keeps the
               payload consistent with its header. */
            for (k = 0; k < sc->len && written < count; k++) {
                if (sc->shadow[k] != 0) {
                    rt_out_u32(k);
                    written++;
                }
            }
        } else {
            rt_out_u32(RT_ENC_RAW);
            rt_out(sc->shadow, sc->len);
        }
    }
    /* Execution counts after the hit cells: the counters read at the
       snapshot above, only those not zero (a counter that was not zero then
       has its shadow cell set, so `count` is the same set). */
    for (s = 0; s < u->nsect; s++) {
        struct rt_sect *sc = &u->sect[s];
        unsigned int count = 0, written = 0;
        if (sc->kind != RETEST_SECT_EDGE_COUNTS) {
            continue;
        }
        for (k = 0; k < sc->len; k++) {
            if (sc->counts[k] != 0) {
                count++;
            }
        }
        rt_out_u32(RETEST_SECT_EDGE_COUNTS);
        rt_out_u32(sc->len);
        rt_out_u32(RT_ENC_COUNTS);
        rt_out_u32(count);
        for (k = 0; k < sc->len && written < count; k++) {
            if (sc->counts[k] != 0) {
                rt_out_u32(k);
                rt_out_u64(sc->counts[k]);
                written++;
            }
        }
    }
    for (i = lo; i < hi;) {
        size_t j = i;
        while (j < hi && ids[j].func == ids[i].func) {
            j++;
        }
        rt_out_u32(RETEST_SECT_PATHS);
        rt_out_u32(ids[i].func);
        rt_out_u32(RT_ENC_IDSET);
        rt_out_u32((unsigned int) (j - i));
        for (; i < j; i++) {
            rt_out_u64(ids[i].id);
        }
    }
}

static int rt_build_names(unsigned int seq)
{
    struct rt_str s;
    int overflow;
    rt_str_init(&s, g_tmp_path, sizeof g_tmp_path);
    rt_str_put(&s, g_dir);
    rt_str_put(&s, "/.");
    rt_str_put(&s, g_stem);
    rt_str_put(&s, "-");
    rt_str_dec(&s, seq);
    rt_str_put(&s, ".rtt.tmp");
    overflow = s.overflow;
    rt_str_init(&s, g_final_path, sizeof g_final_path);
    rt_str_put(&s, g_dir);
    rt_str_put(&s, "/");
    rt_str_put(&s, g_stem);
    rt_str_put(&s, "-");
    rt_str_dec(&s, seq);
    rt_str_put(&s, ".rtt");
    return overflow || s.overflow ? -1 : 0;
}

/* Writes one complete trace file.  Caller holds the writer lock.  A final
   trace is written over the live marker, which is then renamed to the
   trace's name: one file per image instead of two, so no second inode is
   allocated and no unlink follows (file creation dominates the cost of a
   short process; 34 against 50 us per image measured on ext4).  Interrupted
   before the rename, the marker stays (coverage unknown), whatever part of
   the trace it holds. */
static int rt_write_trace(unsigned int flags, int final)
{
    static const unsigned char magic[8] = { 'R', 'E', 'T', 'E', 'S', 'T', 'T', 'R' };
    static const unsigned char endmagic[8] = { 'R', 'T', 'E', 'N', 'D', 0, 0, 0 };
    struct rt_unit *head = RT_LOAD(&g_units);
    struct rt_unit *u;
    struct rt_pid *ids;
    size_t nids, idbytes;
    unsigned int ntu = 0, crc;
    unsigned char trailer[4];
    int fd = -1, ok, over_marker = final && g_marker_present;

    if (rt_build_names(g_seq++) != 0) {
        return -1;
    }
    /* every unit's frames counters before the id sets and cells (see
       rt_snapshot_sects) */
    for (u = head; u != NULL; u = u->next) {
        if (!RT_LOAD(&u->detached)) {
            rt_snapshot_sects(u, 1);
        }
    }
    RT_FENCE_ACQUIRE();
    if (rt_pids_collect(&ids, &nids, &idbytes) != 0) {
        flags |= RT_FLAG_INCOMPLETE;
    }
    flags |= RT_LOAD(&g_incomplete);
    if (retest_rt_guard_clobbered()) {
        flags |= RT_FLAG_CLOBBERED;
    }
    /* Another thread may be part-way through a statement: the reader then
       claims what such a thread may have run (docs/trace-format.md). A
       fatal signal is flagged already. */
    if ((flags & RT_FLAG_SIGNAL) == 0 && rt_other_threads()) {
        flags |= RT_FLAG_THREADS;
    }
    /* A handler of the program may have left a statement part-way (longjmp
       out of it, exit inside it), as harnesses that survive a crashing test
       do: the reader then claims what such code may have run. */
    if (RT_LOAD(&g_user_handler)) {
        flags |= RT_FLAG_HANDLER;
    }
    for (u = head; u != NULL; u = u->next) {
        ntu++;
    }

    if (over_marker) {
        /* no O_TRUNC: truncating and reallocating costs more than the
           marker's few bytes; a trace shorter than them is cut below */
        fd = open(g_marker, O_WRONLY | O_CLOEXEC);
        over_marker = fd >= 0;
    }
    if (fd < 0) {
        fd = open(g_tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    }
    if (fd < 0) {
        if (ids != NULL) {
            munmap((void *) ids, idbytes);
        }
        return -1;
    }
    g_fd = fd;
    g_werr = 0;
    g_buflen = 0;
    g_crc = 0xffffffffu;

    rt_out(magic, 8);
    rt_out_u32(RT_FORMAT_VERSION);
    rt_out_u32(flags);
    rt_out_u64((retest_u64) g_pid);
    rt_out_u64(0);
    rt_out_u32(ntu);
    for (u = head; u != NULL; u = u->next) {
        rt_write_unit(u, ids, nids);
    }
    crc = g_crc ^ 0xffffffffu;
    trailer[0] = (unsigned char) (crc & 0xffu);
    trailer[1] = (unsigned char) ((crc >> 8) & 0xffu);
    trailer[2] = (unsigned char) ((crc >> 16) & 0xffu);
    trailer[3] = (unsigned char) ((crc >> 24) & 0xffu);
    rt_out(trailer, 4);
    rt_out(endmagic, 8);
    rt_out_flush();

    if (ids != NULL) {
        munmap((void *) ids, idbytes);
    }
    ok = !g_werr;
    if (over_marker && ok) {
        off_t end = lseek(fd, 0, SEEK_CUR);
        ok = end >= 0 && ((size_t) end >= g_cmdline_len || ftruncate(fd, end) == 0);
    }
    if (close(fd) != 0 && errno != EINTR) {
        ok = 0;
    }
    if (!ok || rename(over_marker ? g_marker : g_tmp_path, g_final_path) != 0) {
        if (!over_marker) {
            unlink(g_tmp_path);
        }
        return -1;
    }
    if (over_marker) {
        g_marker_present = 0;
    }
    return 0;
}

/* The writer lock holds the writing thread's id.  A thread that finds the
   lock held by itself (a signal arrived while it was writing) gives up
   instead of deadlocking; so does any thread when `wait` is 0. */
static int rt_lock(int wait)
{
    long me = rt_gettid();
    for (;;) {
        long owner;
        if (RT_CAS(&g_wlock, 0L, me)) {
            return 1;
        }
        owner = RT_LOAD(&g_wlock);
        if (!wait || owner == me) {
            return 0;
        }
        sched_yield();
    }
}

static void rt_unlock(void)
{
    RT_STORE(&g_wlock, 0L);
}

static int rt_owns_image(void)
{
    /* A vfork child (or a raw clone) shares or copies our memory without
       going through pthread_atfork: it must not write as if it were us. */
    return RT_LOAD(&g_mode) == MODE_ACTIVE && getpid() == g_pid;
}

/* Writes a trace; when `final`, removes the live marker after a successful
   write.  Returns 0 when a trace was written. */
static int rt_flush(unsigned int flags, int wait, int final)
{
    int rc;
    if (!rt_owns_image() || !rt_lock(wait)) {
        return -1;
    }
    rc = rt_write_trace(flags, final);
    if (rc == 0 && final && g_marker_present) {
        unlink(g_marker);
        g_marker_present = 0;
    }
    rt_unlock();
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Live marker                                                               */
/* ------------------------------------------------------------------------ */

static retest_u64 rt_nonce(void)
{
    struct timespec ts;
    retest_u64 x = 0;
    if (clock_gettime(CLOCK_REALTIME, &ts) == 0) {
        x = (retest_u64) ts.tv_sec * 1000000000u + (retest_u64) ts.tv_nsec;
    }
    if (clock_gettime(CLOCK_MONOTONIC, &ts) == 0) {
        x ^= rt_mix((retest_u64) ts.tv_sec * 1000000000u + (retest_u64) ts.tv_nsec);
    }
    x ^= rt_mix((retest_u64) (size_t) &g_mode);           /* ASLR bits of this copy */
    x ^= rt_mix(RT_U64((unsigned long) getpid(), RT_ADD(&g_nonce_counter, 1u)));
    return rt_mix(x);
}

/* Writes the command line read by rt_read_cmdline to `fd` (best effort). */
static void rt_write_cmdline(int fd)
{
    size_t off = 0;
    while (off < g_cmdline_len) {
        ssize_t w = write(fd, g_cmdline + off, g_cmdline_len - off);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            break;
        }
        off += (size_t) w;
    }
}

static int rt_open_marker(int flags)
{
    int fd = open(g_marker, O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0644);
    if (fd >= 0) {
        rt_write_cmdline(fd);
        close(fd);
        g_marker_present = 1;
        return 0;
    }
    return -1;
}

/* Under `retest run`, appends "<pgid> <stem>\n" to RETEST_RT_UNRECORDED/.images,
   so that the runner can tell a trace the test deleted from one that was never
   written (docs/trace-format.md).  One O_APPEND write of a short line: atomic
   among the processes of a run.  No-op when the directory does not exist. */
static void rt_log_image(void)
{
#ifdef RETEST_RT_UNRECORDED
    char line[64];
    struct rt_str s;
    int fd = open(RETEST_RT_UNRECORDED "/.images", O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        return;
    }
    rt_str_init(&s, line, sizeof line);
    rt_str_dec(&s, (retest_u64) getpgrp());
    rt_str_put(&s, " ");
    rt_str_put(&s, g_stem);
    rt_str_put(&s, "\n");
    if (!s.overflow) {
        ssize_t w;
        do {
            w = write(fd, line, s.len);
        } while (w < 0 && errno == EINTR);
    }
    close(fd);
#endif
}

/* Picks a fresh nonce for this image and creates its marker. */
static int rt_new_marker(void)
{
    int attempt;
    for (attempt = 0; attempt < 16; attempt++) {
        struct rt_str s;
        rt_str_init(&s, g_stem, sizeof g_stem);
        rt_str_dec(&s, (retest_u64) g_pid);
        rt_str_put(&s, "-");
        rt_str_hex16(&s, rt_nonce());
        rt_str_init(&s, g_marker, sizeof g_marker);
        rt_str_put(&s, g_dir);
        rt_str_put(&s, "/");
        rt_str_put(&s, g_stem);
        rt_str_put(&s, ".live");
        if (s.overflow) {
            return -1;
        }
        if (rt_open_marker(O_EXCL) == 0) {
            g_seq = 0;
            rt_log_image();
            return 0;
        }
        if (errno != EEXIST) {
            return -1;
        }
    }
    return -1;
}

/* glibc calls the ELF constructors of the executable and of every shared
   object, also one loaded by dlopen, with (argc, argv, envp). Taking the
   command line there spares every process opening /proc/self/cmdline. This
   constructor runs before the default-priority ones of the same object,
   where the units register; a unit whose probe runs earlier (called from
   another object's constructor) sets up before it, and reads /proc. Other C
   libraries (musl) pass nothing, so they always read /proc. */
static RT_STATE int g_cmdline_taken;

#if defined(__GNUC__) && defined(__GLIBC__) && !defined(__UCLIBC__)
__attribute__((constructor(101)))
static void rt_take_cmdline(int argc, char **argv, char **envp)
{
    int i;
    (void) envp;
    if (g_cmdline_taken || RT_LOAD(&g_mode) != MODE_UNINIT || argc <= 0 || argv == NULL) {
        return;
    }
    g_cmdline_len = 0;
    for (i = 0; i < argc && argv[i] != NULL; i++) {
        size_t n = strlen(argv[i]) + 1; /* each argument ends in a NUL */
        if (n > sizeof g_cmdline - g_cmdline_len) {
            n = sizeof g_cmdline - g_cmdline_len;
        }
        memcpy(g_cmdline + g_cmdline_len, argv[i], n);
        g_cmdline_len += n;
    }
    g_cmdline_taken = 1;
}
#endif

/* The command line, as /proc/self/cmdline has it: each argument followed by
   a NUL, cut at RT_CMDLINE_MAX bytes. */
static void rt_read_cmdline(void)
{
    long len;
    if (g_cmdline_taken) {
        return;
    }
    len = rt_read_file("/proc/self/cmdline", g_cmdline, sizeof g_cmdline);
    g_cmdline_len = len < 0 ? 0 : (size_t) len;
}

/* ------------------------------------------------------------------------ */
/* Signals, fork, exit                                                       */
/* ------------------------------------------------------------------------ */

static void rt_on_signal(int sig)
{
    int saved = errno;
    struct sigaction dfl;
    (void) rt_flush(RT_FLAG_SIGNAL | (((unsigned int) sig & 0xffu) << RT_FLAG_SIGNO_SHIFT), 0, 1);
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    rt_sigaction(sig, &dfl, NULL);
    /* The signal is blocked while this handler runs; it is delivered with
       the default action as soon as the handler returns. */
    raise(sig);
    errno = saved;
}

/* Whether `a` is the plain (not SA_SIGINFO) handler `h`. */
static int rt_plain_handler(const struct sigaction *a, void (*h)(int))
{
    return (a->sa_flags & SA_SIGINFO) == 0 && a->sa_handler == h;
}

/* While the process has a single thread, blocks every signal (the previous
   mask in `prev`) and returns 1: the caller may then swap a disposition in
   and put the old one back without any signal meeting the one in between.
   The mask is the calling thread's only, so with other threads (a library
   loaded by dlopen), or when that is not known, returns 0: look first and
   replace only what may be replaced. */
static int rt_block_all(sigset_t *prev)
{
    sigset_t all;
    sigfillset(&all);
    return rt_single_threaded() && sigprocmask(SIG_SETMASK, &all, prev) == 0;
}

/* Puts `to` in as the disposition of `sig` where the current one is the
   plain handler `from`; returns 1 when it did. `blocked` (rt_block_all):
   one call swaps `to` in and returns what was there, and a second puts that
   back if it was not `from`; not blocked: look first, and replace only
   `from`, so no other thread meets `to` in place of something else. */
static int rt_swap_if(int sig, const struct sigaction *to, void (*from)(int), int blocked)
{
    struct sigaction old;
    if (rt_sigaction(sig, blocked ? to : NULL, &old) != 0) {
        return 0;
    }
    if (!rt_plain_handler(&old, from)) {
        if (blocked) {
            (void) rt_sigaction(sig, &old, NULL);
        }
        return 0;
    }
    return blocked || rt_sigaction(sig, to, NULL) == 0;
}

static void rt_install_signals(void)
{
    struct sigaction sa;
    sigset_t prev;
    int blocked;
    size_t i;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = rt_on_signal;
    sigfillset(&sa.sa_mask);
    sa.sa_flags = SA_ONSTACK | SA_RESTART;
    /* only where the disposition is SIG_DFL: a handler, or SIG_IGN inherited
       across exec, stays */
    blocked = rt_block_all(&prev);
    for (i = 0; i < RT_NSIGNALS; i++) {
        if (rt_swap_if(rt_signals[i], &sa, SIG_DFL, blocked)) {
            g_sig_installed[i] = 1;
        }
    }
    if (blocked) {
        (void) sigprocmask(SIG_SETMASK, &prev, NULL);
    }
    /* An alternate stack lets the handler run after a stack overflow.  Only
       for the main thread, only if it has none; the memory is never
       unmapped, so it stays valid even if this copy is dlclose'd. */
    if (rt_gettid() == (long) getpid()) {
        stack_t cur;
        if (sigaltstack(NULL, &cur) == 0 && (cur.ss_flags & SS_DISABLE) != 0) {
            void *mem = rt_map(RT_ALTSTACK_SIZE);
            if (mem != NULL) {
                stack_t ss;
                ss.ss_sp = mem;
                ss.ss_size = RT_ALTSTACK_SIZE;
                ss.ss_flags = 0;
                if (sigaltstack(&ss, NULL) == 0) {
                    g_altstack = mem;
                } else {
                    munmap(mem, RT_ALTSTACK_SIZE);
                }
            }
        }
    }
}

#ifndef RETEST_RT_PROGRAM
/* Puts back SIG_DFL where our handler is still installed: this copy's code
   may be about to be unmapped (dlclose). */
static void rt_restore_signals(void)
{
    struct sigaction dfl;
    sigset_t prev;
    int blocked;
    size_t i;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    /* only where ours is still there: a handler the program installed over
       ours since stays */
    blocked = rt_block_all(&prev);
    for (i = 0; i < RT_NSIGNALS; i++) {
        if (g_sig_installed[i]) {
            g_sig_installed[i] = 0;
            (void) rt_swap_if(rt_signals[i], &dfl, rt_on_signal, blocked);
        }
    }
    if (blocked) {
        (void) sigprocmask(SIG_SETMASK, &prev, NULL);
    }
}
#endif

/* A forked child starts its execution counts from zero, so that the counts
   of a test's processes add up to what ran: the parent's counts until the
   fork stay the parent's.  Its hit cells keep what the parent had set (the
   snapshot before the counters are cleared), as those of byte cells do.
   The child runs alone here (the atfork handler runs before it returns from
   fork). */
static void rt_counts_restart(void)
{
    struct rt_unit *u;
    unsigned int s, k;
    for (u = RT_LOAD(&g_units); u != NULL; u = u->next) {
        for (s = 0; s < u->nsect; s++) {
            struct rt_sect *sc = &u->sect[s];
            if (sc->kind != RETEST_SECT_EDGE_COUNTS) {
                continue;
            }
            if (!RT_LOAD(&u->detached)) {
                volatile retest_u64 *c = (volatile retest_u64 *) (volatile void *) sc->live;
                rt_snapshot_sect(sc);
                for (k = 0; k < sc->len; k++) {
                    c[k] = 0;
                }
            }
            for (k = 0; k < sc->len; k++) {
                sc->counts[k] = 0;
            }
        }
    }
}

static void rt_atfork_child(void)
{
    if (RT_LOAD(&g_mode) != MODE_ACTIVE) {
        return;
    }
    rt_counts_restart();
    g_wlock = 0;
    g_pid = getpid();
    g_marker_present = 0;
    if (rt_new_marker() != 0) {
        RT_OR(&g_incomplete, RT_FLAG_INCOMPLETE);
        rt_diag("cannot create the live marker of a forked child in ", g_dir);
    }
}

/* Normal exit: a destructor with the lowest user priority, so it runs after
   every atexit handler (C++ static destructors included) and after every
   default-priority destructor of the object this copy is linked into. */
#ifdef __GNUC__
__attribute__((destructor(101)))
#endif
static void rt_fini(void)
{
    if (!rt_owns_image()) {
        return;
    }
    (void) rt_flush(RT_FLAG_EXIT, 1, 1);
#ifndef RETEST_RT_PROGRAM
    /* a shared object may be unmapped next (dlclose); a program's handlers
       stay valid until the process is gone, so a program keeps them and
       saves 24 system calls per process */
    rt_restore_signals();
#endif
}

/* ------------------------------------------------------------------------ */
/* Initialisation and registration                                           */
/* ------------------------------------------------------------------------ */

static int rt_set_dir(const char *dir)
{
    struct rt_str s;
    rt_str_init(&s, g_dir, sizeof g_dir);
    if (dir[0] != '/') {
        if (getcwd(g_dir, sizeof g_dir) == NULL) {
            return -1;
        }
        s.len = strlen(g_dir);
        rt_str_put(&s, "/");
    }
    rt_str_put(&s, dir);
    while (s.len > 1 && g_dir[s.len - 1] == '/') {
        g_dir[--s.len] = '\0';
    }
    return s.overflow ? -1 : 0;
}

#ifdef RETEST_RT_UNRECORDED
/* This image runs instrumented code but records nothing: says so in
   RETEST_RT_UNRECORDED if that directory exists (one failed open otherwise). */
static void rt_report_unrecorded(void)
{
    struct rt_str s;
    int fd, attempt;
    for (attempt = 0; attempt < 16; attempt++) {
        rt_str_init(&s, g_marker, sizeof g_marker);
        rt_str_put(&s, RETEST_RT_UNRECORDED);
        rt_str_put(&s, "/");
        rt_str_dec(&s, (retest_u64) getpgrp());
        rt_str_put(&s, "-");
        rt_str_dec(&s, (retest_u64) getpid());
        rt_str_put(&s, "-");
        rt_str_hex16(&s, rt_nonce());
        if (s.overflow) {
            return;
        }
        fd = open(g_marker, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd >= 0) {
            break;
        }
        if (errno != EEXIST) {
            return; /* no run is active (or the directory is unusable) */
        }
    }
    if (fd < 0) {
        return;
    }
    rt_read_cmdline();
    rt_write_cmdline(fd);
    close(fd);
    g_marker[0] = '\0';
}
#endif

/* The image stays inert although it runs instrumented code. */
static void rt_unrecorded(void)
{
#ifdef RETEST_RT_UNRECORDED
    rt_report_unrecorded();
#endif
}

/* Returns 0 when the runtime becomes active. */
static int rt_setup(void)
{
    const char *dir = getenv("RETEST_TRACE_DIR");
    if (dir == NULL || dir[0] == '\0') {
        rt_unrecorded();
        return -1;
    }
    if (rt_set_dir(dir) != 0) {
        rt_diag("RETEST_TRACE_DIR is unusable (too long?): ", dir);
        rt_unrecorded();
        return -1;
    }
    rt_crc_init();
    rt_read_cmdline();
    g_pid = getpid();
    if (rt_new_marker() != 0) {
        rt_diag("cannot create a live marker; coverage is not recorded. Directory: ", g_dir);
        rt_unrecorded();
        return -1;
    }
    rt_install_signals();
    if (pthread_atfork(NULL, NULL, rt_atfork_child) != 0) {
        RT_OR(&g_incomplete, RT_FLAG_INCOMPLETE);
    }
#ifndef __GNUC__
    atexit(rt_fini);
#endif
    return 0;
}

static void rt_init(void)
{
    for (;;) {
        int m = RT_LOAD(&g_mode);
        if (m == MODE_INERT || m == MODE_ACTIVE) {
            return;
        }
        if (m == MODE_UNINIT && RT_CAS(&g_mode, MODE_UNINIT, MODE_INITIALISING)) {
            break;
        }
        if (RT_LOAD(&g_init_tid) == rt_gettid()) {
            return; /* re-entered from a signal handler during set-up */
        }
        sched_yield();
    }
    RT_STORE(&g_init_tid, rt_gettid());
    RT_STORE(&g_mode, rt_setup() == 0 ? MODE_ACTIVE : MODE_INERT);
}

static void rt_register(struct retest_tu *tu)
{
    struct rt_unit *u, *head;
    unsigned char *cells;
    retest_u64 *counts;
    size_t bytes, ncells = 0, ncounts = 0, off, coff;
    unsigned int s, st;
    long spins = 0;

    if (!RT_ABI_KNOWN(tu->abi)) {
        /* Layout unknown: touch nothing else, but say the trace is partial. */
        RT_OR(&g_incomplete, RT_FLAG_INCOMPLETE);
        return;
    }
    rt_init();
    if (RT_LOAD(&g_mode) != MODE_ACTIVE) {
        return;
    }
    for (;;) {
        st = RT_LOAD(&tu->state);
        if (st == ST_REGISTERED) {
            return;
        }
        if ((st == ST_NONE || st == ST_DETACHED) && RT_CAS(&tu->state, st, ST_CLAIMED)) {
            break;
        }
        if (++spins > RT_CLAIM_SPINS) {
            RT_OR(&g_incomplete, RT_FLAG_INCOMPLETE);
            return;
        }
        sched_yield();
    }

    bytes = sizeof(struct rt_unit) + (size_t) tu->nsect * sizeof(struct rt_sect);
    for (s = 0; s < tu->nsect; s++) {
        ncells += tu->sect[s].len;
        if (tu->sect[s].kind == RETEST_SECT_EDGE_COUNTS) {
            ncounts += tu->sect[s].len;
        }
    }
    /* the counters' copies first, 8-byte aligned (rt_alloc's blocks are) */
    bytes = (bytes + 7u) & ~(size_t) 7u;
    u = (struct rt_unit *) rt_alloc(bytes + ncounts * sizeof(retest_u64) + ncells);
    if (u == NULL) {
        RT_OR(&g_incomplete, RT_FLAG_INCOMPLETE);
        RT_STORE(&tu->state, st);
        return;
    }
    u->index = RT_ADD(&g_next_index, 1u) + 1u;
    u->nsect = tu->nsect;
    u->detached = 0;
    memcpy(u->hash, tu->hash, 16);
    u->sect = (struct rt_sect *) (void *) (u + 1);
    counts = (retest_u64 *) (void *) ((unsigned char *) (void *) u + bytes);
    cells = (unsigned char *) (void *) (counts + ncounts);
    for (s = 0, off = 0, coff = 0; s < tu->nsect; s++) {
        u->sect[s].kind = tu->sect[s].kind;
        u->sect[s].len = tu->sect[s].len;
        u->sect[s].live = tu->sect[s].data;
        u->sect[s].shadow = cells + off;
        off += tu->sect[s].len;
        u->sect[s].counts = NULL;
        if (tu->sect[s].kind == RETEST_SECT_EDGE_COUNTS) {
            u->sect[s].counts = counts + coff;
            coff += tu->sect[s].len;
        }
    }
    do {
        head = RT_LOAD(&g_units);
        u->next = head;
    } while (!RT_CAS(&g_units, head, u));
    tu->shadow = (unsigned char *) (void *) u;
    RT_STORE(&tu->state, ST_REGISTERED);
}

/* The entry points run in the middle of user code (a probe may sit between
   a failing call and the errno check), so they preserve errno. */
static void rt_register_quietly(struct retest_tu *tu)
{
    int saved = errno;
    rt_register(tu);
    errno = saved;
}

RT_EXPORT void __retest_register(struct retest_tu *tu)
{
    rt_register_quietly(tu);
}

RT_EXPORT void __retest_unregister(struct retest_tu *tu)
{
    struct rt_unit *u;
    if (!RT_ABI_KNOWN(tu->abi) || RT_LOAD(&tu->state) != ST_REGISTERED) {
        return;
    }
    u = (struct rt_unit *) (void *) tu->shadow;
    rt_snapshot_sects(u, 1);
    RT_FENCE_ACQUIRE();
    rt_snapshot_sects(u, 0);
    RT_STORE(&u->detached, 1u);
    RT_STORE(&tu->state, ST_DETACHED);
}

RT_EXPORT void __retest_path_hit(struct retest_tu *tu, unsigned int func, retest_u64 id)
{
    unsigned int st;
    if (!RT_ABI_KNOWN(tu->abi)) {
        RT_OR(&g_incomplete, RT_FLAG_INCOMPLETE);
        return;
    }
    st = RT_LOAD(&tu->state);
    if (st != ST_REGISTERED && st != ST_DETACHED) {
        if (RT_LOAD(&g_mode) == MODE_INERT) {
            return;
        }
        rt_register_quietly(tu); /* the probe ran before the TU's constructor */
        st = RT_LOAD(&tu->state);
        if (st != ST_REGISTERED) {
            return;
        }
    }
    rt_pset_insert(((struct rt_unit *) (void *) tu->shadow)->index, func, id);
}

/* ------------------------------------------------------------------------ */
/* exec and _exit interposers                                                */
/* ------------------------------------------------------------------------ */

#ifndef RETEST_RT_NO_INTERPOSE

typedef int (*rt_execve_fn)(const char *, char *const[], char *const[]);
typedef int (*rt_fexecve_fn)(int, char *const[], char *const[]);

static RT_STATE rt_execve_fn rt_next_execve;
static RT_STATE rt_execve_fn rt_next_execvpe;
static RT_STATE rt_fexecve_fn rt_next_fexecve;
#ifndef RETEST_RT_NO_DLSYM
static RT_STATE int rt_next_resolved;
#endif

/* The next definitions of the exec functions are looked up when the image
   starts (a constructor of every copy, whether or not it records), not at
   the exec: an exec may come from a child that must run nothing but
   async-signal-safe code on a tiny stack -- a vfork child, or GoogleTest's
   threadsafe death test, whose clone() child runs on 8 KiB and exec's the
   test binary: dlsym there overflowed that stack, and the child died before
   the death test's statement ran (fmt's assert_test.fail). The lookup at the
   exec remains for an exec called from an earlier object's constructor. */
static void rt_resolve_next(void)
{
#ifndef RETEST_RT_NO_DLSYM
    if (RT_LOAD(&rt_next_resolved)) {
        return;
    }
    if (dlsym != NULL) {
        void *p;
        p = dlsym(RTLD_NEXT, "execve");
        memcpy(&rt_next_execve, &p, sizeof p);
        p = dlsym(RTLD_NEXT, "execvpe");
        memcpy(&rt_next_execvpe, &p, sizeof p);
        p = dlsym(RTLD_NEXT, "fexecve");
        memcpy(&rt_next_fexecve, &p, sizeof p);
    }
    RT_STORE(&rt_next_resolved, 1);
#endif
}

#if defined(__GNUC__) && !defined(RETEST_RT_NO_DLSYM)
__attribute__((constructor(101)))
static void rt_resolve_at_start(void)
{
    rt_resolve_next();
}
#endif

static int rt_sys_execve(const char *path, char *const argv[], char *const envp[])
{
    return (int) syscall(SYS_execve, path, argv, envp);
}

/* execvp's fallback for a file without a #! line: run it with /bin/sh.
   Not inlined, nor is the next function: their buffers stay off the stack
   of every other exec. */
RT_NOINLINE static void rt_exec_script(const char *path, char *const argv[], char *const envp[])
{
    char *nargv[RT_ARGV_STACK];
    size_t argc = 0, i;
    while (argv[argc] != NULL) {
        argc++;
    }
    if (argc + 2 > RT_ARGV_STACK) {
        errno = E2BIG;
        return;
    }
    nargv[0] = (char *) "/bin/sh";
    nargv[1] = (char *) path;
    for (i = 1; i <= argc; i++) {
        nargv[i + 1] = argv[i];
    }
    if (argc == 0) {
        nargv[2] = NULL;
    }
    (void) rt_sys_execve("/bin/sh", nargv, envp);
}

/* PATH search for execvp/execvpe/execlp when libc's is not reachable. */
RT_NOINLINE static int rt_execvpe_fallback(const char *file, char *const argv[], char *const envp[])
{
    char buf[RT_PATH_MAX];
    const char *path, *p, *end;
    size_t flen = strlen(file);
    int eacces = 0;
    if (flen == 0) {
        errno = ENOENT;
        return -1;
    }
    if (strchr(file, '/') != NULL) {
        (void) rt_sys_execve(file, argv, envp);
        if (errno == ENOEXEC) {
            rt_exec_script(file, argv, envp);
        }
        return -1;
    }
    path = getenv("PATH");
    if (path == NULL) {
        path = "/bin:/usr/bin";
    }
    for (p = path;; p = end + 1) {
        size_t dlen;
        end = strchr(p, ':');
        if (end == NULL) {
            end = p + strlen(p);
        }
        dlen = (size_t) (end - p);
        if (dlen + flen + 2 <= sizeof buf) {
            if (dlen == 0) {
                memcpy(buf, file, flen + 1);
            } else {
                memcpy(buf, p, dlen);
                buf[dlen] = '/';
                memcpy(buf + dlen + 1, file, flen + 1);
            }
            (void) rt_sys_execve(buf, argv, envp);
            switch (errno) {
            case ENOEXEC:
                rt_exec_script(buf, argv, envp);
                return -1;
            case EACCES:
                eacces = 1;
                break;
            case ENOENT:
            case ENOTDIR:
            case ENODEV:
            case ETIMEDOUT:
#ifdef ESTALE
            case ESTALE:
#endif
                break;
            default:
                return -1;
            }
        }
        if (*end == '\0') {
            break;
        }
    }
    errno = eacces ? EACCES : ENOENT;
    return -1;
}

/* Before an exec: write the image's final trace and remove its marker.
   Returns 1 when the marker was removed. */
static int rt_before_exec(void)
{
    return rt_flush(RT_FLAG_EXEC, 1, 1) == 0;
}

/* The exec failed and this image keeps running: it needs its marker back
   and will write another (superset) trace later. */
static void rt_exec_failed(int flushed)
{
    int saved = errno;
    if (flushed && rt_owns_image() && rt_lock(1)) {
        if (!g_marker_present && rt_open_marker(0) != 0) {
            RT_OR(&g_incomplete, RT_FLAG_INCOMPLETE);
        }
        rt_unlock();
    }
    errno = saved;
}

/* Collects execl-style arguments: `first` then the variadic list up to NULL
   (already counted: `n` pointers including `first`). */
static char **rt_argv_alloc(size_t n, char **stackv)
{
    if (n + 1 <= RT_ARGV_STACK) {
        return stackv;
    }
    if (n + 1 > (size_t) -1 / sizeof(char *)) {
        return NULL;
    }
    return (char **) malloc((n + 1) * sizeof(char *));
}

/* The environment the next image gets: `envp`, with RETEST_TRACE_DIR added
   when this image records coverage and `envp` lacks it, so that an instrumented
   program exec'ed with an explicit or cleared environment still writes its
   trace instead of silently recording nothing. Returns `envp` itself, `stackv`,
   or a malloc'ed array (the caller frees it when it is neither). */
static RT_STATE char g_env_entry[RT_DIR_MAX + 32];

static char *const *rt_exec_env(char *const envp[], char **stackv)
{
    static const char key[] = "RETEST_TRACE_DIR=";
    size_t n = 0, i;
    char **out;
    struct rt_str s;
    if (g_dir[0] == '\0' || !rt_owns_image()) {
        return envp;
    }
    if (envp != NULL) {
        for (; envp[n] != NULL; n++) {
            if (strncmp(envp[n], key, sizeof key - 1) == 0) {
                return envp;
            }
        }
    }
    rt_str_init(&s, g_env_entry, sizeof g_env_entry);
    rt_str_put(&s, key);
    rt_str_put(&s, g_dir);
    if (s.overflow) {
        return envp;
    }
    out = rt_argv_alloc(n + 1, stackv);
    if (out == NULL) {
        return envp;
    }
    for (i = 0; i < n; i++) {
        out[i] = envp[i];
    }
    out[n] = g_env_entry;
    out[n + 1] = NULL;
    return out;
}

/* The exec itself: the next definition, or the system call. */
static int rt_exec_next(int search, const char *file, char *const argv[], char *const envp[])
{
    if (search) {
        return rt_next_execvpe != NULL ? rt_next_execvpe(file, argv, envp)
                                       : rt_execvpe_fallback(file, argv, envp);
    }
    return rt_next_execve != NULL ? rt_next_execve(file, argv, envp) : rt_sys_execve(file, argv, envp);
}

/* An exec by the image that records: its final trace first, and the trace
   directory passed on. Not inlined into rt_exec, so that its frame (the
   copied environment) is not taken on the stack of an exec that does not
   record (see rt_exec). */
RT_NOINLINE static int rt_exec_recorded(int search, const char *file, char *const argv[], char *const envp_in[])
{
    int flushed, r;
    char *stackv[RT_ARGV_STACK];
    char *const *envp = rt_exec_env(envp_in, stackv);
    flushed = rt_before_exec();
    r = rt_exec_next(search, file, argv, envp);
    rt_exec_failed(flushed);
    if (envp != envp_in && envp != (char *const *) stackv) {
        int saved = errno;
        free((void *) envp);
        errno = saved;
    }
    return r;
}

/* An image that does not own the runtime's state -- a vfork child, a raw
   clone() child (GoogleTest's threadsafe death tests) -- or that records
   nothing has no trace to write: its exec is the next definition's, with no
   more stack and no other call than libc's own exec would make. */
static int rt_exec(int search, const char *file, char *const argv[], char *const envp[])
{
    rt_resolve_next();
    if (!rt_owns_image()) {
        return rt_exec_next(search, file, argv, envp);
    }
    return rt_exec_recorded(search, file, argv, envp);
}

RT_EXPORT int execve(const char *path, char *const argv[], char *const envp[]) RT_THROW
{
    return rt_exec(0, path, argv, envp);
}

RT_EXPORT int execv(const char *path, char *const argv[]) RT_THROW
{
    return rt_exec(0, path, argv, environ);
}

RT_EXPORT int execvp(const char *file, char *const argv[]) RT_THROW
{
    return rt_exec(1, file, argv, environ);
}

RT_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[]) RT_THROW
{
    return rt_exec(1, file, argv, envp);
}

static int rt_fexec_next(int fd, char *const argv[], char *const envp[])
{
    if (rt_next_fexecve != NULL) {
        return rt_next_fexecve(fd, argv, envp);
    }
#if defined(SYS_execveat) && defined(AT_EMPTY_PATH)
    return (int) syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
#else
    errno = ENOSYS;
    return -1;
#endif
}

RT_NOINLINE static int rt_fexec_recorded(int fd, char *const argv[], char *const envp_in[])
{
    int flushed, r;
    char *stackv[RT_ARGV_STACK];
    char *const *envp = rt_exec_env(envp_in, stackv);
    flushed = rt_before_exec();
    r = rt_fexec_next(fd, argv, envp);
    rt_exec_failed(flushed);
    if (envp != envp_in && envp != (char *const *) stackv) {
        int saved = errno;
        free((void *) envp);
        errno = saved;
    }
    return r;
}

/* as rt_exec */
RT_EXPORT int fexecve(int fd, char *const argv[], char *const envp[]) RT_THROW
{
    rt_resolve_next();
    if (!rt_owns_image()) {
        return rt_fexec_next(fd, argv, envp);
    }
    return rt_fexec_recorded(fd, argv, envp);
}

#define RT_EXECL_BODY(search, name, arg, with_env)                                          \
    va_list ap;                                                                             \
    char *stackv[RT_ARGV_STACK];                                                            \
    char **argv;                                                                            \
    char *const *envp = environ;                                                            \
    size_t n = 1, i;                                                                        \
    int r;                                                                                  \
    va_start(ap, arg);                                                                      \
    while (va_arg(ap, char *) != NULL) {                                                    \
        n++;                                                                                \
    }                                                                                       \
    va_end(ap);                                                                             \
    argv = rt_argv_alloc(n, stackv);                                                        \
    if (argv == NULL) {                                                                     \
        errno = E2BIG;                                                                      \
        return -1;                                                                          \
    }                                                                                       \
    argv[0] = (char *) arg;                                                                 \
    va_start(ap, arg);                                                                      \
    for (i = 1; i <= n; i++) {                                                              \
        argv[i] = va_arg(ap, char *);                                                       \
    }                                                                                       \
    if (with_env) {                                                                         \
        envp = va_arg(ap, char *const *);                                                   \
    }                                                                                       \
    va_end(ap);                                                                             \
    r = rt_exec(search, name, argv, envp);                                                  \
    if (argv != stackv) {                                                                   \
        int saved = errno;                                                                  \
        free(argv);                                                                         \
        errno = saved;                                                                      \
    }                                                                                       \
    return r;

RT_EXPORT int execl(const char *path, const char *arg, ...) RT_THROW
{
    RT_EXECL_BODY(0, path, arg, 0)
}

RT_EXPORT int execlp(const char *file, const char *arg, ...) RT_THROW
{
    RT_EXECL_BODY(1, file, arg, 0)
}

RT_EXPORT int execle(const char *path, const char *arg, ...) RT_THROW
{
    RT_EXECL_BODY(0, path, arg, 1)
}

/* Handler interposers: they note that the program installed a handler of
   its own (not SIG_DFL, SIG_IGN or ours) and pass the call on unchanged, to
   the next definition (dlsym(RTLD_NEXT), so that other interposers such as a
   sanitizer's stay in the chain) or, without dlsym, to glibc's __sigaction.
   The next definitions are looked up once, at the program's first call (a
   program installs a handler before the handler can run, so a handler that
   reinstalls itself, as System V handlers do, never runs dlsym, which is not
   async-signal-safe); a program that never calls them pays nothing. glibc
   only; `sigset` and raw system calls are not seen. */
#ifdef RT_INTERPOSE_HANDLERS
typedef void (*rt_handler_fn)(int);
typedef int (*rt_sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef rt_handler_fn (*rt_signal_fn)(int, rt_handler_fn);

enum { RT_SIGNAL, RT_BSD_SIGNAL, RT_SYSV_SIGNAL, RT_SYSV_SIGNAL2, RT_NSIGNAL_FNS };
static const char *const rt_signal_names[RT_NSIGNAL_FNS] = { "signal", "bsd_signal", "sysv_signal",
                                                             "__sysv_signal" };
static RT_STATE rt_sigaction_fn rt_next_sigaction;
static RT_STATE rt_signal_fn rt_next_signal[RT_NSIGNAL_FNS];
static RT_STATE int rt_handlers_resolved;

static void rt_resolve_handlers(void)
{
    int i;
    void *p;
    if (RT_LOAD(&rt_handlers_resolved) || dlsym == NULL) {
        return;
    }
    p = dlsym(RTLD_NEXT, "sigaction");
    memcpy(&rt_next_sigaction, &p, sizeof p);
    for (i = 0; i < RT_NSIGNAL_FNS; i++) {
        p = dlsym(RTLD_NEXT, rt_signal_names[i]);
        memcpy(&rt_next_signal[i], &p, sizeof p);
    }
    RT_STORE(&rt_handlers_resolved, 1);
}

static void rt_note_handler(rt_handler_fn h)
{
    if (h != SIG_DFL && h != SIG_IGN && h != SIG_ERR && h != rt_on_signal) {
        RT_STORE(&g_user_handler, 1);
    }
}

RT_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old) RT_THROW
{
    if (act != NULL) {
        rt_note_handler(act->sa_handler);
    }
    rt_resolve_handlers();
    if (rt_next_sigaction != NULL) {
        return rt_next_sigaction(sig, act, old);
    }
    return __sigaction(sig, act, old);
}

/* signal() and its variants: the next definition, or the semantics glibc
   gives them through __sigaction (BSD: restart, block the signal while its
   handler runs; System V: reset to SIG_DFL, do not block). */
static rt_handler_fn rt_signal_via(int which, int sig, rt_handler_fn h)
{
    rt_note_handler(h);
    rt_resolve_handlers();
    if (rt_next_signal[which] != NULL) {
        return rt_next_signal[which](sig, h);
    } else {
        struct sigaction sa, old;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = h;
        sigemptyset(&sa.sa_mask);
        if (which == RT_SYSV_SIGNAL || which == RT_SYSV_SIGNAL2) {
            sa.sa_flags = SA_RESETHAND | SA_NODEFER;
        } else {
            sigaddset(&sa.sa_mask, sig);
            sa.sa_flags = SA_RESTART;
        }
        return __sigaction(sig, &sa, &old) < 0 ? SIG_ERR : old.sa_handler;
    }
}

RT_EXPORT rt_handler_fn signal(int sig, rt_handler_fn h) RT_THROW
{
    return rt_signal_via(RT_SIGNAL, sig, h);
}

RT_EXPORT rt_handler_fn bsd_signal(int sig, rt_handler_fn h) RT_THROW
{
    return rt_signal_via(RT_BSD_SIGNAL, sig, h);
}

RT_EXPORT rt_handler_fn sysv_signal(int sig, rt_handler_fn h) RT_THROW
{
    return rt_signal_via(RT_SYSV_SIGNAL, sig, h);
}

/* what signal() is under strict ISO C (-std=c99 without _DEFAULT_SOURCE) */
RT_EXPORT rt_handler_fn __sysv_signal(int sig, rt_handler_fn h) RT_THROW
{
    return rt_signal_via(RT_SYSV_SIGNAL2, sig, h);
}
#endif

static void rt_exit_now(int status)
{
    (void) rt_flush(RT_FLAG_UEXIT, 1, 1);
    syscall(SYS_exit_group, status);
}

RT_EXPORT void _exit(int status)
{
    rt_exit_now(status);
    for (;;) {
        syscall(SYS_exit, status);
    }
}

RT_EXPORT void _Exit(int status) RT_THROW
{
    rt_exit_now(status);
    for (;;) {
        syscall(SYS_exit, status);
    }
}

#endif /* RETEST_RT_NO_INTERPOSE */
