/*
 * fit_check: every invariant of a fit index (sim/fit.h), walked after
 * every operation by the tests: the top, the tags, each tree's and
 * heap's nodes against the free blocks of the pool, and the bins'
 * bitmaps.
 */
#include "sim/fit.h"

#include <stdlib.h>

#include "sim/fit_heap.h"
#include "sim/fit_tag.h"

#define H(n) ((n)->heap)

/* Heap order, links and count of a bin; each node's block (whose node
 * it must be, with its key) handed to visit.  0, or -1 with *why. */
static int bin_check(const fit_bin_t *bin, bool largest, int (*visit)(const block_t *, void *),
                     void *ctx, const char **why)
{
    size_t seen = 0, cap = 64;
    const ixnode_t **todo = malloc(cap * sizeof *todo);
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
        const ixnode_t *x = todo[--n];
        const block_t *b = x->block;
        seen++;
        if (b->ix != x || H(x).addr != b->addr || H(x).size != b->size) {
            *why = "size bin node is not its block's, or has another key";
            rc = -1;
            break;
        }
        if (visit && visit(b, ctx)) {
            *why = "size bin holds a block that is not a free block of its index";
            rc = -1;
            break;
        }
        const ixnode_t *prev = x;
        for (const ixnode_t *c = H(x).child; c; prev = c, c = H(c).next) {
            if (H(c).prev != prev || !heap_before(x, c, largest)) {
                *why = "size bin heap out of order or mislinked";
                rc = -1;
                break;
            }
            if (n == cap) {
                const ixnode_t **more = realloc(todo, 2 * cap * sizeof *todo);
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


/* What a block in bin k of tag i's set must be. */
typedef struct bin_visit_s {
    const fit_index_t *ix;
    const pool_t *p;
    bool (*belongs)(const fit_index_t *, const segment_t *);
    int64_t stream;
    uint64_t k;
    unsigned tag; /* its index in ix->tag */
} bin_visit_t;

static int binned_right(const block_t *b, void *ctx)
{
    const bin_visit_t *v = ctx;
    return !pool_block_listed(v->p, b) || !block_is_free(b) ||
           (v->belongs && !v->belongs(v->ix, b->seg)) || b->stream != v->stream ||
           b->size >> v->ix->granule_shift != v->k || b->idx_tag != v->tag;
}

/* What a block in tag i's largest-first heap must be. */
static int in_largest_right(const block_t *b, void *ctx)
{
    const bin_visit_t *v = ctx;
    if (!pool_block_listed(v->p, b) || !block_is_free(b) ||
        (v->belongs && !v->belongs(v->ix, b->seg)) || b->stream != v->stream ||
        b->idx_tag != v->tag)
        return -1;
    place_t at = place_of((fit_index_t *)v->ix, b, false);
    return at.heap && !at.bs ? 0 : -1;
}

/* Every node of tree t is a free block of the index, with its key, in
 * the tree it belongs in.  Counts them into *n. */
static int tree_holds_right(const fit_index_t *ix, const tree_t *t, const pool_t *p,
                            bool (*belongs)(const fit_index_t *, const segment_t *), size_t *n,
                            const char **why)
{
    if (tree_check(t, why))
        return -1;
    for (const tree_node_t *node = tree_first(t); node; node = tree_next(node)) {
        block_t *b = fit_block(node);
        if (&b->ix->node != node) {
            *why = "free index node is not its block's";
            return -1;
        }
        if (!pool_block_listed(p, b) || !block_is_free(b)) {
            *why = "free index holds a block that is not free";
            return -1;
        }
        if (belongs && !belongs(ix, b->seg)) {
            *why = "free index holds a block of another index";
            return -1;
        }
        place_t at = place_of((fit_index_t *)ix, b, false);
        if (at.heap) {
            *why = "free index holds a block that belongs in a heap";
            return -1;
        }
        if (at.tree != t || &ix->tag[b->idx_tag].tree != t) {
            *why = "free index holds a block in another stream's tree";
            return -1;
        }
        tree_node_t k;
        keys_of(ix, b, &k);
        if (k.k0 != node->k0 || k.k1 != node->k1 || k.k2 != node->k2 ||
            k.weight != node->weight) {
            *why = "free index key disagrees with its block";
            return -1;
        }
        ++*n;
    }
    return 0;
}

int fit_index_check(const fit_index_t *ix, const pool_t *p,
                    bool (*belongs)(const fit_index_t *, const segment_t *),
                    const char **why)
{
    size_t free_blocks = 0, indexed = ix->top ? 1 : 0;
    if (ix->top && (!ix->keep_top || !pool_block_listed(p, ix->top) ||
                    !block_is_free(ix->top) || !is_top(ix, ix->top) || ix->top->ix)) {
        *why = "the top is not the free pristine end of its segment";
        return -1;
    }
    for (const segment_t *s = pool_segment_first(p); s; s = pool_segment_next(s)) {
        if (belongs && !belongs(ix, s))
            continue;
        if (block_is_free(s->last) && is_top(ix, s->last) && s->last != ix->top) {
            *why = "the free pristine end of a segment is not the top";
            return -1;
        }
        for (const block_t *b = s->first; b; b = b->next) {
            if (block_is_free(b))
                free_blocks++;
            if ((b->addr | b->size) & (ix->granule - 1)) {
                *why = "block not aligned to the granule";
                return -1;
            }
        }
    }
    if (ix->ntags > FIT_TAGS) {
        *why = "more tags than the index has room for";
        return -1;
    }
    for (unsigned i = 0; i < ix->ntags; i++) {
        for (unsigned j = 0; j < i; j++)
            if (ix->tag[i].stream == ix->tag[j].stream) {
                *why = "a stream has two tags";
                return -1;
            }
        if (tag_find(ix, ix->tag[i].stream) != &ix->tag[i]) {
            *why = "a tag is not found by its stream";
            return -1;
        }
    }
    for (int i = -1; i < FIT_SMALL_STREAMS; i++) {
        int h = i < 0 ? ix->any_tag : ix->small_tag[i];
        if (h >= (int)ix->ntags ||
            (h >= 0 && ix->tag[h].stream != (i < 0 ? POOL_STREAM_ANY : (int64_t)i))) {
            *why = "a stream's noted tag is another stream's";
            return -1;
        }
    }
    if (tree_holds_right(ix, &SHARED(ix)->tree, p, belongs, &indexed, why))
        return -1;
    for (unsigned i = 0; i < ix->ntags; i++) {
        if (tree_holds_right(ix, &ix->tag[i].tree, p, belongs, &indexed, why))
            return -1;
        const fit_bin_t *h = &ix->tag[i].largest;
        if (ix->order != FIT_LARGEST_FIRST && (h->root || h->count)) {
            *why = "a largest-first heap in an index of another order";
            return -1;
        }
        bin_visit_t hv = {ix, p, belongs, ix->tag[i].stream, FIT_BINS, i};
        if (bin_check(h, true, in_largest_right, &hv, why))
            return -1;
        indexed += h->count;
        const fit_binset_t *bs = ix->tag[i].bins;
        if (bs != (ix->bins && i < FIT_BIN_STREAMS ? &ix->bins->set[i] : NULL)) {
            *why = "a tag has another tag's size bins";
            return -1;
        }
        if (!bs)
            continue;
        for (uint64_t k = 0; k < FIT_BINS; k++) {
            const fit_bin_t *bin = &bs->bin[k];
            bool bit = (bs->nonempty[k / 64] >> (k % 64)) & 1;
            if (bit != (bin->count > 0)) {
                *why = "size bin bitmap disagrees with its bin";
                return -1;
            }
            bin_visit_t v = {ix, p, belongs, ix->tag[i].stream, k, i};
            if (bin_check(bin, false, binned_right, &v, why))
                return -1;
            indexed += bin->count;
        }
        for (int w = 0; w < FIT_BINS / 64; w++)
            if (((bs->summary >> w) & 1) != (bs->nonempty[w] != 0)) {
                *why = "size bin summary disagrees with its bitmap";
                return -1;
            }
    }
    if (free_blocks != indexed) {
        *why = "free index misses free blocks";
        return -1;
    }
    return 0;
}

int fit_check_op(const void *st, const pool_t *p, const char **why)
{
    if (pool_check_coalesced(p, why))
        return -1;
    return fit_index_check(&((const fit_state_t *)st)->ix, p, NULL, why);
}
