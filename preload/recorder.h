/*
 * recorder: what libmemsim.so records, behind a plain C API that tests
 * call directly (no LD_PRELOAD needed).  preload/hooks.c is a thin shell
 * over it: each hook calls the real function and one recorder function.
 *
 * One recorder per process.  Every function is safe to call from any
 * thread; none allocates through malloc (tables come from sysmem, the
 * shadow device's own allocations go to the real allocator because the
 * hooks' reentrancy guard is held).  Heap events pass through the ring
 * (preload/ring.h) to its consumer, which alone touches the live map and
 * the shadow device.  Ordering rules the hooks follow:
 *   - record a free (or munmap) before calling the real function;
 *   - record an allocation after the real function returned;
 *   - realloc claims its slot (mremap reserves its record) before the
 *     real call and fills it in after (recorder_realloc_begin/_end),
 * so a free is always in the trace before an allocation that reuses the
 * address, whatever the threads do.
 */
#ifndef MEMSIM_PRELOAD_RECORDER_H
#define MEMSIM_PRELOAD_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "preload/config.h"
#include "preload/livemap.h"
#include "preload/ring.h"
#include "preload/stacks.h"

typedef enum recorder_fn_e {
    FN_MALLOC,
    FN_CALLOC,
    FN_REALLOC,
    FN_REALLOCARRAY,
    FN_MEMALIGN,
    FN_POSIX_MEMALIGN,
    FN_ALIGNED_ALLOC,
    FN_VALLOC,
    FN_PVALLOC,
    FN_FREE,
    FN_MMAP,
    FN_MMAP64,
    FN_MUNMAP,
    FN_MREMAP,
    FN_COUNT
} recorder_fn_t;

const char *recorder_fn_name(recorder_fn_t fn);

/* Start recording this process: open its trace (name from cfg, the
 * executable's base name and the pid), write the meta and module
 * records, create the shadow device.  parent_trace: the trace of the
 * process this one was forked from, or NULL.  0, or -1 with a one-line
 * reason in err (the process then runs untraced). */
int recorder_start(const config_t *cfg, const char *exe_path, int argc, char **argv,
                   const char *parent_trace, char *err, size_t errlen);
bool recorder_active(void);
/* MEMSIM_OUTPUT as made absolute at start (what exec'd children should see). */
const char *recorder_output(void);
const char *recorder_trace_path(void);

/* Heap events go through the ring (preload/ring.h): the calling thread
 * captures the stack and time and fills a slot; the consumer keeps the
 * live map and the shadow device and writes the record.  So a record is
 * in the trace shortly after the call (the writer thread drains the ring
 * continuously; recorder_flush waits for it). */
/* raw: the stack as the entry point captured it (stacks_grab), or NULL
 * to capture it here. */
void recorder_alloc(recorder_fn_t fn, const void *p, size_t size, size_t align,
                    const stacks_raw_t *raw);
/* Before the real free; p != NULL.  A free of no live block of the
 * program's is written as an unknown_free error, unless the block is one
 * memsim's own work made (livemap_quiet). */
void recorder_free(recorder_fn_t fn, const void *p, const stacks_raw_t *raw);

/* realloc (and reallocarray) of a non-NULL old block to a new size:
 * begin before the real call, end after with its result (NULL: failed,
 * the old block stays). */
typedef struct recorder_move_s {
    ring_slot_t *ring;      /* realloc: the claimed ring slot, or NULL */
    char *slot;             /* mremap: the reserved record, or NULL */
    livemap_entry_t old;    /* the old block's entry */
    bool known;             /* old was in the live map */
    uint64_t stack;
    uint64_t t;
} recorder_move_t;
void recorder_realloc_begin(recorder_move_t *m, const void *old, const stacks_raw_t *raw);
void recorder_realloc_end(recorder_move_t *m, recorder_fn_t fn, const void *p, size_t size);

void recorder_mmap(recorder_fn_t fn, const void *p, size_t len, int prot, int flags, int fd);
void recorder_munmap(const void *p, size_t len);
void recorder_mremap_begin(recorder_move_t *m, const void *old, size_t old_len);
void recorder_mremap_end(recorder_move_t *m, const void *p, size_t len, int flags);

void recorder_phase(const char *name, bool begin);

/* Write everything the ring holds now (waits for the consumer role). */
void recorder_flush(void);
/* Start the thread that drains the ring (after recorder_start, and in a
 * fork child); enter_guard runs first in it.  0 or -1: the program's
 * threads then drain the ring themselves whenever it fills. */
int recorder_writer_start(void (*enter_guard)(void));
void recorder_modules_changed(void);

/* fork: lock everything before, then either side unlocks.  The child
 * starts its own trace (or stops, with MEMSIM_TRACE_CHILDREN=0). */
void recorder_fork_prepare(void);
void recorder_fork_parent(void);
void recorder_fork_child(void);
/* The parent's fork record, once fork() returned the child's pid. */
void recorder_forked(pid_t child);

/* posix_spawn: the parent's spawn record (the child execs at once and
 * writes its own trace; no atfork handler runs for it). */
void recorder_spawned(pid_t child, const char *path, char *const argv[]);

/* exec: the exec record and the end record (reason "exec"); if the exec
 * fails, recorder_exec_failed reopens the trace. */
void recorder_exec(const char *path, char *const argv[]);
void recorder_exec_failed(int err);

/* The end record.  reason: "exit", "_exit" or "signal"; status or signal
 * < 0 when unknown or not applicable.  Safe in a signal handler. */
void recorder_end(const char *reason, int status, int signal);

/* What the poller read from the operating system for one sample. */
typedef struct recorder_os_s {
    uint64_t rss, hwm, vm_size, vm_peak; /* /proc/self/status */
    uint64_t maxrss_self, maxrss_children; /* getrusage, bytes */
    uint64_t malloc_reserved, malloc_in_use; /* mallinfo2: arena + mmapped, in use */
    uint64_t device_total;                   /* physical memory or cgroup limit */
    uint64_t tree_rss;                       /* rss + every descendant's */
    size_t nchildren;                        /* descendants listed below */
    const pid_t *child_pid;
    const uint64_t *child_rss;
    const void *rollup;                      /* procfs_rollup_t at a new peak, or NULL */
} recorder_os_t;

/* A sample record: the OS figures plus memsim's own (heap live, mapped
 * live, the shadow device's live, reserved and largest free). */
void recorder_sample(const recorder_os_t *os);

/* The poller's housekeeping (the writer does it too, as it goes): keep
 * the resident part of the trace mapping small (trace_tend), so the trace
 * hardly counts in the process's RSS. */
void recorder_trim_trace(void);

/* Counters for the end record and tests. */
uint64_t recorder_unknown_frees(void);

#endif
