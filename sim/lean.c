/*
 * lean: the fit strategies for one stream, as free extents only.  See
 * lean.h.
 *
 * Invariants (lean_check):
 *   extents tile the free bytes of [base, end): sum(size) == seg_size -
 *     alloc_bytes, no two touch (e.end != f.addr), all multiples of G;
 *   the hash holds exactly one start key (addr) and one end key
 *   ((addr + size) | 1) per extent, each naming it;
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

#define NIL LEAN_NONE
#define G DEVICE_DEFAULT_GRANULE
#define GSHIFT 4
_Static_assert(G == 1u << GSHIFT, "the granule is 16 bytes");

typedef enum pick_e { PICK_FIRST, PICK_NEXT, PICK_BEST, PICK_WORST } pick_t;

enum { EXT_PRISTINE = 1, EXT_USED = 2 };

/* Best fit's size bins: a run of fewer than LEAN_BINS granules sits in
 * a treap of its own size (by address), the rest in the main treap, as
 * the device keeps its small free blocks in bins by exact size.  The
 * smallest run that fits is then a bit scan and the leftmost node of a
 * small treap, not a descent through all the runs.  An indexed run
 * notes its bin in its flags (BIN_SHIFT up; 0: the main treap). */
#define LEAN_BINS 512
#define BIN_SHIFT 8

/* A free run of the device. */
typedef struct ext_s {
    uint64_t addr, size;
    uint64_t max;     /* by address: the largest size in this subtree */
    uint32_t l, r, p; /* treap links (NIL: none); a spare slot links through l */
    uint32_t flags;   /* EXT_PRISTINE: never allocated, as the device's stream ANY */
} ext_t;

/* A hash slot: an extent's start (addr) or end ((addr + size) | 1). */
typedef struct slot_s {
    uint64_t key; /* 0: empty (no address is 0: the base is above it) */
    uint32_t ext;
    uint32_t pad;
} slot_t;

struct lean_s {
    const strategy_ops_t *ops;
    pick_t pick;
    bool by_addr;       /* the treap's order: address (first, next), or (size, address) */
    uint64_t total;     /* the device's capacity */
    uint64_t base, end; /* the one segment: [base, end) */
    ext_t *e;           /* extents, by slot */
    uint32_t ne, cap;   /* slots made, room */
    uint32_t spare;     /* recycled slots, linked through l */
    uint64_t nexts;     /* extents in use */
    uint32_t root, top;
    uint32_t *bin_root; /* best fit: bin_root[g], the treap of runs of g granules
                           (1 <= g < LEAN_BINS); NULL for the others */
    uint64_t nonempty[LEAN_BINS / 64]; /* bit g: bin_root[g] != NIL */
    slot_t *hash;
    uint64_t hcap, hcount;
    unsigned hshift;    /* 64 - log2(hcap) */
    uint64_t rover;     /* next fit: where the last allocation ended */
    uint64_t alloc_bytes, requested, live_blocks;
    uint64_t peak_footprint, peak_live, internal_at_peak, live_at_peak, free_at_peak;
    double external_at_peak;
};

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
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++)
        if (strcmp(strategy, forms[i].name) == 0)
            return true;
    return false;
}

/* ---- the hash of extents' ends ------------------------------------------------ */

#define FIB 0x9E3779B97F4A7C15ull

static inline uint64_t home(const lean_t *l, uint64_t key) { return (key * FIB) >> l->hshift; }

static inline uint32_t hash_get(const lean_t *l, uint64_t key)
{
    uint64_t m = l->hcap - 1;
    for (uint64_t i = home(l, key);; i = (i + 1) & m) {
        const slot_t *s = &l->hash[i];
        if (s->key == key)
            return s->ext;
        if (!s->key)
            return NIL;
    }
}

static int hash_grow(lean_t *l);

/* key -> ext; key is not in the hash.  0, or -1 without memory. */
static inline int hash_put(lean_t *l, uint64_t key, uint32_t ext)
{
    if ((l->hcount + 1) * 2 > l->hcap && hash_grow(l))
        return -1;
    uint64_t m = l->hcap - 1, i = home(l, key);
    while (l->hash[i].key)
        i = (i + 1) & m;
    l->hash[i] = (slot_t){key, ext, 0};
    l->hcount++;
    return 0;
}

/* Remove key (present), shifting back the run after it. */
static inline void hash_del(lean_t *l, uint64_t key)
{
    uint64_t m = l->hcap - 1, i = home(l, key);
    while (l->hash[i].key != key)
        i = (i + 1) & m;
    for (uint64_t j = (i + 1) & m;; j = (j + 1) & m) {
        uint64_t k = l->hash[j].key;
        if (!k)
            break;
        uint64_t h = home(l, k);
        /* j's slot may move to the hole at i when its home is not in (i, j]. */
        if (((j - h) & m) >= ((j - i) & m)) {
            l->hash[i] = l->hash[j];
            i = j;
        }
    }
    l->hash[i].key = 0;
    l->hcount--;
}

static int hash_grow(lean_t *l)
{
    uint64_t cap = l->hcap ? l->hcap * 2 : 64;
    slot_t *old = l->hash, *nw = calloc(cap, sizeof *nw);
    if (!nw)
        return -1;
    uint64_t ocap = l->hcap;
    l->hash = nw;
    l->hcap = cap;
    l->hshift = (unsigned)(64 - __builtin_ctzll(cap));
    l->hcount = 0;
    for (uint64_t i = 0; i < ocap; i++)
        if (old[i].key) {
            uint64_t m = cap - 1, j = home(l, old[i].key);
            while (nw[j].key)
                j = (j + 1) & m;
            nw[j] = old[i];
            l->hcount++;
        }
    free(old);
    return 0;
}

static inline uint64_t start_key(uint64_t addr) { return addr; }
static inline uint64_t end_key(uint64_t end) { return end | 1; }

/* ---- the treap ---------------------------------------------------------------- */

/* A slot's priority: a hash of its number (murmur3's finalizer). */
static inline uint32_t prio(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x85ebca6bu;
    x ^= x >> 13;
    x *= 0xc2b2ae35u;
    x ^= x >> 16;
    return x;
}

/* The bin a run of size bytes goes in: 0 (the main treap), or its
 * granules when best fit bins it. */
static inline uint32_t bin_of(const lean_t *l, uint64_t size)
{
    return l->bin_root && size < ((uint64_t)LEAN_BINS << GSHIFT) ? (uint32_t)(size >> GSHIFT) : 0;
}

/* The root of the treap indexed run x is in. */
static inline uint32_t *root_of(lean_t *l, uint32_t x)
{
    uint32_t b = l->e[x].flags >> BIN_SHIFT;
    return b ? &l->bin_root[b] : &l->root;
}

/* Whether a sorts before b. */
static inline bool before(const lean_t *l, uint32_t a, uint32_t b)
{
    const ext_t *x = &l->e[a], *y = &l->e[b];
    if (l->by_addr || x->size == y->size)
        return x->addr < y->addr;
    return x->size < y->size;
}

static inline uint64_t max3(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t m = a > b ? a : b;
    return m > c ? m : c;
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

static void treap_insert(lean_t *l, uint32_t x)
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

static void treap_remove(lean_t *l, uint32_t x)
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

/* The lowest-addressed extent of n's subtree with need bytes (by address). */
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

/* The lowest bin at or above g with runs, 0 when none. */
static uint32_t bin_from(const lean_t *l, uint64_t g)
{
    for (uint64_t w = g / 64; w < LEAN_BINS / 64; w++) {
        uint64_t m = l->nonempty[w] & (w == g / 64 ? ~0ull << (g % 64) : ~0ull);
        if (m)
            return (uint32_t)(w * 64 + (uint64_t)__builtin_ctzll(m));
    }
    return 0;
}

/* The least (size, address) with size >= need (by size). */
static uint32_t smallest_fit(const lean_t *l, uint64_t need)
{
    const ext_t *e = l->e;
    if (l->bin_root && need < ((uint64_t)LEAN_BINS << GSHIFT)) {
        uint32_t b = bin_from(l, (need + G - 1) >> GSHIFT);
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
    if (n == NIL && l->bin_root) {
        for (size_t w = LEAN_BINS / 64; w-- > 0;)
            if (l->nonempty[w])
                return (uint64_t)(w * 64 + 63 - (uint64_t)__builtin_clzll(l->nonempty[w])) << GSHIFT;
        return 0;
    }
    if (n == NIL)
        return 0;
    if (l->by_addr)
        return e[n].max;
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

/* Whether extent x is the top: it ends the device and is pristine. */
static inline bool is_top(const lean_t *l, uint32_t x)
{
    const ext_t *e = &l->e[x];
    return e->addr + e->size == l->end && (e->flags & EXT_PRISTINE);
}

/* Index a new extent: the top, or in the treap. */
static void index_new(lean_t *l, uint32_t x)
{
    if (is_top(l, x))
        l->top = x;
    else
        treap_insert(l, x);
}

static void unindex(lean_t *l, uint32_t x)
{
    if (x == l->top)
        l->top = NIL;
    else
        treap_remove(l, x);
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
static void changed(lean_t *l, uint32_t x)
{
    bool was = x == l->top, now = is_top(l, x);
    if (was) {
        if (!now) {
            l->top = NIL;
            treap_insert(l, x);
        }
        return;
    }
    if (now) {
        treap_remove(l, x);
        l->top = x;
    } else if (l->by_addr) {
        fix_up(l, x);
    } else {
        uint32_t a = NIL, b = NIL;
        if (bin_of(l, l->e[x].size) == l->e[x].flags >> BIN_SHIFT &&
            ((a = in_order_prev(l, x)) == NIL || before(l, a, x)) &&
            ((b = in_order_next(l, x)) == NIL || before(l, x, b)))
            return;
        treap_remove(l, x);
        treap_insert(l, x);
    }
}

/* ---- the device ----------------------------------------------------------------- */

int lean_create(const char *strategy, uint64_t total, lean_t **out, char *err, size_t errlen)
{
    *out = NULL;
    size_t f = 0;
    while (f < sizeof forms / sizeof forms[0] && strcmp(strategy, forms[f].name))
        f++;
    uint64_t base = DEVICE_DEFAULT_BASE, size = total & ~(uint64_t)(G - 1);
    if (f == sizeof forms / sizeof forms[0] || !size || base + total < base ||
        size >> GSHIFT > NIL) {
        snprintf(err, errlen, f == sizeof forms / sizeof forms[0]
                                  ? "no lean form of strategy \"%s\""
                                  : "no lean device of that size for strategy \"%s\"",
                 strategy);
        return -1;
    }
    lean_t *l = calloc(1, sizeof *l);
    if (!l || hash_grow(l)) {
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
    if (x == NIL || hash_put(l, start_key(base), x) || hash_put(l, end_key(l->end), x)) {
        lean_destroy(l);
        snprintf(err, errlen, "out of host memory");
        return -1;
    }
    index_new(l, x);
    *out = l;
    return 0;
}

void lean_destroy(lean_t *l)
{
    if (!l)
        return;
    free(l->e);
    free(l->hash);
    free(l->bin_root);
    free(l);
}

const strategy_ops_t *lean_strategy(const lean_t *l) { return l->ops; }
uint64_t lean_extents(const lean_t *l) { return l->nexts; }
uint64_t lean_addr(const lean_t *l, uint32_t h) { return l->base + ((uint64_t)h << GSHIFT); }

void lean_prefetch_free(const lean_t *l, uint32_t h, uint64_t size)
{
    uint64_t a = lean_addr(l, h), s = (size + G - 1) & ~(uint64_t)(G - 1);
    __builtin_prefetch(&l->hash[home(l, end_key(a))]);
    __builtin_prefetch(&l->hash[home(l, start_key(a + s))]);
}

uint64_t lean_reserved(const lean_t *l)
{
    if (l->top != NIL)
        return l->e[l->top].addr - l->base;
    uint32_t x = hash_get(l, end_key(l->end)); /* a last run that is not pristine */
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
        x = leftmost_fit_from(l, l->root, l->rover, need);
        if (x == NIL)
            x = leftmost_fit(l, l->root, need);
        break;
    case PICK_BEST:
        x = smallest_fit(l, need);
        if (top_fits && (x == NIL || l->e[t].size < l->e[x].size))
            return t;
        return x;
    default: { /* PICK_WORST */
        uint64_t m = indexed_largest(l);
        x = m >= need && m ? smallest_fit(l, m) : NIL;
        break;
    }
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
        hash_del(l, start_key(xaddr));
        if (aend == xend) {
            hash_del(l, end_key(xend));
            unindex(l, x);
            ext_free(l, x);
            return 0;
        }
        e->addr = aend;
        e->size = xend - aend;
        changed(l, x);
        return hash_put(l, start_key(aend), x); /* (the hash had room: a key left) */
    }
    /* Room first, so that nothing changes when there is none. */
    if (aend < xend && (l->ne == l->cap && l->spare == NIL) && ext_grow(l))
        return -1;
    if ((l->hcount + 2) * 2 > l->hcap && hash_grow(l))
        return -1;
    hash_del(l, end_key(xend));
    l->e[x].size = start - xaddr;
    hash_put(l, end_key(start), x);
    changed(l, x);
    if (aend < xend) {
        uint32_t y = ext_new(l, aend, xend - aend, flags);
        hash_put(l, start_key(aend), y);
        hash_put(l, end_key(xend), y);
        index_new(l, y);
    }
    return 0;
}

int lean_alloc(lean_t *l, uint64_t size, uint64_t align, uint32_t *h)
{
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
    uint64_t a = lean_addr(l, h), s = (size + G - 1) & ~(uint64_t)(G - 1);
    /* Room for the keys and an extent first: a free that cannot be
     * recorded changes nothing. */
    if (((l->hcount + 2) * 2 > l->hcap && hash_grow(l)) ||
        (l->ne == l->cap && l->spare == NIL && ext_grow(l)))
        return -1;
    l->alloc_bytes -= s;
    l->requested -= size;
    l->live_blocks--;
    uint32_t lo = hash_get(l, end_key(a)), hi = hash_get(l, start_key(a + s));
    if (lo == NIL && hi == NIL) {
        uint32_t x = ext_new(l, a, s, 0);
        hash_put(l, start_key(a), x);
        hash_put(l, end_key(a + s), x);
        index_new(l, x);
    } else if (hi == NIL) {
        hash_del(l, end_key(a));
        l->e[lo].size += s;
        hash_put(l, end_key(a + s), lo);
        changed(l, lo);
    } else if (lo == NIL) {
        hash_del(l, start_key(a + s));
        l->e[hi].addr = a;
        l->e[hi].size += s;
        hash_put(l, start_key(a), hi);
        changed(l, hi);
    } else {
        uint64_t hend = l->e[hi].addr + l->e[hi].size;
        l->e[lo].flags |= l->e[hi].flags & EXT_PRISTINE;
        unindex(l, hi);
        hash_del(l, start_key(a + s));
        hash_del(l, end_key(hend));
        ext_free(l, hi);
        hash_del(l, end_key(a));
        l->e[lo].size = hend - l->e[lo].addr;
        hash_put(l, end_key(hend), lo);
        changed(l, lo);
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

int lean_check(const lean_t *l, const char **why)
{
    const char *dummy;
    if (!why)
        why = &dummy;
    uint64_t in_tree = 0, used = 0, free_bytes = 0;
    if (l->root != NIL && l->e[l->root].p != NIL)
        FAIL("the treap's root has a parent");
    if (check_subtree(l, 0, l->root, NIL, NIL, NIL, &in_tree, why))
        return -1;
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
        if (hash_get(l, start_key(e->addr)) != x || hash_get(l, end_key(e->addr + e->size)) != x)
            FAIL("the hash does not name an extent by its ends");
        if (hash_get(l, end_key(e->addr)) != NIL)
            FAIL("two extents touch: they were not merged");
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
