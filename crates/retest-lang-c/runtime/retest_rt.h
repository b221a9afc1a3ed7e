/*
 * retest coverage runtime -- ABI version 1.
 *
 * Every instrumented translation unit (TU) owns static byte arrays of probe
 * cells (0 = not hit, nonzero = hit) and one `struct retest_tu` descriptor
 * that it registers from a constructor and unregisters from a destructor.
 * The runtime (retest_rt.c) writes the cells of every registered TU to one
 * trace file per process image; the format and the runtime's behaviour are
 * documented in docs/trace-format.md.
 *
 * This header is valid C89 and C++.  The instrumenter pastes the same
 * declarations into instrumented sources instead of including this file, so
 * any change here is an ABI change: bump RETEST_ABI.
 */
#ifndef RETEST_RT_H
#define RETEST_RT_H

#ifdef __cplusplus
extern "C" {
#endif

/* Version 2 added word edge cells (RETEST_SECT_EDGE_WORDS), version 3 edge
   execution counters (RETEST_SECT_EDGE_COUNTS, retest cc --counts; only
   counted units declare version 3).  The runtime also takes descriptors of
   older versions, which never use the newer kinds; an older runtime leaves
   newer descriptors alone and flags its traces. */
#define RETEST_ABI 3
#define RETEST_ABI_OLDEST 1

/* Kinds of cell sections (struct retest_sect.kind).  A frames section's
   `data` points at `len` unsigned int counters, and a word edges section's at
   `len` 4-byte-aligned words, each one edge cell, hit when not zero (retest cc
   sets a cell's first byte); not at byte cells.  Traces hold word edge cells
   as edge cells (kind RETEST_SECT_EDGES).  An edge counts section's `data`
   points at `len` 8-byte-aligned retest_u64 counters, each one edge cell,
   hit when not zero; traces hold it both as edge cells and as counts. */
enum {
    RETEST_SECT_EDGES = 1,
    RETEST_SECT_MCDC = 2,
    RETEST_SECT_PATHS = 3,
    RETEST_SECT_FRAMES = 4,
    RETEST_SECT_EDGE_WORDS = 5,
    RETEST_SECT_EDGE_COUNTS = 6
};

/* `unsigned long long` without a -pedantic warning in C89 or C++98
   (`__extension__` silences C only). */
#if defined(__GNUC__) && defined(__cplusplus) && __cplusplus < 201103L
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wlong-long"
typedef unsigned long long retest_u64;
#pragma GCC diagnostic pop
#elif defined(__GNUC__)
__extension__ typedef unsigned long long retest_u64;
#else
typedef unsigned long long retest_u64;
#endif

struct retest_sect {
    unsigned int kind;        /* RETEST_SECT_* */
    unsigned int len;         /* number of cells */
    volatile unsigned char *data; /* cells: 0 = not hit, nonzero = hit (frames: counters;
                                 frames and word edges: unsigned int words);
                                 volatile: the probes store to them as such */
};

struct retest_tu {
    unsigned int abi;         /* RETEST_ABI */
    unsigned int nsect;
    unsigned char hash[16];   /* TU identity: content hash computed by the instrumenter */
    struct retest_sect *sect;
    /* owned by the runtime; instrumented code zero-initialises these: */
    struct retest_tu *next;   /* reserved: the v1 runtime keeps it NULL */
    unsigned char *shadow;    /* runtime block holding the private copy of the cells
                                 kept after the TU is unregistered (dlclose) */
    unsigned int state;       /* registration state, see retest_rt.c */
};

/* Called from the TU's constructor.  Idempotent; may also be called lazily by
   the runtime itself (see __retest_path_hit). */
void __retest_register(struct retest_tu *tu);

/* Called from the TU's destructor: copies the cells into the runtime-owned
   shadow.  After this call the runtime never touches *tu or its cells again. */
void __retest_unregister(struct retest_tu *tu);

/* For path profiling of functions whose path count is too large for a byte
   array: records path id `id` of function number `func` of this TU in a
   runtime-owned set.  Thread-safe and async-signal-safe; may be called before
   the TU's constructor has run. */
void __retest_path_hit(struct retest_tu *tu, unsigned int func, retest_u64 id);

/* Points at a byte that is nonzero while the process is certainly
   single-threaded (glibc's __libc_single_threaded; a zero byte where the C
   library does not say).  Path-profiled code then changes its
   frames-in-flight counters by plain arithmetic instead of atomic
   read-modify-writes.  Neither the descriptor nor the traces depend on it. */
extern const char *const __retest_st;

#ifdef __cplusplus
}
#endif

#endif /* RETEST_RT_H */
