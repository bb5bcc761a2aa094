/*
 * device: validation, statistics and metrics around a pool and one
 * strategy.  See device.h.
 */
#include "sim/device.h"
#include "lib/lines.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct device_s {
    int id;
    uint64_t total, base, granule;
    bool timing;
    bool handles_only;         /* pools without an address map */
    const strategy_ops_t *ops; /* current strategy */
    void *state;               /* its state, ops->state_size bytes */
    device_stats_t *cur;       /* its statistics: &stats[strategy_index(ops)] */
    pool_t pool;
    device_stats_t *stats;     /* one per strategy in the table */
    uint64_t peak_footprint;   /* since the pool last started */
    uint64_t peak_live;
    uint64_t internal_at_peak; /* alloc - requested bytes at the footprint peak */
    double external_at_peak;   /* 1 - largest free / free at the footprint peak */
    uint64_t live_at_peak;     /* requested bytes at the footprint peak */
    uint64_t free_at_peak;     /* footprint - alloc bytes at the footprint peak */
};

static uint64_t now_ns(const device_t *d)
{
    if (!d->timing)
        return 0;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void result_clear(device_result_t *r)
{
    memset(r, 0, offsetof(device_result_t, error) + 1);
}

__attribute__((format(printf, 3, 4)))
static int fail(device_result_t *r, int err, const char *fmt, ...)
{
    r->ok = false;
    r->err = err;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->error, sizeof r->error, fmt, ap);
    va_end(ap);
    return err;
}

static int succeed(device_result_t *r, uint64_t addr, uint64_t size)
{
    r->ok = true;
    r->err = POOL_OK;
    r->addr = addr;
    r->size = size;
    r->error[0] = '\0';
    return POOL_OK;
}

static uint64_t reserved(const device_t *d)
{
    return d->ops->footprint == STRATEGY_FOOTPRINT_SEGMENTS ? d->pool.segment_bytes
                                                            : d->pool.extent_bytes;
}

/* ---- lifecycle ---------------------------------------------------------- */

/* Build a pool under ops into *pool and *state, touching nothing else
 * (a pool holds no pointers into itself, so it moves by copy). */
static int build(const device_t *d, const strategy_ops_t *ops, pool_t *pool, void **state)
{
    int err = d->handles_only ? pool_init_handles_only(pool) : pool_init(pool);
    if (err)
        return err;
    *state = lines_calloc(ops->state_size ? ops->state_size : 1);
    if (!*state) {
        pool_fini(pool);
        return POOL_EHOST;
    }
    strategy_env_t env = {.base = d->base, .total = d->total, .granule = d->granule};
    if ((err = ops->init(*state, pool, &env))) {
        if (ops->fini)
            ops->fini(*state);
        lines_free(*state);
        pool_fini(pool);
    }
    return err;
}

static void stop_strategy(device_t *d)
{
    if (d->ops && d->ops->fini)
        d->ops->fini(d->state);
    lines_free(d->state);
    d->state = NULL;
    pool_fini(&d->pool);
}

/* Replace the pool with a fresh one under ops.  On failure the device
 * keeps its old pool and strategy untouched. */
static int start_strategy(device_t *d, const strategy_ops_t *ops)
{
    pool_t pool;
    void *state;
    int err = build(d, ops, &pool, &state);
    if (err)
        return err;
    stop_strategy(d);
    d->ops = ops;
    d->cur = &d->stats[strategy_index(ops)];
    d->state = state;
    d->pool = pool;
    d->peak_footprint = reserved(d);
    d->peak_live = 0;
    d->internal_at_peak = 0;
    d->external_at_peak = 0.0;
    d->live_at_peak = 0;
    d->free_at_peak = d->peak_footprint;
    return POOL_OK;
}

int device_create(const device_config_t *cfg, device_t **out, char *err, size_t errlen)
{
    char names[256];
    const char *name = cfg->strategy ? cfg->strategy : DEVICE_DEFAULT_STRATEGY;
    const strategy_ops_t *ops = strategy_find(name);
    uint64_t granule = cfg->granule ? cfg->granule : DEVICE_DEFAULT_GRANULE;
    uint64_t base = cfg->base ? cfg->base : DEVICE_DEFAULT_BASE;
    *out = NULL;
    if (!ops) {
        if (err)
            snprintf(err, errlen, "unknown strategy \"%s\" (known: %s)", name,
                     strategy_names(names, sizeof names));
        return POOL_EINVAL;
    }
    if (cfg->total == 0 || base + cfg->total < base) {
        if (err)
            snprintf(err, errlen, "invalid device size %" PRIu64 " at base 0x%" PRIx64,
                     cfg->total, base);
        return POOL_EINVAL;
    }
    if (granule & (granule - 1) || base & (granule - 1)) {
        if (err)
            snprintf(err, errlen, "granule %" PRIu64 " must be a power of two dividing the base",
                     granule);
        return POOL_EINVAL;
    }
    device_t *d = lines_calloc(sizeof *d);
    device_stats_t *stats = lines_calloc(strategy_count() * sizeof *stats);
    if (!d || !stats) {
        lines_free(d);
        lines_free(stats);
        if (err)
            snprintf(err, errlen, "out of host memory");
        return POOL_EHOST;
    }
    d->id = cfg->id;
    d->total = cfg->total;
    d->base = base;
    d->granule = granule;
    d->timing = !cfg->no_timing;
    d->handles_only = cfg->handles_only;
    d->stats = stats;
    int e = start_strategy(d, ops);
    if (e) {
        if (err)
            snprintf(err, errlen, "cannot start strategy %s on a %" PRIu64 "-byte device: %s",
                     ops->name, cfg->total, pool_strerror(e));
        lines_free(stats);
        lines_free(d);
        return e;
    }
    *out = d;
    return POOL_OK;
}

void device_destroy(device_t *d)
{
    if (!d)
        return;
    stop_strategy(d);
    lines_free(d->stats);
    lines_free(d);
}

int device_id(const device_t *d) { return d->id; }
uint64_t device_total(const device_t *d) { return d->total; }
uint64_t device_base(const device_t *d) { return d->base; }
const strategy_ops_t *device_strategy(const device_t *d) { return d->ops; }
const pool_t *device_pool(const device_t *d) { return &d->pool; }

const device_stats_t *device_stats(const device_t *d, size_t i)
{
    return i < strategy_count() ? &d->stats[i] : NULL;
}


int device_set_strategy(device_t *d, const char *name, device_result_t *r)
{
    char names[256];
    result_clear(r);
    const strategy_ops_t *ops = strategy_find(name);
    if (!ops)
        return fail(r, POOL_EINVAL, "unknown strategy \"%s\" (known: %s)", name ? name : "",
                    strategy_names(names, sizeof names));
    if (d->pool.live_blocks)
        return fail(r, POOL_EBUSY,
                    "cannot switch to %s: %" PRIu64 " blocks are still allocated under %s",
                    ops->name, d->pool.live_blocks, d->ops->name);
    int err = start_strategy(d, ops);
    if (err)
        return fail(r, err, "cannot start strategy %s: %s", ops->name, pool_strerror(err));
    return succeed(r, 0, 0);
}

int device_reset(device_t *d)
{
    int err = start_strategy(d, d->ops);
    if (!err)
        memset(d->stats, 0, strategy_count() * sizeof *d->stats);
    return err;
}

/* ---- operations ----------------------------------------------------------- */

static int validate(const device_t *d, uint64_t size, uint64_t align, int64_t stream,
                    device_result_t *r)
{
    if (size == 0)
        return fail(r, POOL_EINVAL, "invalid request: size is zero");
    if (align == 0 || (align & (align - 1)))
        return fail(r, POOL_EINVAL, "invalid request: alignment %" PRIu64
                    " is not a power of two", align);
    if (stream == POOL_STREAM_ANY)
        return fail(r, POOL_EINVAL, "invalid request: stream %" PRId64 " is reserved", stream);
    if (size > d->total)
        return fail(r, POOL_ETOOBIG, "request of %" PRIu64
                    " bytes exceeds the device's %" PRIu64 " bytes", size, d->total);
    return POOL_OK;
}

/* An allocation that failed: statistics and the message.  Out of line,
 * to keep the path of a success short. */
__attribute__((noinline, cold))
static int alloc_failed(device_t *d, uint64_t size, uint64_t align, int err, uint64_t ns,
                        device_result_t *r)
{
    result_clear(r);
    r->ns = ns;
    d->cur->failed_allocations++;
    if (err == POOL_ENOMEM)
        return fail(r, err, "out of memory: %s cannot place %" PRIu64
                    " bytes (largest free block %" PRIu64 " bytes)",
                    d->ops->name, size, d->ops->largest_free(d->state, &d->pool));
    if (err == POOL_EINVAL)
        return fail(r, err, "invalid request: %s cannot align %" PRIu64
                    " bytes to %" PRIu64, d->ops->name, size, align);
    return fail(r, err, "allocation of %" PRIu64 " bytes failed: %s", size,
                pool_strerror(err));
}

__attribute__((noinline, cold))
static int alloc_invalid(device_t *d, uint64_t size, uint64_t align, int64_t stream,
                         device_result_t *r)
{
    result_clear(r);
    d->cur->failed_allocations++;
    return validate(d, size, align, stream, r);
}

/* The footprint reached a new peak: what fragmentation was then. */
__attribute__((noinline))
static void new_peak(device_t *d, uint64_t res)
{
    const pool_t *p = &d->pool;
    uint64_t free_bytes = p->segment_bytes - p->alloc_bytes;
    d->peak_footprint = res;
    d->internal_at_peak = p->alloc_bytes - p->requested_bytes;
    d->live_at_peak = p->requested_bytes;
    /* What the footprint counts holds every live block (extent: up to the
     * highest; segments: all of them), so this cannot underflow. */
    d->free_at_peak = res - p->alloc_bytes;
    d->external_at_peak =
        free_bytes ? 1.0 - (double)d->ops->largest_free(d->state, p) / (double)free_bytes : 0.0;
}

/* A successful placement of size bytes in b: statistics and peaks. */
static inline void count_alloc(device_t *d, uint64_t size, uint64_t ns)
{
    device_stats_t *st = d->cur;
    st->allocations++;
    st->bytes_allocated += size;
    st->alloc_ns += ns;
    st->current_bytes += size;
    st->active_blocks++;
    uint64_t res = reserved(d);
    if (res > d->peak_footprint)
        new_peak(d, res);
    if (d->pool.requested_bytes > d->peak_live)
        d->peak_live = d->pool.requested_bytes;
}

static inline bool alloc_valid(const device_t *d, uint64_t size, uint64_t align, int64_t stream)
{
    /* size - 1 >= total: zero, or more than the device */
    return !(size - 1 >= d->total || !align || (align & (align - 1)) ||
             stream == POOL_STREAM_ANY);
}

int device_alloc(device_t *d, uint64_t size, uint64_t align, int64_t stream,
                 device_result_t *r)
{
    if (__builtin_expect(!alloc_valid(d, size, align, stream), 0))
        return alloc_invalid(d, size, align, stream, r);
    uint64_t t0 = now_ns(d);
    strategy_request_t req = {.size = size, .align = align, .stream = stream};
    block_t *b;
    int err = d->ops->place(d->state, &d->pool, &req, &b);
    uint64_t ns = now_ns(d) - t0;
    if (__builtin_expect(err != POOL_OK, 0))
        return alloc_failed(d, size, align, err, ns, r);
    count_alloc(d, size, ns);
    r->ok = true;
    r->err = POOL_OK;
    r->addr = b->addr;
    r->size = b->size;
    r->ns = ns;
    r->block = b;
    r->error[0] = '\0';
    return POOL_OK;
}

int device_alloc_handle(device_t *d, uint64_t size, uint64_t align, int64_t stream,
                        void **block)
{
    if (__builtin_expect(!alloc_valid(d, size, align, stream), 0)) {
        device_result_t r;
        return alloc_invalid(d, size, align, stream, &r);
    }
    uint64_t t0 = now_ns(d);
    strategy_request_t req = {.size = size, .align = align, .stream = stream};
    block_t *b;
    int err = d->ops->place(d->state, &d->pool, &req, &b);
    uint64_t ns = now_ns(d) - t0;
    if (__builtin_expect(err != POOL_OK, 0)) {
        d->cur->failed_allocations++; /* as alloc_failed counts it, without the message */
        return err;
    }
    count_alloc(d, size, ns);
    *block = b;
    return POOL_OK;
}

/* Why the block at addr (b, or NULL when none starts there) cannot be
 * freed by op, as a failed result; want_requested: it had to be
 * FREE_REQUESTED, not ALLOC. */
__attribute__((noinline, cold))
static int lookup_failed(device_t *d, const block_t *b, uint64_t addr, const char *op,
                         bool want_requested, device_result_t *r)
{
    result_clear(r);
    d->cur->failed_frees++;
    if (!b && d->handles_only)
        return fail(r, POOL_EINVAL, "%s of 0x%" PRIx64 ": this device frees by handle only",
                    op, addr);
    if (!b) {
        if (pool_segment_at(&d->pool, addr))
            return fail(r, POOL_ENOENT, "%s of 0x%" PRIx64 ": not the start of an allocated"
                        " block (double free or interior pointer)", op, addr);
        return fail(r, POOL_ENOENT, "%s of unknown address 0x%" PRIx64, op, addr);
    }
    if (block_is_free(b))
        return fail(r, POOL_EDOUBLE, "double free of 0x%" PRIx64 ": the block is already free",
                    addr);
    if (want_requested)
        return fail(r, POOL_ESTATE, "%s of 0x%" PRIx64 ": the block is %s, not free_requested",
                    op, addr, block_state_name(b->state));
    return fail(r, POOL_EDOUBLE, "double free of 0x%" PRIx64 ": its free was already requested",
                addr);
}

/* Free allocated (or free-requested) block b: release it to the
 * strategy and count it.  Its time is returned. */
static inline uint64_t release_block(device_t *d, block_t *b, uint64_t t0)
{
    device_stats_t *st = d->cur;
    uint64_t requested = b->requested;
    pool_block_mark_freed(&d->pool, b);
    d->ops->release(d->state, &d->pool, b);
    uint64_t ns = now_ns(d) - t0;
    st->frees++;
    st->bytes_freed += requested;
    st->free_ns += ns;
    st->current_bytes -= requested;
    st->active_blocks--;
    return ns;
}

/* release_block, and fill in r. */
static inline int complete_free(device_t *d, block_t *b, uint64_t t0, device_result_t *r)
{
    uint64_t addr = b->addr, size = b->size;
    uint64_t ns = release_block(d, b, t0);
    r->ok = true;
    r->err = POOL_OK;
    r->addr = addr;
    r->size = size;
    r->ns = ns;
    r->block = NULL;
    r->error[0] = '\0';
    return POOL_OK;
}

int device_free(device_t *d, uint64_t addr, device_result_t *r)
{
    uint64_t t0 = now_ns(d);
    block_t *b = pool_block_at(&d->pool, addr);
    if (__builtin_expect(!b || b->state != BLOCK_ALLOC, 0))
        return lookup_failed(d, b, addr, "free", false, r);
    return complete_free(d, b, t0, r);
}

int device_free_block(device_t *d, void *block, device_result_t *r)
{
    uint64_t t0 = now_ns(d);
    block_t *b = block;
    if (__builtin_expect(!b || b->state != BLOCK_ALLOC, 0)) {
        result_clear(r);
        d->cur->failed_frees++;
        return fail(r, POOL_EDOUBLE, "free of a block that is not allocated (%s)",
                    b ? block_state_name(b->state) : "no block");
    }
    return complete_free(d, b, t0, r);
}

int device_free_handle(device_t *d, void *block)
{
    block_t *b = block;
    if (__builtin_expect(!b || b->state != BLOCK_ALLOC, 0)) {
        device_result_t r;
        return device_free_block(d, block, &r);
    }
    release_block(d, b, now_ns(d));
    return POOL_OK;
}

int device_free_request(device_t *d, uint64_t addr, device_result_t *r)
{
    block_t *b = pool_block_at(&d->pool, addr);
    if (!b || b->state != BLOCK_ALLOC)
        return lookup_failed(d, b, addr, "free request", false, r);
    result_clear(r);
    pool_block_mark_free_requested(&d->pool, b);
    return succeed(r, b->addr, b->size);
}

int device_free_complete(device_t *d, uint64_t addr, device_result_t *r)
{
    uint64_t t0 = now_ns(d);
    block_t *b = pool_block_at(&d->pool, addr);
    if (!b || b->state != BLOCK_FREE_REQUESTED)
        return lookup_failed(d, b, addr, "free completion", true, r);
    return complete_free(d, b, t0, r);
}

bool device_can_alloc(const device_t *d, uint64_t size, uint64_t align, int64_t stream)
{
    device_result_t r;
    if (validate(d, size, align, stream, &r))
        return false;
    strategy_request_t req = {.size = size, .align = align, .stream = stream};
    return d->ops->can_place(d->state, &d->pool, &req);
}

uint64_t device_trim(device_t *d)
{
    uint64_t released = 0;
    if (d->ops->trim)
        d->ops->trim(d->state, &d->pool, &released);
    return released;
}

/* ---- state ---------------------------------------------------------------- */

uint64_t device_peak_footprint(const device_t *d) { return d->peak_footprint; }

void device_metrics(const device_t *d, device_metrics_t *m)
{
    const pool_t *p = &d->pool;
    memset(m, 0, sizeof *m);
    m->total = d->total;
    m->segments = pool_segment_count(p);
    m->blocks = p->nblocks;
    m->live_blocks = p->live_blocks;
    m->live_requested = p->requested_bytes;
    m->live_allocated = p->alloc_bytes;
    m->segment_bytes = p->segment_bytes;
    m->reserved = reserved(d);
    m->peak_footprint = d->peak_footprint;
    m->peak_live_requested = d->peak_live;
    m->largest_free = d->ops->largest_free(d->state, p);
    m->internal_fragmentation = p->alloc_bytes - p->requested_bytes;
    m->free_bytes = p->segment_bytes - p->alloc_bytes;
    m->free_blocks = p->nblocks - p->live_blocks;
    m->external_fragmentation =
        m->free_bytes ? 1.0 - (double)m->largest_free / (double)m->free_bytes : 0.0;
    m->seed_fragmentation = pool_seed_fragmentation(p);
    m->utilization = p->segment_bytes ? (double)p->alloc_bytes / (double)p->segment_bytes : 0.0;
    m->jw_fragmentation =
        d->peak_live ? (double)d->peak_footprint / (double)d->peak_live - 1.0 : 0.0;
    m->internal_at_peak = d->internal_at_peak;
    m->external_at_peak = d->external_at_peak;
    m->live_at_peak = d->live_at_peak;
    m->free_at_peak = d->free_at_peak;
}

int device_check(const device_t *d, const char **why)
{
    const char *dummy;
    if (!why)
        why = &dummy;
    if (pool_check(&d->pool, why) || d->ops->check(d->state, &d->pool, why))
        return -1;
    return 0;
}

void device_print_status(const device_t *d, FILE *f)
{
    device_metrics_t m;
    device_metrics(d, &m);
    fprintf(f, "=== Device %d Memory Status ===\n", d->id);
    fprintf(f, "Total Memory: %" PRIu64 " bytes\n", d->total);
    fprintf(f, "Base Address: 0x%" PRIx64 "\n", d->base);
    fprintf(f, "Current Allocator: %s\n", d->ops->name);
    fprintf(f, "Allocated: %" PRIu64 " bytes (%.1f%%), requested %" PRIu64 " bytes\n",
            m.live_allocated, 100.0 * m.utilization, m.live_requested);
    fprintf(f, "Free: %" PRIu64 " bytes, largest free block %" PRIu64 " bytes\n", m.free_bytes,
            m.largest_free);
    fprintf(f, "Reserved: %" PRIu64 " bytes, peak footprint %" PRIu64 " bytes\n", m.reserved,
            m.peak_footprint);
    fprintf(f, "Fragmentation: %.1f%% (seed), external %.1f%%, internal %" PRIu64 " bytes\n",
            100.0 * m.seed_fragmentation, 100.0 * m.external_fragmentation,
            m.internal_fragmentation);
    const device_stats_t *st = d->cur;
    fprintf(f, "Total Allocations: %" PRIu64 "\nTotal Frees: %" PRIu64 "\n", st->allocations,
            st->frees);
    fprintf(f, "\n=== Segments ===\n");
    for (const segment_t *s = pool_segment_first(&d->pool); s; s = pool_segment_next(s)) {
        fprintf(f, "\nSegment %" PRIu64 ":\n", s->id);
        fprintf(f, "  Address: 0x%" PRIx64 "\n", s->addr);
        if (s->stream == POOL_STREAM_ANY)
            fprintf(f, "  Device/Stream: %d/any\n", d->id);
        else
            fprintf(f, "  Device/Stream: %d/%" PRId64 "\n", d->id, s->stream);
        fprintf(f, "  Original size: %" PRIu64 " bytes\n", s->size);
        fprintf(f, "  Allocated: %" PRIu64 " bytes\n", s->alloc_bytes);
        fprintf(f, "  Free: %" PRIu64 " bytes\n", s->size - s->alloc_bytes);
        fprintf(f, "  Blocks: %" PRIu64 "\n", s->nblocks);
        fprintf(f, "  Utilization: %.1f%%\n", 100.0 * (double)s->alloc_bytes / (double)s->size);
        fprintf(f, "  Fragmentation: %.1f%%\n",
                s->nblocks > 1 ? 100.0 * (1.0 - 1.0 / (double)s->nblocks) : 0.0);
        for (const block_t *b = s->first; b; b = b->next)
            fprintf(f, "    0x%" PRIx64 ": %" PRIu64 " bytes (%s)%s\n", b->addr, b->size,
                    block_is_free(b) ? "FREE" : b->state == BLOCK_ALLOC ? "ALLOC" : "FREE_REQUESTED",
                    b == s->first ? " [SEGMENT_START]" : "");
    }
}
