/*
 * next-fit: first fit that resumes where the last allocation ended (the
 * roving pointer) and wraps around to the lowest address.  The top of
 * the device (the memory above the extent, fit_is_top) always fits, so
 * a search that finds nothing else from the rover on wraps around before
 * taking it: the heap grows only when no free block fits, as in Knuth's
 * next fit over a circular free list.  Without that, once the rover
 * reached the top it would stay there and no hole below would be reused.
 * Same index as first fit, searched from the rover: O(log n).
 *
 * The block at the rover: an allocation that leaves a remainder leaves
 * it at the rover, and the next search usually ends there.  The state
 * keeps that free block (when the block after an allocation is free) as
 * long as it starts at the rover; the search then starts from its node
 * (fit_first_of_either_at): O(1) when it fits, a few steps when the
 * answer lies close after it.  When it is the top, nothing lies after
 * the rover (the device is one segment and the top ends it) and the
 * search wraps at once.  The choices are those of the search from the
 * rover; only their cost changes.
 */
#include "sim/fit.h"

typedef struct next_state_s {
    fit_state_t fit;   /* first: the fit_*_op take the state as a fit_state_t */
    block_t *at_rover; /* the free block that starts at the rover, or NULL: not known */
} next_state_t;

static block_t *first_from(const fit_state_t *st, const strategy_request_t *req, uint64_t from,
                           uint64_t need)
{
    return fit_first_of_either(&st->ix, req->stream, from, need);
}

static block_t *select_next(const fit_state_t *st, const strategy_request_t *req,
                            uint64_t need)
{
    const block_t *at = ((const next_state_t *)st)->at_rover;
    block_t *b;
    if (!at) {
        b = first_from(st, req, st->rover, need);
    } else if (fit_is_top(&st->ix, at)) {
        b = NULL; /* nothing but the top from the rover on: wrap (the top, if it
                     fits, is what the wrapped search gives last) */
    } else if (at->stream == req->stream || at->stream == POOL_STREAM_ANY) {
        if (at->size >= need)
            return (block_t *)at; /* nothing the search may take lies below the rover */
        b = fit_first_of_either_at(&st->ix, req->stream, at, need);
    } else {
        b = first_from(st, req, st->rover, need);
    }
    if (b && !fit_is_top(&st->ix, b))
        return b;
    block_t *w = first_from(st, req, 0, need); /* the lowest: a hole, or the top */
    return w ? w : b;
}

static int place(void *vst, pool_t *p, const strategy_request_t *req, block_t **out)
{
    next_state_t *st = vst;
    int err = fit_place_op(&st->fit, p, req, out);
    if (err) {
        st->at_rover = NULL; /* a failed carve may have merged it away */
        return err;
    }
    block_t *after = (*out)->next; /* starts at the rover, the end of *out */
    st->at_rover = after && block_is_free(after) ? after : NULL;
    return POOL_OK;
}

static void release(void *vst, pool_t *p, block_t *b)
{
    next_state_t *st = vst;
    b = fit_release(&st->fit.ix, p, b);
    /* Merged into a block that starts below the rover and covers it: its
     * struct is gone, and no block starts at the rover any more. */
    if (st->at_rover && b->addr < st->fit.rover && block_end(b) > st->fit.rover)
        st->at_rover = NULL;
}

static int init(void *vst, pool_t *p, const strategy_env_t *env)
{
    next_state_t *st = vst;
    st->at_rover = NULL;
    return fit_init(&st->fit, FIT_BY_ADDR, select_next, p, env);
}

static const strategy_ops_t ops = {
    .name = "next-fit",
    .summary = "first fit from where the last allocation ended, wrapping",
    .state_size = sizeof(next_state_t),
    .footprint = STRATEGY_FOOTPRINT_EXTENT,
    .init = init,
    .place = place,
    .can_place = fit_can_place_op,
    .release = release,
    .largest_free = fit_largest_free_op,
    .check = fit_check_op,
};

const strategy_ops_t *strategy_next_fit(void) { return &ops; }
