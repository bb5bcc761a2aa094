/*
 * lean_caching: the caching pool for one stream, as free runs and
 * segments only.  See lean_caching.h; the device's form is
 * sim/strategy_caching.c.
 *
 * Invariants (lean_caching_check):
 *   every run in use lies in one live segment of its kind, is in its
 *   pool's index: the heap of its size's bin (no child below its
 *   parent's address, back links), or the treap (order by (size,
 *   address), priorities, parents); and in the map under its start and
 *   its end;
 *   the map holds nothing else; no two runs of a segment touch;
 *   nonempty[k] bit b <=> bin_root[b] != NIL;
 *   segments: listed by address without overlap, 2 MiB aligned, each
 *   frame of each names it; sum(size) == seg_bytes, sum(nblocks) ==
 *   nblocks == live_blocks + runs; free bytes == seg_bytes -
 *   alloc_bytes.
 */
#include "sim/lean_caching.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/check.h"

#define MB (1024ull * 1024ull)
#define U 512ull                 /* the pool's rounding (kMinBlockSize) */
#define USHIFT 9
#define SMALL_SIZE (1 * MB)      /* largest small-pool block request */
#define SMALL_SEGMENT (2 * MB)
#define LARGE_SEGMENT (20 * MB)
#define MIN_LARGE_ALLOC (10 * MB)
#define ROUND_LARGE (2 * MB)     /* segments' alignment and large rounding */
#define FRAME_SHIFT 21           /* a frame: 2 MiB, ROUND_LARGE */
#define VIRTUAL_SPAN (1ull << 46)
#define BINS 512                 /* runs of 1..BINS-1 units: a treap per size */
#define NIL UINT32_MAX
#define FAR (1u << 31)           /* handles from here: a slot of far[] */

_Static_assert(U == 1ull << USHIFT && ROUND_LARGE == 1ull << FRAME_SHIFT, "units");

enum { KIND_SMALL, KIND_LARGE, KINDS };

/* A free run of a segment. */
typedef struct cext_s {
    uint64_t addr, size;
    uint32_t l, r, p; /* treap links (NIL: none); a spare slot links through l */
    uint32_t seg;     /* its segment's slot; NIL: a spare slot */
    uint32_t bin;     /* its treap: bin_root[bin] of its pool, 0: the pool's main one */
    uint32_t kind;    /* its pool */
} cext_t;

/* A segment: [addr, addr + size), tiled by its blocks. */
typedef struct cseg_s {
    uint64_t addr, size;
    uint64_t nblocks; /* blocks tiling it, free or allocated; 0: a spare slot */
    uint32_t prev, next; /* by address (NIL: none); a spare links through next */
    uint32_t kind;
} cseg_t;

/* A slot of the map of run ends: a start's or an end's key, and its run
 * (NIL: an empty slot). */
typedef struct __attribute__((packed)) cslot_s {
    uint64_t key;
    uint32_t x;
} cslot_t;

/* A block a direct handle cannot name. */
typedef struct far_s {
    uint64_t addr, size; /* a spare slot: size is the next spare */
} far_t;

typedef struct pool_ix_s {
    uint32_t root;            /* runs of BINS units and more, by (size, address) */
    uint32_t bin_root[BINS];  /* runs of b units, by address */
    uint64_t nonempty[BINS / 64];
} pool_ix_t;

struct lean_caching_s {
    uint64_t total, base;     /* capacity in reserved bytes; where segments go */
    cext_t *e;                /* runs, by slot */
    uint32_t ne, cap, spare;  /* slots made, room, recycled (through l) */
    uint64_t nexts;           /* runs in use */
    pool_ix_t pool[KINDS];
    cslot_t *hash;            /* the map of run ends: start_key and end_key -> run */
    uint64_t hcap, hcount;    /* slots (a power of two), in use (at most 3/4) */
    unsigned hshift;          /* 64 - log2(hcap) */
    uint32_t nspare;          /* runs' slots on the spare list */
    cseg_t *s;                /* segments, by slot */
    uint32_t ns, scap, sspare, sfirst; /* made, room, recycled, lowest addressed */
    uint64_t nsegs;
    uint32_t *frame;          /* (addr - base) >> FRAME_SHIFT -> segment slot, or NIL */
    uint64_t nframes;
    far_t *far;
    uint32_t nfar, farcap, farspare;
    uint64_t seg_bytes, alloc_bytes, requested, live_blocks, nblocks;
    uint64_t peak_footprint, peak_live, internal_at_peak, live_at_peak, free_at_peak;
    double external_at_peak;
};

/* ---- keys and handles ------------------------------------------------------------- */

/* A run boundary's keys: a start and an end at one address differ (two
 * segments may touch). */
static inline uint64_t start_key(const lean_caching_t *c, uint64_t addr)
{
    return ((addr - c->base) >> USHIFT) << 1;
}

static inline uint64_t end_key(const lean_caching_t *c, uint64_t addr)
{
    return start_key(c, addr) | 1;
}

/* The map: open addressing, linear probes from a Fibonacci hash,
 * backward-shift deletion; doubled before it passes 3/4, never shrunk
 * (a run's two keys come and go at every operation). */
static inline uint64_t home(const lean_caching_t *c, uint64_t key)
{
    return (key * 0x9E3779B97F4A7C15ull) >> c->hshift;
}

static inline uint32_t run_at(const lean_caching_t *c, uint64_t key)
{
    uint64_t m = c->hcap - 1;
    for (uint64_t i = home(c, key);; i = (i + 1) & m) {
        const cslot_t *t = &c->hash[i];
        if (t->x == NIL || t->key == key)
            return t->x;
    }
}

/* key -> x, key absent (room made). */
static inline void key_put(lean_caching_t *c, uint64_t key, uint32_t x)
{
    uint64_t m = c->hcap - 1, i = home(c, key);
    while (c->hash[i].x != NIL)
        i = (i + 1) & m;
    c->hash[i].key = key;
    c->hash[i].x = x;
    c->hcount++;
}

/* Remove key (present), shifting back the probe run after it. */
static inline void key_del(lean_caching_t *c, uint64_t key)
{
    uint64_t m = c->hcap - 1, i = home(c, key);
    while (c->hash[i].key != key || c->hash[i].x == NIL)
        i = (i + 1) & m;
    for (uint64_t j = (i + 1) & m; c->hash[j].x != NIL; j = (j + 1) & m) {
        uint64_t h = home(c, c->hash[j].key);
        if (((j - h) & m) >= ((j - i) & m)) {
            c->hash[i] = c->hash[j];
            i = j;
        }
    }
    c->hash[i].x = NIL;
    c->hcount--;
}

__attribute__((noinline))
static int hash_grow(lean_caching_t *c, uint64_t n)
{
    uint64_t cap = c->hcap ? c->hcap : 64;
    while ((c->hcount + n) * 4 > cap * 3)
        cap *= 2;
    cslot_t *old = c->hash, *nw = malloc(cap * sizeof *nw);
    if (!nw)
        return -1;
    for (uint64_t i = 0; i < cap; i++)
        nw[i].x = NIL;
    uint64_t ocap = c->hcap;
    c->hash = nw;
    c->hcap = cap;
    c->hshift = (unsigned)(64 - __builtin_ctzll(cap));
    c->hcount = 0;
    for (uint64_t i = 0; i < ocap; i++)
        if (old[i].x != NIL)
            key_put(c, old[i].key, old[i].x);
    free(old);
    return 0;
}

/* Room for n more keys without growing.  0 or -1. */
static inline int hash_room(lean_caching_t *c, uint64_t n)
{
    return (c->hcount + n) * 4 > c->hcap * 3 ? hash_grow(c, n) : 0;
}

static inline uint64_t round_up(uint64_t size) { return (size + U - 1) & ~(U - 1); }

/* ---- the treaps ------------------------------------------------------------------- */

static inline uint32_t prio(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x85ebca6bu;
    x ^= x >> 13;
    x *= 0xc2b2ae35u;
    x ^= x >> 16;
    return x;
}

static inline uint32_t bin_of(uint64_t size)
{
    uint64_t u = size >> USHIFT;
    return u < BINS ? (uint32_t)u : 0;
}

static inline bool before(const lean_caching_t *c, uint32_t a, uint32_t b)
{
    const cext_t *x = &c->e[a], *y = &c->e[b];
    return x->size != y->size ? x->size < y->size : x->addr < y->addr;
}

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
static void index_insert(lean_caching_t *c, uint32_t x)
{
    c->e[x].bin = bin_of(c->e[x].size);
    if (c->e[x].bin)
        bin_insert(c, x);
    else
        treap_insert(c, x);
}

static void index_remove(lean_caching_t *c, uint32_t x)
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
static void rekey(lean_caching_t *c, uint32_t x)
{
    uint32_t a, b;
    if (!c->e[x].bin && !bin_of(c->e[x].size) &&
        ((a = in_order_prev(c, x)) == NIL || before(c, a, x)) &&
        ((b = in_order_next(c, x)) == NIL || before(c, x, b)))
        return;
    index_remove(c, x);
    index_insert(c, x);
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
static uint32_t smallest_fit(const lean_caching_t *c, int kind, uint64_t need)
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

static uint64_t largest_free(const lean_caching_t *c)
{
    uint64_t s = pool_largest(c, KIND_SMALL), l = pool_largest(c, KIND_LARGE);
    return s > l ? s : l;
}

/* ---- runs, segments, far slots ------------------------------------------------------ */

__attribute__((noinline))
static int ext_grow(lean_caching_t *c)
{
    uint32_t cap = c->cap ? c->cap * 2 : 1024;
    if (cap <= c->cap || cap >= NIL)
        return -1;
    cext_t *e = realloc(c->e, (size_t)cap * sizeof *e);
    if (!e)
        return -1;
    c->e = e;
    c->cap = cap;
    return 0;
}

/* Room for n more runs (n <= 1024) without failing.  0 or -1. */
static inline int ext_room(lean_caching_t *c, uint32_t n)
{
    return c->cap - c->ne + c->nspare >= n ? 0 : ext_grow(c);
}

/* A new run (room made), in its pool's index and the map. */
static uint32_t ext_new(lean_caching_t *c, uint64_t addr, uint64_t size, uint32_t seg)
{
    uint32_t x = c->spare;
    if (x != NIL) {
        c->spare = c->e[x].l;
        c->nspare--;
    } else {
        x = c->ne++;
    }
    c->e[x] = (cext_t){.addr = addr, .size = size, .seg = seg, .kind = c->s[seg].kind};
    c->nexts++;
    key_put(c, start_key(c, addr), x);
    key_put(c, end_key(c, addr + size), x);
    index_insert(c, x);
    return x;
}

/* Run x out of the index and the map, its slot recycled. */
static void ext_drop(lean_caching_t *c, uint32_t x)
{
    cext_t *e = &c->e[x];
    index_remove(c, x);
    key_del(c, start_key(c, e->addr));
    key_del(c, end_key(c, e->addr + e->size));
    e->seg = NIL;
    e->l = c->spare;
    c->spare = x;
    c->nspare++;
    c->nexts--;
}

static int seg_room(lean_caching_t *c)
{
    if (c->sspare != NIL || c->ns < c->scap)
        return 0;
    uint32_t cap = c->scap ? c->scap * 2 : 64;
    if (cap >= NIL)
        return -1;
    cseg_t *s = realloc(c->s, (size_t)cap * sizeof *s);
    if (!s)
        return -1;
    c->s = s;
    c->scap = cap;
    return 0;
}

/* The frame table reaching end (an address). */
static int frame_room(lean_caching_t *c, uint64_t end)
{
    uint64_t need = (end - c->base + ROUND_LARGE - 1) >> FRAME_SHIFT;
    if (need <= c->nframes)
        return 0;
    uint64_t n = c->nframes ? c->nframes : 64;
    while (n < need)
        n *= 2;
    uint32_t *f = realloc(c->frame, n * sizeof *f);
    if (!f)
        return -1;
    memset(f + c->nframes, 0xff, (n - c->nframes) * sizeof *f); /* NIL */
    c->frame = f;
    c->nframes = n;
    return 0;
}

static void frames_set(lean_caching_t *c, uint64_t addr, uint64_t size, uint32_t v)
{
    for (uint64_t i = (addr - c->base) >> FRAME_SHIFT, n = size >> FRAME_SHIFT; n--; i++)
        c->frame[i] = v;
}

static int far_room(lean_caching_t *c)
{
    if (c->farspare != NIL || c->nfar < c->farcap)
        return 0;
    uint32_t cap = c->farcap ? c->farcap * 2 : 64;
    if (cap >= FAR - 1)
        return -1;
    far_t *f = realloc(c->far, (size_t)cap * sizeof *f);
    if (!f)
        return -1;
    c->far = f;
    c->farcap = cap;
    return 0;
}

/* Size of the segment a rounded request of `need` bytes reserves (the
 * device's segment_size). */
static uint64_t segment_size(uint64_t need)
{
    if (need <= SMALL_SIZE)
        return SMALL_SEGMENT;
    if (need < MIN_LARGE_ALLOC)
        return LARGE_SEGMENT;
    uint64_t s = (need + ROUND_LARGE - 1) & ~(ROUND_LARGE - 1);
    return s < need ? 0 : s;
}

/* The lowest ROUND_LARGE-aligned range of size bytes in [base, base +
 * VIRTUAL_SPAN) that no segment touches (pool_segment_find_range),
 * and the segment it goes after (NIL: first).  0 or POOL_ENOMEM. */
static int find_range(const lean_caching_t *c, uint64_t size, uint64_t *addr, uint32_t *after)
{
    uint64_t hi = c->base + VIRTUAL_SPAN, cur = c->base;
    uint32_t prev = NIL;
    for (uint32_t i = c->sfirst; i != NIL; prev = i, i = c->s[i].next) {
        const cseg_t *s = &c->s[i];
        uint64_t s_end = s->addr + s->size;
        if (s_end <= cur)
            continue;
        if (cur + size >= cur && cur + size <= s->addr && cur + size <= hi) {
            *addr = cur;
            *after = prev;
            return POOL_OK;
        }
        cur = (s_end + ROUND_LARGE - 1) & ~(ROUND_LARGE - 1);
        if (cur < s_end || cur >= hi)
            return POOL_ENOMEM;
    }
    if (cur + size >= cur && cur + size <= hi) {
        *addr = cur;
        *after = prev;
        return POOL_OK;
    }
    return POOL_ENOMEM;
}

/* A new segment at addr after segment `after` (room made): one free
 * run, which is returned. */
static uint32_t segment_new(lean_caching_t *c, uint64_t addr, uint64_t size, int kind,
                            uint32_t after)
{
    uint32_t i = c->sspare;
    if (i != NIL)
        c->sspare = c->s[i].next;
    else
        i = c->ns++;
    uint32_t next = after == NIL ? c->sfirst : c->s[after].next;
    c->s[i] = (cseg_t){.addr = addr, .size = size, .nblocks = 1, .prev = after, .next = next,
                       .kind = (uint32_t)kind};
    if (after == NIL)
        c->sfirst = i;
    else
        c->s[after].next = i;
    if (next != NIL)
        c->s[next].prev = i;
    frames_set(c, addr, size, i);
    c->nsegs++;
    c->seg_bytes += size;
    c->nblocks++;
    return ext_new(c, addr, size, i);
}

/* Give every wholly free segment back (the device's trim). */
static void trim(lean_caching_t *c)
{
    for (uint32_t i = c->sfirst; i != NIL;) {
        cseg_t *s = &c->s[i];
        uint32_t next = s->next;
        uint32_t x = s->nblocks == 1 ? run_at(c, start_key(c, s->addr)) : NIL;
        if (x != NIL && c->e[x].seg == i && c->e[x].size == s->size) {
            ext_drop(c, x);
            c->seg_bytes -= s->size;
            c->nblocks--;
            c->nsegs--;
            if (s->prev == NIL)
                c->sfirst = next;
            else
                c->s[s->prev].next = next;
            if (next != NIL)
                c->s[next].prev = s->prev;
            frames_set(c, s->addr, s->size, NIL);
            s->nblocks = 0;
            s->next = c->sspare;
            c->sspare = i;
        }
        i = next;
    }
}

/* ---- the device ------------------------------------------------------------------------ */

lean_caching_t *lean_caching_create(uint64_t total, const char **err)
{
    uint64_t base = (DEVICE_DEFAULT_BASE + ROUND_LARGE - 1) & ~(ROUND_LARGE - 1);
    if (total < U) {
        *err = "no lean device of that size for strategy \"caching\"";
        return NULL;
    }
    lean_caching_t *c = calloc(1, sizeof *c);
    if (!c || hash_grow(c, 0)) {
        free(c);
        *err = "out of host memory";
        return NULL;
    }
    c->total = total;
    c->base = base;
    c->spare = c->sspare = c->sfirst = c->farspare = NIL;
    for (int k = 0; k < KINDS; k++) {
        c->pool[k].root = NIL;
        memset(c->pool[k].bin_root, 0xff, sizeof c->pool[k].bin_root); /* NIL */
    }
    return c;
}

void lean_caching_destroy(lean_caching_t *c)
{
    if (!c)
        return;
    free(c->hash);
    free(c->e);
    free(c->s);
    free(c->frame);
    free(c->far);
    free(c);
}

uint64_t lean_caching_reserved(const lean_caching_t *c) { return c->seg_bytes; }
uint64_t lean_caching_free_runs(const lean_caching_t *c) { return c->nexts; }

uint64_t lean_caching_addr(const lean_caching_t *c, uint32_t h)
{
    return h >= FAR ? c->far[h - FAR].addr : c->base + ((uint64_t)h << USHIFT);
}

static void checked(const lean_caching_t *c, const char *after)
{
    CHECK_EXPENSIVE({
        const char *why;
        if (lean_caching_check(c, &why)) {
            fprintf(stderr, "memsim: lean caching check failed after %s: %s\n", after, why);
            abort();
        }
    });
    (void)c;
    (void)after;
}

__attribute__((noinline))
static void new_peak(lean_caching_t *c, uint64_t res)
{
    uint64_t free_bytes = c->seg_bytes - c->alloc_bytes;
    c->peak_footprint = res;
    c->internal_at_peak = c->alloc_bytes - c->requested;
    c->live_at_peak = c->requested;
    c->free_at_peak = res - c->alloc_bytes;
    c->external_at_peak =
        free_bytes ? 1.0 - (double)largest_free(c) / (double)free_bytes : 0.0;
}

/* A new segment for need bytes of kind: its one run, or NIL with *err. */
__attribute__((noinline))
static uint32_t grow(lean_caching_t *c, uint64_t need, int kind, int *err)
{
    uint64_t seg = segment_size(need), addr;
    uint32_t after;
    *err = POOL_ENOMEM;
    if (!seg || seg > c->total)
        return NIL;
    if (c->seg_bytes + seg > c->total)
        trim(c);
    if (c->seg_bytes + seg > c->total || find_range(c, seg, &addr, &after))
        return NIL;
    if (seg_room(c) || frame_room(c, addr + seg)) {
        *err = POOL_EHOST;
        return NIL;
    }
    return segment_new(c, addr, seg, kind, after);
}

int lean_caching_alloc(lean_caching_t *c, uint64_t size, uint64_t align, uint32_t *h)
{
    if (size - 1 >= c->total || !align || (align & (align - 1)))
        return POOL_EINVAL;
    uint64_t bytes = round_up(size);
    uint64_t need = align <= U ? bytes : bytes + (align - U);
    if (bytes < size || need < bytes)
        return POOL_ENOMEM;
    int kind = bytes <= SMALL_SIZE ? KIND_SMALL : KIND_LARGE, err;
    /* Room first: a new segment's run, the remainder, their keys, a far
     * slot. */
    if (ext_room(c, 2) || hash_room(c, 4) || far_room(c))
        return POOL_EHOST;
    uint32_t x = smallest_fit(c, kind, need);
    if (x == NIL && (x = grow(c, need, kind, &err)) == NIL)
        return err;
    /* Carve: the padding to the alignment stays free (x), then the
     * block, then the rest, split off when at least min_split bytes. */
    cext_t *e = &c->e[x];
    uint64_t xaddr = e->addr, xend = xaddr + e->size;
    uint64_t start = (xaddr + align - 1) & ~(align - 1), pad = start - xaddr;
    uint64_t rest = xend - start - bytes;
    uint64_t min_split = kind == KIND_SMALL ? U : SMALL_SIZE + 1;
    bool split = rest && rest >= min_split;
    uint64_t bsize = split ? bytes : xend - start;
    uint32_t seg = e->seg;
    if (pad) {
        key_del(c, end_key(c, xend));
        e->size = pad;
        key_put(c, end_key(c, start), x);
        rekey(c, x);
        if (split)
            ext_new(c, start + bytes, rest, seg);
    } else if (split) {
        key_del(c, start_key(c, xaddr));
        e->addr = start + bytes;
        e->size = rest;
        key_put(c, start_key(c, start + bytes), x);
        rekey(c, x);
    } else {
        ext_drop(c, x);
    }
    uint64_t nb = (pad != 0) + split;
    c->s[seg].nblocks += nb;
    c->nblocks += nb;
    c->alloc_bytes += bsize;
    c->requested += size;
    c->live_blocks++;
    uint64_t off = (start - c->base) >> USHIFT;
    if (kind == KIND_SMALL && off < FAR) {
        *h = (uint32_t)off;
    } else {
        uint32_t f = c->farspare;
        if (f != NIL)
            c->farspare = (uint32_t)c->far[f].size;
        else
            f = c->nfar++;
        c->far[f] = (far_t){start, bsize};
        *h = FAR + f;
    }
    if (c->seg_bytes > c->peak_footprint)
        new_peak(c, c->seg_bytes);
    if (c->requested > c->peak_live)
        c->peak_live = c->requested;
    checked(c, "an alloc");
    return POOL_OK;
}

int lean_caching_free(lean_caching_t *c, uint32_t h, uint64_t size)
{
    uint64_t a, s;
    if (h >= FAR) {
        a = c->far[h - FAR].addr;
        s = c->far[h - FAR].size;
    } else {
        a = c->base + ((uint64_t)h << USHIFT);
        s = round_up(size);
    }
    /* Room for a run and its keys: a free that cannot be recorded
     * changes nothing. */
    if (ext_room(c, 1) || hash_room(c, 2))
        return -1;
    if (h >= FAR) {
        c->far[h - FAR].size = c->farspare;
        c->farspare = h - FAR;
    }
    uint32_t si = c->frame[(a - c->base) >> FRAME_SHIFT];
    cseg_t *sg = &c->s[si];
    c->alloc_bytes -= s;
    c->requested -= size;
    c->live_blocks--;
    /* Free neighbours in the segment (its ends are barriers). */
    uint32_t lo = a != sg->addr ? run_at(c, end_key(c, a)) : NIL;
    uint32_t hi = a + s != sg->addr + sg->size ? run_at(c, start_key(c, a + s)) : NIL;
    uint64_t merged = (lo != NIL) + (hi != NIL);
    sg->nblocks -= merged;
    c->nblocks -= merged;
    if (lo == NIL && hi == NIL) {
        ext_new(c, a, s, si);
    } else if (hi == NIL) {
        key_del(c, end_key(c, a));
        c->e[lo].size += s;
        key_put(c, end_key(c, a + s), lo);
        rekey(c, lo);
    } else if (lo == NIL) {
        key_del(c, start_key(c, a + s));
        c->e[hi].addr = a;
        c->e[hi].size += s;
        key_put(c, start_key(c, a), hi);
        rekey(c, hi);
    } else {
        uint64_t hend = c->e[hi].addr + c->e[hi].size;
        ext_drop(c, hi);
        key_del(c, end_key(c, a));
        c->e[lo].size = hend - c->e[lo].addr;
        key_put(c, end_key(c, hend), lo);
        rekey(c, lo);
    }
    checked(c, "a free");
    return 0;
}

void lean_caching_prefetch_free(const lean_caching_t *c, uint32_t h, uint64_t size)
{
    if (h >= FAR) {
        __builtin_prefetch(&c->far[h - FAR]);
        return;
    }
    uint64_t a = c->base + ((uint64_t)h << USHIFT);
    __builtin_prefetch(&c->hash[home(c, end_key(c, a))]);
    __builtin_prefetch(&c->hash[home(c, start_key(c, a + round_up(size)))]);
}

void lean_caching_metrics(const lean_caching_t *c, device_metrics_t *m)
{
    memset(m, 0, sizeof *m);
    m->total = c->total;
    m->segments = c->nsegs;
    m->blocks = c->nblocks;
    m->live_blocks = c->live_blocks;
    m->live_requested = c->requested;
    m->live_allocated = c->alloc_bytes;
    m->segment_bytes = c->seg_bytes;
    m->reserved = c->seg_bytes;
    m->peak_footprint = c->peak_footprint;
    m->peak_live_requested = c->peak_live;
    m->largest_free = largest_free(c);
    m->internal_fragmentation = c->alloc_bytes - c->requested;
    m->free_bytes = c->seg_bytes - c->alloc_bytes;
    m->free_blocks = c->nblocks - c->live_blocks;
    m->external_fragmentation =
        m->free_bytes ? 1.0 - (double)m->largest_free / (double)m->free_bytes : 0.0;
    double sum = 0; /* pool_seed_fragmentation: the segments by address */
    for (uint32_t i = c->sfirst; i != NIL; i = c->s[i].next)
        if (c->s[i].nblocks > 1)
            sum += 1.0 - 1.0 / (double)c->s[i].nblocks;
    m->seed_fragmentation = c->nsegs ? sum / (double)c->nsegs : 0.0;
    m->utilization = c->seg_bytes ? (double)c->alloc_bytes / (double)c->seg_bytes : 0.0;
    m->jw_fragmentation =
        c->peak_live ? (double)c->peak_footprint / (double)c->peak_live - 1.0 : 0.0;
    m->internal_at_peak = c->internal_at_peak;
    m->external_at_peak = c->external_at_peak;
    m->live_at_peak = c->live_at_peak;
    m->free_at_peak = c->free_at_peak;
}

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
        if (s->kind == KIND_SMALL && s->size != SMALL_SEGMENT)
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
        if (run_at(c, start_key(c, e->addr)) != x || run_at(c, end_key(c, e->addr + e->size)) != x)
            FAIL("a run is not in the map under its ends");
        if (e->addr + e->size < s->addr + s->size &&
            run_at(c, start_key(c, e->addr + e->size)) != NIL)
            FAIL("two free runs of a segment touch");
        free_bytes += e->size;
    }
    if (free_bytes != c->seg_bytes - c->alloc_bytes || c->alloc_bytes < c->requested)
        FAIL("the free and allocated bytes do not tile the segments");
    return 0;
}
