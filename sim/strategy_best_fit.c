/*
 * best-fit: the smallest free block that fits; among equals, the lowest
 * address.  Index by (stream, size, address), with size bins for small
 * blocks (sim/fit.h): a bit scan and a leftmost node for small
 * requests, one lower-bound search per stream tag otherwise, O(log n).
 */
#include "sim/fit.h"

static block_t *select_best(const fit_state_t *st, const strategy_request_t *req,
                            uint64_t need)
{
    block_t *own = fit_best_of(&st->ix, req->stream, need);
    block_t *any = fit_best_of(&st->ix, POOL_STREAM_ANY, need);
    if (!own || !any)
        return own ? own : any;
    if (own->size != any->size)
        return own->size < any->size ? own : any;
    return fit_lower(own, any);
}

typedef struct best_state_s {
    fit_state_t fit; /* first: the fit_*_op take the state as a fit_state_t */
    fit_bins_t bins;
} best_state_t;

static int init(void *st, pool_t *p, const strategy_env_t *env)
{
    best_state_t *bs = st;
    return fit_init_binned(&bs->fit, &bs->bins, select_best, p, env);
}

static const strategy_ops_t ops = {
    .name = "best-fit",
    .summary = "smallest free block that fits (ties: lowest address)",
    .state_size = sizeof(best_state_t),
    .footprint = STRATEGY_FOOTPRINT_EXTENT,
    .init = init,
    .place = fit_place_op,
    .can_place = fit_can_place_op,
    .release = fit_release_op,
    .largest_free = fit_largest_free_op,
    .check = fit_check_op,
};

const strategy_ops_t *strategy_best_fit(void) { return &ops; }
