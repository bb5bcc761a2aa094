/*
 * lean_treap: a lean device's index of extents (sim/lean_ext.h): treaps
 * by address with each node's subtree maximum (first and next fit), or
 * by (size, address) (best fit; its small runs in a treap per size);
 * priorities are a hash of the slot.  Worst fit's is a pairing heap,
 * largest first and lowest address among equals, as its device's: the
 * choice is the root.
 */
#include "sim/lean_ext.h"

/* ---- the index's structures (sim/lean_links.h) over extents ------------------------ */

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

#define LINKS_CTX lean_t
#define LINKS_RUN ext_t
#define LINKS_RUNS(l) ((l)->e)
#define LINKS_HEAP_BEFORE(l, a, b) heap_before(l, a, b)
#define LINKS_BEFORE(l, a, b) before(l, a, b)
#define LINKS_ROOT(l, x) root_of(l, x)
/* By address, each node's subtree maximum: p's from its new children,
 * then x's from p's; and raised on the way down to an insert's place. */
#define LINKS_ROTATED(l, p, x)                                                                     \
    do {                                                                                           \
        if ((l)->by_addr) {                                                                        \
            pull(l, p);                                                                            \
            pull(l, x);                                                                            \
        }                                                                                          \
    } while (0)
#define LINKS_PASSED(l, n, x)                                                                      \
    do {                                                                                           \
        if ((l)->by_addr && (l)->e[n].max < (l)->e[x].size)                                        \
            (l)->e[n].max = (l)->e[x].size;                                                        \
    } while (0)
#include "sim/lean_links.h"

/* ---- worst fit's pairing heap ------------------------------------------------------ */

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

/* ---- treaps ----------------------------------------------------------------------- */

void lean_treap_insert(lean_t *l, uint32_t x)
{
    if (l->pick == PICK_WORST) {
        heap_insert(l, x);
        return;
    }
    ext_t *e = l->e;
    e[x].max = e[x].size;
    uint32_t bin = bin_of(l, e[x].size);
    e[x].flags = (e[x].flags & ((1u << BIN_SHIFT) - 1)) | bin << BIN_SHIFT;
    if (treap_insert(l, root_of(l, x), x) && bin)
        l->nonempty[bin / 64] |= 1ull << (bin % 64);
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
    uint32_t p = treap_remove(l, x);
    if (p == NIL) {
        uint32_t bin = l->e[x].flags >> BIN_SHIFT;
        if (bin && l->e[x].l == NIL && l->e[x].r == NIL) /* the root, alone (links kept) */
            l->nonempty[bin / 64] &= ~(1ull << (bin % 64));
    } else if (l->by_addr) {
        fix_up(l, p);
    }
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
            l->e[x].r = l->e[x].p = NIL; /* a root, maybe */
            l->root = heap_meld(l, l->root, x);
        } else {
            heap_remove(l, x);
            heap_insert(l, x);
        }
    } else {
        if (bin_of(l, l->e[x].size) == l->e[x].flags >> BIN_SHIFT && treap_in_order(l, x))
            return;
        lean_treap_remove(l, x);
        lean_treap_insert(l, x);
    }
}
