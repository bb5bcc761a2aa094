/*
 * oplog: a trace's heap operations as a real allocator replays them, in
 * the file memsim-analyze writes (analyzer/consume/allocators.c) and
 * memsim-replay maps (allocators/replay.c).  Both sides include this
 * header and nothing else of each other; it includes only libc's.
 *
 * Glossary:
 *   slot     a live block's place in the replay's table of pointers: the
 *            writer gives each block of the trace a slot when it is
 *            allocated and takes it back when it is freed, so the table
 *            holds at most the trace's live blocks (plus one window's
 *            frees, below).  A realloc keeps its block's slot.
 *   thread   a trace thread, numbered 0, 1, ... in the order of its first
 *            heap operation; the replay runs each on a thread of its own,
 *            thread 0 (the program's main thread: the first to allocate)
 *            on its main thread.
 *   window   a run of at most OPLOG_WINDOW consecutive operations of the
 *            trace, in which no operation depends on another thread's
 *            operation of the same window.  Windows replay one after the
 *            other; inside one, each thread replays its own operations
 *            in the trace's order, at the same time as the others.
 *
 * Layout (native byte order: the file never leaves the machine):
 *
 *   oplog_header_t                      at offset 0
 *   window 0, window 1, ...             each: oplog_window_t, then its
 *                                       nparts oplog_part_t, then the
 *                                       parts' operations, part by part
 *
 * Invariants the writer keeps (the replay relies on them):
 *   - inside a window, a slot is touched by one thread only, and a slot
 *     freed in a window is given out again only in a later window: the
 *     threads of a window never wait for each other;
 *   - a part names a thread once per window; its count >= 1;
 *   - Σ counts of all parts == header.nops; every slot < header.nslots;
 *     every thread < header.nthreads.
 */
#ifndef MEMSIM_ALLOCATORS_OPLOG_H
#define MEMSIM_ALLOCATORS_OPLOG_H

#include <stdint.h>

#define OPLOG_MAGIC 0x676f6c706f6d656dull /* "memoplog", little-endian */
#define OPLOG_VERSION 2
#define OPLOG_WINDOW 4096       /* operations in a window at most */
#define OPLOG_MAX_THREADS 1024  /* trace threads beyond share replay threads (index % max) */

/* What an operation does with its slot. */
typedef enum oplog_kind_e {
    OPLOG_MALLOC,         /* malloc(size) */
    OPLOG_CALLOC,         /* calloc(1, size): the trace keeps n x size only */
    OPLOG_REALLOC,        /* realloc(slot's block, size); NULL when the slot is empty */
    OPLOG_MEMALIGN,       /* memalign(align, size) */
    OPLOG_POSIX_MEMALIGN, /* posix_memalign(&p, align, size) */
    OPLOG_ALIGNED_ALLOC,  /* aligned_alloc(align, size) */
    OPLOG_VALLOC,         /* valloc(size) */
    OPLOG_PVALLOC,        /* pvalloc(size) */
    OPLOG_FREE,           /* free(slot's block) */
    OPLOG_KINDS
} oplog_kind_t;

/* An operation.  touched, on an operation that makes a block (all but
 * a free): the pages of the block the program touched (preload/touched.h)
 * + 1, the replay writing only that many (allocators/replay.c); 0: every
 * page, as for a block the trace says nothing of (small, still live at
 * the end, a trace before version 5) or one of 2^22 - 2 touched pages
 * or more (16 GiB).  The writer sets it when the block's free or
 * resize comes, in the file already written if need be. */
#define OPLOG_TOUCHED_MAX ((1u << 22) - 1) /* touched + 1 at most */
typedef struct oplog_op_s {
    uint32_t slot;
    uint32_t kind : 4;        /* oplog_kind_t */
    uint32_t align_log2 : 6;  /* the aligned kinds: log2 of the alignment (<= 40) */
    uint32_t touched : 22;    /* pages to write + 1; 0: all */
    uint64_t size;            /* bytes asked for (not for a free) */
} oplog_op_t;

typedef struct oplog_header_s {
    uint64_t magic;      /* OPLOG_MAGIC */
    uint32_t version;    /* OPLOG_VERSION */
    uint32_t nthreads;   /* replay threads: <= OPLOG_MAX_THREADS */
    uint64_t nslots;     /* the table's size */
    uint64_t nops;       /* operations in all windows */
    uint64_t nwindows;
    uint64_t bytes;      /* the file's length */
    uint64_t peak_live;  /* the trace's peak of live requested bytes (for the report) */
    uint64_t reserved;   /* 0 */
} oplog_header_t;

typedef struct oplog_window_s {
    uint32_t nparts;     /* threads with operations in the window (>= 1) */
    uint32_t nops;       /* Σ the parts' counts */
} oplog_window_t;

typedef struct oplog_part_s {
    uint32_t thread;
    uint32_t count;      /* its operations, in the trace's order */
} oplog_part_t;

_Static_assert(sizeof(oplog_op_t) == 16, "an operation is 16 bytes");
_Static_assert(OPLOG_KINDS <= 16, "a kind fits its 4 bits");
_Static_assert(sizeof(oplog_header_t) == 64, "the header is 64 bytes");

#endif
