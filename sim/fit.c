/*
 * fit: free-block index, selection and carving for the fit strategies
 * and the caching pool.  See fit.h.
 */
#include "sim/fit.h"

#include <stdlib.h>

#include "lib/check.h"

/* The key a free block has in its tree, into n. */
static void keys_of(const fit_index_t *ix, const block_t *b, tree_node_t *n)
{
    n->k0 = b->stream;
    if (ix->order != FIT_BY_ADDR) { /* by size; a largest-first index's shared tree too */
        n->k1 = b->size;
        n->k2 = b->addr;
    } else {
        n->k1 = b->addr;
        n->k2 = 0;
    }
    n->weight = b->size;
}

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

/* Whether free block b is the top: the last of its segment, pristine,
 * in an index that keeps it aside (sim/fit.h). */
static inline bool is_top(const fit_index_t *ix, const block_t *b)
{
    return ix->keep_top && !b->next && b->stream == POOL_STREAM_ANY;
}

/* ---- tags ------------------------------------------------------------------ */

#define SHARED(ix) (&(ix)->tag[FIT_TAGS])

static fit_tag_t *tag_claim(fit_index_t *ix, int64_t stream, int8_t *hint);

/* Stream's tag, or the shared one; create: claim the next tag when
 * stream has none and one is left (its blocks then go there). */
static inline fit_tag_t *tag_of(fit_index_t *ix, int64_t stream, bool create)
{
    /* Pristine memory and the first streams: their tag at once. */
    int8_t *hint = stream == POOL_STREAM_ANY              ? &ix->any_tag
                   : (uint64_t)stream < FIT_SMALL_STREAMS ? &ix->small_tag[stream]
                                                          : NULL;
    if (hint && *hint >= 0)
        return &ix->tag[*hint];
    for (unsigned i = 0; !hint && i < ix->ntags; i++)
        if (ix->tag[i].stream == stream)
            return &ix->tag[i];
    if (!create || ix->ntags == FIT_TAGS)
        return SHARED(ix);
    return tag_claim(ix, stream, hint);
}

/* A new tag for stream (which has none), noted in *hint if given. */
static fit_tag_t *tag_claim(fit_index_t *ix, int64_t stream, int8_t *hint)
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

static inline const fit_tag_t *tag_find(const fit_index_t *ix, int64_t stream)
{
    return tag_of((fit_index_t *)ix, stream, false);
}

/* Where free block b belongs: its tag's tree, or a size bin of its
 * tag's set.  A block's place depends only on its stream and size,
 * which do not change while it is indexed. */
typedef struct place_s {
    tree_t *tree;      /* in a tree, or NULL: */
    fit_bin_t *heap;   /* in this pairing heap: a size bin, or a largest-first tag's */
    fit_binset_t *bs;  /* a size bin's set (NULL: the tag's largest-first heap) ... */
    uint64_t k;        /* ... and the bin */
} place_t;

static inline place_t place_in(const fit_index_t *ix, const fit_tag_t *t, const block_t *b)
{
    uint64_t k = b->size >> ix->granule_shift;
    if (t->bins && k < FIT_BINS)
        return (place_t){NULL, &t->bins->bin[k], t->bins, k};
    if (ix->order == FIT_LARGEST_FIRST && t != SHARED(ix))
        return (place_t){NULL, (fit_bin_t *)&t->largest, NULL, 0};
    return (place_t){(tree_t *)&t->tree, NULL, NULL, 0};
}

/* Where free block b goes, by its stream (create: claim a tag for it). */
static inline place_t place_of(fit_index_t *ix, const block_t *b, bool create)
{
    return place_in(ix, tag_of(ix, b->stream, create), b);
}

/* Where indexed block b is: its tag was noted when it went in. */
static inline place_t place_now(const fit_index_t *ix, const block_t *b)
{
    return place_in(ix, &ix->tag[b->idx_tag], b);
}

/* The first k >= from with bit k set, or FIT_BINS. */
static inline uint64_t first_bin_from(const fit_binset_t *bs, uint64_t from)
{
    uint64_t w = from / 64;
    uint64_t bits = bs->nonempty[w] & (~0ull << (from % 64));
    if (bits)
        return w * 64 + (uint64_t)__builtin_ctzll(bits);
    uint64_t words = bs->summary & (~0ull << (w + 1)); /* w < FIT_BINS / 64 */
    if (!words)
        return FIT_BINS;
    w = (uint64_t)__builtin_ctzll(words);
    return w * 64 + (uint64_t)__builtin_ctzll(bs->nonempty[w]);
}

/* ---- pairing heaps: size bins by address, largest-first tags --------------------- */

#define H(n) ((n)->heap)

/* Whether a comes out of the heap before b: the lower address (a size
 * bin), or the larger block, then the lower address (largest first). */
static inline bool heap_before(const ixnode_t *a, const ixnode_t *b, bool largest)
{
    if (largest && H(a).size != H(b).size)
        return H(a).size > H(b).size;
    return H(a).addr < H(b).addr;
}

/* Two heaps (roots, or NULL) as one: the later root becomes the first
 * child of the earlier. */
static inline ixnode_t *heap_meld(ixnode_t *a, ixnode_t *b, bool largest)
{
    if (!a)
        return b;
    if (!b)
        return a;
    if (heap_before(b, a, largest)) {
        ixnode_t *t = a;
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
static inline ixnode_t *heap_merge_pairs(ixnode_t *first, bool largest)
{
    if (!first || !H(first).next) {
        if (first)
            H(first).prev = NULL;
        return first; /* none or one: nothing to pair */
    }
    ixnode_t *stack = NULL; /* melded pairs, last first, linked by next */
    while (first) {
        ixnode_t *a = first, *b = H(a).next;
        first = b ? H(b).next : NULL;
        H(a).next = H(a).prev = NULL;
        if (b)
            H(b).next = H(b).prev = NULL;
        ixnode_t *m = heap_meld(a, b, largest);
        H(m).next = stack;
        stack = m;
    }
    ixnode_t *root = NULL;
    while (stack) {
        ixnode_t *m = stack;
        stack = H(m).next;
        H(m).next = NULL;
        root = heap_meld(m, root, largest);
    }
    return root;
}

/* Block b (its node set) into heap h: the node takes b's key. */
static inline void heap_insert(fit_bin_t *h, block_t *b, bool largest)
{
    ixnode_t *n = b->ix;
    H(n).child = H(n).next = H(n).prev = NULL;
    H(n).addr = b->addr;
    H(n).size = b->size;
    h->root = heap_meld(h->root, n, largest);
    h->count++;
}

static inline void heap_remove(fit_bin_t *h, block_t *b, bool largest)
{
    ixnode_t *n = b->ix;
    ixnode_t *sub = heap_merge_pairs(H(n).child, largest);
    if (n == h->root) {
        h->root = sub;
    } else {
        ixnode_t *p = H(n).prev;
        if (H(p).child == n)
            H(p).child = H(n).next; /* n was p's first child */
        else
            H(p).next = H(n).next;
        if (H(n).next)
            H(H(n).next).prev = p;
        h->root = heap_meld(h->root, sub, largest);
    }
    h->count--;
}

static inline void bin_insert(fit_binset_t *bs, uint64_t k, block_t *b)
{
    heap_insert(&bs->bin[k], b, false);
    if (bs->bin[k].count == 1) {
        bs->nonempty[k / 64] |= 1ull << (k % 64);
        bs->summary |= 1ull << (k / 64);
    }
}

static inline void bin_remove(fit_binset_t *bs, uint64_t k, block_t *b)
{
    heap_remove(&bs->bin[k], b, false);
    if (!bs->bin[k].count && !(bs->nonempty[k / 64] &= ~(1ull << (k % 64))))
        bs->summary &= ~(1ull << (k / 64));
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

int fit_check_op(const void *st, const pool_t *p, const char **why)
{
    if (pool_check_coalesced(p, why))
        return -1;
    return fit_index_check(&((const fit_state_t *)st)->ix, p, NULL, why);
}
