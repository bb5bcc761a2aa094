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
#include "sim/lean_caching_ext.h"

static inline uint64_t round_up(uint64_t size) { return (size + U - 1) & ~(U - 1); }

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
    ends_put(c, start_key(c, addr), x);
    ends_put(c, end_key(c, addr + size), x);
    lean_caching_index_insert(c, x);
    return x;
}

/* Run x out of the index and the map, its slot recycled. */
static void ext_drop(lean_caching_t *c, uint32_t x)
{
    cext_t *e = &c->e[x];
    lean_caching_index_remove(c, x);
    ends_del(c, start_key(c, e->addr));
    ends_del(c, end_key(c, e->addr + e->size));
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
        uint32_t x = s->nblocks == 1 ? ends_get(c, start_key(c, s->addr)) : NIL;
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
    if (!c || ends_grow(c, 0)) {
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
        free_bytes ? 1.0 - (double)lean_caching_largest_free(c) / (double)free_bytes : 0.0;
}

/* A new segment for need bytes of kind: its one run, or NIL with *err. */
__attribute__((noinline))
static uint32_t grow(lean_caching_t *c, uint64_t need, int kind, int *err)
{
    uint64_t seg = caching_segment_size(need), addr;
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
    if (ext_room(c, 2) || ends_room(c, 4) || far_room(c))
        return POOL_EHOST;
    uint32_t x = lean_caching_smallest_fit(c, kind, need);
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
        ends_del(c, end_key(c, xend));
        e->size = pad;
        ends_put(c, end_key(c, start), x);
        lean_caching_rekey(c, x);
        if (split)
            ext_new(c, start + bytes, rest, seg);
    } else if (split) {
        ends_del(c, start_key(c, xaddr));
        e->addr = start + bytes;
        e->size = rest;
        ends_put(c, start_key(c, start + bytes), x);
        lean_caching_rekey(c, x);
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
    if (ext_room(c, 1) || ends_room(c, 2))
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
    uint32_t lo = a != sg->addr ? ends_get(c, end_key(c, a)) : NIL;
    uint32_t hi = a + s != sg->addr + sg->size ? ends_get(c, start_key(c, a + s)) : NIL;
    uint64_t merged = (lo != NIL) + (hi != NIL);
    sg->nblocks -= merged;
    c->nblocks -= merged;
    if (lo == NIL && hi == NIL) {
        ext_new(c, a, s, si);
    } else if (hi == NIL) {
        ends_del(c, end_key(c, a));
        c->e[lo].size += s;
        ends_put(c, end_key(c, a + s), lo);
        lean_caching_rekey(c, lo);
    } else if (lo == NIL) {
        ends_del(c, start_key(c, a + s));
        c->e[hi].addr = a;
        c->e[hi].size += s;
        ends_put(c, start_key(c, a), hi);
        lean_caching_rekey(c, hi);
    } else {
        uint64_t hend = c->e[hi].addr + c->e[hi].size;
        ext_drop(c, hi);
        ends_del(c, end_key(c, a));
        c->e[lo].size = hend - c->e[lo].addr;
        ends_put(c, end_key(c, hend), lo);
        lean_caching_rekey(c, lo);
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
    m->largest_free = lean_caching_largest_free(c);
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
