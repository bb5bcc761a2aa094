/*
 * records: the bytes of every trace record (docs/trace-format.md,
 * version 3; the spellings shared with the readers are trace/tracefmt.h),
 * into the trace file (recorder/out.h).
 *
 * The records written millions of times (alloc, free, realloc and
 * realloc_failed) are compact arrays built with recfmt's literal pieces,
 * their time a difference from the record before and their thread an
 * index a "thread" record gives; the rest are objects built with jsonw,
 * starting {"ev":...,"t":...,"tid":...  Every t is given here in ns since
 * the trace's start and written in microseconds.
 */
#ifndef MEMSIM_RECORDER_RECORDS_H
#define MEMSIM_RECORDER_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/hashtab.h"
#include "lib/procfs.h"
#include "trace/tracefmt.h"
#include "recorder/out.h"


typedef struct records_meta_s {
    pid_t pid, ppid;
    const char *exe;
    const char *argv;   /* NUL-separated */
    size_t argv_len;
    uint64_t start_unix_ns;
    const char *strategy; /* "none" without a device */
    uint64_t device_size;
    unsigned stack_depth;
    bool mmap;
    uint64_t sample_bytes;    /* a sampled trace's mean interval; 0: every allocation */
    const char *parent_trace; /* NULL: none */
    const char *note;         /* "" or NULL: none */
} records_meta_t;

void records_meta(out_t *o, uint64_t t, pid_t tid, const records_meta_t *m);
void records_module_load(out_t *o, uint64_t t, pid_t tid, const char *path, size_t n,
                         uint64_t base, uint64_t size);
void records_module_unload(out_t *o, uint64_t t, pid_t tid, uint64_t base, uint64_t size);
void records_stack(out_t *o, uint64_t t, pid_t tid, uint64_t id, const uint64_t *frames,
                   unsigned n);

/* A new trace: times, thread indexes and the threadless count start over. */
void records_reset(void);

/* A trace's own part of what the records count from (the time of the
 * record before, the thread indexes).  The functions here work on the
 * current trace's; a recorder serving several processes keeps each
 * other trace's in a records_ctx_t and swaps it in.  Zeroed: a trace
 * after records_reset. */
typedef struct records_ctx_s {
    uint64_t last_us;    /* the time of the record before, what the compact ones count from */
    hashtab_t tab;       /* threads by tid: thread_slot_t (records.c) */
    uint32_t n;          /* indexes given out, the unknown thread's included */
    uint32_t unknown;    /* the unknown thread's index + 1; 0: not given out */
    uint32_t grow_wait;  /* calls for a slot before growing is tried again (it found no
                            memory) */
    uint64_t threadless; /* events written as the unknown thread's */
} records_ctx_t;

/* Exchange the current trace's with *other. */
void records_swap(records_ctx_t *other);
/* Free one that is not the current trace's. */
void records_ctx_fini(records_ctx_t *c);

/* Events of threads the thread table does not hold between tries to
 * grow it, after one found no memory. */
#define RECORDS_GROW_RETRY 1024u
/* Heap records written as the unknown thread's (tid 0 in its thread
 * record): their thread found no slot, the thread table having no memory
 * to grow.  The end record's "threadless". */
uint64_t records_threadless(void);

/* fn: events_fn_t (preload/events.h). */
void records_alloc(out_t *o, uint64_t t, pid_t tid, unsigned fn, uint64_t addr, uint64_t size,
                   uint64_t align, uint32_t stack);
/* touched: the block's touched pages + 1 (ipc/msg.h), 0: not counted. */
void records_free(out_t *o, uint64_t t, pid_t tid, unsigned fn, uint64_t addr, bool inherited,
                  uint64_t touched);
/* A free of no live block; caller: the return address of the free. */
void records_unknown_free(out_t *o, uint64_t t, pid_t tid, unsigned fn, uint64_t addr,
                          uint64_t caller);
/* known: the old block was live (inherited: from before a fork);
 * touched: the old block's, as for a free. */
void records_realloc(out_t *o, uint64_t t, pid_t tid, unsigned fn, uint64_t old, uint64_t addr,
                     bool known, uint64_t size, uint32_t stack, bool inherited, uint64_t touched);
void records_realloc_failed(out_t *o, uint64_t t, pid_t tid, unsigned fn, uint64_t addr,
                            uint64_t size, uint32_t stack);
/* A block live at the end of which the program touched pages pages
 * (recorder/touched.h). */
void records_touched(out_t *o, uint64_t t, pid_t tid, uint64_t addr, uint64_t pages);

void records_mmap(out_t *o, uint64_t t, pid_t tid, unsigned fn, uint64_t addr, uint64_t size,
                  int prot, int flags, int fd, uint32_t stack);
void records_munmap(out_t *o, uint64_t t, pid_t tid, uint64_t addr, uint64_t size,
                    uint32_t stack);
/* addr: UINT64_MAX when it failed. */
void records_mremap(out_t *o, uint64_t t, pid_t tid, uint64_t old, uint64_t old_size,
                    uint64_t addr, uint64_t size, int flags, uint32_t stack);

void records_phase(out_t *o, uint64_t t, pid_t tid, bool begin, const char *name, size_t n);
void records_fork(out_t *o, uint64_t t, pid_t tid, pid_t child);
/* ev: "spawn" (child > 0) or "exec"; bytes: path NUL args NUL...; traced:
 * whether the new program is traced too. */
void records_launch(out_t *o, uint64_t t, pid_t tid, const char *ev, pid_t child,
                    const char *bytes, size_t n, bool traced);
void records_exec_failed(out_t *o, uint64_t t, pid_t tid, int err);
/* The process locked itself in a seccomp sandbox (MSG_SANDBOX's words:
 * mode, the seccomp flags and MSG_SANDBOX_STOPS, what memsim goes
 * without, the filters it holds). */
void records_sandbox(out_t *o, uint64_t t, pid_t tid, uint64_t mode, uint64_t flags,
                     uint64_t without, uint64_t filters);

typedef struct records_sample_s {
    procfs_status_t st;
    uint64_t maxrss_children;
    bool have_malloc;
    uint64_t malloc_reserved, malloc_in_use;
    uint64_t heap_live, heap_blocks, mmap_live;
    bool sampled;                  /* heap_live and heap_blocks are estimates: ... */
    uint64_t heap_live_se;         /* ...and heap_live's standard error */
    bool have_sim;
    uint64_t sim_live, sim_reserved, sim_largest_free;
    uint64_t device_total, tree_rss;
    size_t nchildren;
    const pid_t *child_pid;
    const uint64_t *child_rss;
    const procfs_rollup_t *rollup; /* at a new peak, or NULL */
    uint64_t memsim_vm;            /* address space of memsim's own, left out of vm_size */
} records_sample_t;
void records_sample(out_t *o, uint64_t t, pid_t tid, const records_sample_t *s);

typedef struct records_end_s {
    const char *reason;
    int status, signal; /* < 0, <= 0: null */
    uint64_t dropped, after_end, unknown_frees, live_allocations, live_bytes, stacks;
    uint64_t untracked, stackless, threadless; /* written when not 0 */
} records_end_t;
/* The last record, written whatever the file's state. */
void records_end(out_t *o, uint64_t t, pid_t tid, const records_end_t *e);

#endif
