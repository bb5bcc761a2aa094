/*
 * replay_ext: the insides of a replay set (analyzer/consume/replay.h),
 * shared by analyzer/consume/replay.c (feeding, the records, the
 * strategies fed as events come, their states) and
 * analyzer/consume/replay_rounds.c (the later rounds, from the spool).
 * Included by replay*.c only.
 */
#ifndef MEMSIM_ANALYZER_REPLAY_EXT_H
#define MEMSIM_ANALYZER_REPLAY_EXT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzer/consume/layout.h"
#include "analyzer/consume/replay.h"
#include "analyzer/consume/spool.h"
#include "lib/hashtab.h"
#include "sim/device.h"
#include "sim/lean.h"

#define RING 4     /* batches in flight */
#define BATCH 8192 /* operations per batch */
#define NO_REC REPLAY_NO_REC
#define MAX_THREADS 8

/* One operation, resolved: what every strategy does for it. */
typedef struct op_s {
    uint64_t size;  /* alloc, free: the block's requested bytes (>= 1) */
    uint64_t align; /* alloc: a power of two; 0: a free */
    uint32_t rec;   /* the record allocated, or freed */
    uint32_t prev;  /* alloc: the record the address had (NO_REC: none); where this
                       alloc fails, that record's block stays the address's */
} op_t;

typedef struct batch_s {
    op_t ops[BATCH];
    size_t n;
    uint32_t *ended; /* records this batch ends, recycled when all have replayed it */
    size_t nended, cap_ended;
} batch_t;

typedef struct strategy_s {
    lean_t *lean;     /* the strategy's lean form (sim/lean.h), or NULL: */
    device_t *dev;    /* its device */
    uint32_t *h;      /* lean: per record, its block's handle, or LEAN_NONE */
    hashtab_t held;   /* lean: the records whose alloc failed and kept the block of
                         the record before them (op_t.prev): record + 1 -> the
                         requested bytes of that block, which its free needs */
    uint64_t *series; /* its footprint at each mark (replay_set_mark) */
    size_t nseries, cap_series;
    layout_t *layout; /* its address space as cells, and as it was at its peak */
    uint64_t peak;    /* the peak footprint the layout last marked */
    uint64_t allocs;  /* successful allocations so far */
    void **blk;       /* per record: its block on this device, or NULL */
    uint64_t failed, frees, ns;
    uint64_t done; /* batches replayed */
    bool busy;     /* a thread is replaying a batch of it */
} strategy_t;

/* A strategy of a later round: what replay_set_add was given. */
typedef struct later_s {
    char name[64];
    uint64_t device_size;
} later_t;

struct replay_set_s {
    strategy_t st[REPLAY_MAX_STRATEGIES]; /* the strategies fed as events come */
    size_t n;
    unsigned width;                       /* strategies replayed at once; 0: every one */
    later_t later[REPLAY_MAX_STRATEGIES]; /* replayed from the spool, after st's */
    size_t nlater;
    spool_t spool;  /* the resolved operations, while there are later ones */
    char note[640]; /* what to say once, or "" */
    bool keep_maps; /* each strategy keeps its layout */
    uint64_t requests;
    hashtab_t live;      /* trace address -> record */
    uint64_t *rsize;     /* per record, the bytes its allocation requested */
    uint32_t *free_recs; /* recycled records */
    size_t nfree, cap_free;
    uint32_t nrec, cap; /* records made; room in each strategy's blk */
    batch_t *ring;      /* RING batches */
    uint64_t submitted; /* batches submitted; the one being filled is this one */
    bool failed_memory; /* a record could not be had: the rest is not replayed */
    uint64_t dropped;   /* requests not replayed for that: failed in every strategy */
    pthread_mutex_t mu;
    pthread_cond_t work; /* a batch was submitted, or closing */
    pthread_cond_t done; /* a strategy finished a batch */
    pthread_t threads[MAX_THREADS];
    unsigned nthreads;
    bool closing;
};

/* The bytes records were allocated with, where a lean replay looks one
 * up (lean_keep_prev): the set's array by record, or, replaying the
 * spool, the batch's records before an allocation at their address. */
typedef struct sizes_s {
    const uint64_t *rsize; /* per record, or NULL: */
    const uint64_t *pairs; /* record, bytes; npairs of them */
    size_t npairs;
} sizes_t;

/* ---- the strategies' states (replay.c) ------------------------------------------- */

/* Whether strategy is replayed in its lean form (sim/lean.h). */
bool replay_lean(const char *strategy);
/* Make st a fresh state of strategy with room for cap records.  0, or
 * -1 with a message in err. */
int replay_strategy_init(const replay_set_t *s, strategy_t *st, const char *strategy,
                         uint64_t device_size, uint32_t cap, char *err, size_t errlen);
/* Free st's state (a zeroed state too). */
void replay_strategy_fini(strategy_t *st);
/* What the report needs of st, into r. */
void replay_strategy_result(const replay_set_t *s, const strategy_t *st, replay_result_t *r);
/* Batch b through strategy st, the lean form's sizes from sz.  The
 * caller has claimed st (busy), or holds it alone. */
void replay_batch(strategy_t *st, const batch_t *b, const sizes_t *sz);
/* Until every live strategy has replayed `upto` batches: help, or wait
 * for the workers.  The set's lock held. */
void replay_wait_done_locked(replay_set_t *s, uint64_t upto);
/* Give the pages of the memory freed back to the system. */
void replay_give_back(void);

#endif
