/*
 * lean_caching_index: each pool's index of free runs in the lean
 * caching pool (sim/lean_caching_ext.h), as the device's: below 256 KiB
 * a size bin, a pairing heap by address (the lowest at its root), with
 * a bitmap of the sizes that have runs; above, a treap by (size,
 * address), priorities a hash of the slot.
 */
#include "sim/lean_caching_ext.h"

/* ---- the treaps ------------------------------------------------------------------- */

static inline uint32_t *root_of(lean_caching_t *c, uint32_t x)
{
    return &c->pool[c->e[x].kind].root;
}

static void rotate_up(lean_caching_t *c, uint32_t x)
{
    cext_t *e = c->e;
    uint32_t p = e[x].p, g = e[p].p;
    if (e[p].l == x) {
        uint32_t b = e[x].r;
        e[p].l = b;
        if (b != NIL)
            e[b].p = p;
        e[x].r = p;
    } else {
        uint32_t b = e[x].l;
        e[p].r = b;
        if (b != NIL)
            e[b].p = p;
        e[x].l = p;
    }
    e[p].p = x;
    e[x].p = g;
    if (g == NIL)
        *root_of(c, p) = x;
    else if (e[g].l == p)
        e[g].l = x;
    else
        e[g].r = x;
}

static void treap_insert(lean_caching_t *c, uint32_t x)
{
    cext_t *e = c->e;
    e[x].l = e[x].r = NIL;
    uint32_t *root = root_of(c, x);
    if (*root == NIL) {
        e[x].p = NIL;
        *root = x;
        return;
    }
    uint32_t n = *root;
    for (;;) {
        uint32_t *ch = before(c, x, n) ? &e[n].l : &e[n].r;
        if (*ch == NIL) {
            *ch = x;
            break;
        }
        n = *ch;
    }
    e[x].p = n;
    uint32_t px = prio(x);
    while (e[x].p != NIL && prio(e[x].p) < px)
        rotate_up(c, x);
}

static void treap_remove(lean_caching_t *c, uint32_t x)
{
    cext_t *e = c->e;
    while (e[x].l != NIL && e[x].r != NIL)
        rotate_up(c, prio(e[x].l) > prio(e[x].r) ? e[x].l : e[x].r);
    uint32_t ch = e[x].l != NIL ? e[x].l : e[x].r, p = e[x].p;
    if (ch != NIL)
        e[ch].p = p;
    if (p == NIL)
        *root_of(c, x) = ch;
    else if (e[p].l == x)
        e[p].l = ch;
    else
        e[p].r = ch;
}

/* ---- the size bins: pairing heaps by address (l: first child, r: next
 * sibling, p: previous sibling or parent) ---------------------------------------------- */

/* Two heaps (roots, or NIL) as one: the higher root becomes the first
 * child of the lower. */
static inline uint32_t heap_meld(lean_caching_t *c, uint32_t a, uint32_t b)
{
    cext_t *e = c->e;
    if (a == NIL)
        return b;
    if (b == NIL)
        return a;
    if (e[b].addr < e[a].addr) {
        uint32_t t = a;
        a = b;
        b = t;
    }
    e[b].p = a;
    e[b].r = e[a].l;
    if (e[a].l != NIL)
        e[e[a].l].p = b;
    e[a].l = b;
    return a;
}

/* A list of sibling heaps as one (pairs left to right, then the results
 * right to left). */
static uint32_t heap_merge_pairs(lean_caching_t *c, uint32_t first)
{
    cext_t *e = c->e;
    if (first == NIL || e[first].r == NIL) {
        if (first != NIL)
            e[first].p = NIL;
        return first;
    }
    uint32_t stack = NIL; /* melded pairs, last first, linked by r */
    while (first != NIL) {
        uint32_t a = first, b = e[a].r;
        first = b != NIL ? e[b].r : NIL;
        e[a].r = e[a].p = NIL;
        if (b != NIL)
            e[b].r = e[b].p = NIL;
        uint32_t m = heap_meld(c, a, b);
        e[m].r = stack;
        stack = m;
    }
    uint32_t root = NIL;
    while (stack != NIL) {
        uint32_t m = stack;
        stack = e[m].r;
        e[m].r = NIL;
        root = heap_meld(c, m, root);
    }
    return root;
}

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
    uint32_t p = e[x].p;
    if (e[p].l == x)
        e[p].l = e[x].r; /* x was p's first child */
    else
        e[p].r = e[x].r;
    if (e[x].r != NIL)
        e[e[x].r].p = p;
    ix->bin_root[b] = heap_meld(c, ix->bin_root[b], sub);
}

/* Run x into its pool's index: the bin of its size, or the treap. */
void lean_caching_index_insert(lean_caching_t *c, uint32_t x)
{
    c->e[x].bin = bin_of(c->e[x].size);
    if (c->e[x].bin)
        bin_insert(c, x);
    else
        treap_insert(c, x);
}

void lean_caching_index_remove(lean_caching_t *c, uint32_t x)
{
    if (c->e[x].bin)
        bin_remove(c, x);
    else
        treap_remove(c, x);
}

static uint32_t in_order_prev(const lean_caching_t *c, uint32_t x)
{
    const cext_t *e = c->e;
    if (e[x].l != NIL) {
        for (x = e[x].l; e[x].r != NIL;)
            x = e[x].r;
        return x;
    }
    while (e[x].p != NIL && e[e[x].p].l == x)
        x = e[x].p;
    return e[x].p;
}

static uint32_t in_order_next(const lean_caching_t *c, uint32_t x)
{
    const cext_t *e = c->e;
    if (e[x].r != NIL) {
        for (x = e[x].r; e[x].l != NIL;)
            x = e[x].l;
        return x;
    }
    while (e[x].p != NIL && e[e[x].p].r == x)
        x = e[x].p;
    return e[x].p;
}

/* Run x's size (and maybe address) changed: where it belongs now.  A
 * node of the treap whose key still sorts between its neighbours
 * stays. */
void lean_caching_rekey(lean_caching_t *c, uint32_t x)
{
    uint32_t a, b;
    if (!c->e[x].bin && !bin_of(c->e[x].size) &&
        ((a = in_order_prev(c, x)) == NIL || before(c, a, x)) &&
        ((b = in_order_next(c, x)) == NIL || before(c, x, b)))
        return;
    lean_caching_index_remove(c, x);
    lean_caching_index_insert(c, x);
}

/* The lowest bin at or above u with runs, 0 when none. */
static uint32_t bin_from(const pool_ix_t *ix, uint64_t u)
{
    for (uint64_t w = u / 64; w < BINS / 64; w++) {
        uint64_t m = ix->nonempty[w] & (w == u / 64 ? ~0ull << (u % 64) : ~0ull);
        if (m)
            return (uint32_t)(w * 64 + (uint64_t)__builtin_ctzll(m));
    }
    return 0;
}

/* The pool's least (size, address) with size >= need (a multiple of U),
 * or NIL: the device's fit_best_of. */
uint32_t lean_caching_smallest_fit(const lean_caching_t *c, int kind, uint64_t need)
{
    const pool_ix_t *ix = &c->pool[kind];
    const cext_t *e = c->e;
    uint64_t u = need >> USHIFT;
    if (u < BINS) {
        uint32_t b = bin_from(ix, u);
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
    for (size_t w = BINS / 64; w-- > 0;)
        if (ix->nonempty[w])
            return (uint64_t)(w * 64 + 63 - (uint64_t)__builtin_clzll(ix->nonempty[w])) << USHIFT;
    return 0;
}

uint64_t lean_caching_largest_free(const lean_caching_t *c)
{
    uint64_t s = pool_largest(c, KIND_SMALL), l = pool_largest(c, KIND_LARGE);
    return s > l ? s : l;
}
