/*
 * allocators: a trace's heap operations through real allocators
 * (memsim-analyze --allocators; the allocators of allocators/catalog.h).
 *
 * While the trace is read, the operations are written to an operation
 * file (allocators/oplog.h, in memory: a memfd): each block gets a slot,
 * each thread an index, and the operations are cut into windows.  When
 * the trace is read, one memsim-replay per allocator (allocators/replay.c,
 * beside memsim-analyze, or in lib/memsim/ beside its bin/) replays the
 * file, all at once, each in a process of its own with the allocator
 * preloaded and its settings in its environment; each prints its
 * figures, which become the allocator's row.  An allocator whose library
 * is not installed gets a row that says so and the line that installs it,
 * and the others run.
 *
 * Nothing of this runs unless --allocators names allocators: the
 * consumer's event function returns at once.
 */
#ifndef MEMSIM_ANALYZER_ALLOCATORS_H
#define MEMSIM_ANALYZER_ALLOCATORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "allocators/catalog.h"

struct process_s;
struct consumer_s;
struct event_s;

typedef enum alloc_status_e {
    ALLOC_OK,
    ALLOC_MISSING,   /* its library is not installed: message is the line that installs it */
    ALLOC_FAILED,    /* the replay failed: message says how */
} alloc_status_t;

/* One point of a replay's RSS over time. */
typedef struct alloc_point_s {
    double t_s;      /* since the replay started */
    uint64_t ops;    /* operations done then */
    uint64_t rss;    /* bytes over the replay's baseline */
} alloc_point_t;

typedef struct alloc_row_s {
    const catalog_spec_t *spec;
    alloc_status_t status;
    char message[256];
    uint64_t peak_rss;       /* the replay's peak RSS over its baseline */
    bool peak_exact;         /* from VmHWM (else the samples' highest) */
    uint64_t end_rss;        /* after the last operation */
    uint64_t minor_faults, major_faults;
    uint64_t failed;         /* requests the allocator refused */
    uint64_t ops;
    unsigned threads;
    double cpu_s, wall_s;    /* the replay's CPU (all threads) and wall time */
    unsigned substituted;    /* oplog kinds made through posix_memalign */
    alloc_point_t *series;   /* by time and by count, in time order (malloc'd) */
    size_t nseries;
} alloc_row_t;

typedef struct allocators_s {
    alloc_row_t rows[CATALOG_MAX_SPECS]; /* in the order of --allocators, then sorted */
    size_t nrows;
    size_t order[CATALOG_MAX_SPECS];     /* the rows that ran, best (lowest peak RSS) first */
    size_t nordered;
    uint64_t ops, nslots, windows;       /* of the operation file */
    unsigned threads;
    unsigned kinds;                      /* bit per oplog_kind_t the trace has */
    uint64_t peak_live;                  /* the trace's peak live requested bytes */
    double wall_s;                       /* every replay, in parallel */
    bool all_pages;                      /* every page of each block written (--allocators-pages
                                            all), not only those the program touched */
    const catalog_allocator_t *ran_with; /* what the program ran with (its libraries) */
    char problem[256];                   /* why nothing was replayed, or "" */
} allocators_t;

extern const struct consumer_s allocators_consumer;

/* The row of the allocator the program ran with, among those replayed
 * with no settings; NULL when it was not replayed. */
const alloc_row_t *allocators_ran_with_row(const allocators_t *a);

/* The replays' wall time per operation, in ns (0 without operations). */
double allocators_ns_per_op(const alloc_row_t *r);

#endif
