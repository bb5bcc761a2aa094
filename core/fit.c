/*
 * fit: free-block index, selection and carving for the fit strategies
 * and the caching pool.  See fit.h.
 */
#include "core/fit.h"

static void set_keys(const fit_index_t *ix, block_t *b)
{
    tree_node_t *n = &b->idx.node;
    n->k0 = b->stream;
    if (ix->order == FIT_BY_SIZE) {
        n->k1 = b->size;
        n->k2 = b->addr;
    } else {
        n->k1 = b->addr;
        n->k2 = 0;
    }
    n->weight = b->size;
}

void fit_index_init(fit_index_t *ix, fit_order_t order, uint64_t granule)
{
    tree_init(&ix->tree);
    ix->order = order;
    ix->granule = granule;
}

void fit_index_insert(fit_index_t *ix, block_t *b)
{
    set_keys(ix, b);
    tree_insert(&ix->tree, &b->idx.node);
}

void fit_index_remove(fit_index_t *ix, block_t *b)
{
    tree_remove(&ix->tree, &b->idx.node);
}

uint64_t fit_block_bytes(uint64_t granule, const strategy_request_t *req)
{
    uint64_t bytes = (req->size + granule - 1) & ~(granule - 1);
    return bytes < req->size ? 0 : bytes;
}

uint64_t fit_search_bytes(uint64_t granule, const strategy_request_t *req)
{
    uint64_t bytes = fit_block_bytes(granule, req);
    if (!bytes || req->align <= granule)
        return bytes;
    uint64_t need = bytes + (req->align - granule);
    return need < bytes ? 0 : need;
}

block_t *fit_best_of(const fit_index_t *ix, int64_t tag, uint64_t need)
{
    block_t *b = fit_block(tree_lower_bound(&ix->tree, tag, need, 0));
    return b && b->stream == tag ? b : NULL;
}

block_t *fit_worst_of(const fit_index_t *ix, int64_t tag, uint64_t need)
{
    tree_node_t *n = tag == INT64_MAX ? NULL : tree_lower_bound(&ix->tree, tag + 1, 0, 0);
    n = n ? tree_prev(n) : tree_last(&ix->tree);
    if (!n || n->k0 != tag || n->k1 < need)
        return NULL;
    /* Among equally large blocks, the lowest address. */
    return fit_block(tree_lower_bound(&ix->tree, tag, n->k1, 0));
}

block_t *fit_first_of(const fit_index_t *ix, int64_t tag, uint64_t from, uint64_t need)
{
    block_t *b = fit_block(tree_find_fit(&ix->tree, tag, from, 0, need));
    return b && b->stream == tag ? b : NULL;
}

int fit_carve(fit_index_t *ix, pool_t *p, block_t *b, const strategy_request_t *req,
              uint64_t block_bytes, uint64_t min_split, block_t **out)
{
    uint64_t start = (b->addr + req->align - 1) & ~(req->align - 1);
    uint64_t pad = start - b->addr;
    int err;
    fit_index_remove(ix, b);
    if (pad) {
        block_t *rest;
        if ((err = pool_block_split(p, b, pad, &rest))) {
            fit_index_insert(ix, b);
            return err;
        }
        fit_index_insert(ix, b); /* the padding stays free */
        b = rest;
    }
    if (b->size - block_bytes >= min_split && b->size > block_bytes) {
        block_t *rest;
        if ((err = pool_block_split(p, b, block_bytes, &rest))) {
            fit_release(ix, p, b);
            return err;
        }
        fit_index_insert(ix, rest);
    }
    pool_block_mark_alloc(p, b, req->size, req->stream);
    *out = b;
    return POOL_OK;
}

block_t *fit_release(fit_index_t *ix, pool_t *p, block_t *b)
{
    /* Merging with pristine memory makes b pristine, which can make a
     * neighbour of another stream mergeable after all: repeat until
     * neither side merges (at most three merges in all). */
    for (;;) {
        if (pool_blocks_mergeable(b->prev, b)) {
            block_t *a = b->prev;
            fit_index_remove(ix, a);
            pool_block_merge(p, a, b);
            b = a;
        } else if (pool_blocks_mergeable(b, b->next)) {
            block_t *n = b->next;
            fit_index_remove(ix, n);
            pool_block_merge(p, b, n);
        } else {
            break;
        }
    }
    fit_index_insert(ix, b);
    return b;
}

int fit_index_check(const fit_index_t *ix, const pool_t *p,
                    bool (*belongs)(const fit_index_t *, const segment_t *),
                    const char **why)
{
    if (tree_check(&ix->tree, why))
        return -1;
    size_t free_blocks = 0;
    for (const segment_t *s = pool_segment_first(p); s; s = pool_segment_next(s)) {
        if (belongs && !belongs(ix, s))
            continue;
        for (const block_t *b = s->first; b; b = b->next) {
            if (block_is_free(b))
                free_blocks++;
            if ((b->addr | b->size) & (ix->granule - 1)) {
                *why = "block not aligned to the granule";
                return -1;
            }
        }
    }
    for (const tree_node_t *n = tree_first(&ix->tree); n; n = tree_next(n)) {
        block_t *b = fit_block(n);
        if (pool_block_at(p, b->addr) != b || !block_is_free(b)) {
            *why = "free index holds a block that is not free";
            return -1;
        }
        if (belongs && !belongs(ix, b->seg)) {
            *why = "free index holds a block of another index";
            return -1;
        }
        tree_node_t k = *n;
        set_keys(ix, b);
        if (k.k0 != n->k0 || k.k1 != n->k1 || k.k2 != n->k2 || k.weight != n->weight) {
            *why = "free index key disagrees with its block";
            return -1;
        }
    }
    if (free_blocks != ix->tree.count) {
        *why = "free index misses free blocks";
        return -1;
    }
    return 0;
}

/* ---- the common shape of the four fit strategies ------------------------- */

int fit_init(fit_state_t *st, fit_order_t order, fit_select_fn select, pool_t *p,
             const strategy_env_t *env)
{
    uint64_t g = env->granule;
    if (!g || (g & (g - 1)) || (env->base & (g - 1)))
        return POOL_EINVAL;
    uint64_t size = env->total & ~(g - 1);
    if (!size)
        return POOL_EINVAL;
    fit_index_init(&st->ix, order, g);
    st->select = select;
    st->rover = env->base;
    segment_t *s;
    int err = pool_segment_create(p, env->base, size, POOL_STREAM_ANY, 0, &s);
    if (err)
        return err;
    fit_index_insert(&st->ix, s->first);
    return POOL_OK;
}

int fit_place_op(void *vst, pool_t *p, const strategy_request_t *req, block_t **out)
{
    fit_state_t *st = vst;
    uint64_t bytes = fit_block_bytes(st->ix.granule, req);
    uint64_t need = fit_search_bytes(st->ix.granule, req);
    if (!bytes || !need)
        return POOL_ENOMEM;
    block_t *b = st->select(st, req, need);
    if (!b)
        return POOL_ENOMEM;
    int err = fit_carve(&st->ix, p, b, req, bytes, st->ix.granule, out);
    if (!err)
        st->rover = block_end(*out);
    return err;
}

bool fit_can_place_op(const void *vst, const pool_t *p, const strategy_request_t *req)
{
    (void)p;
    const fit_state_t *st = vst;
    uint64_t need = fit_search_bytes(st->ix.granule, req);
    return need && st->select(st, req, need);
}

void fit_release_op(void *st, pool_t *p, block_t *b)
{
    fit_release(&((fit_state_t *)st)->ix, p, b);
}

uint64_t fit_largest_free_op(const void *st, const pool_t *p)
{
    (void)p;
    return tree_max_weight(&((const fit_state_t *)st)->ix.tree);
}

int fit_check_op(const void *st, const pool_t *p, const char **why)
{
    if (pool_check_coalesced(p, why))
        return -1;
    return fit_index_check(&((const fit_state_t *)st)->ix, p, NULL, why);
}
