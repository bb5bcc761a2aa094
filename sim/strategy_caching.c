/*
 * caching: a segment-reserving pool after PyTorch's CUDA caching
 * allocator (c10/cuda/CUDACachingAllocator.cpp).
 *
 * Requests round up to a multiple of 512 bytes (at least 512).  Rounded
 * requests up to 1 MiB use the small pool, whose segments are 2 MiB;
 * larger ones the large pool, whose segments are 20 MiB for requests
 * below 10 MiB and the request rounded up to 2 MiB otherwise.  Within a
 * pool the block is the best fit by (stream, size, address) (size bins
 * below 256 KiB, as best fit keeps them, and a tree above); a
 * small-pool block is split when at least 512 bytes would remain, a
 * large-pool block only when more than 1 MiB would.  Frees coalesce only
 * inside a segment, and a segment goes back to the device (reserved
 * drops) only when it is wholly free and the cache is trimmed — which a
 * request that would exceed the device's capacity does first, as
 * PyTorch frees its cached blocks before reporting out of memory.
 *
 * The device's capacity bounds reserved bytes, not addresses: segments
 * are placed in a virtual range above the base, 2 MiB aligned, as a GPU
 * with virtual memory would place them.  Alignments above 512 bytes pad
 * the block's front, as the fit strategies do.
 */
#include "sim/caching_policy.h"
#include "sim/fit.h"

#define MB CACHING_MB
#define ROUND CACHING_ROUND
#define SMALL_SIZE CACHING_SMALL_SIZE
#define ROUND_LARGE CACHING_ROUND_LARGE
#define VIRTUAL_SPAN CACHING_VIRTUAL_SPAN

enum { KIND_SMALL = 0, KIND_LARGE = 1 };

typedef struct caching_state_s {
    fit_index_t pools[2]; /* free blocks of small and large segments */
    fit_bins_t bins[2];   /* their size bins (below FIT_BINS * 512 bytes) */
    uint64_t base, total; /* where segments go; capacity in reserved bytes */
} caching_state_t;

static int init(void *vst, pool_t *p, const strategy_env_t *env)
{
    (void)p;
    caching_state_t *st = vst;
    if (env->total < ROUND)
        return POOL_EINVAL;
    fit_index_init(&st->pools[KIND_SMALL], FIT_BY_SIZE, ROUND);
    fit_index_init(&st->pools[KIND_LARGE], FIT_BY_SIZE, ROUND);
    st->pools[KIND_SMALL].bins = &st->bins[KIND_SMALL];
    st->pools[KIND_LARGE].bins = &st->bins[KIND_LARGE];
    st->base = (env->base + ROUND_LARGE - 1) & ~(ROUND_LARGE - 1);
    st->total = env->total;
    return POOL_OK;
}

static fit_index_t *pool_for(caching_state_t *st, const segment_t *s)
{
    return &st->pools[s->kind];
}

/* Give every wholly free segment back; bytes go to *released. */
static void trim(void *vst, pool_t *p, uint64_t *released)
{
    caching_state_t *st = vst;
    uint64_t bytes = 0;
    for (segment_t *s = pool_segment_first(p); s;) {
        segment_t *next = pool_segment_next(s);
        if (s->nblocks == 1 && block_is_free(s->first)) {
            fit_index_remove(pool_for(st, s), p, s->first);
            bytes += s->size;
            pool_segment_remove(p, s, false);
        }
        s = next;
    }
    if (released)
        *released = bytes;
}

typedef struct sizing_s {
    uint64_t bytes; /* block bytes: rounded request */
    uint64_t need;  /* bytes a free block needs, with alignment padding */
    int kind;       /* small or large pool */
} sizing_t;

static int size_request(const strategy_request_t *req, sizing_t *z)
{
    z->bytes = fit_block_bytes(ROUND, req);
    z->need = fit_search_bytes(ROUND, req);
    if (!z->bytes || !z->need)
        return POOL_ENOMEM;
    z->kind = z->bytes <= SMALL_SIZE ? KIND_SMALL : KIND_LARGE;
    return POOL_OK;
}

static int place(void *vst, pool_t *p, const strategy_request_t *req, block_t **out)
{
    caching_state_t *st = vst;
    sizing_t z;
    int err = size_request(req, &z);
    if (err)
        return err;
    fit_index_t *ix = &st->pools[z.kind];
    block_t *b = fit_best_of(ix, req->stream, z.need);
    if (!b) {
        uint64_t seg = caching_segment_size(z.need);
        if (!seg || seg > st->total)
            return POOL_ENOMEM;
        if (p->segment_bytes + seg > st->total)
            trim(st, p, NULL);
        if (p->segment_bytes + seg > st->total)
            return POOL_ENOMEM;
        uint64_t addr;
        segment_t *s;
        if ((err = pool_segment_find_range(p, seg, ROUND_LARGE, st->base,
                                           st->base + VIRTUAL_SPAN, &addr)) ||
            (err = pool_segment_create(p, addr, seg, req->stream, z.kind, &s)))
            return err;
        b = s->first;
        fit_index_insert(ix, p, b);
    }
    uint64_t min_split = z.kind == KIND_SMALL ? ROUND : SMALL_SIZE + 1;
    return fit_carve(ix, p, b, req, z.bytes, min_split, out);
}

static bool can_place(const void *vst, const pool_t *p, const strategy_request_t *req)
{
    const caching_state_t *st = vst;
    sizing_t z;
    if (size_request(req, &z))
        return false;
    if (fit_best_of(&st->pools[z.kind], req->stream, z.need))
        return true;
    uint64_t seg = caching_segment_size(z.need), cached = 0;
    if (!seg)
        return false;
    for (const segment_t *s = pool_segment_first(p); s; s = pool_segment_next(s))
        if (s->nblocks == 1 && block_is_free(s->first))
            cached += s->size;
    return p->segment_bytes - cached + seg <= st->total;
}

static void release(void *vst, pool_t *p, block_t *b)
{
    fit_release(pool_for(vst, b->seg), p, b);
}

static uint64_t largest_free(const void *vst, const pool_t *p)
{
    (void)p;
    const caching_state_t *st = vst;
    uint64_t s = fit_index_largest(&st->pools[KIND_SMALL]);
    uint64_t l = fit_index_largest(&st->pools[KIND_LARGE]);
    return s > l ? s : l;
}

static bool in_small(const fit_index_t *ix, const segment_t *s)
{
    (void)ix;
    return s->kind == KIND_SMALL;
}

static bool in_large(const fit_index_t *ix, const segment_t *s)
{
    (void)ix;
    return s->kind == KIND_LARGE;
}

static int check(const void *vst, const pool_t *p, const char **why)
{
    const caching_state_t *st = vst;
    if (pool_check_coalesced(p, why) ||
        fit_index_check(&st->pools[KIND_SMALL], p, in_small, why) ||
        fit_index_check(&st->pools[KIND_LARGE], p, in_large, why))
        return -1;
    if (p->segment_bytes > st->total) {
        *why = "reserved bytes exceed the device";
        return -1;
    }
    for (const segment_t *s = pool_segment_first(p); s; s = pool_segment_next(s)) {
        if (s->kind == KIND_SMALL && s->size != CACHING_SMALL_SEGMENT) {
            *why = "small-pool segment is not 2 MiB";
            return -1;
        }
        for (const block_t *b = s->first; b; b = b->next)
            if (b->stream != s->stream) {
                *why = "block of another stream in a segment";
                return -1;
            }
    }
    return 0;
}

static const strategy_ops_t ops = {
    .name = "caching",
    .summary = "PyTorch-style caching pool: 512 B rounding, small/large segments kept reserved",
    .state_size = sizeof(caching_state_t),
    .footprint = STRATEGY_FOOTPRINT_SEGMENTS,
    .init = init,
    .place = place,
    .can_place = can_place,
    .release = release,
    .largest_free = largest_free,
    .trim = trim,
    .check = check,
};

const strategy_ops_t *strategy_caching(void) { return &ops; }
