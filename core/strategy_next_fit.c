/*
 * next-fit: first fit that resumes where the last allocation ended (the
 * roving pointer) and wraps around to the lowest address.  The top of
 * the device (the memory above the extent, fit_is_top) always fits, so
 * a search that finds nothing else from the rover on wraps around before
 * taking it: the heap grows only when no free block fits, as in Knuth's
 * next fit over a circular free list.  Without that, once the rover
 * reached the top it would stay there and no hole below would be reused.
 * Same index as first fit, searched from the rover: O(log n).
 */
#include "core/fit.h"

static block_t *first_from(const fit_state_t *st, const strategy_request_t *req, uint64_t from,
                           uint64_t need)
{
    return fit_first_of_either(&st->ix, req->stream, from, need);
}

static block_t *select_next(const fit_state_t *st, const strategy_request_t *req,
                            uint64_t need)
{
    block_t *b = first_from(st, req, st->rover, need);
    if (b && !fit_is_top(&st->ix, b))
        return b;
    block_t *w = first_from(st, req, 0, need); /* the lowest: a hole, or the top */
    return w ? w : b;
}

static int init(void *st, pool_t *p, const strategy_env_t *env)
{
    return fit_init(st, FIT_BY_ADDR, select_next, p, env);
}

static const strategy_ops_t ops = {
    .name = "next-fit",
    .summary = "first fit from where the last allocation ended, wrapping",
    .state_size = sizeof(fit_state_t),
    .footprint = STRATEGY_FOOTPRINT_EXTENT,
    .init = init,
    .place = fit_place_op,
    .can_place = fit_can_place_op,
    .release = fit_release_op,
    .largest_free = fit_largest_free_op,
    .check = fit_check_op,
};

const strategy_ops_t *strategy_next_fit(void) { return &ops; }
