/*
 * lean: the fit strategies for one stream, as free extents only.  See
 * lean.h.
 *
 * Invariants (lean_check):
 *   extents tile the free bytes of [base, end): sum(size) == seg_size -
 *     alloc_bytes, no two touch (e.end != f.addr), all multiples of G;
 *   the hash holds exactly one key for the start and one for the end
 *   of each extent (its boundaries in granules from the base), each
 *   naming it, and no key twice;
 *   top == the extent ending at `end` when it is pristine, else NONE;
 *   it is in no treap, every other extent in the treap, in key order,
 *   each node's priority >= its children's, p its parent, and (by
 *   address) max == the largest size below it.
 */
#include "sim/lean.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/check.h"
#include "sim/lean_ext.h"

static const struct {
    const char *name;
    pick_t pick;
    bool by_addr;
} forms[] = {
    {"first-fit", PICK_FIRST, true},
    {"next-fit", PICK_NEXT, true},
    {"best-fit", PICK_BEST, false},
    {"worst-fit", PICK_WORST, false},
};

bool lean_supports(const char *strategy)
{
    if (strcmp(strategy, "buddy") == 0 || strcmp(strategy, "caching") == 0)
        return true;
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++)
        if (strcmp(strategy, forms[i].name) == 0)
            return true;
    return false;
}

static uint32_t leftmost_fit(const lean_t *l, uint32_t n, uint64_t need)
{
    const ext_t *e = l->e;
    if (n == NIL || e[n].max < need)
        return NIL;
    for (;;) {
        uint32_t c = e[n].l;
        if (c != NIL && e[c].max >= need)
            n = c;
        else if (e[n].size >= need)
            return n;
        else
            n = e[n].r; /* its max holds need: n's does, and neither n nor the left */
    }
}

/* The same among the extents at or above `from`. */
static uint32_t leftmost_fit_from(const lean_t *l, uint32_t n, uint64_t from, uint64_t need)
{
    const ext_t *e = l->e;
    while (n != NIL && e[n].max >= need) {
        if (e[n].addr < from) {
            n = e[n].r;
            continue;
        }
        uint32_t x = leftmost_fit_from(l, e[n].l, from, need);
        if (x != NIL)
            return x;
        if (e[n].size >= need)
            return n;
        return leftmost_fit(l, e[n].r, need);
    }
    return NIL;
}

/* The least (size, address) with size >= need (by size). */
static uint32_t smallest_fit(const lean_t *l, uint64_t need)
{
    const ext_t *e = l->e;
    if (l->bin_root && need < ((uint64_t)LEAN_BINS << GSHIFT)) {
        uint32_t b = bins_first_from(l->nonempty, LEAN_BINS, (need + G - 1) >> GSHIFT);
        if (b) { /* every binned run is smaller than the main treap's */
            uint32_t n = l->bin_root[b];
            while (e[n].l != NIL)
                n = e[n].l;
            return n;
        }
    }
    uint32_t n = l->root, best = NIL;
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

/* The largest indexed extent's size, 0 when none. */
static uint64_t indexed_largest(const lean_t *l)
{
    const ext_t *e = l->e;
    uint32_t n = l->root;
    if (n == NIL && l->bin_root)
        return (uint64_t)bins_last(l->nonempty, LEAN_BINS) << GSHIFT;
    if (n == NIL)
        return 0;
    if (l->by_addr)
        return e[n].max;
    if (l->pick == PICK_WORST)
        return e[n].size; /* the heap's root */
    while (e[n].r != NIL)
        n = e[n].r;
    return e[n].size;
}

/* ---- extents ------------------------------------------------------------------ */

static int ext_grow(lean_t *l)
{
    uint32_t cap = l->cap ? l->cap * 2 : 1024;
    if (cap <= l->cap || cap >= NIL)
        return -1;
    ext_t *e = realloc(l->e, (size_t)cap * sizeof *e);
    if (!e)
        return -1;
    l->e = e;
    l->cap = cap;
    return 0;
}

/* A slot for a new extent (not yet indexed nor hashed); NIL without memory. */
static uint32_t ext_new(lean_t *l, uint64_t addr, uint64_t size, uint32_t flags)
{
    uint32_t x = l->spare;
    if (x != NIL) {
        l->spare = l->e[x].l;
    } else {
        if (l->ne == l->cap && ext_grow(l))
            return NIL;
        x = l->ne++;
    }
    l->e[x] = (ext_t){.addr = addr, .size = size, .max = size, .l = NIL, .r = NIL, .p = NIL,
                      .flags = flags | EXT_USED};
    l->nexts++;
    return x;
}

static void ext_free(lean_t *l, uint32_t x)
{
    l->e[x].flags = 0;
    l->e[x].l = l->spare;
    l->spare = x;
    l->nexts--;
}


/* Index a new extent: the top, or in the treap. */
static void index_new(lean_t *l, uint32_t x)
{
    if (is_top(l, x))
        l->top = x;
    else
        lean_treap_insert(l, x);
}

static void unindex(lean_t *l, uint32_t x)
{
    if (x == l->top)
        l->top = NIL;
    else
        lean_treap_remove(l, x);
}

/* ---- the device ----------------------------------------------------------------- */

int lean_create(const char *strategy, uint64_t total, lean_t **out, char *err, size_t errlen)
{
    *out = NULL;
    bool buddy = strcmp(strategy, "buddy") == 0;
    if (buddy || strcmp(strategy, "caching") == 0) {
        const char *why = "";
        lean_t *l = calloc(1, sizeof *l);
        if (!l || !(buddy ? (l->buddy = lean_buddy_create(total, &why)) != NULL
                          : (l->caching = lean_caching_create(total, &why)) != NULL)) {
            snprintf(err, errlen, "%s", l ? why : "out of host memory");
            free(l);
            return -1;
        }
        l->ops = strategy_find(strategy);
        l->total = total;
        *out = l;
        return 0;
    }
    size_t f = 0;
    while (f < sizeof forms / sizeof forms[0] && strcmp(strategy, forms[f].name))
        f++;
    uint64_t base = DEVICE_DEFAULT_BASE, size = total & ~(uint64_t)(G - 1);
    if (f == sizeof forms / sizeof forms[0] || !size || base + total < base ||
        size >> GSHIFT >= NIL) {
        snprintf(err, errlen, f == sizeof forms / sizeof forms[0]
                                  ? "no lean form of strategy \"%s\""
                                  : "no lean device of that size for strategy \"%s\"",
                 strategy);
        return -1;
    }
    lean_t *l = calloc(1, sizeof *l);
    if (!l || ends_grow(l, 0)) {
        free(l);
        snprintf(err, errlen, "out of host memory");
        return -1;
    }
    l->ops = strategy_find(strategy);
    l->pick = forms[f].pick;
    l->by_addr = forms[f].by_addr;
    l->total = total;
    l->base = base;
    l->end = base + size;
    l->root = l->top = l->spare = NIL;
    if (l->pick == PICK_BEST) {
        if (!(l->bin_root = malloc(LEAN_BINS * sizeof *l->bin_root))) {
            lean_destroy(l);
            snprintf(err, errlen, "out of host memory");
            return -1;
        }
        memset(l->bin_root, 0xff, LEAN_BINS * sizeof *l->bin_root); /* NIL */
    }
    l->rover = base;
    uint32_t x = ext_new(l, base, size, EXT_PRISTINE);
    if (x == NIL) {
        lean_destroy(l);
        snprintf(err, errlen, "out of host memory");
        return -1;
    }
    ends_put(l, bkey(l, base), x); /* (64 slots) */
    ends_put(l, bkey(l, l->end), x);
    index_new(l, x);
    *out = l;
    return 0;
}

void lean_destroy(lean_t *l)
{
    if (!l)
        return;
    lean_buddy_destroy(l->buddy);
    lean_caching_destroy(l->caching);
    free(l->e);
    free(l->hash);
    free(l->bin_root);
    free(l);
}

const strategy_ops_t *lean_strategy(const lean_t *l) { return l->ops; }
uint64_t lean_extents(const lean_t *l)
{
    if (l->caching)
        return lean_caching_free_runs(l->caching);
    return l->buddy ? lean_buddy_free_blocks(l->buddy) : l->nexts;
}

uint64_t lean_addr(const lean_t *l, uint32_t h)
{
    if (l->caching)
        return lean_caching_addr(l->caching, h);
    return l->buddy ? lean_buddy_addr(l->buddy, h) : l->base + ((uint64_t)h << GSHIFT);
}

void lean_prefetch_free(const lean_t *l, uint32_t h, uint64_t size)
{
    if (l->buddy) {
        lean_buddy_prefetch_free(l->buddy, h);
        return;
    }
    if (l->caching) {
        lean_caching_prefetch_free(l->caching, h, size);
        return;
    }
    uint64_t a = lean_addr(l, h), s = (size + G - 1) & ~(uint64_t)(G - 1);
    __builtin_prefetch(&l->hash[home(l, bkey(l, a))]);
    __builtin_prefetch(&l->hash[home(l, bkey(l, a + s))]);
}

uint64_t lean_reserved(const lean_t *l)
{
    if (l->buddy)
        return lean_buddy_reserved(l->buddy);
    if (l->caching)
        return lean_caching_reserved(l->caching);
    if (l->top != NIL)
        return l->e[l->top].addr - l->base;
    uint32_t x = ends_get(l, bkey(l, l->end)); /* a last run that is not pristine */
    return x != NIL ? l->e[x].addr - l->base : l->end - l->base;
}

static uint64_t largest_free(const lean_t *l)
{
    uint64_t m = indexed_largest(l);
    if (l->top != NIL && l->e[l->top].size > m)
        m = l->e[l->top].size;
    return m;
}

/* The extent the strategy takes for need bytes, or NIL. */
static inline uint32_t pick(const lean_t *l, uint64_t need)
{
    uint32_t x, t = l->top;
    bool top_fits = t != NIL && l->e[t].size >= need;
    switch (l->pick) {
    case PICK_FIRST:
        x = leftmost_fit(l, l->root, need);
        break;
    case PICK_NEXT:
        /* The run that starts at the rover (the rest of the one the last
         * allocation carved, usually) is the lowest at or above it. */
        x = ends_get(l, bkey(l, l->rover));
        if (x != NIL && x != t && l->e[x].addr == l->rover && l->e[x].size >= need)
            break;
        x = leftmost_fit_from(l, l->root, l->rover, need);
        if (x == NIL)
            x = leftmost_fit(l, l->root, need);
        break;
    case PICK_BEST:
        x = smallest_fit(l, need);
        if (top_fits && (x == NIL || l->e[t].size < l->e[x].size))
            return t;
        return x;
    default: /* PICK_WORST: the heap's root, the largest, lowest address among equals */
        x = l->root != NIL && l->e[l->root].size >= need ? l->root : NIL;
        break;
    }
    return x == NIL && top_fits ? t : x;
}

/* The footprint reached a new peak: what fragmentation was then. */
__attribute__((noinline))
static void new_peak(lean_t *l, uint64_t res)
{
    uint64_t seg = l->end - l->base, free_bytes = seg - l->alloc_bytes;
    l->peak_footprint = res;
    l->internal_at_peak = l->alloc_bytes - l->requested;
    l->live_at_peak = l->requested;
    l->free_at_peak = res - l->alloc_bytes;
    l->external_at_peak =
        free_bytes ? 1.0 - (double)largest_free(l) / (double)free_bytes : 0.0;
}

/* Carve [start, start + bytes) out of extent x: its front (the padding
 * to start) and back stay free. */
static int carve(lean_t *l, uint32_t x, uint64_t start, uint64_t bytes)
{
    ext_t *e = &l->e[x];
    uint64_t xaddr = e->addr, xend = xaddr + e->size, aend = start + bytes;
    uint32_t flags = e->flags & EXT_PRISTINE;
    if (start == xaddr) {
        ends_del(l, bkey(l, xaddr));
        if (aend == xend) {
            ends_del(l, bkey(l, xend));
            unindex(l, x);
            ext_free(l, x);
            return 0;
        }
        e->addr = aend;
        e->size = xend - aend;
        lean_changed(l, x, false);
        ends_put(l, bkey(l, aend), x); /* (the hash had room: a key left) */
        return 0;
    }
    /* Room first, so that nothing changes when there is none. */
    if (aend < xend && (l->ne == l->cap && l->spare == NIL) && ext_grow(l))
        return -1;
    if (ends_room(l, 2))
        return -1;
    ends_del(l, bkey(l, xend));
    l->e[x].size = start - xaddr;
    ends_put(l, bkey(l, start), x);
    lean_changed(l, x, false);
    if (aend < xend) {
        uint32_t y = ext_new(l, aend, xend - aend, flags);
        ends_put(l, bkey(l, aend), y);
        ends_put(l, bkey(l, xend), y);
        index_new(l, y);
    }
    return 0;
}

int lean_alloc(lean_t *l, uint64_t size, uint64_t align, uint32_t *h)
{
    if (l->buddy)
        return lean_buddy_alloc(l->buddy, size, align, h);
    if (l->caching)
        return lean_caching_alloc(l->caching, size, align, h);
    if (size - 1 >= l->total || !align || (align & (align - 1)))
        return POOL_EINVAL;
    uint64_t bytes = (size + G - 1) & ~(uint64_t)(G - 1);
    uint64_t need = align <= G ? bytes : bytes + (align - G);
    if (bytes < size || need < bytes)
        return POOL_ENOMEM;
    uint32_t x = pick(l, need);
    if (x == NIL)
        return POOL_ENOMEM;
    uint64_t start = (l->e[x].addr + align - 1) & ~(align - 1);
    if (carve(l, x, start, bytes))
        return POOL_EHOST;
    l->alloc_bytes += bytes;
    l->requested += size;
    l->live_blocks++;
    l->rover = start + bytes;
    uint64_t res = lean_reserved(l);
    if (res > l->peak_footprint)
        new_peak(l, res);
    if (l->requested > l->peak_live)
        l->peak_live = l->requested;
    *h = (uint32_t)((start - l->base) >> GSHIFT);
    CHECK_EXPENSIVE({
        const char *why;
        if (lean_check(l, &why)) {
            fprintf(stderr, "memsim: lean check failed after an alloc: %s\n", why);
            abort();
        }
    });
    return POOL_OK;
}

int lean_free(lean_t *l, uint32_t h, uint64_t size)
{
    if (l->buddy)
        return lean_buddy_free(l->buddy, h, size);
    if (l->caching)
        return lean_caching_free(l->caching, h, size);
    uint64_t a = lean_addr(l, h), s = (size + G - 1) & ~(uint64_t)(G - 1);
    /* Room for the keys and an extent first: a free that cannot be
     * recorded changes nothing. */
    if (ends_room(l, 2) || (l->ne == l->cap && l->spare == NIL && ext_grow(l)))
        return -1;
    l->alloc_bytes -= s;
    l->requested -= size;
    l->live_blocks--;
    uint32_t lo = ends_get(l, bkey(l, a)), hi = ends_get(l, bkey(l, a + s));
    if (lo == NIL && hi == NIL) {
        uint32_t x = ext_new(l, a, s, 0);
        ends_put(l, bkey(l, a), x);
        ends_put(l, bkey(l, a + s), x);
        index_new(l, x);
    } else if (hi == NIL) {
        ends_del(l, bkey(l, a));
        l->e[lo].size += s;
        ends_put(l, bkey(l, a + s), lo);
        lean_changed(l, lo, true);
    } else if (lo == NIL) {
        ends_del(l, bkey(l, a + s));
        l->e[hi].addr = a;
        l->e[hi].size += s;
        ends_put(l, bkey(l, a), hi);
        lean_changed(l, hi, true);
    } else {
        uint64_t hend = l->e[hi].addr + l->e[hi].size;
        l->e[lo].flags |= l->e[hi].flags & EXT_PRISTINE;
        unindex(l, hi);
        ends_del(l, bkey(l, a + s));
        ends_del(l, bkey(l, hend));
        ext_free(l, hi);
        ends_del(l, bkey(l, a));
        l->e[lo].size = hend - l->e[lo].addr;
        ends_put(l, bkey(l, hend), lo);
        lean_changed(l, lo, true);
    }
    CHECK_EXPENSIVE({
        const char *why;
        if (lean_check(l, &why)) {
            fprintf(stderr, "memsim: lean check failed after a free: %s\n", why);
            abort();
        }
    });
    return 0;
}

void lean_metrics(const lean_t *l, device_metrics_t *m)
{
    if (l->buddy) {
        lean_buddy_metrics(l->buddy, m);
        return;
    }
    if (l->caching) {
        lean_caching_metrics(l->caching, m);
        return;
    }
    uint64_t seg = l->end - l->base;
    memset(m, 0, sizeof *m);
    m->total = l->total;
    m->segments = 1;
    m->blocks = l->live_blocks + l->nexts;
    m->live_blocks = l->live_blocks;
    m->live_requested = l->requested;
    m->live_allocated = l->alloc_bytes;
    m->segment_bytes = seg;
    m->reserved = lean_reserved(l);
    m->peak_footprint = l->peak_footprint;
    m->peak_live_requested = l->peak_live;
    m->largest_free = largest_free(l);
    m->internal_fragmentation = l->alloc_bytes - l->requested;
    m->free_bytes = seg - l->alloc_bytes;
    m->free_blocks = l->nexts;
    m->external_fragmentation =
        m->free_bytes ? 1.0 - (double)m->largest_free / (double)m->free_bytes : 0.0;
    m->seed_fragmentation = m->blocks > 1 ? 1.0 - 1.0 / (double)m->blocks : 0.0;
    m->utilization = seg ? (double)l->alloc_bytes / (double)seg : 0.0;
    m->jw_fragmentation =
        l->peak_live ? (double)l->peak_footprint / (double)l->peak_live - 1.0 : 0.0;
    m->internal_at_peak = l->internal_at_peak;
    m->external_at_peak = l->external_at_peak;
    m->live_at_peak = l->live_at_peak;
    m->free_at_peak = l->free_at_peak;
}
