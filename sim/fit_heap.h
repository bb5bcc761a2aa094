/*
 * fit_heap: the pairing heaps of a fit index (sim/fit.h): size bins by
 * address, and largest-first tags, with the bitmap of non-empty bins.
 * Internal to the fit index (sim/fit.c, sim/fit_check.c).
 */
#ifndef MEMSIM_CORE_FIT_HEAP_H
#define MEMSIM_CORE_FIT_HEAP_H

#include "sim/fit.h"

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

#undef H

#endif
