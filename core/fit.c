/*
 * fit: free-block index, selection and carving for the fit strategies
 * and the caching pool.  See fit.h.
 */
#include "core/fit.h"

#include <stdlib.h>

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
    ix->bins = NULL;
}

/* ---- size bins ------------------------------------------------------------- */

/* The bins of stream, if it has some; create: claim a free set for it. */
static fit_binset_t *binset(const fit_index_t *ix, int64_t stream, bool create)
{
    if (!ix->bins)
        return NULL;
    for (int i = 0; i < FIT_BIN_STREAMS; i++) {
        fit_binset_t *bs = &ix->bins->set[i];
        if (bs->used && bs->stream == stream)
            return bs;
        if (!bs->used && create) { /* sets are claimed in order, never given back */
            bs->used = true;
            bs->stream = stream;
            for (int k = 0; k < FIT_BINS; k++)
                bs->bin[k] = (fit_bin_t){NULL, 0};
            return bs;
        }
    }
    return NULL;
}

/* The bin b belongs in (its stream's, its size's), or NULL: the tree.  A
 * block's bin depends only on its stream and size, which do not change
 * while it is indexed; a stream's set, once claimed, stays. */
static fit_bin_t *bin_of(const fit_index_t *ix, const block_t *b, bool create,
                         fit_binset_t **bsp)
{
    uint64_t k = b->size / ix->granule;
    if (!ix->bins || k >= FIT_BINS)
        return NULL;
    fit_binset_t *bs = binset(ix, b->stream, create);
    *bsp = bs;
    return bs ? &bs->bin[k] : NULL;
}

/* The first k >= from with bit k set, or FIT_BINS. */
static uint64_t first_bin_from(const fit_binset_t *bs, uint64_t from)
{
    for (uint64_t w = from / 64; w < FIT_BINS / 64; w++) {
        uint64_t bits = bs->nonempty[w];
        if (w == from / 64)
            bits &= ~0ull << (from % 64);
        if (bits)
            return w * 64 + (uint64_t)__builtin_ctzll(bits);
    }
    return FIT_BINS;
}

/* ---- a bin: a pairing heap by address ---------------------------------------- */

#define H(b) ((b)->idx.heap)

/* Two heaps (roots, or NULL) as one: the higher root becomes the first
 * child of the lower. */
static block_t *heap_meld(block_t *a, block_t *b)
{
    if (!a)
        return b;
    if (!b)
        return a;
    if (b->addr < a->addr) {
        block_t *t = a;
        a = b;
        b = t;
    }
    H(b).prev = a;
    H(b).next = H(a).child;
    if (H(a).child)
        H(H(a).child).prev = b;
    H(a).child = b;
    return a;
}

/* A list of sibling heaps as one heap (the two passes of pairing: meld
 * pairs left to right, then the results right to left). */
static block_t *heap_merge_pairs(block_t *first)
{
    block_t *stack = NULL; /* melded pairs, last first, linked by next */
    while (first) {
        block_t *a = first, *b = H(a).next;
        first = b ? H(b).next : NULL;
        H(a).next = H(a).prev = NULL;
        if (b)
            H(b).next = H(b).prev = NULL;
        block_t *m = heap_meld(a, b);
        H(m).next = stack;
        stack = m;
    }
    block_t *root = NULL;
    while (stack) {
        block_t *m = stack;
        stack = H(m).next;
        H(m).next = NULL;
        root = heap_meld(m, root);
    }
    return root;
}

static void bin_insert(fit_bin_t *bin, block_t *b)
{
    H(b).child = H(b).next = H(b).prev = NULL;
    bin->root = heap_meld(bin->root, b);
    bin->count++;
}

static void bin_remove(fit_bin_t *bin, block_t *b)
{
    block_t *sub = heap_merge_pairs(H(b).child);
    if (b == bin->root) {
        bin->root = sub;
    } else {
        block_t *p = H(b).prev;
        if (H(p).child == b)
            H(p).child = H(b).next; /* b was p's first child */
        else
            H(p).next = H(b).next;
        if (H(b).next)
            H(H(b).next).prev = p;
        bin->root = heap_meld(bin->root, sub);
    }
    bin->count--;
}

/* Heap order, links and count of a bin; each block handed to visit.
 * 0, or -1 with *why. */
static int bin_check(const fit_bin_t *bin, int (*visit)(const block_t *, void *), void *ctx,
                     const char **why)
{
    size_t seen = 0, cap = 64;
    const block_t **todo = malloc(cap * sizeof *todo);
    if (!todo) {
        *why = "out of memory checking a size bin";
        return -1;
    }
    size_t n = 0;
    if (bin->root) {
        if (H(bin->root).prev || H(bin->root).next) {
            *why = "size bin root has siblings";
            free(todo);
            return -1;
        }
        todo[n++] = bin->root;
    }
    int rc = 0;
    while (n && !rc) {
        const block_t *b = todo[--n];
        seen++;
        if (visit && visit(b, ctx)) {
            *why = "size bin holds a block that is not a free block of its index";
            rc = -1;
            break;
        }
        const block_t *prev = b;
        for (const block_t *c = H(b).child; c; prev = c, c = H(c).next) {
            if (H(c).prev != prev || c->addr <= b->addr) {
                *why = "size bin heap out of order or mislinked";
                rc = -1;
                break;
            }
            if (n == cap) {
                const block_t **more = realloc(todo, 2 * cap * sizeof *todo);
                if (!more) {
                    *why = "out of memory checking a size bin";
                    rc = -1;
                    break;
                }
                todo = more;
                cap *= 2;
            }
            todo[n++] = c;
        }
    }
    free(todo);
    if (!rc && seen != bin->count) {
        *why = "size bin count disagrees with its blocks";
        rc = -1;
    }
    return rc;
}

#undef H

void fit_index_insert(fit_index_t *ix, block_t *b)
{
    fit_binset_t *bs = NULL;
    fit_bin_t *bin = bin_of(ix, b, true, &bs);
    if (bin) {
        uint64_t k = b->size / ix->granule;
        bin_insert(bin, b);
        bs->nonempty[k / 64] |= 1ull << (k % 64);
        return;
    }
    set_keys(ix, b);
    tree_insert(&ix->tree, &b->idx.node);
}

void fit_index_remove(fit_index_t *ix, block_t *b)
{
    fit_binset_t *bs = NULL;
    fit_bin_t *bin = bin_of(ix, b, false, &bs);
    if (bin) {
        bin_remove(bin, b);
        uint64_t k = b->size / ix->granule;
        if (!bin->count)
            bs->nonempty[k / 64] &= ~(1ull << (k % 64));
        return;
    }
    tree_remove(&ix->tree, &b->idx.node);
}

block_t *fit_best_of(const fit_index_t *ix, int64_t tag, uint64_t need)
{
    const fit_binset_t *bs = binset(ix, tag, false);
    uint64_t k = need / ix->granule + (need % ix->granule != 0);
    if (bs && k < FIT_BINS) {
        /* Every binned block of the tag is smaller than any in the tree. */
        uint64_t at = first_bin_from(bs, k);
        if (at < FIT_BINS)
            return bs->bin[at].root;
    }
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

/* What a block in bin k of a stream's set must be. */
typedef struct bin_visit_s {
    const fit_index_t *ix;
    const pool_t *p;
    bool (*belongs)(const fit_index_t *, const segment_t *);
    int64_t stream;
    uint64_t k;
} bin_visit_t;

static int binned_right(const block_t *b, void *ctx)
{
    const bin_visit_t *v = ctx;
    return pool_block_at(v->p, b->addr) != b || !block_is_free(b) ||
           (v->belongs && !v->belongs(v->ix, b->seg)) || b->stream != v->stream ||
           b->size / v->ix->granule != v->k;
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
        fit_binset_t *bs = NULL;
        if (bin_of(ix, b, false, &bs)) {
            *why = "free index holds a block that belongs in a size bin";
            return -1;
        }
        tree_node_t k = *n;
        set_keys(ix, b);
        if (k.k0 != n->k0 || k.k1 != n->k1 || k.k2 != n->k2 || k.weight != n->weight) {
            *why = "free index key disagrees with its block";
            return -1;
        }
    }
    size_t indexed = ix->tree.count;
    for (int i = 0; ix->bins && i < FIT_BIN_STREAMS; i++) {
        const fit_binset_t *bs = &ix->bins->set[i];
        if (!bs->used)
            continue;
        for (uint64_t k = 0; k < FIT_BINS; k++) {
            const fit_bin_t *bin = &bs->bin[k];
            bool bit = (bs->nonempty[k / 64] >> (k % 64)) & 1;
            if (bit != (bin->count > 0)) {
                *why = "size bin bitmap disagrees with its bin";
                return -1;
            }
            bin_visit_t v = {ix, p, belongs, bs->stream, k};
            if (bin_check(bin, binned_right, &v, why))
                return -1;
            indexed += bin->count;
        }
    }
    if (free_blocks != indexed) {
        *why = "free index misses free blocks";
        return -1;
    }
    return 0;
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
    const fit_index_t *ix = &((const fit_state_t *)st)->ix;
    uint64_t largest = tree_max_weight(&ix->tree);
    for (int i = 0; ix->bins && i < FIT_BIN_STREAMS; i++) {
        const fit_binset_t *bs = &ix->bins->set[i];
        for (int w = FIT_BINS / 64 - 1; bs->used && w >= 0; w--)
            if (bs->nonempty[w]) {
                uint64_t k = (uint64_t)w * 64 + 63 - (uint64_t)__builtin_clzll(bs->nonempty[w]);
                if (k * ix->granule > largest)
                    largest = k * ix->granule;
                break;
            }
    }
    return largest;
}

int fit_check_op(const void *st, const pool_t *p, const char **why)
{
    if (pool_check_coalesced(p, why))
        return -1;
    return fit_index_check(&((const fit_state_t *)st)->ix, p, NULL, why);
}
