/*
 * replay: a trace through the simulated device.  See replay.h.
 *
 * The feeding thread resolves every event against the map of live
 * trace addresses as it comes: an alloc takes a fresh record, a free
 * names the record it ends (a free of an address not live is dropped at
 * once: no strategy would do anything with it).  Resolved operations go
 * into the batch being filled; a full batch is submitted, and every
 * strategy replays it in turn.  Records a batch ends are recycled only
 * once every strategy has replayed that batch.
 *
 * With a width (replay_set_width) below the strategies' number, only
 * the first width strategies are fed so; each submitted batch is also
 * appended to a spool, and the others replay it at the results
 * (replay_rounds.c).  The set's state is in replay_ext.h.
 *
 * Invariants, under the set's lock:
 *   done[i] <= submitted for every strategy i; batch k lives in
 *   ring[k % RING] until min(done) > k;  a strategy is replayed by at
 *   most one thread at a time (busy), batches in order.
 */
#include "analyzer/consume/replay.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyzer/consume/replay_ext.h"
#include "analyzer/consume/replay_rounds.h"
#include "lib/grow.h"
#include "lib/hashtab.h"
#include "sim/lean.h"

/* strategy_t.held's slots. */
typedef struct held_s {
    uint64_t rec1;   /* record + 1; 0: an empty slot */
    uint64_t size;
} held_t;

static const hashtab_type_t held_type = {
    .slot_size = sizeof(held_t),
    .key_off = offsetof(held_t, rec1),
    .mark_off = offsetof(held_t, rec1),
};

/* The map's slots: trace address -> record + 1. */
typedef struct live_s {
    uint64_t addr;
    uint64_t rec1;   /* record + 1; 0: an empty slot */
} live_t;

static const hashtab_type_t live_type = {
    .slot_size = sizeof(live_t),
    .key_off = offsetof(live_t, addr),
    .mark_off = offsetof(live_t, rec1),
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- replaying ------------------------------------------------------------------- */

/* A free's cache misses, hidden by prefetching in three steps ahead of
 * the operation: its slot in blk (records are scattered over the
 * array), then the block it names, then the block's address neighbours
 * (what coalescing reads first).  Each step loads only what the one
 * before brought in; the distances are a few operations' time apart.
 * The record's alloc may lie between here and the free, so the slot may
 * still name the block of the record's last use, or NULL: either can
 * be read (a pool keeps its block structs until it is destroyed), and
 * a prefetch of the wrong block costs only the prefetch. */
#define AHEAD_SLOT 24
#define AHEAD_BLOCK 12
#define AHEAD_NEIGHBOURS 4
/* Below this many blocks a pool's structs (64 bytes each) fit in a
 * core's cache, and prefetching costs the replay more than it hides
 * (a tenth of a small trace's replay instructions). */
#define AHEAD_MIN_BLOCKS 16384

static inline bool is_free_op(const op_t *op) { return !op->align && op->rec != NO_REC; }

/* The bytes record rec was allocated with (sizes_t). */
static uint64_t record_size(const sizes_t *sz, uint32_t rec)
{
    if (sz->rsize)
        return sz->rsize[rec];
    for (size_t i = 0; i < sz->npairs; i++)
        if (sz->pairs[2 * i] == rec)
            return sz->pairs[2 * i + 1];
    return 1; /* (not reached: the spool has every such record's bytes) */
}

/* The requested bytes of the block record rec names in lean st: its
 * own (own), unless it kept the block of the record before it. */
static inline uint64_t lean_block_size(const strategy_t *st, uint32_t rec, uint64_t own)
{
    if (st->held.count) {
        const held_t *x = hashtab_find(&st->held, &held_type, (uint64_t)rec + 1);
        if (x)
            return x->size;
    }
    return own;
}

/* Forget what held says of rec (its block is now its own, or none). */
static inline void lean_unhold(strategy_t *st, uint32_t rec)
{
    if (st->held.count) {
        held_t *x = hashtab_find(&st->held, &held_type, (uint64_t)rec + 1);
        if (x)
            hashtab_erase(&st->held, &held_type, x);
    }
}

/* A failed alloc of rec: rec names prev's block, or none. */
__attribute__((noinline))
static void lean_keep_prev(strategy_t *st, const sizes_t *sz, const op_t *op)
{
    uint32_t *h = st->h;
    h[op->rec] = LEAN_NONE;
    if (op->prev == NO_REC || h[op->prev] == LEAN_NONE)
        return;
    uint64_t size = lean_block_size(st, op->prev, record_size(sz, op->prev));
    bool found;
    held_t *x = hashtab_put(&st->held, &held_type, (uint64_t)op->rec + 1, &found);
    if (!x)
        return; /* no host memory: the block stays allocated, unnamed */
    x->rec1 = (uint64_t)op->rec + 1;
    x->size = size;
    h[op->rec] = h[op->prev];
}

/* Batch b through the lean strategy st (replay_batch). */
__attribute__((noinline))
static void replay_batch_lean(strategy_t *st, const batch_t *b, const sizes_t *sz)
{
    uint32_t *h = st->h;
    lean_t *lean = st->lean;
    size_t n = b->n;
    uint64_t allocs = st->allocs, failed = st->failed, frees = st->frees;
    for (size_t i = 0; i < n; i++) {
        const op_t *op = &b->ops[i];
        if (i + AHEAD_SLOT < n && is_free_op(&b->ops[i + AHEAD_SLOT]))
            __builtin_prefetch(&h[b->ops[i + AHEAD_SLOT].rec]);
        if (i + AHEAD_BLOCK < n && is_free_op(&b->ops[i + AHEAD_BLOCK])) {
            const op_t *f = &b->ops[i + AHEAD_BLOCK];
            if (h[f->rec] != LEAN_NONE) /* (maybe a handle its alloc, still ahead, replaces) */
                lean_prefetch_free(lean, h[f->rec], f->size);
        }
        if (op->rec == NO_REC) { /* a mark: the footprint now */
            if (grow_room((void **)&st->series, &st->cap_series, st->nseries,
                          sizeof *st->series, 256))
                st->series[st->nseries++] = lean_reserved(lean);
            continue;
        }
        if (op->align) {
            lean_unhold(st, op->rec);
            if (lean_alloc(lean, op->size, op->align, &h[op->rec]) == POOL_OK) {
                allocs++;
            } else {
                failed++;
                lean_keep_prev(st, sz, op);
            }
        } else if (h[op->rec] != LEAN_NONE) {
            uint64_t size = st->held.count ? lean_block_size(st, op->rec, op->size) : op->size;
            if (lean_free(lean, h[op->rec], size) == 0)
                frees++;
        }
    }
    st->allocs = allocs;
    st->failed = failed;
    st->frees = frees;
}

/* Batch b through strategy st.  The caller has claimed st (busy).  Out
 * of line: profiles then show what the replay costs. */
__attribute__((noinline))
void replay_batch(strategy_t *st, const batch_t *b, const sizes_t *sz)
{
    uint64_t t0 = now_ns();
    if (st->lean) {
        replay_batch_lean(st, b, sz);
        st->ns += now_ns() - t0;
        return;
    }
    void **blk = st->blk;
    layout_t *lay = st->layout;
    device_t *dev = st->dev;
    size_t n = b->n;
    /* Counted here and stored once: the strategies beside st in the set
     * are replayed by other threads (a line written by two threads at
     * every operation goes back and forth between their cores). */
    uint64_t allocs = st->allocs, failed = st->failed, frees = st->frees;
    bool ahead = device_pool(dev)->nblocks >= AHEAD_MIN_BLOCKS;
    for (size_t i = 0; i < n; i++) {
        const op_t *op = &b->ops[i];
        if (ahead) {
            if (i + AHEAD_SLOT < n && is_free_op(&b->ops[i + AHEAD_SLOT]))
                __builtin_prefetch(&blk[b->ops[i + AHEAD_SLOT].rec]);
            if (i + AHEAD_BLOCK < n && is_free_op(&b->ops[i + AHEAD_BLOCK])) {
                const void *x = blk[b->ops[i + AHEAD_BLOCK].rec];
                if (x)
                    __builtin_prefetch(x, 1);
            }
            if (i + AHEAD_NEIGHBOURS < n && is_free_op(&b->ops[i + AHEAD_NEIGHBOURS])) {
                const block_t *x = blk[b->ops[i + AHEAD_NEIGHBOURS].rec];
                if (x) {
                    if (x->prev)
                        __builtin_prefetch(x->prev, 1);
                    if (x->next)
                        __builtin_prefetch(x->next, 1);
                }
            }
        }
        if (op->rec == NO_REC) { /* a mark: the footprint now */
            if (!grow_room((void **)&st->series, &st->cap_series, st->nseries, sizeof *st->series,
                           256))
                continue;
            device_metrics_t m;
            device_metrics(dev, &m);
            st->series[st->nseries++] = m.reserved;
            continue;
        }
        if (op->align) {
            if (device_alloc_handle(dev, op->size, op->align, 0, &blk[op->rec]) == POOL_OK) {
                allocs++;
                if (lay) {
                    const block_t *x = blk[op->rec];
                    layout_block(lay, x->addr, x->size, op->size, true);
                    if (device_peak_footprint(dev) > st->peak) {
                        st->peak = device_peak_footprint(dev);
                        layout_mark_peak(lay, dev, allocs + failed);
                    }
                }
            } else {
                failed++;
                blk[op->rec] = op->prev == NO_REC ? NULL : blk[op->prev];
                if (lay)
                    layout_sync_segments(lay);
            }
        } else if (blk[op->rec]) {
            if (lay) { /* before the free, while the block is the one allocated */
                const block_t *x = blk[op->rec];
                layout_block(lay, x->addr, x->size, x->requested, false);
            }
            device_free_handle(dev, blk[op->rec]);
            frees++;
        }
    }
    st->allocs = allocs;
    st->failed = failed;
    st->frees = frees;
    st->ns += now_ns() - t0;
}

/* The lowest number of batches any strategy has replayed. */
static uint64_t min_done_locked(const replay_set_t *s)
{
    uint64_t m = s->submitted;
    for (size_t i = 0; i < s->n; i++)
        if (s->st[i].done < m)
            m = s->st[i].done;
    return m;
}

/* Claim a strategy with a batch to replay; NULL when none. */
static strategy_t *claim_locked(replay_set_t *s)
{
    for (size_t i = 0; i < s->n; i++) {
        strategy_t *st = &s->st[i];
        if (!st->busy && st->done < s->submitted) {
            st->busy = true;
            return st;
        }
    }
    return NULL;
}

/* Replay the next batch of claimed st, the lock dropped meanwhile. */
static void run_locked(replay_set_t *s, strategy_t *st)
{
    const batch_t *b = &s->ring[st->done % RING];
    const sizes_t sz = {.rsize = s->rsize}; /* (moves only while no batch is replaying) */
    pthread_mutex_unlock(&s->mu);
    replay_batch(st, b, &sz);
    pthread_mutex_lock(&s->mu);
    st->done++;
    st->busy = false;
    pthread_cond_broadcast(&s->done);
}

static void *worker(void *arg)
{
    replay_set_t *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        strategy_t *st = claim_locked(s);
        if (st) {
            run_locked(s, st);
            continue;
        }
        if (s->closing)
            break;
        pthread_cond_wait(&s->work, &s->mu);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* Until min(done) >= upto: help, or wait for the workers. */
void replay_wait_done_locked(replay_set_t *s, uint64_t upto)
{
    while (min_done_locked(s) < upto) {
        strategy_t *st = claim_locked(s);
        if (st)
            run_locked(s, st);
        else
            pthread_cond_wait(&s->done, &s->mu);
    }
}

/* ---- records ------------------------------------------------------------------------ */

/* Recycle the records batch k ended (every strategy has replayed it). */
static void recycle(replay_set_t *s, batch_t *b)
{
    for (size_t i = 0; i < b->nended; i++)
        s->free_recs[s->nfree++] = b->ended[i];
    b->nended = 0;
}

/* Room for one more record in every strategy: wait until nothing is
 * replaying (the arrays move), then double them.  0 or -1. */
static int grow_records(replay_set_t *s)
{
    pthread_mutex_lock(&s->mu);
    replay_wait_done_locked(s, s->submitted);
    pthread_mutex_unlock(&s->mu);
    uint32_t cap = s->cap ? s->cap * 2 : 4096;
    if (cap <= s->cap)
        return -1;
    for (size_t i = 0; i < s->n; i++) {
        strategy_t *st = &s->st[i];
        if (st->lean) {
            uint32_t *h = realloc(st->h, cap * sizeof *h);
            if (!h)
                return -1;
            memset(h + s->cap, 0xff, (cap - s->cap) * sizeof *h); /* LEAN_NONE */
            st->h = h;
            continue;
        }
        void **blk = realloc(st->blk, cap * sizeof *blk);
        if (!blk)
            return -1;
        /* NULL until first used: replay_batch's prefetching reads the
         * slots of records whose alloc it has not replayed yet. */
        memset(blk + s->cap, 0, (cap - s->cap) * sizeof *blk);
        st->blk = blk;
    }
    uint64_t *rsize = realloc(s->rsize, cap * sizeof *rsize);
    if (!rsize)
        return -1;
    s->rsize = rsize;
    uint32_t *fr = realloc(s->free_recs, cap * sizeof *fr);
    if (!fr)
        return -1;
    s->free_recs = fr;
    s->cap_free = cap;
    s->cap = cap;
    return 0;
}

static uint32_t new_record(replay_set_t *s)
{
    if (s->nfree)
        return s->free_recs[--s->nfree];
    if (s->nrec == s->cap && grow_records(s))
        return NO_REC;
    return s->nrec++;
}

static int end_record(batch_t *b, uint32_t rec)
{
    if (b->nended == b->cap_ended) {
        size_t cap = b->cap_ended ? b->cap_ended * 2 : 1024;
        uint32_t *e = realloc(b->ended, cap * sizeof *e);
        if (!e)
            return -1;
        b->ended = e;
        b->cap_ended = cap;
    }
    b->ended[b->nended++] = rec;
    return 0;
}

/* ---- the strategies' states ------------------------------------------------------------ */

/* Whether strategy is replayed in its lean form (sim/lean.h), a 32-bit
 * handle per record where a device keeps a 64-byte block struct and an
 * 8-byte pointer: every strategy that has one (first, next, best and
 * worst fit, buddy, caching). */
bool replay_lean(const char *strategy)
{
    return lean_supports(strategy);
}

/* Make st a fresh state of strategy with room for cap records.  0, or
 * -1 with a message in err. */
int replay_strategy_init(const replay_set_t *s, strategy_t *st, const char *strategy,
                         uint64_t device_size, uint32_t cap, char *err, size_t errlen)
{
    memset(st, 0, sizeof *st);
    /* The lean form where it pays; a device where a map of its layout
     * is wanted (layout.h reads a device's blocks). */
    if (!s->keep_maps && replay_lean(strategy) &&
        lean_create(strategy, device_size, &st->lean, err, errlen) == 0) {
        if (cap && !(st->h = malloc(cap * sizeof *st->h))) {
            lean_destroy(st->lean);
            st->lean = NULL;
            snprintf(err, errlen, "out of host memory");
            return -1;
        }
        if (cap)
            memset(st->h, 0xff, cap * sizeof *st->h); /* LEAN_NONE */
        return 0;
    }
    device_config_t cfg = {
        .total = device_size, .strategy = strategy, .no_timing = true, .handles_only = true};
    if (device_create(&cfg, &st->dev, err, errlen))
        return -1;
    /* NULL until first used: replay_batch's prefetching reads the slots
     * of records whose alloc it has not replayed yet. */
    if (cap && !(st->blk = calloc(cap, sizeof *st->blk))) {
        device_destroy(st->dev);
        st->dev = NULL;
        snprintf(err, errlen, "out of host memory");
        return -1;
    }
    if (s->keep_maps)
        st->layout = layout_create(st->dev); /* NULL: the result has no map */
    return 0;
}

/* Give the pages of the memory freed back to the system: glibc keeps a
 * freed state's pages in its thread's arena, where the next strategy
 * on that thread, if smaller, leaves them unused but resident. */
void replay_give_back(void)
{
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

/* Free st's state (a zeroed state too). */
void replay_strategy_fini(strategy_t *st)
{
    device_destroy(st->dev);
    lean_destroy(st->lean);
    hashtab_fini(&st->held, &held_type);
    free(st->h);
    free(st->blk);
    free(st->series);
    layout_destroy(st->layout);
    memset(st, 0, sizeof *st);
}

/* What the report needs of st, into r. */
void replay_strategy_result(const replay_set_t *s, const strategy_t *st, replay_result_t *r)
{
    memset(r, 0, sizeof *r);
    r->name = st->lean ? lean_strategy(st->lean)->name : device_strategy(st->dev)->name;
    r->requests = s->requests;
    r->failed = st->failed + s->dropped;
    r->frees = st->frees;
    if (st->lean)
        lean_metrics(st->lean, &r->m);
    else
        device_metrics(st->dev, &r->m);
    if (st->layout && (r->map = malloc(sizeof *r->map)) && !layout_map(st->layout, r->map)) {
        free(r->map);
        r->map = NULL;
    }
    if (st->nseries && (r->series = malloc(st->nseries * sizeof *r->series))) {
        memcpy(r->series, st->series, st->nseries * sizeof *r->series);
        r->nseries = st->nseries;
    }
    uint64_t events = r->requests + r->frees;
    r->events_per_s = st->ns ? (double)events * 1e9 / (double)st->ns : 0.0;
}

/* ---- feeding ---------------------------------------------------------------------- */

static batch_t *filling(replay_set_t *s) { return &s->ring[s->submitted % RING]; }

/* Hand the batch being filled to the strategies; make the next one
 * ready (its buffer's last batch replayed by all, its records recycled). */
static void submit(replay_set_t *s)
{
    if (s->nlater)
        replay_rounds_spool(s, filling(s));
    pthread_mutex_lock(&s->mu);
    s->submitted++;
    pthread_cond_broadcast(&s->work);
    if (s->submitted >= RING)
        replay_wait_done_locked(s, s->submitted - RING + 1);
    pthread_mutex_unlock(&s->mu);
    batch_t *next = filling(s);
    recycle(s, next);
    next->n = 0;
}

static op_t *next_op(replay_set_t *s)
{
    batch_t *b = filling(s);
    if (b->n == BATCH) {
        submit(s);
        b = filling(s);
    }
    return &b->ops[b->n];
}

uint32_t replay_set_alloc_rec(replay_set_t *s, uint32_t prev, uint64_t size, uint64_t align)
{
    s->requests++;
    if (s->failed_memory) {
        s->dropped++;
        return NO_REC;
    }
    if (!s->n)
        return NO_REC;
    /* The device wants a size and a power-of-two alignment; malloc(0)
     * still takes a block. */
    if (align == 0 || (align & (align - 1)))
        align = 16;
    op_t *op = next_op(s);
    batch_t *b = filling(s);
    uint32_t rec = new_record(s);
    if (rec == NO_REC || (prev != NO_REC && end_record(b, prev))) {
        s->failed_memory = true; /* out of host memory: the replay stops here */
        s->dropped++;
        return NO_REC;
    }
    *op = (op_t){.size = size ? size : 1, .align = align, .rec = rec, .prev = prev};
    s->rsize[rec] = op->size;
    b->n++;
    return rec;
}

void replay_set_free_rec(replay_set_t *s, uint32_t rec)
{
    if (s->failed_memory || !s->n || rec == NO_REC)
        return;
    op_t *op = next_op(s);
    batch_t *b = filling(s);
    if (end_record(b, rec)) {
        s->failed_memory = true;
        return;
    }
    *op = (op_t){.size = s->rsize[rec], .align = 0, .rec = rec};
    b->n++;
}

void replay_set_lost(replay_set_t *s)
{
    s->requests++;
    s->dropped++;
    s->failed_memory = true;
}

void replay_set_mark(replay_set_t *s)
{
    if (s->failed_memory || !s->n)
        return;
    op_t *op = next_op(s);
    *op = (op_t){.rec = NO_REC};
    filling(s)->n++;
}

/* ---- by address: the set's own map ------------------------------------------------- */

void replay_set_alloc(replay_set_t *s, uint64_t addr, uint64_t size, uint64_t align)
{
    if (s->failed_memory || !s->n) {
        replay_set_alloc_rec(s, NO_REC, size, align); /* counted */
        return;
    }
    bool found = false;
    live_t *slot = hashtab_put(&s->live, &live_type, addr, &found);
    if (!slot) {
        replay_set_lost(s);
        return;
    }
    uint32_t prev = found ? (uint32_t)(slot->rec1 - 1) : NO_REC;
    uint32_t rec = replay_set_alloc_rec(s, prev, size, align);
    if (rec == NO_REC) { /* out of memory: the replay has stopped */
        hashtab_erase(&s->live, &live_type, slot);
        return;
    }
    slot->addr = addr;
    slot->rec1 = (uint64_t)rec + 1;
}

void replay_set_free(replay_set_t *s, uint64_t addr)
{
    if (s->failed_memory || !s->n)
        return;
    live_t *slot = hashtab_find(&s->live, &live_type, addr);
    if (!slot)
        return; /* not live in the trace: every strategy would ignore it */
    uint32_t rec = (uint32_t)(slot->rec1 - 1);
    hashtab_erase(&s->live, &live_type, slot);
    replay_set_free_rec(s, rec);
}

void replay_set_realloc(replay_set_t *s, uint64_t old_addr, uint64_t addr, uint64_t size)
{
    replay_set_free(s, old_addr);
    replay_set_alloc(s, addr, size, 16);
}

/* ---- the set ------------------------------------------------------------------------ */

replay_set_t *replay_set_create(unsigned threads)
{
    replay_set_t *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->ring = calloc(RING, sizeof *s->ring);
    if (!s->ring || hashtab_init(&s->live, &live_type, 1024)) {
        free(s->ring);
        free(s);
        return NULL;
    }
    s->spool.fd = -1;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->work, NULL);
    pthread_cond_init(&s->done, NULL);
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    for (unsigned i = 0; i < threads; i++)
        if (pthread_create(&s->threads[s->nthreads], NULL, worker, s) == 0)
            s->nthreads++;
    return s;
}

void replay_set_width(replay_set_t *s, unsigned width) { s->width = width; }

int replay_set_add(replay_set_t *s, const char *strategy, uint64_t device_size, char *err,
                   size_t errlen)
{
    if (s->n + s->nlater == REPLAY_MAX_STRATEGIES || s->requests) {
        snprintf(err, errlen, s->requests ? "strategies are added before the first event"
                                          : "too many strategies");
        return -1;
    }
    strategy_t st;
    if (replay_strategy_init(s, &st, strategy, device_size, s->cap, err, errlen))
        return -1;
    if (replay_rounds_defer(s, strategy, device_size)) {
        replay_strategy_fini(&st); /* made again when its round starts */
        return 0;
    }
    pthread_mutex_lock(&s->mu); /* workers read n */
    s->st[s->n++] = st;
    pthread_mutex_unlock(&s->mu);
    return 0;
}

void replay_set_keep_maps(replay_set_t *s) { s->keep_maps = true; }

size_t replay_set_count(const replay_set_t *s) { return s->n + s->nlater; }

bool replay_set_out_of_memory(const replay_set_t *s) { return s->failed_memory; }

const char *replay_set_note(const replay_set_t *s) { return s->note[0] ? s->note : NULL; }

/* ---- results ------------------------------------------------------------------------ */

/* End the set's worker threads. */
static void stop_workers(replay_set_t *s)
{
    pthread_mutex_lock(&s->mu);
    s->closing = true;
    pthread_cond_broadcast(&s->work);
    pthread_mutex_unlock(&s->mu);
    for (unsigned i = 0; i < s->nthreads; i++)
        pthread_join(s->threads[i], NULL);
    s->nthreads = 0;
}

/* Every strategy's results: the live ones' once they have replayed
 * every batch, then the later rounds'.  last: the live states are freed
 * first, and what only feeding needs. */
static size_t results(replay_set_t *s, replay_result_t *out, bool last)
{
    if (filling(s)->n)
        submit(s);
    pthread_mutex_lock(&s->mu);
    replay_wait_done_locked(s, s->submitted);
    pthread_mutex_unlock(&s->mu);
    if (last)
        stop_workers(s);
    for (size_t i = 0; i < s->n; i++) {
        replay_strategy_result(s, &s->st[i], &out[i]);
        if (last && s->nlater)
            replay_strategy_fini(&s->st[i]); /* the later rounds' room */
    }
    if (!s->nlater)
        return s->n;
    if (last) {
        spool_flush(&s->spool); /* (else read from its buffer) */
        free(s->rsize);
        free(s->free_recs);
        s->rsize = NULL;
        s->free_recs = NULL;
        s->nfree = s->cap_free = 0;
        hashtab_fini(&s->live, &live_type);
        replay_give_back();
    }
    return replay_rounds_run(s, out, s->n);
}

size_t replay_set_results(replay_set_t *s, replay_result_t *out) { return results(s, out, false); }

size_t replay_set_finish(replay_set_t *s, replay_result_t *out)
{
    return results(s, out, true);
}

void replay_set_destroy(replay_set_t *s)
{
    if (!s)
        return;
    stop_workers(s);
    for (size_t i = 0; i < s->n; i++)
        replay_strategy_fini(&s->st[i]);
    for (size_t i = 0; i < RING; i++)
        free(s->ring[i].ended);
    free(s->ring);
    free(s->free_recs);
    free(s->rsize);
    hashtab_fini(&s->live, &live_type);
    spool_close(&s->spool);
    pthread_cond_destroy(&s->work);
    pthread_cond_destroy(&s->done);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* ---- one strategy ------------------------------------------------------------------ */

int replay_open(replay_t *r, const char *strategy, uint64_t device_size, char *err,
                size_t errlen)
{
    r->set = replay_set_create(0);
    if (!r->set) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    replay_set_keep_maps(r->set);
    if (replay_set_add(r->set, strategy, device_size, err, errlen)) {
        replay_set_destroy(r->set);
        r->set = NULL;
        return -1;
    }
    return 0;
}

void replay_close(replay_t *r)
{
    replay_set_destroy(r->set);
    r->set = NULL;
}

void replay_alloc(replay_t *r, uint64_t addr, uint64_t size, uint64_t align)
{
    replay_set_alloc(r->set, addr, size, align);
}

void replay_free(replay_t *r, uint64_t addr) { replay_set_free(r->set, addr); }

void replay_realloc(replay_t *r, uint64_t old_addr, uint64_t addr, uint64_t size)
{
    replay_set_realloc(r->set, old_addr, addr, size);
}

void replay_result(const replay_t *r, replay_result_t *out) { replay_set_results(r->set, out); }
