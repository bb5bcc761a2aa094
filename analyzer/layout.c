/*
 * layout: a strategy's address space as cells.  See layout.h.
 *
 * Cell c covers offsets [c << shift, (c + 1) << shift) from the base.
 * Its bytes in allocated blocks are part[c] plus full[0] + ... + full[c]:
 * a block adds its bytes in its first and last cell to their part, and
 * the cells it wholly covers through full, as a difference array (most
 * blocks lie in one cell: one write).  Its bytes in segments are
 * seg[0] + ... + seg[c], a difference array alone (segments change
 * seldom).  The saved fields and stamp are the copy-on-write save: a
 * cell whose stamp is the current epoch was written since the last
 * peak, and its saved fields are what it held at that peak; any other
 * cell has not changed since.  Cells past the span of every peak so far
 * hold nothing the map reads, so a doubling saves them empty.
 */
#include "analyzer/layout.h"

#include <stdlib.h>
#include <string.h>

#include "core/pool.h"

#define MIN_SHIFT 4  /* cells of at least 16 bytes: the fit strategies' granule */
#define MAX_SHIFT 48 /* past this the space is not grown: ranges are clipped */

typedef struct cell_s {
    int64_t part, full, seg;    /* now */
    int64_t part0, full0, seg0; /* at the last peak, when stamp == epoch */
    uint64_t stamp;
} cell_t;

typedef struct range_s {
    uint64_t addr, size;
} range_t;

struct layout_s {
    const pool_t *pool;           /* the device's: its segment totals are checked per block */
    uint64_t base;
    unsigned shift;
    uint64_t epoch;               /* peaks marked */
    range_t *segs, *next_segs;    /* the segments taken in, by address; scratch */
    size_t nsegs, cap_segs;
    uint64_t sig_bytes, sig_id;   /* the pool's segment totals when they were */
    bool broken;                  /* memory ran out: no map */
    uint64_t span, footprint, requests; /* at the last peak */
    cell_t cell[LAYOUT_CELLS];
};

static void sync(layout_t *l);

static uint64_t cover(const layout_t *l) { return (uint64_t)LAYOUT_CELLS << l->shift; }

/* Cell c, saved first if this is its first write since the last peak. */
static inline cell_t *touch(layout_t *l, uint64_t c)
{
    cell_t *x = &l->cell[c];
    if (x->stamp != l->epoch) {
        x->part0 = x->part;
        x->full0 = x->full;
        x->seg0 = x->seg;
        x->stamp = l->epoch;
    }
    return x;
}

/* sign * [off0, off1) of allocated blocks; the range lies in the cover. */
static inline void block_add(layout_t *l, uint64_t off0, uint64_t off1, int64_t sign)
{
    uint64_t c0 = off0 >> l->shift, c1 = (off1 - 1) >> l->shift;
    if (__builtin_expect(c0 == c1, 1)) {
        touch(l, c0)->part += sign * (int64_t)(off1 - off0);
        return;
    }
    touch(l, c0)->part += sign * (int64_t)(((c0 + 1) << l->shift) - off0);
    touch(l, c1)->part += sign * (int64_t)(off1 - (c1 << l->shift));
    if (c1 > c0 + 1) {
        int64_t cs = (int64_t)1 << l->shift;
        touch(l, c0 + 1)->full += sign * cs;
        touch(l, c1)->full -= sign * cs;
    }
}

/* sign * [off0, off1) of segments, as differences; the range lies in the cover. */
static void seg_add(layout_t *l, uint64_t off0, uint64_t off1, int64_t sign)
{
    if (off1 <= off0)
        return;
    uint64_t c0 = off0 >> l->shift, c1 = (off1 - 1) >> l->shift;
    int64_t head = (int64_t)(((c0 + 1) << l->shift) - off0);
    int64_t tail = (int64_t)(off1 - (c1 << l->shift));
    int64_t cs = (int64_t)1 << l->shift;
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
            touch(l, at[i])->seg += sign * d[i];
}

/* [addr, addr + size) of a segment, clipped to the cover, into seg. */
static void segment_add(layout_t *l, const range_t *r, int64_t sign, uint64_t from)
{
    uint64_t lo = r->addr > l->base ? r->addr - l->base : 0;
    uint64_t end = r->addr + r->size;
    uint64_t hi = end > l->base ? end - l->base : 0;
    if (lo < from)
        lo = from;
    if (hi > cover(l))
        hi = cover(l);
    seg_add(l, lo, hi, sign);
}

/* A cell's values now and at the last peak, from the running sums of
 * the difference fields before it (updated). */
typedef struct vals_s {
    int64_t used, seg, used0, seg0; /* values */
    int64_t full, fseg, full0, fseg0; /* running sums */
} vals_t;

static void values(const layout_t *l, const cell_t *x, vals_t *v)
{
    bool saved = x->stamp == l->epoch;
    v->full += x->full;
    v->fseg += x->seg;
    v->full0 += saved ? x->full0 : x->full;
    v->fseg0 += saved ? x->seg0 : x->seg;
    v->used = x->part + v->full;
    v->seg = v->fseg;
    v->used0 = (saved ? x->part0 : x->part) + v->full0;
    v->seg0 = v->fseg0;
}

/* Double the cells' size: merge neighbours, now and as at the last
 * peak; the new upper half holds only the segments that reach it.
 * Merged cells keep their bytes in part, and full and seg become the
 * differences of the merged values. */
static void grow(layout_t *l)
{
    uint64_t old = cover(l);
    vals_t v = {0};
    int64_t prev_seg = 0, prev_seg0 = 0;
    for (size_t i = 0; i < LAYOUT_CELLS / 2; i++) {
        int64_t u = 0, s = 0, u0 = 0, s0 = 0;
        for (size_t k = 2 * i; k < 2 * i + 2; k++) {
            values(l, &l->cell[k], &v);
            u += v.used, s += v.seg, u0 += v.used0, s0 += v.seg0;
        }
        l->cell[i] = (cell_t){.part = u, .seg = s - prev_seg, .part0 = u0,
                              .seg0 = s0 - prev_seg0, .stamp = l->epoch};
        prev_seg = s, prev_seg0 = s0;
    }
    for (size_t i = LAYOUT_CELLS / 2; i < LAYOUT_CELLS; i++)
        l->cell[i] = (cell_t){.stamp = l->epoch};
    l->cell[LAYOUT_CELLS / 2].seg = -prev_seg;
    l->cell[LAYOUT_CELLS / 2].seg0 = -prev_seg0;
    l->shift++;
    for (size_t i = 0; i < l->nsegs; i++)
        segment_add(l, &l->segs[i], 1, old);
}

/* Grow until offset `end` is covered (or the space is as large as it goes). */
static void cover_to(layout_t *l, uint64_t end)
{
    while (end > cover(l) && l->shift < MAX_SHIFT)
        grow(l);
}

layout_t *layout_create(const device_t *dev)
{
    layout_t *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->pool = device_pool(dev);
    l->base = device_base(dev);
    l->shift = MIN_SHIFT;
    sync(l);
    return l;
}

void layout_destroy(layout_t *l)
{
    if (!l)
        return;
    free(l->segs);
    free(l->next_segs);
    free(l);
}

void layout_block(layout_t *l, uint64_t addr, uint64_t size, bool used)
{
    const pool_t *p = l->pool;
    if (__builtin_expect(p->segment_bytes != l->sig_bytes || p->next_segment_id != l->sig_id, 0))
        sync(l);
    uint64_t off = addr - l->base, end = off + size;
    if (__builtin_expect(end > cover(l), 0)) {
        cover_to(l, end);
        if (end > cover(l))
            end = cover(l);
    }
    if (end > off)
        block_add(l, off, end, used ? 1 : -1);
}

static bool same(const range_t *a, const range_t *b)
{
    return a->addr == b->addr && a->size == b->size;
}

/* Take in the pool's segments as they are now. */
static void sync(layout_t *l)
{
    const pool_t *p = l->pool;
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
    size_t i = 0, j = 0;
    while (i < l->nsegs || j < n) {
        if (j == n || (i < l->nsegs && l->segs[i].addr < now[j].addr)) {
            segment_add(l, &l->segs[i++], -1, 0);
        } else if (i == l->nsegs || now[j].addr < l->segs[i].addr) {
            segment_add(l, &now[j++], 1, 0);
        } else {
            if (!same(&l->segs[i], &now[j])) {
                segment_add(l, &l->segs[i], -1, 0);
                segment_add(l, &now[j], 1, 0);
            }
            i++, j++;
        }
    }
    l->next_segs = l->segs;
    l->segs = now;
    l->nsegs = n;
    l->sig_bytes = p->segment_bytes;
    l->sig_id = p->next_segment_id;
}

void layout_sync_segments(layout_t *l)
{
    const pool_t *p = l->pool;
    if (p->segment_bytes != l->sig_bytes || p->next_segment_id != l->sig_id)
        sync(l);
}

/* The bytes a map of dev draws: to its highest segment's end where the
 * footprint counts segments, else to its highest block in use. */
static uint64_t span_of(const device_t *dev)
{
    const pool_t *p = device_pool(dev);
    uint64_t base = device_base(dev), end = base;
    bool by_segments = device_strategy(dev)->footprint == STRATEGY_FOOTPRINT_SEGMENTS;
    for (const segment_t *s = pool_segment_first(p); s; s = pool_segment_next(s)) {
        uint64_t e = s->addr + (by_segments ? s->size : s->extent);
        if (e > end)
            end = e;
    }
    return end - base;
}

void layout_mark_peak(layout_t *l, const device_t *dev, uint64_t requests)
{
    uint64_t span = span_of(dev);
    cover_to(l, span); /* before the epoch: the new cells are empty at every earlier peak */
    l->epoch++;
    l->span = span < cover(l) ? span : cover(l);
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

static void finish(replay_map_t *m, const double *a, const double *fr)
{
    double w = m->span ? (double)m->span / REPLAY_MAP_CELLS : 1;
    for (size_t c = 0; c < REPLAY_MAP_CELLS; c++) {
        m->alloc[c] = (float)(a[c] / w);
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
    double a[REPLAY_MAP_CELLS] = {0}, fr[REPLAY_MAP_CELLS] = {0};
    double w = m->span ? (double)m->span / REPLAY_MAP_CELLS : 1;
    uint64_t cs = (uint64_t)1 << l->shift;
    vals_t v = {0};
    for (uint64_t c = 0; c < LAYOUT_CELLS && c * cs < m->span; c++) {
        values(l, &l->cell[c], &v);
        int64_t u = v.used0, s = v.seg0;
        double lo = (double)(c * cs), hi = (double)((c + 1) * cs);
        if (hi > (double)m->span)
            hi = (double)m->span; /* the cell's bytes past the span are not drawn */
        double part = (hi - lo) / (double)cs;
        spread(a, lo, hi, w, (double)u * part);
        spread(fr, lo, hi, w, (double)(s - u) * part);
    }
    finish(m, a, fr);
    return true;
}

void layout_scan(const device_t *dev, uint64_t requests, replay_map_t *m)
{
    const pool_t *p = device_pool(dev);
    memset(m, 0, sizeof *m);
    m->base = device_base(dev);
    m->span = span_of(dev);
    m->footprint = device_peak_footprint(dev);
    m->requests = requests;
    double a[REPLAY_MAP_CELLS] = {0}, fr[REPLAY_MAP_CELLS] = {0};
    double w = m->span ? (double)m->span / REPLAY_MAP_CELLS : 1;
    for (const segment_t *seg = pool_segment_first(p); m->span && seg; seg = pool_segment_next(seg))
        for (const block_t *b = seg->first; b; b = b->next) {
            bool used = b->state == BLOCK_ALLOC || b->state == BLOCK_FREE_REQUESTED;
            double lo = (double)(b->addr - m->base), hi = lo + (double)b->size;
            if (hi > (double)m->span)
                hi = (double)m->span;
            spread(used ? a : fr, lo, hi, w, hi - lo);
        }
    finish(m, a, fr);
}

uint64_t layout_cell_bytes(const layout_t *l) { return (uint64_t)1 << l->shift; }

bool layout_check(const layout_t *l, const device_t *dev, const char **why)
{
    const pool_t *p = device_pool(dev);
    int64_t *want = calloc(2 * (size_t)LAYOUT_CELLS, sizeof *want);
    if (!want) {
        *why = "no memory for the check";
        return false;
    }
    int64_t *want_seg = want + LAYOUT_CELLS;
    uint64_t cs = (uint64_t)1 << l->shift, top = cover(l);
    for (const segment_t *seg = pool_segment_first(p); seg; seg = pool_segment_next(seg)) {
        uint64_t lo = seg->addr - l->base, hi = lo + seg->size;
        for (uint64_t c = lo / cs; c < LAYOUT_CELLS && c * cs < hi; c++) {
            uint64_t c0 = c * cs, c1 = c0 + cs;
            want_seg[c] += (int64_t)((hi < c1 ? hi : c1) - (lo > c0 ? lo : c0));
        }
        for (const block_t *b = seg->first; b; b = b->next) {
            if (b->state != BLOCK_ALLOC && b->state != BLOCK_FREE_REQUESTED)
                continue;
            uint64_t bl = b->addr - l->base, bh = bl + b->size;
            if (bh > top) {
                free(want);
                *why = "an allocated block lies past the cells";
                return false;
            }
            for (uint64_t c = bl / cs; c * cs < bh; c++) {
                uint64_t c0 = c * cs, c1 = c0 + cs;
                want[c] += (int64_t)((bh < c1 ? bh : c1) - (bl > c0 ? bl : c0));
            }
        }
    }
    vals_t v = {0};
    bool ok = true;
    for (size_t c = 0; c < LAYOUT_CELLS && ok; c++) {
        values(l, &l->cell[c], &v);
        if (v.used != want[c]) {
            *why = "a cell's allocated bytes differ from the blocks'";
            ok = false;
        } else if (v.seg != want_seg[c]) {
            *why = "a cell's segment bytes differ from the segments'";
            ok = false;
        }
    }
    free(want);
    return ok;
}
