/*
 * lean_links: the structures a lean form indexes its free runs with, over
 * an array of runs linked by 32-bit slots (l, r, p; NIL: none): a
 * pairing heap (l: first child, r: next sibling, p: previous sibling or
 * parent) and a treap (l, r: children, p: parent; priorities prio() of
 * the slot, sim/lean_index.h).  A template, written once for every
 * layout of run: a file includes it once, after defining
 *
 *   LINKS_CTX                  the structure holding the runs (lean_t ...)
 *   LINKS_RUN                  a run, with uint32_t l, r, p
 *   LINKS_RUNS(c)              c's array of runs
 *   LINKS_HEAP_BEFORE(c, a, b) whether run a comes out of a heap before b
 *   LINKS_BEFORE(c, a, b)      whether run a sorts before b in a treap
 *   LINKS_ROOT(c, x)           a pointer to the root of the treap x is in
 *   LINKS_ROTATED(c, p, x)     what follows x's rotation above p (a
 *                              subtree figure to update), or nothing
 *   LINKS_PASSED(c, n, x)      what follows x's descent past n on its
 *                              way to its place, or nothing
 *
 * and NIL.  Everything here is static, in that file only, so each layout
 * compiles to code of its own, as if written out (sim/lean_treap.c: the
 * fits' extents, sim/lean_caching_index.c: the caching pool's runs): one
 * layout to a file.  Included by those files only.
 */
#ifndef MEMSIM_SIM_LEAN_LINKS_H
#define MEMSIM_SIM_LEAN_LINKS_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/lean_index.h"

/* ---- pairing heaps ---------------------------------------------------------------- */

/* Two heaps (roots, or NIL) as one: the root that comes out later
 * becomes the first child of the other. */
static inline uint32_t heap_meld(LINKS_CTX *c, uint32_t a, uint32_t b)
{
    LINKS_RUN *e = LINKS_RUNS(c);
    if (a == NIL)
        return b;
    if (b == NIL)
        return a;
    if (LINKS_HEAP_BEFORE(c, b, a)) {
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
static uint32_t heap_merge_pairs(LINKS_CTX *c, uint32_t first)
{
    LINKS_RUN *e = LINKS_RUNS(c);
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

/* Run x (not the root) off its parent or previous sibling, with its
 * subtree; its own r and p are left as they were. */
static inline void heap_cut(LINKS_CTX *c, uint32_t x)
{
    LINKS_RUN *e = LINKS_RUNS(c);
    uint32_t p = e[x].p;
    if (e[p].l == x)
        e[p].l = e[x].r; /* x was p's first child */
    else
        e[p].r = e[x].r;
    if (e[x].r != NIL)
        e[e[x].r].p = p;
}

/* ---- treaps ------------------------------------------------------------------------ */

/* Rotate x above its parent. */
static void treap_rotate_up(LINKS_CTX *c, uint32_t x)
{
    LINKS_RUN *e = LINKS_RUNS(c);
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
        *LINKS_ROOT(c, p) = x;
    else if (e[g].l == p)
        e[g].l = x;
    else
        e[g].r = x;
    LINKS_ROTATED(c, p, x);
}

/* Run x, in no treap, into the one at *root: whether that was empty. */
static bool treap_insert(LINKS_CTX *c, uint32_t *root, uint32_t x)
{
    LINKS_RUN *e = LINKS_RUNS(c);
    e[x].l = e[x].r = NIL;
    if (*root == NIL) {
        e[x].p = NIL;
        *root = x;
        return true;
    }
    uint32_t n = *root;
    for (;;) {
        LINKS_PASSED(c, n, x);
        uint32_t *ch = LINKS_BEFORE(c, x, n) ? &e[n].l : &e[n].r;
        if (*ch == NIL) {
            *ch = x;
            break;
        }
        n = *ch;
    }
    e[x].p = n;
    uint32_t px = prio(x);
    while (e[x].p != NIL && prio(e[x].p) < px)
        treap_rotate_up(c, x);
    return false;
}

/* Run x out of its treap: its parent before (NIL: x was the root, and
 * the treap is empty when x had no child). */
static uint32_t treap_remove(LINKS_CTX *c, uint32_t x)
{
    LINKS_RUN *e = LINKS_RUNS(c);
    while (e[x].l != NIL && e[x].r != NIL)
        treap_rotate_up(c, prio(e[x].l) > prio(e[x].r) ? e[x].l : e[x].r);
    uint32_t ch = e[x].l != NIL ? e[x].l : e[x].r, p = e[x].p;
    if (ch != NIL)
        e[ch].p = p;
    if (p == NIL)
        *LINKS_ROOT(c, x) = ch;
    else if (e[p].l == x)
        e[p].l = ch;
    else
        e[p].r = ch;
    return p;
}

/* x's neighbours in the treap's order (NIL: none), by the links. */
static uint32_t treap_prev(const LINKS_CTX *c, uint32_t x)
{
    const LINKS_RUN *e = LINKS_RUNS(c);
    if (e[x].l != NIL) {
        for (x = e[x].l; e[x].r != NIL;)
            x = e[x].r;
        return x;
    }
    while (e[x].p != NIL && e[e[x].p].l == x)
        x = e[x].p;
    return e[x].p;
}

static uint32_t treap_next(const LINKS_CTX *c, uint32_t x)
{
    const LINKS_RUN *e = LINKS_RUNS(c);
    if (e[x].r != NIL) {
        for (x = e[x].r; e[x].l != NIL;)
            x = e[x].l;
        return x;
    }
    while (e[x].p != NIL && e[e[x].p].r == x)
        x = e[x].p;
    return e[x].p;
}

/* Whether x, its key changed, still sorts between its neighbours: then
 * it may stay where it is (a priority does not depend on the key). */
static inline bool treap_in_order(const LINKS_CTX *c, uint32_t x)
{
    uint32_t a, b;
    return ((a = treap_prev(c, x)) == NIL || LINKS_BEFORE(c, a, x)) &&
           ((b = treap_next(c, x)) == NIL || LINKS_BEFORE(c, x, b));
}

#endif
