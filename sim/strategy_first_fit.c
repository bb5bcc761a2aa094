/*
 * first-fit: the lowest-addressed free block that fits (address-ordered
 * first fit, as Johnstone and Wilson measure it).  Index by (stream,
 * address) with each subtree's largest block, so the search skips
 * subtrees with nothing big enough: O(log n).
 */
#include "sim/fit.h"

static block_t *select_first(const fit_state_t *st, const strategy_request_t *req,
                             uint64_t need)
{
    return fit_first_of_either(&st->ix, req->stream, 0, need);
}

static int init(void *st, pool_t *p, const strategy_env_t *env)
{
    return fit_init(st, FIT_BY_ADDR, select_first, p, env);
}

static const strategy_ops_t ops = {
    .name = "first-fit",
    .summary = "lowest-addressed free block that fits",
    .state_size = sizeof(fit_state_t),
    .footprint = STRATEGY_FOOTPRINT_EXTENT,
    .init = init,
    .place = fit_place_op,
    .can_place = fit_can_place_op,
    .release = fit_release_op,
    .largest_free = fit_largest_free_op,
    .check = fit_check_op,
};

const strategy_ops_t *strategy_first_fit(void) { return &ops; }
