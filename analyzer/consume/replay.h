/*
 * replay: a trace's allocation sequence through the strategies of the
 * simulated device (sim/), to see how the program would have fared.
 *
 * Each alloc is a device allocation of the same size and alignment; each
 * free frees it; a realloc frees the old block and allocates the new one
 * (the device has no in-place growth).  A request the device cannot
 * serve is counted as failed, and its later free is ignored, as is a free
 * of a block allocated before the trace (a fork child's inherited ones).
 * Driving sim/ directly with the same sequence gives exactly the same
 * figures.
 *
 * A replay set runs one sequence through several strategies at once:
 * one map from trace addresses to records of live blocks (each record
 * holds the block of every strategy), events gathered into batches, and
 * each strategy replaying the batches in order on whichever thread is
 * free — worker threads of the set's own, and the caller's thread when
 * it has to wait for room.  A strategy replays one batch at a time, in
 * order, so its figures do not depend on the threads.  No clock is read
 * per event: time is taken per batch.  Memory is bounded by the live
 * blocks and the batches, not by the trace's length.  With a width
 * (replay_set_width), only that many strategies' states are held at
 * once: the others replay the same batches afterwards, from a spool on
 * disk (a few bytes an operation), and give the same figures.
 *
 * A set is fed from one thread (the one that opened it).
 */
#ifndef MEMSIM_ANALYZER_REPLAY_H
#define MEMSIM_ANALYZER_REPLAY_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "analyzer/consume/layout.h"
#include "sim/device.h"

#define REPLAY_MAX_STRATEGIES 16


typedef struct replay_result_s {
    const char *name;
    uint64_t requests, failed, frees;
    device_metrics_t m;
    double events_per_s;
    uint64_t *series;  /* the footprint at each replay_set_mark, malloc'd (the caller
                          frees it: replay_result_free), NULL without marks */
    size_t nseries;
    replay_map_t *map;  /* at the peak, malloc'd (replay_result_free), or NULL */
} replay_result_t;

static inline void replay_result_free(replay_result_t *r)
{
    free(r->series);
    free(r->map);
    r->series = NULL;
    r->map = NULL;
    r->nseries = 0;
}

/* ---- a set of strategies ----------------------------------------------------- */

typedef struct replay_set_s replay_set_t;

/* A set with `threads` worker threads (0: the feeding thread does all the
 * work).  NULL when memory or threads cannot be had. */
replay_set_t *replay_set_create(unsigned threads);
/* Keep each strategy's layout (analyzer/consume/layout.h), for its map at the
 * peak in the results: about a hundred instructions per operation per
 * strategy, paid only where a report draws it.  Before replay_set_add. */
void replay_set_keep_maps(replay_set_t *s);
/* Add a strategy on a device of device_size bytes, before the first
 * event.  0, or -1 with a message in err (the set goes on without it). */
int replay_set_add(replay_set_t *s, const char *strategy, uint64_t device_size, char *err,
                   size_t errlen);
size_t replay_set_count(const replay_set_t *s);
/* Whether the replay stopped for want of host memory: every request
 * from then on counts as failed in every strategy. */
bool replay_set_out_of_memory(const replay_set_t *s);

void replay_set_alloc(replay_set_t *s, uint64_t addr, uint64_t size, uint64_t align);
void replay_set_free(replay_set_t *s, uint64_t addr);
void replay_set_realloc(replay_set_t *s, uint64_t old_addr, uint64_t addr, uint64_t size);

/* The same events for a caller that keeps each live address's record
 * itself (the analyzer: in the summary's live blocks, one map for both),
 * instead of the set's map by address; not to be mixed with the calls
 * above on one set.  replay_set_alloc_rec returns the allocation's
 * record, to pass to replay_set_free_rec when the block is freed
 * (REPLAY_NO_REC when the set takes no more: freeing it does nothing);
 * prev is the record the address still had (allocated again without a
 * free), or REPLAY_NO_REC.  replay_set_lost: an allocation whose record
 * the caller cannot keep (out of host memory): the replay stops there,
 * as when the set runs out itself. */
#define REPLAY_NO_REC UINT32_MAX
uint32_t replay_set_alloc_rec(replay_set_t *s, uint32_t prev, uint64_t size, uint64_t align);
void replay_set_free_rec(replay_set_t *s, uint32_t rec);
void replay_set_lost(replay_set_t *s);
/* A mark: every strategy notes its footprint when it reaches it (a
 * series for plots, one value per mark; the figures do not change). */
void replay_set_mark(replay_set_t *s);

/* At most width strategies replayed at once (0, the default: every
 * one), before replay_set_add.  The first width strategies added are
 * fed as events come; the operations, as resolved, go to a spool (an
 * unlinked temporary file, spool.h) too, and the others replay it when
 * the results are asked for, width at a time, each strategy's state
 * made when it starts and freed once its result is taken: memory is
 * that of width strategies, not of every one.  Where the spool cannot
 * be made or written, every strategy is fed as events come from there
 * (the ones behind replay what the spool has first): the same results,
 * and replay_set_note says why. */
void replay_set_width(replay_set_t *s, unsigned width);
/* What to say once of the replay (the spool could not be written ...),
 * or NULL. */
const char *replay_set_note(const replay_set_t *s);

/* Wait until every event fed so far is replayed; the strategies' results
 * into out[0 ...] in the order they were added: their number, which is
 * replay_set_count's but for a later round's strategy that could not be
 * replayed (no host memory, the spool unreadable: replay_set_note).
 * More events may follow. */
size_t replay_set_results(replay_set_t *s, replay_result_t *out);
/* The same, with the states freed as soon as they are not needed (the
 * live ones before the later rounds start): nothing may follow but
 * replay_set_destroy. */
size_t replay_set_finish(replay_set_t *s, replay_result_t *out);
void replay_set_destroy(replay_set_t *s);

/* ---- one strategy ------------------------------------------------------------ */

/* A set of one strategy, replayed in the caller's thread. */
typedef struct replay_s {
    replay_set_t *set;
} replay_t;

/* One strategy, its layout kept (replay_set_keep_maps).  0, or -1 with a
 * message in err. */
int replay_open(replay_t *r, const char *strategy, uint64_t device_size, char *err,
                size_t errlen);
void replay_close(replay_t *r);

void replay_alloc(replay_t *r, uint64_t addr, uint64_t size, uint64_t align);
void replay_free(replay_t *r, uint64_t addr);
void replay_realloc(replay_t *r, uint64_t old_addr, uint64_t addr, uint64_t size);

void replay_result(const replay_t *r, replay_result_t *out);

#endif
