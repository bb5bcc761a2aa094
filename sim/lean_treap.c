/*
 * lean_treap: a lean device's treaps of extents (sim/lean_ext.h): by
 * address with each node's subtree maximum (first and next fit), or by
 * (size, address) (best and worst fit; best fit's small runs in a treap
 * per size).  Priorities are a hash of the slot.
 */
#include "sim/lean_ext.h"

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

/* Extent x's address or size changed (its place among the others by
 * address did not): put it where it belongs now.  By size, a node
 * whose new key still sorts between its neighbours stays where it is
 * (a priority does not depend on the key): worst fit's largest run,
 * carved a little, usually does. */
void lean_changed(lean_t *l, uint32_t x)
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
