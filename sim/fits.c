/*
 * fits: the four strategies that choose a free block from fit.c's index,
 * each a choice function over it (and next fit's rover), and one table
 * of their strategy_ops_t at the end.  The index, its searches and the
 * place and release they share are in sim/fit.h.
 */
#include "sim/fit.h"

/* ---- first fit ----------------------------------------------------------------------
 *
 * first-fit: the lowest-addressed free block that fits (address-ordered
 * first fit, as Johnstone and Wilson measure it).  Index by (stream,
 * address) with each subtree's largest block, so the search skips
 * subtrees with nothing big enough: O(log n).
 */

static block_t *select_first(const fit_state_t *st, const strategy_request_t *req,
                             uint64_t need)
{
    return fit_first_of_either(&st->ix, req->stream, 0, need);
}

static int first_init(void *st, pool_t *p, const strategy_env_t *env)
{
    return fit_init(st, FIT_BY_ADDR, select_first, p, env);
}

/* ---- best fit -----------------------------------------------------------------------
 *
 * best-fit: the smallest free block that fits; among equals, the lowest
 * address.  Index by (stream, size, address), with size bins for small
 * blocks (sim/fit.h): a bit scan and a leftmost node for small
 * requests, one lower-bound search per stream tag otherwise, O(log n).
 */

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

static int best_init(void *st, pool_t *p, const strategy_env_t *env)
{
    best_state_t *bs = st;
    return fit_init_binned(&bs->fit, &bs->bins, select_best, p, env);
}

/* ---- worst fit ----------------------------------------------------------------------
 *
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

static int worst_init(void *st, pool_t *p, const strategy_env_t *env)
{
    return fit_init(st, FIT_LARGEST_FIRST, select_worst, p, env);
}

/* ---- next fit -----------------------------------------------------------------------
 *
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

static int next_place(void *vst, pool_t *p, const strategy_request_t *req, block_t **out)
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

static void next_release(void *vst, pool_t *p, block_t *b)
{
    next_state_t *st = vst;
    b = fit_release(&st->fit.ix, p, b);
    /* Merged into a block that starts below the rover and covers it: its
     * struct is gone, and no block starts at the rover any more. */
    if (st->at_rover && b->addr < st->fit.rover && block_end(b) > st->fit.rover)
        st->at_rover = NULL;
}

static int next_init(void *vst, pool_t *p, const strategy_env_t *env)
{
    next_state_t *st = vst;
    st->at_rover = NULL;
    return fit_init(&st->fit, FIT_BY_ADDR, select_next, p, env);
}

/* ---- the table ------------------------------------------------------------------------ */

#define FIT_STRATEGY(getter, NAME, SUMMARY, STATE, INIT, PLACE, RELEASE)                        \
    static const strategy_ops_t getter##_ops = {                                                \
        .name = NAME,                                                                           \
        .summary = SUMMARY,                                                                     \
        .state_size = sizeof(STATE),                                                            \
        .footprint = STRATEGY_FOOTPRINT_EXTENT,                                                 \
        .init = INIT,                                                                           \
        .place = PLACE,                                                                         \
        .can_place = fit_can_place_op,                                                          \
        .release = RELEASE,                                                                     \
        .largest_free = fit_largest_free_op,                                                    \
        .check = fit_check_op,                                                                  \
    };                                                                                          \
    const strategy_ops_t *getter(void) { return &getter##_ops; }

/* clang-format off */
FIT_STRATEGY(strategy_first_fit, "first-fit", "lowest-addressed free block that fits",
             fit_state_t, first_init, fit_place_op, fit_release_op)
FIT_STRATEGY(strategy_best_fit, "best-fit", "smallest free block that fits (ties: lowest address)",
             best_state_t, best_init, fit_place_op, fit_release_op)
FIT_STRATEGY(strategy_worst_fit, "worst-fit", "largest free block (ties: lowest address)",
             fit_state_t, worst_init, fit_place_op, fit_release_op)
FIT_STRATEGY(strategy_next_fit, "next-fit", "first fit from where the last allocation ended, wrapping",
             next_state_t, next_init, next_place, next_release)
/* clang-format on */
