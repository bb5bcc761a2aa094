/*
 * lean_caching_check: every invariant of the lean caching pool
 * (sim/lean_caching.h), walked after every operation by the tests (and
 * by CHECKS=1 builds).
 */
#include "sim/lean_caching_ext.h"

/* ---- checks ------------------------------------------------------------------------------ */

#define FAIL(msg)     \
    do {              \
        *why = (msg); \
        return -1;    \
    } while (0)

/* Run n's place: in use, in pool kind's index `bin`; counted into
 * *count. */
static int check_node(const lean_caching_t *c, uint32_t kind, uint32_t bin, uint32_t n,
                      uint64_t *count, const char **why)
{
    const cext_t *e = c->e;
    if (n >= c->ne || e[n].seg == NIL)
        FAIL("an index holds a slot not in use");
    if (e[n].kind != kind || e[n].bin != bin || bin_of(e[n].size) != bin)
        FAIL("a run is not in the index of its pool and size");
    if (++*count > c->nexts)
        FAIL("the index holds more nodes than there are runs (a cycle?)");
    return 0;
}

/* Subtree n of pool kind's treap: order within (lo, hi), priorities,
 * parents. */
static int check_subtree(const lean_caching_t *c, uint32_t kind, uint32_t n, uint32_t parent,
                         uint32_t lo, uint32_t hi, uint64_t *count, const char **why)
{
    if (n == NIL)
        return 0;
    const cext_t *e = c->e;
    if (check_node(c, kind, 0, n, count, why))
        return -1;
    if (e[n].p != parent)
        FAIL("a treap node's parent link is wrong");
    if (parent != NIL && prio(n) > prio(parent))
        FAIL("a treap node outranks its parent");
    if ((lo != NIL && !before(c, lo, n)) || (hi != NIL && !before(c, n, hi)))
        FAIL("a treap is out of order");
    return check_subtree(c, kind, e[n].l, n, lo, n, count, why) ||
           check_subtree(c, kind, e[n].r, n, n, hi, count, why);
}

/* Heap n of bin `bin` (its siblings after it too): each child above its
 * parent's address, links back. */
static int check_heap(const lean_caching_t *c, uint32_t kind, uint32_t bin, uint32_t n,
                      uint32_t parent, uint64_t *count, const char **why)
{
    const cext_t *e = c->e;
    for (uint32_t prev = parent; n != NIL; prev = n, n = e[n].r) {
        if (check_node(c, kind, bin, n, count, why))
            return -1;
        if (e[n].p != prev)
            FAIL("a heap node's back link is wrong");
        if (parent != NIL && e[n].addr <= e[parent].addr)
            FAIL("a heap node is below its parent");
        if (check_heap(c, kind, bin, e[n].l, n, count, why))
            return -1;
    }
    return 0;
}

int lean_caching_check(const lean_caching_t *c, const char **why)
{
    uint64_t keys = 0;
    for (uint64_t i = 0; i < c->hcap; i++)
        keys += c->hash[i].x != NIL;
    if (keys != c->hcount || c->hcount * 4 > c->hcap * 3)
        FAIL("the map's count is wrong, or it is more than 3/4 full");
    uint64_t indexed = 0;
    for (uint32_t k = 0; k < KINDS; k++) {
        const pool_ix_t *ix = &c->pool[k];
        if (check_subtree(c, k, ix->root, NIL, NIL, NIL, &indexed, why))
            return -1;
        for (uint32_t b = 1; b < BINS; b++) {
            uint32_t r = ix->bin_root[b];
            if ((r != NIL) != !!(ix->nonempty[b / 64] & (1ull << (b % 64))))
                FAIL("a non-empty mask disagrees with its bin");
            if (r != NIL && c->e[r].r != NIL)
                FAIL("a bin's root has a sibling");
            if (check_heap(c, k, b, r, NIL, &indexed, why))
                return -1;
        }
    }
    if (indexed != c->nexts || c->hcount != 2 * c->nexts)
        FAIL("the runs, the treaps and the map disagree");
    /* Segments, by address. */
    uint64_t nsegs = 0, seg_bytes = 0, nblocks = 0, prev_end = c->base;
    uint32_t prev = NIL;
    for (uint32_t i = c->sfirst; i != NIL; prev = i, i = c->s[i].next) {
        const cseg_t *s = &c->s[i];
        if (++nsegs > c->nsegs)
            FAIL("more segments listed than counted (a cycle?)");
        if (s->prev != prev || !s->nblocks)
            FAIL("a segment's links are wrong");
        if (s->addr < prev_end || (s->addr & (ROUND_LARGE - 1)) || !s->size ||
            (s->size & (ROUND_LARGE - 1)))
            FAIL("segments overlap or are not aligned");
        if (s->kind == KIND_SMALL && s->size != CACHING_SMALL_SEGMENT)
            FAIL("small-pool segment is not 2 MiB");
        for (uint64_t f = (s->addr - c->base) >> FRAME_SHIFT, n = s->size >> FRAME_SHIFT; n--;
             f++)
            if (f >= c->nframes || c->frame[f] != i)
                FAIL("a segment's frame does not name it");
        prev_end = s->addr + s->size;
        seg_bytes += s->size;
        nblocks += s->nblocks;
    }
    if (nsegs != c->nsegs || seg_bytes != c->seg_bytes || nblocks != c->nblocks)
        FAIL("the segments do not sum to the totals");
    if (c->nblocks != c->live_blocks + c->nexts)
        FAIL("blocks are not the live ones and the free runs");
    /* Runs. */
    uint64_t free_bytes = 0;
    for (uint32_t x = 0; x < c->ne; x++) {
        const cext_t *e = &c->e[x];
        if (e->seg == NIL)
            continue;
        const cseg_t *s = &c->s[e->seg];
        if (!s->nblocks || e->kind != s->kind || e->addr < s->addr || !e->size ||
            e->addr + e->size > s->addr + s->size || ((e->addr | e->size) & (U - 1)))
            FAIL("a run lies outside its segment");
        if (ends_get(c, start_key(c, e->addr)) != x ||
            ends_get(c, end_key(c, e->addr + e->size)) != x)
            FAIL("a run is not in the map under its ends");
        if (e->addr + e->size < s->addr + s->size &&
            ends_get(c, start_key(c, e->addr + e->size)) != NIL)
            FAIL("two free runs of a segment touch");
        free_bytes += e->size;
    }
    if (free_bytes != c->seg_bytes - c->alloc_bytes || c->alloc_bytes < c->requested)
        FAIL("the free and allocated bytes do not tile the segments");
    return 0;
}
