/*
 * lean_check: every invariant of a lean device (sim/lean.h), walked
 * after every operation by the tests (and by CHECKS=2 builds).
 */
#include "sim/lean_ext.h"

/* ---- checks ---------------------------------------------------------------------- */

#define FAIL(msg)     \
    do {              \
        *why = (msg); \
        return -1;    \
    } while (0)

/* Subtree n: order within (lo, hi) (extents), priorities, parents and
 * maxima; its nodes counted into *count. */
static int check_subtree(const lean_t *l, uint32_t bin, uint32_t n, uint32_t parent, uint32_t lo,
                         uint32_t hi, uint64_t *count, const char **why)
{
    if (n == NIL)
        return 0;
    const ext_t *e = l->e;
    if (n >= l->ne || !(e[n].flags & EXT_USED))
        FAIL("the treap holds a slot not in use");
    if (e[n].p != parent)
        FAIL("a treap node's parent link is wrong");
    if (e[n].flags >> BIN_SHIFT != bin || bin_of(l, e[n].size) != bin)
        FAIL("a run is not in the treap of its size's bin");
    if (parent != NIL && prio(n) > prio(parent))
        FAIL("a treap node outranks its parent");
    if ((lo != NIL && !before(l, lo, n)) || (hi != NIL && !before(l, n, hi)))
        FAIL("the treap is out of order");
    if (n == l->top)
        FAIL("the top is in the treap");
    if (++*count > l->nexts)
        FAIL("the treap holds more nodes than there are extents");
    if (check_subtree(l, bin, e[n].l, n, lo, n, count, why) ||
        check_subtree(l, bin, e[n].r, n, n, hi, count, why))
        return -1;
    if (l->by_addr &&
        e[n].max != max3(e[n].size, e[n].l != NIL ? e[e[n].l].max : 0,
                         e[n].r != NIL ? e[e[n].r].max : 0))
        FAIL("a treap node's maximum is wrong");
    return 0;
}

/* Worst fit's heap from n (and n's later siblings): order (no node
 * before its parent), back links; its nodes counted into *count. */
static int check_heap(const lean_t *l, uint32_t n, uint32_t parent, uint64_t *count,
                      const char **why)
{
    const ext_t *e = l->e;
    for (uint32_t prev = parent; n != NIL; prev = n, n = e[n].r) {
        if (n >= l->ne || !(e[n].flags & EXT_USED))
            FAIL("the heap holds a slot not in use");
        if (e[n].p != prev)
            FAIL("a heap node's back link is wrong");
        if (parent != NIL && !heap_before(l, parent, n))
            FAIL("a heap node comes before its parent");
        if (e[n].flags >> BIN_SHIFT)
            FAIL("a heap node notes a bin");
        if (n == l->top)
            FAIL("the top is in the heap");
        if (++*count > l->nexts)
            FAIL("the heap holds more nodes than there are extents");
        if (check_heap(l, e[n].l, n, count, why))
            return -1;
    }
    return 0;
}

/* How many slots hold key (one run boundary: at most one extent's). */
static unsigned keys_in_hash(const lean_t *l, uint32_t key)
{
    uint64_t m = l->hcap - 1;
    unsigned n = 0;
    for (uint64_t i = home(l, key); l->hash[i].x != NIL; i = (i + 1) & m)
        n += l->hash[i].key == key;
    return n;
}

int lean_check(const lean_t *l, const char **why)
{
    const char *dummy;
    if (!why)
        why = &dummy;
    if (l->buddy)
        return lean_buddy_check(l->buddy, why);
    if (l->caching)
        return lean_caching_check(l->caching, why);
    uint64_t in_tree = 0, used = 0, free_bytes = 0;
    if (l->root != NIL && l->e[l->root].p != NIL)
        FAIL("the treap's root has a parent");
    if (l->pick == PICK_WORST) {
        if (l->root != NIL && l->e[l->root].r != NIL)
            FAIL("the heap's root has a sibling");
        if (check_heap(l, l->root, NIL, &in_tree, why))
            return -1;
    } else if (check_subtree(l, 0, l->root, NIL, NIL, NIL, &in_tree, why)) {
        return -1;
    }
    for (uint32_t b = 1; l->bin_root && b < LEAN_BINS; b++) {
        uint32_t r = l->bin_root[b];
        if (!(l->nonempty[b / 64] >> (b % 64) & 1) != (r == NIL))
            FAIL("a bin's bit and its treap disagree");
        if (r != NIL && l->e[r].p != NIL)
            FAIL("a bin's root has a parent");
        if (check_subtree(l, b, r, NIL, NIL, NIL, &in_tree, why))
            return -1;
    }
    if (!l->bin_root && (l->nonempty[0] | l->nonempty[1]))
        FAIL("bins marked where there are none");
    for (uint32_t x = 0; x < l->ne; x++) {
        const ext_t *e = &l->e[x];
        if (!(e->flags & EXT_USED))
            continue;
        used++;
        free_bytes += e->size;
        if (!e->size || (e->addr | e->size) & (G - 1) || e->addr < l->base ||
            e->addr + e->size > l->end)
            FAIL("an extent is empty, unaligned or outside the device");
        if (keys_in_hash(l, bkey(l, e->addr)) > 1 ||
            keys_in_hash(l, bkey(l, e->addr + e->size)) > 1)
            FAIL("two extents touch: they were not merged");
        if (ends_get(l, bkey(l, e->addr)) != x || ends_get(l, bkey(l, e->addr + e->size)) != x)
            FAIL("the hash does not name an extent by its ends");
        if (is_top(l, x) != (x == l->top))
            FAIL("the pristine end of the device is not the top, or the top is not it");
    }
    if (used != l->nexts || in_tree + (l->top != NIL) != used)
        FAIL("the extents, the treap and the top disagree in number");
    if (l->hcount != 2 * used)
        FAIL("the hash holds keys of no extent");
    if (free_bytes != l->end - l->base - l->alloc_bytes)
        FAIL("the free bytes and the allocated bytes do not add up to the device");
    if (l->requested > l->alloc_bytes)
        FAIL("more bytes requested than allocated");
    return 0;
}
