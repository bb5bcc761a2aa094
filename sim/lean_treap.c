/*
 * lean_treap: a lean device's index of extents (sim/lean_ext.h): treaps
 * by address with each node's subtree maximum (first and next fit), or
 * by (size, address) (best fit; its small runs in a treap per size);
 * priorities are a hash of the slot.  Worst fit's is a pairing heap,
 * largest first and lowest address among equals, as its device's: the
 * choice is the root.
 */
#include "sim/lean_ext.h"

/* ---- worst fit's pairing heap (l: first child, r: next sibling, p:
 * previous sibling or parent) ------------------------------------------------------ */

/* Two heaps (roots, or NIL) as one: the later root becomes the first
 * child of the earlier. */
static inline uint32_t heap_meld(lean_t *l, uint32_t a, uint32_t b)
{
    ext_t *e = l->e;
    if (a == NIL)
        return b;
    if (b == NIL)
        return a;
    if (heap_before(l, b, a)) {
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

/* A list of sibling heaps as one (pairs left to right, then the
 * results right to left); its root has no parent nor sibling. */
static uint32_t heap_merge_pairs(lean_t *l, uint32_t first)
{
    ext_t *e = l->e;
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
        uint32_t m = heap_meld(l, a, b);
        e[m].r = stack;
        stack = m;
    }
    uint32_t root = NIL;
    while (stack != NIL) {
        uint32_t m = stack;
        stack = e[m].r;
        e[m].r = NIL;
        root = heap_meld(l, m, root);
    }
    return root;
}

/* Node x (not the root) off its parent or previous sibling, with its
 * subtree. */
static inline void heap_cut(lean_t *l, uint32_t x)
{
    ext_t *e = l->e;
    uint32_t p = e[x].p;
    if (e[p].l == x)
        e[p].l = e[x].r; /* x was p's first child */
    else
        e[p].r = e[x].r;
    if (e[x].r != NIL)
        e[e[x].r].p = p;
    e[x].r = e[x].p = NIL;
}

static void heap_insert(lean_t *l, uint32_t x)
{
    l->e[x].l = l->e[x].r = l->e[x].p = NIL;
    l->root = heap_meld(l, l->root, x);
}

static void heap_remove(lean_t *l, uint32_t x)
{
    uint32_t sub = heap_merge_pairs(l, l->e[x].l);
    if (x == l->root) {
        l->root = sub;
        return;
    }
    heap_cut(l, x);
    l->root = heap_meld(l, l->root, sub);
}

/* Root x shrank: the meld of its children with it alone. */
static void heap_root_shrunk(lean_t *l, uint32_t x)
{
    uint32_t sub = heap_merge_pairs(l, l->e[x].l);
    l->e[x].l = NIL;
    l->root = heap_meld(l, sub, x);
}

/* ---- treaps --------------------------------------------------------------------------- */

/* The root of the treap indexed run x is in. */
static inline uint32_t *root_of(lean_t *l, uint32_t x)
{
    uint32_t b = l->e[x].flags >> BIN_SHIFT;
    return b ? &l->bin_root[b] : &l->root;
}

/* x's max from its size and its children's (by address). */
static inline void pull(lean_t *l, uint32_t x)
{
    ext_t *e = l->e;
    e[x].max = max3(e[x].size, e[x].l != NIL ? e[e[x].l].max : 0,
                    e[x].r != NIL ? e[e[x].r].max : 0);
}

/* Rotate x above its parent. */
static void rotate_up(lean_t *l, uint32_t x)
{
    ext_t *e = l->e;
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
        *root_of(l, p) = x;
    else if (e[g].l == p)
        e[g].l = x;
    else
        e[g].r = x;
    if (l->by_addr) {
        pull(l, p);
        pull(l, x);
    }
}

void lean_treap_insert(lean_t *l, uint32_t x)
{
    if (l->pick == PICK_WORST) {
        heap_insert(l, x);
        return;
    }
    ext_t *e = l->e;
    e[x].l = e[x].r = NIL;
    e[x].max = e[x].size;
    uint32_t bin = bin_of(l, e[x].size);
    e[x].flags = (e[x].flags & ((1u << BIN_SHIFT) - 1)) | bin << BIN_SHIFT;
    uint32_t *root = root_of(l, x);
    if (*root == NIL) {
        e[x].p = NIL;
        *root = x;
        if (bin)
            l->nonempty[bin / 64] |= 1ull << (bin % 64);
        return;
    }
    uint32_t n = *root;
    for (;;) {
        if (l->by_addr && e[n].max < e[x].size)
            e[n].max = e[x].size;
        uint32_t *c = before(l, x, n) ? &e[n].l : &e[n].r;
        if (*c == NIL) {
            *c = x;
            break;
        }
        n = *c;
    }
    e[x].p = n;
    uint32_t px = prio(x);
    while (e[x].p != NIL && prio(e[x].p) < px)
        rotate_up(l, x);
}

/* Recompute the maxima from x up, while they change (by address). */
static void fix_up(lean_t *l, uint32_t x)
{
    ext_t *e = l->e;
    while (x != NIL) {
        uint64_t old = e[x].max;
        pull(l, x);
        if (e[x].max == old)
            return;
        x = e[x].p;
    }
}

void lean_treap_remove(lean_t *l, uint32_t x)
{
    if (l->pick == PICK_WORST) {
        heap_remove(l, x);
        return;
    }
    ext_t *e = l->e;
    while (e[x].l != NIL && e[x].r != NIL)
        rotate_up(l, prio(e[x].l) > prio(e[x].r) ? e[x].l : e[x].r);
    uint32_t c = e[x].l != NIL ? e[x].l : e[x].r, p = e[x].p;
    if (c != NIL)
        e[c].p = p;
    if (p == NIL) {
        *root_of(l, x) = c;
        uint32_t bin = e[x].flags >> BIN_SHIFT;
        if (bin && c == NIL)
            l->nonempty[bin / 64] &= ~(1ull << (bin % 64));
    } else if (e[p].l == x)
        e[p].l = c;
    else
        e[p].r = c;
    if (l->by_addr && p != NIL)
        fix_up(l, p);
}

/* x's neighbours in the treap's order (NIL: none), by the links. */
static uint32_t in_order_prev(const lean_t *l, uint32_t x)
{
    const ext_t *e = l->e;
    if (e[x].l != NIL) {
        x = e[x].l;
        while (e[x].r != NIL)
            x = e[x].r;
        return x;
    }
    while (e[x].p != NIL && e[e[x].p].l == x)
        x = e[x].p;
    return e[x].p;
}

static uint32_t in_order_next(const lean_t *l, uint32_t x)
{
    const ext_t *e = l->e;
    if (e[x].r != NIL) {
        x = e[x].r;
        while (e[x].l != NIL)
            x = e[x].l;
        return x;
    }
    while (e[x].p != NIL && e[e[x].p].r == x)
        x = e[x].p;
    return e[x].p;
}

/* See lean_ext.h. */
void lean_changed(lean_t *l, uint32_t x, bool grew)
{
    bool was = x == l->top, now = is_top(l, x);
    if (was) {
        if (!now) {
            l->top = NIL;
            lean_treap_insert(l, x);
        }
        return;
    }
    if (now) {
        lean_treap_remove(l, x);
        l->top = x;
    } else if (l->by_addr) {
        ext_t *e = l->e;
        uint64_t size = e[x].size;
        if (size < e[x].max) { /* it shrank, or grew within a larger subtree */
            fix_up(l, x);
            return;
        }
        /* It grew to its subtree's largest or past (a shrunk run is below
         * its old maximum): the maxima on its path rise to its size
         * where lower, and nothing else changes. */
        for (uint32_t n = x; n != NIL && e[n].max < size; n = e[n].p)
            e[n].max = size;
    } else if (l->pick == PICK_WORST) {
        if (x == l->root) {
            if (!grew)
                heap_root_shrunk(l, x);
        } else if (grew) {
            heap_cut(l, x);
            l->root = heap_meld(l, l->root, x);
        } else {
            heap_remove(l, x);
            heap_insert(l, x);
        }
    } else {
        uint32_t a = NIL, b = NIL;
        if (bin_of(l, l->e[x].size) == l->e[x].flags >> BIN_SHIFT &&
            ((a = in_order_prev(l, x)) == NIL || before(l, a, x)) &&
            ((b = in_order_next(l, x)) == NIL || before(l, x, b)))
            return;
        lean_treap_remove(l, x);
        lean_treap_insert(l, x);
    }
}
