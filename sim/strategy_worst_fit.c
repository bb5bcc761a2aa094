/*
 * worst-fit: the largest free block (it leaves the largest remainder);
 * among equals, the lowest address.  The top of the device (the memory
 * above the extent, fit_is_top) is a last resort, taken only when no
 * other block fits: it is always the largest block of a device larger
 * than the heap, and taking it first would make every allocation grow
 * the heap (the heap's break, in a real allocator) while holes stay
 * unused; the fit index keeps it apart (sim/fit.h).  Index: per stream
 * tag a pairing heap, largest first then lowest address (sim/fit.h's
 * FIT_LARGEST_FIRST): the choice is a heap's root, O(1); an insertion is
 * O(1), a removal O(log n) amortized.  Streams beyond the first few
 * share a tree by (stream, size, address): the last node of the
 * stream's range, O(log n).
 */
#include "sim/fit.h"

static block_t *select_worst(const fit_state_t *st, const strategy_request_t *req,
                             uint64_t need)
{
    block_t *own = fit_worst_of(&st->ix, req->stream, need);
    block_t *any = fit_worst_of(&st->ix, POOL_STREAM_ANY, need);
    if (!own && !any) /* the top, last (see above) */
        return fit_top_for(&st->ix, POOL_STREAM_ANY, need);
    if (!own || !any)
        return own ? own : any;
    if (own->size != any->size)
        return own->size > any->size ? own : any;
    return fit_lower(own, any);
}

static int init(void *st, pool_t *p, const strategy_env_t *env)
{
    return fit_init(st, FIT_LARGEST_FIRST, select_worst, p, env);
}

static const strategy_ops_t ops = {
    .name = "worst-fit",
    .summary = "largest free block (ties: lowest address)",
    .state_size = sizeof(fit_state_t),
    .footprint = STRATEGY_FOOTPRINT_EXTENT,
    .init = init,
    .place = fit_place_op,
    .can_place = fit_can_place_op,
    .release = fit_release_op,
    .largest_free = fit_largest_free_op,
    .check = fit_check_op,
};

const strategy_ops_t *strategy_worst_fit(void) { return &ops; }
