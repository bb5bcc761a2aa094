/*
 * trace: one process's trace file, written through a shared mapping.
 *
 * The file is mapped MAP_SHARED into a large reserved virtual range, so
 * a record is in the kernel's page cache — and survives SIGKILL or the
 * OOM killer — as soon as its bytes are copied; nothing is buffered in
 * the process.  Writers reserve their bytes with one atomic add on the
 * head offset (no lock is held while formatting or copying), so the
 * order of reservations is the order of the file: a thread that records
 * a free before calling the real free() is always ahead of another
 * thread's allocation that reuses the address afterwards.
 *
 * The mapping grows in chunks under a mutex taken only to grow.  The
 * file is reopened by path for each growth and checked against its
 * device and inode, so a program that closes every descriptor (or reuses
 * ours) cannot break the trace or be written to by mistake.  Closing
 * sets a bit in the head, so nothing lands after the end record; the
 * file is then truncated to its exact length.  After SIGKILL the file
 * keeps its chunk size: the tail is NUL bytes, which readers treat as
 * the end of a truncated trace.
 *
 * Every function is async-signal-safe except trace_open (which may
 * allocate inside libc) and may run with the process's own locks held.
 */
#ifndef MEMSIM_PRELOAD_TRACE_H
#define MEMSIM_PRELOAD_TRACE_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TRACE_CLOSED (1ull << 63) /* in head: the end record is written */

typedef struct trace_s {
    char path[PATH_MAX];
    dev_t dev;                 /* identity of the file we created */
    ino_t ino;
    char *base;                /* reserved range; the file is mapped from its start */
    size_t span;               /* bytes reserved */
    _Atomic uint64_t head;     /* next free offset, | TRACE_CLOSED once ended */
    _Atomic uint64_t mapped;   /* bytes of the file mapped (and its size) */
    _Atomic uint64_t records;  /* records written */
    _Atomic uint64_t dropped;  /* records that could not be written */
    _Atomic uint64_t after_end;/* records refused because the trace had ended */
    _Atomic uint64_t end_at;   /* length of the trace once closed */
    _Atomic uint64_t committed;/* bytes whose copy is complete */
    pthread_mutex_t grow_lock; /* held only while extending the file */
    pthread_mutex_t tend_lock; /* trace_tend's, which only tries it */
    uint64_t populated;        /* trace_tend: faulted in below this offset */
    uint64_t trimmed;          /* trace_tend: given back below this offset */
    int grow_errno;            /* why the file last failed to grow, or 0 */
} trace_t;

/* Create path (mode 0600, O_EXCL: never overwrite, never follow a
 * symlink) and map it.  0, or -errno (-EEXIST: pick another name). */
int trace_open(trace_t *t, const char *path);

/* Reserve len bytes; returns where to write them, or NULL when the trace
 * is closed or cannot grow (counted as dropped).  *off gets the offset.
 * Once the bytes are written, trace_commit(t, len). */
char *trace_reserve(trace_t *t, size_t len, uint64_t *off);
void trace_commit(trace_t *t, size_t len);

/* Reserve, copy and commit one record (ending in '\n'); 0 or -1 (dropped). */
int trace_append(trace_t *t, const char *rec, size_t len);

/* Close the trace with a last record of len bytes: nothing reserved after
 * it is written.  Waits (at most max_wait_ns) for the records reserved
 * before it to be copied — threads still running while the process exits
 * would otherwise leave holes or half records under the end — then calls
 * fill(slot, len, records, ctx), where records is the number of records
 * in the file including this one; fill writes exactly len bytes.
 * 0, or -1 when already closed or there is no room. */
typedef void (*trace_fill_fn)(char *slot, size_t len, uint64_t records, void *ctx);
int trace_close_with(trace_t *t, size_t len, trace_fill_fn fill, void *ctx,
                     uint64_t max_wait_ns);

/* Undo a close made by trace_close_with (an exec that failed): the file
 * is extended again and records follow the end record.  Records other
 * threads tried to write while the trace was closed are lost (counted as
 * dropped).  If the file cannot be extended the trace stays closed. */
void trace_reopen(trace_t *t);

/* Truncate the closed file to its exact length.  The mapping stays:
 * threads still running may be finishing records reserved before the
 * end (they lie below it). */
void trace_finish(trace_t *t);

/* Keep the resident part of the mapping small (its pages count in the
 * program's RSS, which memsim itself reports): about 1 MiB ahead of the
 * head is faulted in writable, and what lies over 1 MiB behind it is
 * given back, so the trace adds about 2-3 MiB to RSS however fast it is
 * written.  Cheap; call it often (the writer after each batch, the
 * poller each tick); a call that finds another under way returns. */
void trace_tend(trace_t *t);

/* In a forked child: drop the inherited mapping of the parent's file
 * without touching the file. */
void trace_forget(trace_t *t);

static inline bool trace_is_open(const trace_t *t) { return t->base != NULL; }

#endif
