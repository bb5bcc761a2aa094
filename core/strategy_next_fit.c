/*
 * next-fit: first fit that resumes where the last allocation ended (the
 * roving pointer) and wraps around to the lowest address.  Same index as
 * first fit, searched from the rover: O(log n).
 */
#include "core/fit.h"

static block_t *select_next(const fit_state_t *st, const strategy_request_t *req,
                            uint64_t need)
{
    block_t *b = fit_lower(fit_first_of(&st->ix, req->stream, st->rover, need),
                           fit_first_of(&st->ix, POOL_STREAM_ANY, st->rover, need));
    if (b)
        return b;
    return fit_lower(fit_first_of(&st->ix, req->stream, 0, need),
                     fit_first_of(&st->ix, POOL_STREAM_ANY, 0, need));
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
