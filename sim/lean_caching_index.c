/*
 * lean_caching_index: each pool's index of free runs in the lean
 * caching pool (sim/lean_caching_ext.h), as the device's: below 256 KiB
 * a size bin, a pairing heap by address (the lowest at its root), with
 * a bitmap of the sizes that have runs; above, a treap by (size,
 * address), priorities a hash of the slot.
 */
#include "sim/lean_caching_ext.h"

/* ---- the index's structures (sim/lean_links.h) over runs --------------------------- */

static inline uint32_t *root_of(lean_caching_t *c, uint32_t x)
{
    return &c->pool[c->e[x].kind].root;
}

/* The size bins' heaps: the lowest address at the root. */
#define LINKS_CTX lean_caching_t
#define LINKS_RUN cext_t
#define LINKS_RUNS(c) ((c)->e)
#define LINKS_HEAP_BEFORE(c, a, b) ((c)->e[a].addr < (c)->e[b].addr)
#define LINKS_BEFORE(c, a, b) before(c, a, b)
#define LINKS_ROOT(c, x) root_of(c, x)
#define LINKS_ROTATED(c, p, x) ((void)0)
#define LINKS_PASSED(c, n, x) ((void)0)
#include "sim/lean_links.h"

/* ---- the size bins: pairing heaps by address --------------------------------------- */

static void bin_insert(lean_caching_t *c, uint32_t x)
{
    cext_t *e = c->e;
    pool_ix_t *ix = &c->pool[e[x].kind];
    uint32_t b = e[x].bin;
    e[x].l = e[x].r = e[x].p = NIL;
    ix->bin_root[b] = heap_meld(c, ix->bin_root[b], x);
    ix->nonempty[b / 64] |= 1ull << (b % 64);
}

static void bin_remove(lean_caching_t *c, uint32_t x)
{
    cext_t *e = c->e;
    pool_ix_t *ix = &c->pool[e[x].kind];
    uint32_t b = e[x].bin, sub = heap_merge_pairs(c, e[x].l);
    if (ix->bin_root[b] == x) {
        ix->bin_root[b] = sub;
        if (sub == NIL)
            ix->nonempty[b / 64] &= ~(1ull << (b % 64));
        return;
    }
    heap_cut(c, x);
    ix->bin_root[b] = heap_meld(c, ix->bin_root[b], sub);
}

/* Run x into its pool's index: the bin of its size, or the treap. */
void lean_caching_index_insert(lean_caching_t *c, uint32_t x)
{
    c->e[x].bin = bin_of(c->e[x].size);
    if (c->e[x].bin)
        bin_insert(c, x);
    else
        (void)treap_insert(c, root_of(c, x), x);
}

void lean_caching_index_remove(lean_caching_t *c, uint32_t x)
{
    if (c->e[x].bin)
        bin_remove(c, x);
    else
        (void)treap_remove(c, x);
}

/* Run x's size (and maybe address) changed: where it belongs now.  A
 * node of the treap whose key still sorts between its neighbours
 * stays. */
void lean_caching_rekey(lean_caching_t *c, uint32_t x)
{
    if (!c->e[x].bin && !bin_of(c->e[x].size) && treap_in_order(c, x))
        return;
    lean_caching_index_remove(c, x);
    lean_caching_index_insert(c, x);
}

/* The pool's least (size, address) with size >= need (a multiple of U),
 * or NIL: the device's fit_best_of. */
uint32_t lean_caching_smallest_fit(const lean_caching_t *c, int kind, uint64_t need)
{
    const pool_ix_t *ix = &c->pool[kind];
    const cext_t *e = c->e;
    uint64_t u = need >> USHIFT;
    if (u < BINS) {
        uint32_t b = bins_first_from(ix->nonempty, BINS, u);
        if (b) /* every binned run is smaller than the treap's; the root: the lowest */
            return ix->bin_root[b];
    }
    uint32_t n = ix->root, best = NIL;
    while (n != NIL) {
        if (e[n].size >= need) {
            best = n;
            n = e[n].l;
        } else {
            n = e[n].r;
        }
    }
    return best;
}

/* The pool's largest run's size, 0 when none. */
static uint64_t pool_largest(const lean_caching_t *c, int kind)
{
    const pool_ix_t *ix = &c->pool[kind];
    uint32_t n = ix->root;
    if (n != NIL) {
        while (c->e[n].r != NIL)
            n = c->e[n].r;
        return c->e[n].size;
    }
    return (uint64_t)bins_last(ix->nonempty, BINS) << USHIFT;
}

uint64_t lean_caching_largest_free(const lean_caching_t *c)
{
    uint64_t s = pool_largest(c, KIND_SMALL), l = pool_largest(c, KIND_LARGE);
    return s > l ? s : l;
}
