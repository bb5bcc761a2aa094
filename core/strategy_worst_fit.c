/*
 * worst-fit: the largest free block (it leaves the largest remainder);
 * among equals, the lowest address.  The top of the device (the memory
 * above the extent, fit_is_top) is a last resort, taken only when no
 * other block fits: it is always the largest block of a device larger
 * than the heap, and taking it first would make every allocation grow
 * the heap (the heap's break, in a real allocator) while holes stay
 * unused.  Index by (stream, size, address): the last node of the
 * stream's range, or the one before the top, O(log n).
 */
#include "core/fit.h"

/* The worst candidate of a tag that is not the top; the top, if it was
 * the worst, into *top. */
static block_t *worst_below_top(const fit_state_t *st, int64_t tag, uint64_t need,
                                block_t **top)
{
    block_t *b = fit_worst_of(&st->ix, tag, need);
    if (!fit_is_top(b))
        return b;
    *top = b;
    return fit_worst_before(&st->ix, b, need);
}

static block_t *select_worst(const fit_state_t *st, const strategy_request_t *req,
                             uint64_t need)
{
    block_t *top = NULL;
    block_t *own = worst_below_top(st, req->stream, need, &top);
    block_t *any = worst_below_top(st, POOL_STREAM_ANY, need, &top);
    if (!own || !any)
        return own ? own : any ? any : top;
    if (own->size != any->size)
        return own->size > any->size ? own : any;
    return fit_lower(own, any);
}

static int init(void *st, pool_t *p, const strategy_env_t *env)
{
    return fit_init(st, FIT_BY_SIZE, select_worst, p, env);
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
