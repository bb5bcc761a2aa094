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
 * appended to a spool (spool.h, the format below), and the others
 * replay it at the results, each made when its thread takes it and
 * freed once reduced to its result, width of them at once.
 *
 * Invariants, under the set's lock:
 *   done[i] <= submitted for every strategy i; batch k lives in
 *   ring[k % RING] until min(done) > k;  a strategy is replayed by at
 *   most one thread at a time (busy), batches in order.
 */
#include "analyzer/consume/replay.h"

#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyzer/consume/spool.h"
#include "lib/grow.h"
#include "lib/hashtab.h"
#include "sim/lean.h"

#define RING 4             /* batches in flight */
#define BATCH 8192         /* operations per batch */
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
    lean_t *lean;      /* the strategy's lean form (sim/lean.h), or NULL: */
    device_t *dev;     /* its device */
    uint32_t *h;       /* lean: per record, its block's handle, or LEAN_NONE */
    hashtab_t held;    /* lean: the records whose alloc failed and kept the block of
                          the record before them (op_t.prev): record + 1 -> the
                          requested bytes of that block, which its free needs */
    uint64_t *series;  /* its footprint at each mark (replay_set_mark) */
    size_t nseries, cap_series;
    layout_t *layout;  /* its address space as cells, and as it was at its peak */
    uint64_t peak;     /* the peak footprint the layout last marked */
    uint64_t allocs;   /* successful allocations so far */
    void **blk;      /* per record: its block on this device, or NULL */
    uint64_t failed, frees, ns;
    uint64_t done;   /* batches replayed */
    bool busy;       /* a thread is replaying a batch of it */
} strategy_t;

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

/* A strategy of a later round: what replay_set_add was given. */
typedef struct later_s {
    char name[64];
    uint64_t device_size;
} later_t;

struct replay_set_s {
    strategy_t st[REPLAY_MAX_STRATEGIES];  /* the strategies fed as events come */
    size_t n;
    unsigned width;       /* strategies replayed at once; 0: every one */
    later_t later[REPLAY_MAX_STRATEGIES];  /* replayed from the spool, after st's */
    size_t nlater;
    spool_t spool;        /* the resolved operations, while there are later ones */
    char note[640];       /* what to say once, or "" */
    bool keep_maps;       /* each strategy keeps its layout */
    uint64_t requests;
    hashtab_t live;       /* trace address -> record */
    uint64_t *rsize;      /* per record, the bytes its allocation requested */
    uint32_t *free_recs;  /* recycled records */
    size_t nfree, cap_free;
    uint32_t nrec, cap;   /* records made; room in each strategy's blk */
    batch_t *ring;        /* RING batches */
    uint64_t submitted;   /* batches submitted; the one being filled is this one */
    bool failed_memory;   /* a record could not be had: the rest is not replayed */
    uint64_t dropped;     /* requests not replayed for that: failed in every strategy */
    pthread_mutex_t mu;
    pthread_cond_t work;  /* a batch was submitted, or closing */
    pthread_cond_t done;  /* a strategy finished a batch */
    pthread_t threads[MAX_THREADS];
    unsigned nthreads;
    bool closing;
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

/* The bytes records were allocated with, where a lean replay looks one
 * up (lean_keep_prev): the set's array by record, or, replaying the
 * spool, the batch's records before an allocation at their address. */
typedef struct sizes_s {
    const uint64_t *rsize; /* per record, or NULL: */
    const uint64_t *pairs; /* record, bytes; npairs of them */
    size_t npairs;
} sizes_t;

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
static void replay_batch(strategy_t *st, const batch_t *b, const sizes_t *sz)
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
static void wait_done_locked(replay_set_t *s, uint64_t upto)
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
    wait_done_locked(s, s->submitted);
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
static bool replay_lean(const char *strategy)
{
    return lean_supports(strategy);
}

/* Make st a fresh state of strategy with room for cap records.  0, or
 * -1 with a message in err. */
static int strategy_init(const replay_set_t *s, strategy_t *st, const char *strategy,
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
static void give_back(void)
{
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

/* Free st's state (a zeroed state too). */
static void strategy_fini(strategy_t *st)
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
static void strategy_result(const replay_set_t *s, const strategy_t *st, replay_result_t *r)
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

/* ---- the spool --------------------------------------------------------------------------- */

/* The strategies beyond the set's width replay after the trace, from a
 * spool of the operations as resolved, batch by batch.  Each operation
 * is a varint v = rec << 3 | kind (7 bits a byte, low first), then:
 *   SP_FREE     varint size: the bytes its record was allocated with;
 *   SP_ALLOC16  varint size: alignment 16, no record before at the address;
 *   SP_ALLOC    one byte log2(align), | 0x80 when a record before follows,
 *               varint size, then that record and the bytes it was
 *               allocated with (varints);
 *   SP_MARK     nothing (rec 0);
 *   SP_END      the end of a batch (rec 0).
 * So a replay from the spool needs no array of sizes by record.  The
 * batches keep their bounds: a record a batch ends is reused only in a
 * later one, as when it was fed. */
enum { SP_FREE, SP_ALLOC16, SP_ALLOC, SP_MARK, SP_END };
#define SP_MAX_OP 32 /* bytes an operation takes at most: 5 + 1 + 10 + 5 + 10 */

static inline uint8_t *put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* A varint at *p, or false past end (a spool cut short). */
static inline bool get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
        uint8_t c = *(*p)++;
        x |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *v = x;
            return true;
        }
    }
    return false;
}

static void catch_up(replay_set_t *s);

/* Append batch b to the spool; when it cannot be written, replay the
 * later strategies from what it has and feed them live from here on. */
static void spool_batch(replay_set_t *s, const batch_t *b)
{
    uint8_t *p = spool_room(&s->spool, b->n * SP_MAX_OP + 1), *p0 = p;
    if (!p) {
        catch_up(s);
        return;
    }
    for (size_t i = 0; i < b->n; i++) {
        const op_t *op = &b->ops[i];
        if (op->rec == NO_REC) {
            *p++ = SP_MARK;
        } else if (!op->align) {
            p = put_varint(p, (uint64_t)op->rec << 3 | SP_FREE);
            p = put_varint(p, op->size);
        } else if (op->align == 16 && op->prev == NO_REC) {
            p = put_varint(p, (uint64_t)op->rec << 3 | SP_ALLOC16);
            p = put_varint(p, op->size);
        } else {
            p = put_varint(p, (uint64_t)op->rec << 3 | SP_ALLOC);
            *p++ = (uint8_t)(__builtin_ctzll(op->align) | (op->prev != NO_REC ? 0x80 : 0));
            p = put_varint(p, op->size);
            if (op->prev != NO_REC) {
                p = put_varint(p, op->prev);
                p = put_varint(p, s->rsize[op->prev]);
            }
        }
    }
    *p++ = SP_END;
    spool_commit(&s->spool, (size_t)(p - p0));
}

#define SP_READ (1u << 20) /* bytes read back at a time */

/* Replay the spool's first `upto` bytes through st (made with room for
 * s->nrec records at least): the batches fed so far.  0, or -1 with
 * errno. */
static int replay_spooled(const replay_set_t *s, strategy_t *st, uint64_t upto)
{
    batch_t *b = malloc(sizeof *b);
    uint64_t *pairs = malloc(2 * BATCH * sizeof *pairs);
    uint8_t *buf = malloc(SP_READ);
    int rc = -1;
    if (!b || !pairs || !buf) {
        errno = ENOMEM;
        goto out;
    }
    sizes_t sz = {.pairs = pairs};
    b->n = 0;
    uint64_t off = 0;   /* the spool's next byte to read */
    size_t have = 0;    /* bytes in buf */
    const uint8_t *p = buf;
    for (;;) {
        const uint8_t *end = buf + have;
        if ((size_t)(end - p) < SP_MAX_OP && off < upto) { /* read on */
            size_t left = (size_t)(end - p);
            memmove(buf, p, left);
            size_t want = SP_READ - left;
            if (want > upto - off)
                want = (size_t)(upto - off);
            long k = spool_read(&s->spool, off, buf + left, want);
            if (k <= 0) {
                if (k == 0)
                    errno = EIO; /* shorter than written */
                goto out;
            }
            off += (uint64_t)k;
            have = left + (size_t)k;
            p = buf;
            end = buf + have;
        }
        if (p == end)
            break;
        uint64_t v, size = 0, prev = NO_REC, prev_size;
        if (!get_varint(&p, end, &v))
            goto corrupt;
        uint64_t rec = v >> 3;
        unsigned kind = v & 7;
        if (kind == SP_END) {
            replay_batch(st, b, &sz);
            st->done++;
            b->n = 0;
            sz.npairs = 0;
            continue;
        }
        if (b->n == BATCH || (kind != SP_MARK && rec >= s->nrec))
            goto corrupt;
        op_t *op = &b->ops[b->n++];
        switch (kind) {
        case SP_FREE:
            if (!get_varint(&p, end, &size))
                goto corrupt;
            *op = (op_t){.size = size, .align = 0, .rec = (uint32_t)rec};
            break;
        case SP_ALLOC16:
            if (!get_varint(&p, end, &size))
                goto corrupt;
            *op = (op_t){.size = size, .align = 16, .rec = (uint32_t)rec, .prev = NO_REC};
            break;
        case SP_ALLOC: {
            if (p == end)
                goto corrupt;
            uint8_t a = *p++;
            if (!get_varint(&p, end, &size))
                goto corrupt;
            if (a & 0x80) {
                if (!get_varint(&p, end, &prev) || prev >= s->nrec ||
                    !get_varint(&p, end, &prev_size))
                    goto corrupt;
                pairs[2 * sz.npairs] = prev;
                pairs[2 * sz.npairs + 1] = prev_size;
                sz.npairs++;
            }
            *op = (op_t){.size = size, .align = 1ull << (a & 63), .rec = (uint32_t)rec,
                         .prev = (uint32_t)prev};
            break;
        }
        case SP_MARK:
            *op = (op_t){.rec = NO_REC};
            break;
        default:
            goto corrupt;
        }
    }
    rc = b->n ? (errno = EIO, -1) : 0; /* (every batch ends with SP_END) */
    goto out;
corrupt:
    errno = EIO;
out:
    free(buf);
    free(pairs);
    free(b);
    return rc;
}

/* The spool cannot be written: replay the later strategies from what it
 * has (every batch submitted so far), then feed them live with the rest
 * from the next batch on: the same figures, every strategy at once.  The
 * feeding thread, at a batch's submission. */
static void catch_up(replay_set_t *s)
{
    snprintf(s->note, sizeof s->note,
             "cannot write the spool of the strategies' later rounds in %s: %s: "
             "all replayed at once", s->spool.dir, strerror(s->spool.err));
    pthread_mutex_lock(&s->mu);
    wait_done_locked(s, s->submitted); /* every live strategy idle */
    pthread_mutex_unlock(&s->mu);
    for (size_t j = 0; j < s->nlater; j++) {
        strategy_t st;
        char err[256];
        if (strategy_init(s, &st, s->later[j].name, s->later[j].device_size, s->cap, err,
                          sizeof err) == 0 &&
            replay_spooled(s, &st, spool_size(&s->spool)) == 0) {
            st.done = s->submitted;
            pthread_mutex_lock(&s->mu);
            s->st[s->n++] = st;
            pthread_mutex_unlock(&s->mu);
            continue;
        }
        strategy_fini(&st);
        s->failed_memory = true; /* no memory to go on with: the replay stops here */
    }
    s->nlater = 0;
    s->width = 0;
    spool_close(&s->spool);
}

/* ---- feeding ---------------------------------------------------------------------- */

static batch_t *filling(replay_set_t *s) { return &s->ring[s->submitted % RING]; }

/* Hand the batch being filled to the strategies; make the next one
 * ready (its buffer's last batch replayed by all, its records recycled). */
static void submit(replay_set_t *s)
{
    if (s->nlater)
        spool_batch(s, filling(s));
    pthread_mutex_lock(&s->mu);
    s->submitted++;
    pthread_cond_broadcast(&s->work);
    if (s->submitted >= RING)
        wait_done_locked(s, s->submitted - RING + 1);
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
    if (strategy_init(s, &st, strategy, device_size, s->cap, err, errlen))
        return -1;
    if (s->width && s->n >= s->width && strlen(strategy) < sizeof s->later[0].name &&
        (s->nlater || (!s->spool.err && spool_open(&s->spool) == 0))) {
        /* a later round's: made again when its round starts */
        strategy_fini(&st);
        later_t *l = &s->later[s->nlater++];
        snprintf(l->name, sizeof l->name, "%s", strategy);
        l->device_size = device_size;
        return 0;
    }
    if (s->width && s->spool.err && !s->note[0])
        snprintf(s->note, sizeof s->note,
                 "cannot make the spool of the strategies' later rounds in %s: %s: "
                 "all replayed at once", s->spool.dir, strerror(s->spool.err));
    pthread_mutex_lock(&s->mu); /* workers read n */
    s->st[s->n++] = st;
    pthread_mutex_unlock(&s->mu);
    return 0;
}

void replay_set_keep_maps(replay_set_t *s) { s->keep_maps = true; }

size_t replay_set_count(const replay_set_t *s) { return s->n + s->nlater; }

bool replay_set_out_of_memory(const replay_set_t *s) { return s->failed_memory; }

const char *replay_set_note(const replay_set_t *s) { return s->note[0] ? s->note : NULL; }

/* ---- the later rounds --------------------------------------------------------------------- */

/* The later strategies, claimed one at a time by the round's threads:
 * in the order added, but a device (several times a lean form's memory)
 * waits while another runs if a lean one can go instead. */
typedef struct rounds_s {
    replay_set_t *s;
    uint64_t upto;               /* the spool's bytes to replay */
    replay_result_t *out;        /* per later strategy */
    bool ok[REPLAY_MAX_STRATEGIES];
    pthread_mutex_t mu;          /* the fields below, s->note */
    bool taken[REPLAY_MAX_STRATEGIES];
    unsigned devices;            /* devices replaying now */
} rounds_t;

/* Whether later strategy j replays through a device. */
static bool later_device(const replay_set_t *s, size_t j)
{
    return s->keep_maps || !replay_lean(s->later[j].name);
}

/* The next strategy to replay, taken; SIZE_MAX when none is left. */
static size_t claim_later_locked(rounds_t *r)
{
    size_t pick = SIZE_MAX;
    for (size_t j = 0; j < r->s->nlater; j++) {
        if (r->taken[j])
            continue;
        if (pick == SIZE_MAX)
            pick = j;
        if (!r->devices || !later_device(r->s, j)) {
            pick = j;
            break;
        }
    }
    if (pick != SIZE_MAX) {
        r->taken[pick] = true;
        r->devices += later_device(r->s, pick);
    }
    return pick;
}

/* Later strategy j, from its state's making to its result, into
 * r->out[j]; its state is freed before it returns. */
static void replay_later(rounds_t *r, size_t j)
{
    replay_set_t *s = r->s;
    const later_t *l = &s->later[j];
    strategy_t st;
    char err[400];
    /* room for the records made, not for the set's next doubling */
    int rc = strategy_init(s, &st, l->name, l->device_size, s->nrec, err, sizeof err);
    if (rc == 0 && replay_spooled(s, &st, r->upto)) {
        snprintf(err, sizeof err, "cannot read its spool back in %s: %s", s->spool.dir,
                 strerror(errno));
        rc = -1;
    }
    if (rc == 0) {
        strategy_result(s, &st, &r->out[j]);
        r->ok[j] = true;
        strategy_fini(&st);
        give_back();
        return;
    } else {
        pthread_mutex_lock(&r->mu);
        if (!s->note[0])
            snprintf(s->note, sizeof s->note, "%s left out: %s", l->name, err);
        pthread_mutex_unlock(&r->mu);
    }
    strategy_fini(&st);
}

static void *rounds_worker(void *arg)
{
    rounds_t *r = arg;
    for (;;) {
        pthread_mutex_lock(&r->mu);
        size_t j = claim_later_locked(r);
        pthread_mutex_unlock(&r->mu);
        if (j == SIZE_MAX)
            return NULL;
        replay_later(r, j);
        pthread_mutex_lock(&r->mu);
        r->devices -= later_device(r->s, j);
        pthread_mutex_unlock(&r->mu);
    }
}

/* Replay the later strategies from the spool, at most s->width at once
 * (the caller's thread and width - 1 of their own); their results after
 * the n given, in the order they were added.  The number of results. */
static size_t replay_rounds(replay_set_t *s, replay_result_t *out, size_t n)
{
    rounds_t r = {.s = s, .upto = spool_size(&s->spool)};
    replay_result_t later[REPLAY_MAX_STRATEGIES];
    r.out = later;
    pthread_mutex_init(&r.mu, NULL);
    pthread_t th[REPLAY_MAX_STRATEGIES];
    unsigned nth = 0;
    for (unsigned i = 1; i < s->width && i < s->nlater; i++)
        if (pthread_create(&th[nth], NULL, rounds_worker, &r) == 0)
            nth++;
    rounds_worker(&r);
    for (unsigned i = 0; i < nth; i++)
        pthread_join(th[i], NULL);
    pthread_mutex_destroy(&r.mu);
    for (size_t j = 0; j < s->nlater; j++)
        if (r.ok[j])
            out[n++] = later[j];
    return n;
}

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
    wait_done_locked(s, s->submitted);
    pthread_mutex_unlock(&s->mu);
    if (last)
        stop_workers(s);
    for (size_t i = 0; i < s->n; i++) {
        strategy_result(s, &s->st[i], &out[i]);
        if (last && s->nlater)
            strategy_fini(&s->st[i]); /* the later rounds' room */
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
        give_back();
    }
    return replay_rounds(s, out, s->n);
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
        strategy_fini(&s->st[i]);
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
