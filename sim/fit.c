/*
 * fit: free-block index, selection and carving for the fit strategies
 * and the caching pool.  See fit.h.
 */
#include "sim/fit.h"

#include <stdlib.h>

#include "lib/check.h"
#include "sim/fit_heap.h"
#include "sim/fit_tag.h"

static void set_keys(const fit_index_t *ix, block_t *b) { keys_of(ix, b, &b->ix->node); }

void fit_index_init(fit_index_t *ix, fit_order_t order, uint64_t granule)
{
    ix->ntags = 0;
    ix->any_tag = -1;
    for (int i = 0; i < FIT_SMALL_STREAMS; i++)
        ix->small_tag[i] = -1;
    ix->tag[FIT_TAGS] = (fit_tag_t){.stream = 0, .bins = NULL};
    tree_init(&ix->tag[FIT_TAGS].tree);
    ix->order = order;
    ix->granule = granule;
    ix->granule_shift = (unsigned)__builtin_ctzll(granule);
    ix->bins = NULL;
    ix->keep_top = false;
    ix->top = NULL;
}

/* A new tag for stream (which has none), noted in *hint if given. */
fit_tag_t *fit_tag_claim(fit_index_t *ix, int64_t stream, int8_t *hint)
{
    unsigned i = ix->ntags++;
    if (hint)
        *hint = (int8_t)i;
    fit_tag_t *t = &ix->tag[i];
    t->stream = stream;
    tree_init(&t->tree);
    t->largest = (fit_bin_t){NULL, 0};
    t->bins = ix->bins && i < FIT_BIN_STREAMS ? &ix->bins->set[i] : NULL;
    if (t->bins) {
        t->bins->summary = 0;
        for (int w = 0; w < FIT_BINS / 64; w++)
            t->bins->nonempty[w] = 0;
        for (int k = 0; k < FIT_BINS; k++)
            t->bins->bin[k] = (fit_bin_t){NULL, 0};
    }
    return t;
}

/* Into or out of the heap at (a size bin, or a largest-first tag's). */
static inline void heap_at_insert(place_t at, block_t *b)
{
    if (at.bs)
        bin_insert(at.bs, at.k, b);
    else
        heap_insert(at.heap, b, true);
}

static inline void heap_at_remove(place_t at, block_t *b)
{
    if (at.bs)
        bin_remove(at.bs, at.k, b);
    else
        heap_remove(at.heap, b, true);
}

/* ---- the index ---------------------------------------------------------------- */

/* b, whose node is set, in at. */
static inline void index_at(fit_index_t *ix, place_t at, block_t *b)
{
    if (at.heap) {
        heap_at_insert(at, b);
        return;
    }
    set_keys(ix, b);
    tree_insert(at.tree, &b->ix->node);
}

void fit_index_insert(fit_index_t *ix, pool_t *p, block_t *b)
{
    if (is_top(ix, b)) { /* the top has no node */
        ix->top = b;
        return;
    }
    fit_tag_t *t = tag_of(ix, b->stream, true);
    b->idx_tag = (uint32_t)(t - ix->tag);
    pool_node_take(p, b);
    index_at(ix, place_in(ix, t, b), b);
}

void fit_index_remove(fit_index_t *ix, pool_t *p, block_t *b)
{
    if (b == ix->top) {
        ix->top = NULL;
        return;
    }
    place_t at = place_now(ix, b);
    if (at.heap)
        heap_at_remove(at, b);
    else
        tree_remove(at.tree, &b->ix->node);
    pool_node_give(p, b);
}

/* Negative, zero or positive as key a sorts before, with or after b. */
static inline int key_cmp(const tree_node_t *a, const tree_node_t *b)
{
    if (a->k0 != b->k0)
        return a->k0 < b->k0 ? -1 : 1;
    if (a->k1 != b->k1)
        return a->k1 < b->k1 ? -1 : 1;
    return a->k2 < b->k2 ? -1 : a->k2 > b->k2;
}

/* b's node sits in tree `in` with a key b no longer has (b was carved
 * or merged, or took the node over): give it b's key there when b still
 * belongs in that tree and the key sorts between the same neighbours,
 * else move b where it belongs. */
static void index_rekey(fit_index_t *ix, pool_t *p, tree_t *in, block_t *b)
{
    tree_node_t *n = &b->ix->node, key;
    if (is_top(ix, b)) { /* it merged with the top, or reaches the end: the new top */
        tree_remove(in, n);
        pool_node_give(p, b);
        ix->top = b;
        return;
    }
    if (ix->order == FIT_BY_ADDR && n->k0 == b->stream) {
        /* The same stream, so the same tree; by address it sorts where the
         * blocks that held the node did (see below). */
        tree_node_update(n, b->stream, b->addr, 0, b->size);
        return;
    }
    fit_tag_t *t = tag_of(ix, b->stream, true);
    place_t at = place_in(ix, t, b);
    b->idx_tag = (uint32_t)(t - ix->tag);
    if (at.tree != in) {
        tree_remove(in, n);
        index_at(ix, at, b);
        return;
    }
    keys_of(ix, b, &key);
    /* By address, within one stream: b covers the range of every block
     * that held the node, and no other free block of its stream lies in
     * there, so it sorts where they did.  Otherwise look. */
    if (!(ix->order == FIT_BY_ADDR && key.k0 == n->k0)) {
        const tree_node_t *lo = tree_prev(n), *hi = tree_next(n);
        if ((lo && key_cmp(lo, &key) >= 0) || (hi && key_cmp(&key, hi) >= 0)) {
            tree_remove(in, n);
            keys_of(ix, b, n);
            tree_insert(in, n);
            return;
        }
    }
    tree_node_update(n, key.k0, key.k1, key.k2, key.weight);
}

uint64_t fit_index_largest(const fit_index_t *ix)
{
    uint64_t largest = tree_max_weight(&SHARED(ix)->tree);
    if (ix->top && ix->top->size > largest)
        largest = ix->top->size;
    for (unsigned i = 0; i < ix->ntags; i++) {
        const fit_tag_t *t = &ix->tag[i];
        uint64_t m = tree_max_weight(&t->tree);
        if (m > largest)
            largest = m;
        if (t->largest.root && t->largest.root->heap.size > largest)
            largest = t->largest.root->heap.size;
        if (t->bins && t->bins->summary) {
            const fit_binset_t *bs = t->bins;
            int w = 63 - __builtin_clzll(bs->summary);
            uint64_t k = (uint64_t)w * 64 + 63 - (uint64_t)__builtin_clzll(bs->nonempty[w]);
            if (k * ix->granule > largest)
                largest = k * ix->granule;
        }
    }
    return largest;
}

/* ---- selection ------------------------------------------------------------------ */

/* The top, when tag is pristine memory's and it has need bytes. */
static inline block_t *top_for(const fit_index_t *ix, int64_t tag, uint64_t need)
{
    block_t *t = ix->top;
    return t && tag == POOL_STREAM_ANY && t->size >= need ? t : NULL;
}

static block_t *best_indexed(const fit_index_t *ix, int64_t tag, uint64_t need)
{
    const fit_tag_t *t = tag_find(ix, tag);
    uint64_t k = (need >> ix->granule_shift) + ((need & (ix->granule - 1)) != 0);
    if (t->bins && k < FIT_BINS) {
        /* Every binned block of the tag is smaller than any in its tree. */
        uint64_t at = first_bin_from(t->bins, k);
        if (at < FIT_BINS)
            return t->bins->bin[at].root->block;
    }
    block_t *b = fit_block(tree_lower_bound(&t->tree, tag, need, 0));
    return b && b->stream == tag ? b : NULL;
}

/* Of the best indexed block and the top, the smaller; equals: the
 * indexed one, whose address is lower. */
block_t *fit_best_of(const fit_index_t *ix, int64_t tag, uint64_t need)
{
    block_t *b = best_indexed(ix, tag, need), *t = top_for(ix, tag, need);
    return t && (!b || t->size < b->size) ? t : b;
}

static block_t *worst_indexed(const fit_index_t *ix, int64_t tag, uint64_t need)
{
    const fit_tag_t *t = tag_find(ix, tag);
    if (ix->order == FIT_LARGEST_FIRST && t != SHARED(ix)) {
        const ixnode_t *top = t->largest.root; /* the largest, lowest address among equals */
        return top && top->heap.size >= need ? top->block : NULL;
    }
    if (!t->tree.root)
        return NULL; /* (pristine memory without a tag: the shared tree, usually empty) */
    tree_node_t *n;
    if (t != SHARED(ix)) {
        n = tree_last(&t->tree); /* the tag's own tree: its largest block is last */
    } else {
        n = tag == INT64_MAX ? NULL : tree_lower_bound(&t->tree, tag + 1, 0, 0);
        n = n ? tree_prev(n) : tree_last(&t->tree);
    }
    if (!n || n->k0 != tag || n->k1 < need)
        return NULL;
    /* Among equally large blocks, the lowest address. */
    tree_node_t *before = tree_prev(n);
    if (!before || before->k0 != tag || before->k1 != n->k1)
        return fit_block(n);
    return fit_block(tree_lower_bound(&t->tree, tag, n->k1, 0));
}

/* The worst indexed block: never the top, which worst fit takes last. */
block_t *fit_worst_of(const fit_index_t *ix, int64_t tag, uint64_t need)
{
    return worst_indexed(ix, tag, need);
}

block_t *fit_top_for(const fit_index_t *ix, int64_t tag, uint64_t need)
{
    return top_for(ix, tag, need);
}

static inline block_t *first_indexed(const fit_index_t *ix, int64_t tag, uint64_t from,
                                     uint64_t need)
{
    const fit_tag_t *t = tag_find(ix, tag);
    if (tree_max_weight(&t->tree) < need)
        return NULL; /* nothing in the tree is large enough (pristine memory's is
                        usually empty: all of it is the top) */
    if (t != SHARED(ix) && from == 0) /* the tag's own tree, from its start */
        return fit_block(tree_first_fit(&t->tree, need));
    block_t *b = fit_block(tree_find_fit(&t->tree, tag, from, 0, need));
    return b && b->stream == tag ? b : NULL;
}

/* An indexed block that fits comes before the top (which ends the
 * segment); the top only when none does and it starts at from or later. */
block_t *fit_first_of(const fit_index_t *ix, int64_t tag, uint64_t from, uint64_t need)
{
    block_t *b = first_indexed(ix, tag, from, need), *t;
    if (b || !(t = top_for(ix, tag, need)))
        return b;
    return t->addr >= from ? t : NULL;
}

/* fit_lower of fit_first_of for stream and for pristine memory, in one
 * call: the search first and next fit make for every allocation. */
block_t *fit_first_of_either(const fit_index_t *ix, int64_t stream, uint64_t from, uint64_t need)
{
    block_t *own = first_indexed(ix, stream, from, need); /* stream is never pristine's */
    block_t *any = first_indexed(ix, POOL_STREAM_ANY, from, need);
    if (!any && (any = top_for(ix, POOL_STREAM_ANY, need)) && any->addr < from)
        any = NULL;
    return fit_lower(own, any);
}

/* The first block of tag at or after `at` (in tag's tree) with need
 * bytes: what first_indexed gives from at->addr, whose key is at's. */
static inline block_t *first_indexed_at(const fit_index_t *ix, int64_t tag, const block_t *at,
                                        uint64_t need)
{
    const fit_tag_t *t = &ix->tag[at->idx_tag];
    CHECK(ix->order == FIT_BY_ADDR && !t->bins && at->stream == tag && at != ix->top);
    (void)t;
    block_t *b = fit_block(tree_find_fit_from(&at->ix->node, need));
    return b && b->stream == tag ? b : NULL; /* the shared tree holds other streams after */
}

block_t *fit_first_of_either_at(const fit_index_t *ix, int64_t stream, const block_t *at,
                                uint64_t need)
{
    block_t *own, *any;
    if (at->stream == stream) {
        own = first_indexed_at(ix, stream, at, need);
        any = first_indexed(ix, POOL_STREAM_ANY, at->addr, need);
    } else {
        own = first_indexed(ix, stream, at->addr, need);
        any = first_indexed_at(ix, POOL_STREAM_ANY, at, need);
    }
    if (!any && (any = top_for(ix, POOL_STREAM_ANY, need)) && any->addr < at->addr)
        any = NULL;
    return fit_lower(own, any);
}

/* ---- carving and coalescing ------------------------------------------------------- */

int fit_carve(fit_index_t *ix, pool_t *p, block_t *b, const strategy_request_t *req,
              uint64_t block_bytes, uint64_t min_split, block_t **out)
{
    uint64_t start = (b->addr + req->align - 1) & ~(req->align - 1);
    uint64_t pad = start - b->addr;
    bool split = b->size - pad > block_bytes && b->size - pad - block_bytes >= min_split;
    int err;
    if (!pad && split && b != ix->top) { /* the top is in no tree: below, at O(1) */
        place_t at = place_now(ix, b);
        block_t *rest;
        if (at.heap && !at.bs && b->ix == at.heap->root) {
            /* The root of a largest-first heap (worst fit's choice):
             * the front goes to a new struct and b, smaller now, goes
             * back in as the meld of its children with it alone, which
             * is what removing it and inserting the remainder does,
             * without leaving and re-entering the index. */
            block_t *front;
            if ((err = pool_block_split_front(p, b, block_bytes, &front)))
                return err; /* b is whole and still the root */
            ixnode_t *n = b->ix, *sub = heap_merge_pairs(n->heap.child, true);
            n->heap.child = NULL;
            n->heap.addr = b->addr;
            n->heap.size = b->size;
            at.heap->root = heap_meld(sub, n, true);
            pool_block_mark_alloc(p, front, req->size, req->stream);
            *out = front;
            return POOL_OK;
        }
        if (at.heap) {
            heap_at_remove(at, b);
            if ((err = pool_block_split(p, b, block_bytes, &rest))) {
                heap_at_insert(at, b);
                return err;
            }
            pool_node_give(p, b);
            fit_index_insert(ix, p, rest);
        } else {
            /* The front goes to a new struct and b stays the remainder,
             * node and all: it sorts where it did, or near (by size:
             * somewhat lower), and its node needs no handing over. */
            block_t *front;
            if ((err = pool_block_split_front(p, b, block_bytes, &front)))
                return err; /* b is whole and still indexed */
            index_rekey(ix, p, at.tree, b);
            b = front;
        }
        pool_block_mark_alloc(p, b, req->size, req->stream);
        *out = b;
        return POOL_OK;
    }
    fit_index_remove(ix, p, b);
    if (pad) {
        block_t *rest;
        if ((err = pool_block_split(p, b, pad, &rest))) {
            fit_index_insert(ix, p, b);
            return err;
        }
        fit_index_insert(ix, p, b); /* the padding stays free */
        b = rest;
    }
    if (b->size - block_bytes >= min_split && b->size > block_bytes) {
        block_t *rest;
        if ((err = pool_block_split(p, b, block_bytes, &rest))) {
            fit_release(ix, p, b);
            return err;
        }
        fit_index_insert(ix, p, rest);
    }
    pool_block_mark_alloc(p, b, req->size, req->stream);
    *out = b;
    return POOL_OK;
}

/* pool_blocks_mergeable for free block b and its neighbour x (or NULL):
 * the links and b's state go without saying here. */
static inline bool merges_with(const block_t *b, const block_t *x)
{
    return x && block_is_free(x) &&
           (x->stream == b->stream || x->stream == POOL_STREAM_ANY ||
            b->stream == POOL_STREAM_ANY);
}

block_t *fit_release(fit_index_t *ix, pool_t *p, block_t *b)
{
    /* A neighbour that merges leaves the index, except the first one
     * found in a tree: its node stays there for the merged block, which
     * takes it over below (the neighbour's struct may be recycled by the
     * merge; its node and tag are noted first). */
    ixnode_t *kept = NULL;
    uint32_t kept_tag = 0;
    tree_t *kept_in = NULL;
    /* Merging with pristine memory makes b pristine, which can make a
     * neighbour of another stream mergeable after all: repeat until
     * neither side merges (at most three merges in all). */
    for (;;) {
        block_t *x;
        CHECK(block_is_free(b));
        bool low = merges_with(b, b->prev);
        if (low)
            x = b->prev;
        else if (merges_with(b, b->next))
            x = b->next;
        else
            break;
        CHECK(low ? pool_blocks_mergeable(x, b) : pool_blocks_mergeable(b, x));
        place_t at = x == ix->top ? (place_t){0} : place_now(ix, x);
        if (x == ix->top) {
            ix->top = NULL; /* b becomes the top: below */
        } else if (at.heap) {
            heap_at_remove(at, x);
            pool_node_give(p, x);
        } else if (!kept) {
            kept = x->ix;
            kept_tag = x->idx_tag;
            kept_in = at.tree;
            x->ix = NULL; /* the node is the merged block's now */
        } else {
            tree_remove(at.tree, &x->ix->node);
            pool_node_give(p, x);
        }
        if (low) {
            pool_block_merge(p, x, b);
            b = x;
        } else {
            pool_block_merge(p, b, x);
        }
    }
    if (!kept) {
        fit_index_insert(ix, p, b);
        return b;
    }
    b->ix = kept;
    kept->block = b;
    b->idx_tag = kept_tag;
    index_rekey(ix, p, kept_in, b);
    return b;
}

/* ---- the common shape of the four fit strategies ------------------------- */

static int init_with(fit_state_t *st, fit_order_t order, fit_bins_t *bins, fit_select_fn select,
                     pool_t *p, const strategy_env_t *env);

int fit_init(fit_state_t *st, fit_order_t order, fit_select_fn select, pool_t *p,
             const strategy_env_t *env)
{
    return init_with(st, order, NULL, select, p, env);
}

int fit_init_binned(fit_state_t *st, fit_bins_t *bins, fit_select_fn select, pool_t *p,
                    const strategy_env_t *env)
{
    return init_with(st, FIT_BY_SIZE, bins, select, p, env);
}

static int init_with(fit_state_t *st, fit_order_t order, fit_bins_t *bins, fit_select_fn select,
                     pool_t *p, const strategy_env_t *env)
{
    uint64_t g = env->granule;
    if (!g || (g & (g - 1)) || (env->base & (g - 1)))
        return POOL_EINVAL;
    uint64_t size = env->total & ~(g - 1);
    if (!size)
        return POOL_EINVAL;
    fit_index_init(&st->ix, order, g);
    st->ix.bins = bins;
    st->ix.keep_top = true;
    st->select = select;
    st->rover = env->base;
    segment_t *s;
    int err = pool_segment_create(p, env->base, size, POOL_STREAM_ANY, 0, &s);
    if (err)
        return err;
    fit_index_insert(&st->ix, p, s->first);
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
    return fit_index_largest(&((const fit_state_t *)st)->ix);
}
