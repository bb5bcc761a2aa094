/*
 * device: the simulated device, as the Python ures.memory simulator models it.
 *
 * A device has an id, a capacity, a base address and one strategy at a
 * time.  Allocations and frees return result structs (success, address,
 * actual block size, time taken, error message) and never crash: a zero
 * size, a bad alignment, an unknown address, a double free or a request
 * larger than the device is a failed result with a clear message.
 * Statistics are kept per strategy, as the Python simulator keeps them
 * per allocator.  A device is plain data: no global state, not thread-safe
 * (callers serialize).
 */
#ifndef MEMSIM_SIM_DEVICE_H
#define MEMSIM_SIM_DEVICE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/pool.h"
#include "sim/strategy.h"

#define DEVICE_DEFAULT_BASE 0x10000000ull
#define DEVICE_DEFAULT_GRANULE 16
#define DEVICE_DEFAULT_STRATEGY "best-fit"
#define DEVICE_ERROR_MAX 160

typedef struct device_config_s {
    int id;               /* device number, for reports */
    uint64_t total;       /* capacity in bytes; > 0 */
    uint64_t base;        /* first address; 0 means DEVICE_DEFAULT_BASE */
    uint64_t granule;     /* fit strategies' rounding (power of two); 0: 16 */
    const char *strategy; /* NULL: DEVICE_DEFAULT_STRATEGY */
    bool no_timing;       /* skip the clock reads behind mean ns per operation */
    bool handles_only;    /* blocks are freed by handle only (device_free_block): no
                             address map; device_free, _request and _complete refuse */
} device_config_t;

/* Outcome of one operation. */
typedef struct device_result_s {
    bool ok;
    int err;                       /* 0 or a POOL_E* code */
    uint64_t addr;                 /* block address (alloc) or freed address */
    uint64_t size;                 /* actual bytes of the block (alloc, free) */
    uint64_t ns;                   /* time the operation took */
    void *block;                   /* alloc: the block, for device_free_block */
    char error[DEVICE_ERROR_MAX];  /* empty on success */
} device_result_t;

/* Per-strategy statistics, as the Python simulator's get_statistics(). */
typedef struct device_stats_s {
    uint64_t allocations;        /* successful */
    uint64_t frees;              /* successful (completed or immediate) */
    uint64_t failed_allocations;
    uint64_t failed_frees;
    uint64_t bytes_allocated;    /* requested bytes, cumulative */
    uint64_t bytes_freed;        /* requested bytes, cumulative */
    uint64_t alloc_ns, free_ns;  /* total time in successful operations */
    uint64_t current_bytes;      /* bytes_allocated - bytes_freed */
    uint64_t active_blocks;      /* allocations - frees: blocks it holds now */
} device_stats_t;

/* The pool's state in numbers (see docs/strategies.md). */
typedef struct device_metrics_s {
    uint64_t total;                  /* device capacity */
    uint64_t segments, blocks, live_blocks, free_blocks;
    uint64_t live_requested;         /* bytes the program asked for and holds */
    uint64_t live_allocated;         /* block bytes serving them */
    uint64_t segment_bytes;          /* bytes in segments */
    uint64_t free_bytes;             /* segment bytes not allocated */
    uint64_t reserved;               /* footprint now: extent or segments */
    uint64_t peak_footprint;         /* max of reserved since reset */
    uint64_t peak_live_requested;    /* max of live_requested since reset */
    uint64_t largest_free;           /* largest free block */
    uint64_t internal_fragmentation; /* live_allocated - live_requested */
    double external_fragmentation;   /* 1 - largest_free / free_bytes */
    double seed_fragmentation;       /* mean over segments of 1 - 1/blocks */
    double utilization;              /* live_allocated / segment_bytes */
    double jw_fragmentation;         /* peak_footprint / peak_live_requested - 1 */
    uint64_t internal_at_peak;       /* internal fragmentation when the footprint peaked */
    double external_at_peak;         /* external fragmentation when the footprint peaked */
    uint64_t live_at_peak;           /* live_requested when the footprint peaked */
    uint64_t free_at_peak;           /* footprint bytes in no live block then:
                                        peak_footprint == live_at_peak + internal_at_peak
                                                          + free_at_peak */
} device_metrics_t;

typedef struct device_s device_t;

/* Create a device; on failure returns a POOL_E* code and, if err is
 * given, a message such as "unknown strategy \"x\" (known: ...)". */
int device_create(const device_config_t *cfg, device_t **out, char *err, size_t errlen);
void device_destroy(device_t *d);

int device_id(const device_t *d);
uint64_t device_total(const device_t *d);
uint64_t device_base(const device_t *d);
const strategy_ops_t *device_strategy(const device_t *d);
const pool_t *device_pool(const device_t *d);

/* Switch strategy by name.  Refused (POOL_EBUSY) while blocks are live:
 * the layout belongs to the old strategy.  The pool restarts empty. */
int device_set_strategy(device_t *d, const char *name, device_result_t *r);

int device_alloc(device_t *d, uint64_t size, uint64_t align, int64_t stream,
                 device_result_t *r);
/* Immediate free: FREE_REQUESTED and FREE_COMPLETED at once. */
int device_free(device_t *d, uint64_t addr, device_result_t *r);
/* The same for the block an allocation returned in r->block (no lookup
 * by address: the caller keeps the handle with its own record of the
 * block).  The block must still be allocated. */
int device_free_block(device_t *d, void *block, device_result_t *r);
/* device_alloc and device_free_block for callers that want only the
 * block (a replay): the same placement, statistics and peaks, without
 * the result (no message is formatted, not even on failure).  0 and
 * *block, or the POOL_E* code device_alloc would give. */
int device_alloc_handle(device_t *d, uint64_t size, uint64_t align, int64_t stream,
                        void **block);
int device_free_handle(device_t *d, void *block);
/* Stream-ordered free: the block stays unavailable until completed. */
int device_free_request(device_t *d, uint64_t addr, device_result_t *r);
int device_free_complete(device_t *d, uint64_t addr, device_result_t *r);
bool device_can_alloc(const device_t *d, uint64_t size, uint64_t align, int64_t stream);

/* Return cached wholly free segments (caching strategy; 0 for others). */
uint64_t device_trim(device_t *d);

/* Empty the pool, forget peaks and every strategy's statistics. */
int device_reset(device_t *d);

void device_metrics(const device_t *d, device_metrics_t *m);
/* The peak footprint alone, cheap (device_metrics computes everything). */
uint64_t device_peak_footprint(const device_t *d);
/* Statistics of the strategy at index i of the table (strategy_at). */
const device_stats_t *device_stats(const device_t *d, size_t i);

/* Pool and strategy invariants; 0 or -1 with *why. */
int device_check(const device_t *d, const char **why);

/* The Python simulator's print_status: totals, then every segment and block. */
void device_print_status(const device_t *d, FILE *f);

#endif
