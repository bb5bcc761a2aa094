/*
 * layout: a strategy's address space as cells.  See layout.h.
 *
 * Zones.  Where the footprint counts segments (caching), one zone
 * covers the space from the device's base, and tracks the segments
 * too: gaps between them are part of the picture.  Where it counts each
 * segment's extent (the fit strategies' one segment, buddy's one per
 * power-of-two chunk), each segment a block lands in gets a zone of its
 * own, and the map joins the zones' extents end to end, as the
 * footprint does: a program living in buddy's last chunk is not drawn
 * after gigabytes of the untouched chunks before it.
 *
 * Cells.  Cell c of a zone covers offsets [c << shift, (c + 1) << shift)
 * from the zone's start.  Its bytes in allocated blocks are part[c] plus
 * full[0] + ... + full[c]: a block adds its bytes in its first and last
 * cell to their part, and the cells it wholly covers through full, as a
 * difference array (most blocks lie in one cell: one write).  wpart and
 * wfull count the same way the blocks' bytes past their request (the
 * internal fragmentation: a block's tail, from its requested size on).
 * Its bytes in segments (the segments' zone only) are seg[0] + ... +
 * seg[c], a difference array alone (segments change seldom).
 *
 * The peak.  The saved fields and stamp are the copy-on-write save: a
 * cell whose stamp is the current epoch was written since the last
 * peak, and its saved fields are what it held at that peak; any other
 * cell has not changed since.  Cells past what every peak so far drew
 * hold nothing the map reads, so a doubling saves them empty.
 */
#include "analyzer/consume/layout.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sim/pool.h"

#define MIN_SHIFT 4   /* cells of at least 16 bytes: the fit strategies' granule */
#define MAX_SHIFT 48  /* past this a zone is not grown: ranges are clipped */
#define MAX_ZONES 64  /* buddy's chunks of a device below 2^64 bytes */

typedef struct cell_s {
    int64_t part, full, wpart, wfull, seg;      /* now */
    int64_t part0, full0, wpart0, wfull0, seg0; /* at the last peak, when stamp == epoch */
    uint64_t stamp;
} cell_t;

typedef struct zone_s {
    uint64_t addr, size; /* what it covers at most: its segment, or the whole device */
    unsigned shift;
    uint64_t drawn;      /* bytes the map draws of it at the last peak: its extent then */
    cell_t *cell;        /* LAYOUT_CELLS */
} zone_t;

typedef struct range_s {
    uint64_t addr, size;
} range_t;

struct layout_s {
    const pool_t *pool;
    uint64_t base;
    bool by_segments;             /* the footprint counts segments: one zone, segments tracked */
    uint64_t epoch;               /* peaks marked */
    zone_t zone[MAX_ZONES];       /* by address */
    unsigned nzones, last;        /* zones made; the one the last block was in */
    range_t *segs, *next_segs;    /* by_segments: the segments taken in, by address; scratch */
    size_t nsegs, cap_segs;
    uint64_t sig_bytes, sig_id;   /* the pool's segment totals when they were */
    bool broken;                  /* memory or zones ran out: no map */
    uint64_t span, footprint, requests; /* at the last peak */
};

static void sync(layout_t *l);

static uint64_t cover(const zone_t *z) { return (uint64_t)LAYOUT_CELLS << z->shift; }

/* Cell c, saved first if this is its first write since the last peak. */
static inline cell_t *touch(const layout_t *l, zone_t *z, uint64_t c)
{
    cell_t *x = &z->cell[c];
    if (x->stamp != l->epoch) {
        x->part0 = x->part;
        x->full0 = x->full;
        x->wpart0 = x->wpart;
        x->wfull0 = x->wfull;
        x->seg0 = x->seg;
        x->stamp = l->epoch;
    }
    return x;
}

/* The int64_t at byte offset off of cell x. */
#define FIELD(x, off) (*(int64_t *)((char *)(x) + (off)))

/* sign * [off0, off1) into the part and full fields at byte offsets po
 * and fo (allocated bytes, or their internal part); the range lies in
 * the cover and is not empty. */
static inline void block_add(const layout_t *l, zone_t *z, uint64_t off0, uint64_t off1,
                             int64_t sign, size_t po, size_t fo)
{
    uint64_t c0 = off0 >> z->shift, c1 = (off1 - 1) >> z->shift;
    if (__builtin_expect(c0 == c1, 1)) {
        FIELD(touch(l, z, c0), po) += sign * (int64_t)(off1 - off0);
        return;
    }
    FIELD(touch(l, z, c0), po) += sign * (int64_t)(((c0 + 1) << z->shift) - off0);
    FIELD(touch(l, z, c1), po) += sign * (int64_t)(off1 - (c1 << z->shift));
    if (c1 > c0 + 1) {
        int64_t cs = (int64_t)1 << z->shift;
        FIELD(touch(l, z, c0 + 1), fo) += sign * cs;
        FIELD(touch(l, z, c1), fo) -= sign * cs;
    }
}

/* sign * [off0, off1) of segments, as differences; the range lies in the cover. */
static void seg_add(const layout_t *l, zone_t *z, uint64_t off0, uint64_t off1, int64_t sign)
{
    if (off1 <= off0)
        return;
    uint64_t c0 = off0 >> z->shift, c1 = (off1 - 1) >> z->shift;
    int64_t cs = (int64_t)1 << z->shift;
    int64_t head = (int64_t)(((c0 + 1) << z->shift) - off0);
    int64_t tail = (int64_t)(off1 - (c1 << z->shift));
    int64_t d[4];
    uint64_t at[4] = {c0, c0 + 1, c1, c1 + 1};
    if (c0 == c1) {
        d[0] = (int64_t)(off1 - off0);
        d[1] = -d[0];
        d[2] = d[3] = 0;
    } else {
        d[0] = head;
        d[1] = cs - head;
        d[2] = tail - cs;
        d[3] = -tail;
    }
    for (int i = 0; i < 4; i++)
        if (d[i] && at[i] < LAYOUT_CELLS)
            touch(l, z, at[i])->seg += sign * d[i];
}

/* A segment into the segments' zone, clipped to [from, the cover). */
static void segment_add(const layout_t *l, zone_t *z, const range_t *r, int64_t sign,
                        uint64_t from)
{
    uint64_t lo = r->addr > z->addr ? r->addr - z->addr : 0;
    uint64_t end = r->addr + r->size;
    uint64_t hi = end > z->addr ? end - z->addr : 0;
    if (lo < from)
        lo = from;
    if (hi > cover(z))
        hi = cover(z);
    seg_add(l, z, lo, hi, sign);
}

/* A cell's values now and at the last peak, from the running sums of
 * the difference fields before it (updated). */
typedef struct vals_s {
    int64_t used, waste, seg, used0, waste0, seg0;      /* values */
    int64_t full, wfull, fseg, full0, wfull0, fseg0;    /* running sums */
} vals_t;

static void values(const layout_t *l, const cell_t *x, vals_t *v)
{
    bool saved = x->stamp == l->epoch;
    v->full += x->full;
    v->wfull += x->wfull;
    v->fseg += x->seg;
    v->full0 += saved ? x->full0 : x->full;
    v->wfull0 += saved ? x->wfull0 : x->wfull;
    v->fseg0 += saved ? x->seg0 : x->seg;
    v->used = x->part + v->full;
    v->waste = x->wpart + v->wfull;
    v->seg = v->fseg;
    v->used0 = (saved ? x->part0 : x->part) + v->full0;
    v->waste0 = (saved ? x->wpart0 : x->wpart) + v->wfull0;
    v->seg0 = v->fseg0;
}

/* Double a zone's cells: merge neighbours, now and as at the last peak;
 * the new upper half holds only the segments that reach it.  Merged
 * cells keep their bytes in part, and full and seg become the
 * differences of the merged values. */
static void grow(layout_t *l, zone_t *z)
{
    uint64_t old = cover(z);
    vals_t v = {0};
    int64_t prev_seg = 0, prev_seg0 = 0;
    for (size_t i = 0; i < LAYOUT_CELLS / 2; i++) {
        int64_t u = 0, w = 0, s = 0, u0 = 0, w0 = 0, s0 = 0;
        for (size_t k = 2 * i; k < 2 * i + 2; k++) {
            values(l, &z->cell[k], &v);
            u += v.used, w += v.waste, s += v.seg;
            u0 += v.used0, w0 += v.waste0, s0 += v.seg0;
        }
        z->cell[i] = (cell_t){.part = u, .wpart = w, .seg = s - prev_seg, .part0 = u0,
                              .wpart0 = w0, .seg0 = s0 - prev_seg0, .stamp = l->epoch};
        prev_seg = s, prev_seg0 = s0;
    }
    for (size_t i = LAYOUT_CELLS / 2; i < LAYOUT_CELLS; i++)
        z->cell[i] = (cell_t){.stamp = l->epoch};
    z->cell[LAYOUT_CELLS / 2].seg = -prev_seg;
    z->cell[LAYOUT_CELLS / 2].seg0 = -prev_seg0;
    z->shift++;
    if (l->by_segments)
        for (size_t i = 0; i < l->nsegs; i++)
            segment_add(l, z, &l->segs[i], 1, old);
}

/* Grow until offset `end` is covered (or the zone is as large as it goes). */
static void cover_to(layout_t *l, zone_t *z, uint64_t end)
{
    while (end > cover(z) && z->shift < MAX_SHIFT)
        grow(l, z);
}

/* A zone for [addr, addr + size), kept in address order; NULL when
 * memory or zones run out (the layout is broken then). */
static zone_t *zone_make(layout_t *l, uint64_t addr, uint64_t size)
{
    cell_t *cells = l->nzones < MAX_ZONES ? calloc(LAYOUT_CELLS, sizeof *cells) : NULL;
    if (!cells) {
        l->broken = true;
        return NULL;
    }
    unsigned i = l->nzones++;
    while (i > 0 && l->zone[i - 1].addr > addr) {
        l->zone[i] = l->zone[i - 1];
        i--;
    }
    l->zone[i] = (zone_t){.addr = addr, .size = size, .shift = MIN_SHIFT, .cell = cells};
    l->last = i;
    return &l->zone[i];
}

/* The zone holding addr: the segments' one, or its segment's. */
static zone_t *zone_of(layout_t *l, uint64_t addr)
{
    zone_t *z = &l->zone[l->last];
    if (__builtin_expect(l->nzones && addr - z->addr < z->size, 1))
        return z;
    for (unsigned i = 0; i < l->nzones; i++)
        if (addr - l->zone[i].addr < l->zone[i].size) {
            l->last = i;
            return &l->zone[i];
        }
    const segment_t *s = pool_segment_at(l->pool, addr);
    return s && !l->broken ? zone_make(l, s->addr, s->size) : NULL;
}

layout_t *layout_create(const device_t *dev)
{
    layout_t *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->pool = device_pool(dev);
    l->base = device_base(dev);
    l->by_segments = device_strategy(dev)->footprint == STRATEGY_FOOTPRINT_SEGMENTS;
    if (l->by_segments && !zone_make(l, l->base, UINT64_MAX - l->base)) {
        free(l);
        return NULL;
    }
    sync(l);
    return l;
}

void layout_destroy(layout_t *l)
{
    if (!l)
        return;
    for (unsigned i = 0; i < l->nzones; i++)
        free(l->zone[i].cell);
    free(l->segs);
    free(l->next_segs);
    free(l);
}

void layout_block(layout_t *l, uint64_t addr, uint64_t size, uint64_t requested, bool used)
{
    const pool_t *p = l->pool;
    if (__builtin_expect(p->segment_bytes != l->sig_bytes || p->next_segment_id != l->sig_id, 0))
        sync(l);
    zone_t *z = zone_of(l, addr);
    if (!z)
        return;
    uint64_t off = addr - z->addr, end = off + size;
    if (__builtin_expect(end > cover(z), 0)) {
        cover_to(l, z, end);
        if (end > cover(z))
            end = cover(z);
    }
    if (end <= off)
        return;
    int64_t sign = used ? 1 : -1;
    block_add(l, z, off, end, sign, offsetof(cell_t, part), offsetof(cell_t, full));
    if (requested < size && off + requested < end) /* the tail past the request */
        block_add(l, z, off + requested, end, sign, offsetof(cell_t, wpart),
                  offsetof(cell_t, wfull));
}

static bool same(const range_t *a, const range_t *b)
{
    return a->addr == b->addr && a->size == b->size;
}

/* Take in the pool's segments as they are now (the segments' zone). */
static void sync(layout_t *l)
{
    const pool_t *p = l->pool;
    l->sig_bytes = p->segment_bytes;
    l->sig_id = p->next_segment_id;
    if (!l->by_segments)
        return; /* zones follow the segments blocks land in */
    size_t n = 0;
    for (const segment_t *s = pool_segment_first(p); s; s = pool_segment_next(s))
        n++;
    if (n > l->cap_segs) {
        size_t cap = n * 2;
        range_t *a = realloc(l->segs, cap * sizeof *a);
        if (a)
            l->segs = a;
        range_t *b = a ? realloc(l->next_segs, cap * sizeof *b) : NULL;
        if (!b) {
            l->broken = true;
            return;
        }
        l->next_segs = b;
        l->cap_segs = cap;
    }
    range_t *now = l->next_segs;
    n = 0;
    for (const segment_t *s = pool_segment_first(p); s; s = pool_segment_next(s))
        now[n++] = (range_t){s->addr, s->size};
    /* Both lists are by address and segments never overlap: a merge
     * finds what went and what came. */
    zone_t *z = &l->zone[0];
    size_t i = 0, j = 0;
    while (i < l->nsegs || j < n) {
        if (j == n || (i < l->nsegs && l->segs[i].addr < now[j].addr)) {
            segment_add(l, z, &l->segs[i++], -1, 0);
        } else if (i == l->nsegs || now[j].addr < l->segs[i].addr) {
            segment_add(l, z, &now[j++], 1, 0);
        } else {
            if (!same(&l->segs[i], &now[j])) {
                segment_add(l, z, &l->segs[i], -1, 0);
                segment_add(l, z, &now[j], 1, 0);
            }
            i++, j++;
        }
    }
    l->next_segs = l->segs;
    l->segs = now;
    l->nsegs = n;
}

void layout_sync_segments(layout_t *l)
{
    const pool_t *p = l->pool;
    if (p->segment_bytes != l->sig_bytes || p->next_segment_id != l->sig_id)
        sync(l);
}

/* The highest segment's end, from the base (by_segments). */
static uint64_t segments_end(const pool_t *p, uint64_t base)
{
    uint64_t end = base;
    for (const segment_t *s = pool_segment_first(p); s; s = pool_segment_next(s))
        if (s->addr + s->size > end)
            end = s->addr + s->size;
    return end - base;
}

void layout_mark_peak(layout_t *l, const device_t *dev, uint64_t requests)
{
    uint64_t span = 0;
    if (l->by_segments) {
        zone_t *z = &l->zone[0];
        span = segments_end(l->pool, l->base);
        cover_to(l, z, span); /* before the epoch: the new cells are empty at every earlier peak */
        if (span > cover(z))
            span = cover(z);
        z->drawn = span;
    } else {
        for (unsigned i = 0; i < l->nzones; i++) {
            zone_t *z = &l->zone[i];
            const segment_t *s = pool_segment_at(l->pool, z->addr);
            z->drawn = s ? s->extent : 0;
            if (z->drawn > cover(z))
                z->drawn = cover(z); /* blocks past a full zone were clipped */
            span += z->drawn;
        }
    }
    l->epoch++;
    l->span = span;
    l->footprint = device_peak_footprint(dev);
    l->requests = requests;
}

/* Spread `bytes` of [lo, hi) evenly over the map's cells of width w. */
static void spread(double *acc, double lo, double hi, double w, double bytes)
{
    if (bytes == 0 || hi <= lo)
        return;
    double per = bytes / (hi - lo);
    for (size_t c = (size_t)(lo / w); c < REPLAY_MAP_CELLS && (double)c * w < hi; c++) {
        double c0 = (double)c * w, c1 = c0 + w;
        double part = (hi < c1 ? hi : c1) - (lo > c0 ? lo : c0);
        if (part > 0)
            acc[c] += part * per;
    }
}

static void finish(replay_map_t *m, const double *a, const double *wa, const double *fr)
{
    double w = m->span ? (double)m->span / REPLAY_MAP_CELLS : 1;
    for (size_t c = 0; c < REPLAY_MAP_CELLS; c++) {
        m->alloc[c] = (float)(a[c] / w);
        m->waste[c] = (float)(wa[c] / w);
        m->free[c] = (float)(fr[c] / w);
    }
}

bool layout_map(const layout_t *l, replay_map_t *m)
{
    if (!l->epoch || l->broken)
        return false;
    memset(m, 0, sizeof *m);
    m->base = l->base;
    m->span = l->span;
    m->footprint = l->footprint;
    m->requests = l->requests;
    double a[REPLAY_MAP_CELLS] = {0}, wa[REPLAY_MAP_CELLS] = {0}, fr[REPLAY_MAP_CELLS] = {0};
    double w = m->span ? (double)m->span / REPLAY_MAP_CELLS : 1;
    uint64_t at = 0; /* where the zone starts in the map */
    for (unsigned i = 0; i < l->nzones; i++) {
        const zone_t *z = &l->zone[i];
        uint64_t cs = (uint64_t)1 << z->shift;
        vals_t v = {0};
        for (uint64_t c = 0; c < LAYOUT_CELLS && c * cs < z->drawn; c++) {
            values(l, &z->cell[c], &v);
            uint64_t lo = c * cs, hi = lo + cs < z->drawn ? lo + cs : z->drawn;
            double part = (double)(hi - lo) / (double)cs; /* of the cell: drawn */
            double used = (double)v.used0 * part;
            double in_seg = l->by_segments ? (double)v.seg0 * part : (double)(hi - lo);
            double l0 = (double)(at + lo), h0 = (double)(at + hi);
            spread(a, l0, h0, w, used);
            spread(wa, l0, h0, w, (double)v.waste0 * part);
            spread(fr, l0, h0, w, in_seg - used);
        }
        at += z->drawn;
    }
    finish(m, a, wa, fr);
    return true;
}

/* Whether a block counts as allocated in a map. */
static bool in_use(const block_t *b)
{
    return b->state == BLOCK_ALLOC || b->state == BLOCK_FREE_REQUESTED;
}

void layout_scan(const device_t *dev, uint64_t requests, replay_map_t *m)
{
    const pool_t *p = device_pool(dev);
    bool by_segments = device_strategy(dev)->footprint == STRATEGY_FOOTPRINT_SEGMENTS;
    memset(m, 0, sizeof *m);
    m->base = device_base(dev);
    m->footprint = device_peak_footprint(dev);
    m->requests = requests;
    if (by_segments)
        m->span = segments_end(p, m->base);
    else
        for (const segment_t *s = pool_segment_first(p); s; s = pool_segment_next(s))
            m->span += s->extent;
    double a[REPLAY_MAP_CELLS] = {0}, wa[REPLAY_MAP_CELLS] = {0}, fr[REPLAY_MAP_CELLS] = {0};
    double w = m->span ? (double)m->span / REPLAY_MAP_CELLS : 1;
    uint64_t at = 0; /* by extent: where the segment starts in the map */
    for (const segment_t *s = pool_segment_first(p); m->span && s; s = pool_segment_next(s)) {
        uint64_t from = by_segments ? s->addr - m->base : at; /* the segment's place */
        uint64_t len = by_segments ? s->size : s->extent;
        for (const block_t *b = s->first; b && b->addr < s->addr + len; b = b->next) {
            double lo = (double)(from + (b->addr - s->addr));
            double hi = lo + (double)b->size;
            if (hi > (double)(from + len))
                hi = (double)(from + len);
            spread(in_use(b) ? a : fr, lo, hi, w, hi - lo);
            double tail = lo + (double)b->requested;
            if (in_use(b) && tail < hi)
                spread(wa, tail, hi, w, hi - tail);
        }
        at += len;
    }
    finish(m, a, wa, fr);
}

uint64_t layout_cell_bytes(const layout_t *l)
{
    uint64_t most = 0;
    for (unsigned i = 0; i < l->nzones; i++)
        if (((uint64_t)1 << l->zone[i].shift) > most)
            most = (uint64_t)1 << l->zone[i].shift;
    return most;
}

/* Add the bytes of [lo, hi) (offsets in z) to want, per cell. */
static void want_add(int64_t *want, const zone_t *z, uint64_t lo, uint64_t hi)
{
    uint64_t cs = (uint64_t)1 << z->shift;
    for (uint64_t c = lo / cs; c < LAYOUT_CELLS && c * cs < hi; c++) {
        uint64_t c0 = c * cs, c1 = c0 + cs;
        want[c] += (int64_t)((hi < c1 ? hi : c1) - (lo > c0 ? lo : c0));
    }
}

bool layout_check(const layout_t *l, const device_t *dev, const char **why)
{
    const pool_t *p = device_pool(dev);
    int64_t *want = malloc(3 * (size_t)LAYOUT_CELLS * sizeof *want);
    if (!want) {
        *why = "no memory for the check";
        return false;
    }
    int64_t *want_seg = want + LAYOUT_CELLS, *want_waste = want + 2 * LAYOUT_CELLS;
    bool ok = true;
    /* every allocated block lies in a zone */
    for (const segment_t *s = pool_segment_first(p); ok && s; s = pool_segment_next(s))
        for (const block_t *b = s->first; ok && b; b = b->next) {
            if (!in_use(b))
                continue;
            unsigned i = 0;
            while (i < l->nzones && b->addr - l->zone[i].addr >= l->zone[i].size)
                i++;
            if (i == l->nzones) {
                *why = "an allocated block lies in no zone";
                ok = false;
            } else if (block_end(b) - l->zone[i].addr > cover(&l->zone[i])) {
                *why = "an allocated block lies past its zone's cells";
                ok = false;
            }
        }
    for (unsigned i = 0; ok && i < l->nzones; i++) {
        const zone_t *z = &l->zone[i];
        memset(want, 0, 3 * (size_t)LAYOUT_CELLS * sizeof *want);
        for (const segment_t *s = pool_segment_first(p); s; s = pool_segment_next(s)) {
            if (s->addr - z->addr >= z->size)
                continue;
            want_add(want_seg, z, s->addr - z->addr, s->addr - z->addr + s->size);
            for (const block_t *b = s->first; b; b = b->next)
                if (in_use(b)) {
                    want_add(want, z, b->addr - z->addr, block_end(b) - z->addr);
                    if (b->requested < b->size)
                        want_add(want_waste, z, b->addr - z->addr + b->requested,
                                 block_end(b) - z->addr);
                }
        }
        vals_t v = {0};
        for (size_t c = 0; c < LAYOUT_CELLS && ok; c++) {
            values(l, &z->cell[c], &v);
            if (v.used != want[c]) {
                *why = "a cell's allocated bytes differ from the blocks'";
                ok = false;
            } else if (v.waste != want_waste[c]) {
                *why = "a cell's bytes past the requests differ from the blocks'";
                ok = false;
            } else if (l->by_segments && v.seg != want_seg[c]) {
                *why = "a cell's segment bytes differ from the segments'";
                ok = false;
            }
        }
    }
    free(want);
    return ok;
}
