/*
 * tracefmt: what the writer (memsim-recorder) and every reader of a
 * trace agree on — the record names, the format version, the spellings
 * of the compact records of version 3 and their defaults.  The format
 * itself is docs/trace-format.md.
 *
 * Version 3 keeps every record of version 2 as a JSON object (times in
 * microseconds), and writes the records made millions of times as JSON
 * arrays whose first element is one letter:
 *
 *   ["a", dt, thread, "addr", size, stack (, fn (, align))]      alloc
 *   ["f", dt, thread, "addr" (, flags (, fn (, touched)))]       free
 *   ["r", dt, thread, "old", "addr", size, stack (, flags (, fn (, touched)))] realloc
 *   ["x", dt, thread, "old", size, stack (, fn)]                 realloc_failed
 *
 * dt: microseconds since the previous record's time (any record; may be
 * negative across threads); thread: the index a "thread" record gave the
 * thread; addresses: lower-case hex strings without 0x; fn: the
 * function's name when it is not the record's default; flags: the
 * TRACEFMT_F_* bits; touched (version 5): the pages of the freed (old)
 * block the program touched, when they were counted.
 */
#ifndef MEMSIM_TRACE_TRACEFMT_H
#define MEMSIM_TRACE_TRACEFMT_H

#include <stddef.h>

/* The record types, by the names records carry in "ev" (compact records
 * stand for alloc, free, realloc and realloc_failed).  THREAD is no event
 * of its own: it names a thread index. */
#define TRACEFMT_RECORDS(X)                                                                    \
    X(META, "meta")                                                                            \
    X(MODULE, "module")                                                                        \
    X(STACK, "stack")                                                                          \
    X(ALLOC, "alloc")                                                                          \
    X(FREE, "free")                                                                            \
    X(REALLOC, "realloc")                                                                      \
    X(REALLOC_FAILED, "realloc_failed")                                                        \
    X(MMAP, "mmap")                                                                            \
    X(MUNMAP, "munmap")                                                                        \
    X(MREMAP, "mremap")                                                                        \
    X(MREMAP_FAILED, "mremap_failed")                                                          \
    X(SAMPLE, "sample")                                                                        \
    X(PHASE, "phase")                                                                          \
    X(FORK, "fork")                                                                            \
    X(SPAWN, "spawn")                                                                          \
    X(EXEC, "exec")                                                                            \
    X(EXEC_FAILED, "exec_failed")                                                              \
    X(ERROR, "error")                                                                          \
    X(END, "end")                                                                              \
    X(SANDBOX, "sandbox")                                                                      \
    X(TOUCHED, "touched")                                                                      \
    X(THREAD, "thread")

typedef enum tracefmt_record_e {
#define TRACEFMT_ENUM_(id, name) TRACEFMT_##id,
    TRACEFMT_RECORDS(TRACEFMT_ENUM_)
#undef TRACEFMT_ENUM_
    TRACEFMT_RECORD_COUNT
} tracefmt_record_t;

/* "meta", "alloc", ...: the name of record type t (t < TRACEFMT_RECORD_COUNT). */
extern const char *const tracefmt_names[TRACEFMT_RECORD_COUNT];
#define TRACEFMT_NAME(id) (tracefmt_names[TRACEFMT_##id])

#define TRACEFMT_FORMAT "memsim-trace"
#define TRACEFMT_VERSION 5         /* what memsim-recorder writes */
#define TRACEFMT_VERSION_MAX 5     /* the newest a reader of this build reads */

#define TRACEFMT_DEFAULT_ALIGN 16  /* an alloc that does not say its alignment */
#define TRACEFMT_DEFAULT_ALLOC "malloc"
#define TRACEFMT_DEFAULT_FREE "free"
#define TRACEFMT_DEFAULT_REALLOC "realloc"

/* The functions an alloc record names ("fn"; malloc when it names
 * none), in the order of tracefmt_fn_t. */
#define TRACEFMT_ALLOC_FNS(X)                                                                  \
    X(MALLOC, "malloc")                                                                        \
    X(CALLOC, "calloc")                                                                        \
    X(REALLOC, "realloc")                                                                      \
    X(REALLOCARRAY, "reallocarray")                                                            \
    X(MEMALIGN, "memalign")                                                                    \
    X(POSIX_MEMALIGN, "posix_memalign")                                                        \
    X(ALIGNED_ALLOC, "aligned_alloc")                                                          \
    X(VALLOC, "valloc")                                                                        \
    X(PVALLOC, "pvalloc")

typedef enum tracefmt_fn_e {
#define TRACEFMT_FN_ENUM_(id, name) TRACEFMT_FN_##id,
    TRACEFMT_ALLOC_FNS(TRACEFMT_FN_ENUM_)
#undef TRACEFMT_FN_ENUM_
    TRACEFMT_FN_COUNT
} tracefmt_fn_t;

extern const char *const tracefmt_fn_names[TRACEFMT_FN_COUNT];
/* The function named by the len bytes at name; TRACEFMT_FN_MALLOC for
 * a name that is none of them (an unknown function allocates as malloc). */
tracefmt_fn_t tracefmt_fn_find(const char *name, size_t len);

/* The first elements of the compact records (version 3). */
#define TRACEFMT_TAG_ALLOC 'a'
#define TRACEFMT_TAG_FREE 'f'
#define TRACEFMT_TAG_REALLOC 'r'
#define TRACEFMT_TAG_REALLOC_FAILED 'x'

/* Their flags element. */
#define TRACEFMT_F_INHERITED 1u    /* the block was allocated by the parent before a fork */
#define TRACEFMT_F_OLD_UNKNOWN 2u  /* realloc: the old block was not known to be live */

/* Times: version 3 counts microseconds, earlier versions nanoseconds. */
#define TRACEFMT_NS_PER_TICK(version) ((version) >= 3 ? 1000u : 1u)

/* The file names memsim gives traces end in one of these. */
#define TRACEFMT_SUFFIX ".jsonl"
#define TRACEFMT_SUFFIX_ZST ".jsonl.zst"

#endif
