/*
 * findings: the classifiers, their significance and composition.  See
 * findings.h; the equations and the defaults' reasons in docs/findings.md.
 */
#include "analyzer/consume/findings.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/consume/findings_compose.h"
#include "analyzer/consume/findings_drift.h"
#include "analyzer/consume/findings_frag.h"
#include "analyzer/consume/findings_series.h"
#include "analyzer/consume/findings_spike.h"
#include "lib/units.h"

static const char *const class_names[] = {
    [FINDING_SPIKE] = "transient_spike",
    [FINDING_DRIFT] = "persistent_drift",
    [FINDING_FRAGMENTATION] = "fragmentation_like",
};
/* The same, for people (the text and HTML reports); JSON and
 * --remediation keep the names above. */
static const char *const class_words[] = {
    [FINDING_SPIKE] = "transient spike",
    [FINDING_DRIFT] = "persistent drift",
    [FINDING_FRAGMENTATION] = "fragmentation",
};
static const char *const series_names[] = {
    [SERIES_GAP] = "gap", [SERIES_HEAP] = "heap_live", [SERIES_MAPPED] = "mapped"};
static const char *const series_words_long[] = {
    [SERIES_GAP] = "the gap between RSS and the allocator",
    [SERIES_HEAP] = "the live heap",
    [SERIES_MAPPED] = "the program's mappings"};
static const char *const severity_names[] = {
    [SEVERITY_INFO] = "info", [SEVERITY_WARNING] = "warning", [SEVERITY_CRITICAL] = "critical"};
static const char *const kind_names[] = {
    [ATTRIBUTION_MAPPING] = "mapping", [ATTRIBUTION_ALLOCATOR] = "allocator",
    [ATTRIBUTION_OTHER] = "other", [ATTRIBUTION_FILE] = "file_pages"};

const char *findings_class_name(finding_class_t c) { return class_names[c]; }
const char *findings_series_name(finding_series_t s) { return series_names[s]; }
const char *findings_class_words(finding_class_t c) { return class_words[c]; }
const char *findings_series_words(finding_series_t s) { return series_words_long[s]; }
const char *findings_severity_name(severity_t s) { return severity_names[s]; }
const char *findings_kind_name(attribution_kind_t k) { return kind_names[k]; }

int findings_severity_rank(const char *severity)
{
    for (int i = SEVERITY_INFO; severity && i <= SEVERITY_CRITICAL; i++)
        if (!strcmp(severity, severity_names[i]))
            return i;
    return -1;
}

int findings_worst(const findings_t *f)
{
    int worst = -1;
    for (size_t i = 0; i < f->n; i++)
        if ((int)f->v[i].severity > worst)
            worst = (int)f->v[i].severity;
    return worst;
}

/* ---- the analysis ---------------------------------------------------------------------- */

static int by_severity(const void *a, const void *b)
{
    const finding_t *x = a, *y = b;
    if (x->severity != y->severity)
        return (int)y->severity - (int)x->severity;
    if (x->bytes != y->bytes)
        return (y->bytes > x->bytes) - (y->bytes < x->bytes);
    return (x->start > y->start) - (x->start < y->start);
}

static size_t point_at(const summary_t *s, uint64_t t)
{
    for (size_t i = 0; i < s->npoints; i++)
        if (s->points[i].t == t)
            return i;
    return s->npoints ? s->npoints - 1 : 0;
}

/* Keeps f when it is significant: its severity, composition, remediation. */
static void keep(findings_t *out, finding_t *f, const summary_t *s, const mappings_t *m,
                 const findings_config_t *c, uint64_t max_total)
{
    /* the process's peak footprint: its peak RSS, or the series' own peak
     * when higher (heap or mappings requested and not all touched) */
    uint64_t rss = summary_peak_rss(s);
    if (f->series == SERIES_HEAP && s->peak_heap > rss)
        rss = s->peak_heap;
    if (f->series == SERIES_MAPPED && m && m->peak > rss)
        rss = m->peak;
    f->share_of_rss = rss ? (double)f->bytes / (double)rss : 0;
    bool machine = f->series == SERIES_GAP && max_total &&
                   (double)f->bytes >= c->gap_ratio * (double)max_total;
    if (f->bytes < c->min_bytes || (f->share_of_rss < c->min_share && !machine))
        return;
    f->phase = summary_phase_at(s, f->t);
    if (f->classification == FINDING_FRAGMENTATION) {
        findings_attribute(f, ATTRIBUTION_ALLOCATOR, f->bytes,
                  "free memory the allocator holds and does not return");
    } else if (f->series == SERIES_GAP) {
        size_t p = point_at(s, f->t);
        size_t b = f->classification == FINDING_DRIFT ? point_at(s, f->start)
                   : point_at(s, f->start) > 0        ? point_at(s, f->start) - 1
                                                      : point_at(s, f->end) + 1;
        if (b >= s->npoints)
            b = p;
        uint64_t file = findings_explain_gap(f, s, m, b, p);
        /* no finding rests on the program's code and files read */
        uint64_t rest = f->bytes - file;
        if (rest < c->min_bytes || (rss && (double)rest / (double)rss < c->min_share && !machine) ||
            file * 2 > f->bytes)
            return;
        findings_describe_gap(f, m);
    } else if (f->series == SERIES_MAPPED) {
        findings_attribute_mappings(f, m, s->points[point_at(s, f->t)].mapped, f->bytes);
        f->mapping_share = 1;
    } else {
        findings_attribute(f, ATTRIBUTION_ALLOCATOR, f->bytes, "the live heap's blocks");
    }
    severity_t by_share = f->share_of_rss >= c->critical_share ? SEVERITY_CRITICAL
                          : f->share_of_rss >= c->warn_share   ? SEVERITY_WARNING
                                                               : SEVERITY_INFO;
    severity_t by_bytes = f->bytes >= c->critical_bytes ? SEVERITY_CRITICAL
                          : f->bytes >= c->warn_bytes   ? SEVERITY_WARNING
                                                        : SEVERITY_INFO;
    f->severity = by_share < by_bytes ? by_share : by_bytes;
    findings_remediate(c, f);
    if (out->n < FINDINGS_MAX)
        out->v[out->n++] = *f;
}

static bool overlap(const finding_t *a, const finding_t *b)
{
    return a->classification == b->classification && a->start <= b->end && b->start <= a->end;
}

/* The samples' RSS rose by at least half of f's bytes within its range
 * (mappings nobody touched cost no memory), or the range is too short
 * for the samples to tell (under two samples inside it). */
static bool resident(const summary_t *s, const finding_t *f)
{
    size_t a = point_at(s, f->start), b = point_at(s, f->end), inside = 0;
    uint64_t before = a > 0 ? s->points[a - 1].used : s->points[a].used, top = 0;
    for (size_t i = a; i <= b && i < s->npoints; i++) {
        inside++;
        if (s->points[i].used > top)
            top = s->points[i].used;
    }
    return inside < 2 || (double)top - (double)before >= (double)f->bytes / 2;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* A spike of the gap is memory the process gained: the RSS at its top
 * stands above the median RSS of the gap's samples outside it (the ones
 * its baseline comes from).  Where the allocator holds memory nobody
 * touched, RSS − reserved is only a lower bound of the memory outside
 * it, the lower the more untouched memory it holds: a stretch with less
 * of it (a heap still being built, before big blocks it never touches)
 * then looks like a spike of the gap while the RSS is lower than around
 * it.  True also when there is nothing to compare or no memory to. */
static bool gap_spike_resident(const summary_t *s, const series_t *gap, const finding_t *f)
{
    if (f->classification != FINDING_SPIKE || !gap->n)
        return true;
    uint64_t *out = malloc(gap->n * sizeof *out), top = 0;
    if (!out)
        return true;
    size_t n = 0;
    for (size_t i = 0; i < gap->n; i++) {
        uint64_t used = s->points[gap->at[i]].used;
        if (gap->t[i] >= f->start && gap->t[i] <= f->end) {
            if (used > top)
                top = used;
        } else {
            out[n++] = used;
        }
    }
    bool above = true;
    if (n && top) {
        qsort(out, n, sizeof *out, cmp_u64);
        above = top > out[n / 2];
    }
    free(out);
    return above;
}

/* The series of the samples into x (values malloc'd); false when out of
 * memory.  instant: the heap live at the sample itself, not the most
 * since the sample before (a drift's fit wants where the heap is; a spike
 * its top). */
static bool series_make(const summary_t *s, finding_series_t which, bool instant, series_t *x)
{
    size_t n = s->npoints;
    *x = (series_t){.which = which};
    x->v = malloc((n + 1) * sizeof *x->v);
    x->t = malloc((n + 1) * sizeof *x->t);
    x->at = malloc((n + 1) * sizeof *x->at);
    if (!x->v || !x->t || !x->at)
        return false;
    if (which == SERIES_HEAP && s->sample_bytes && !(x->se = malloc((n + 1) * sizeof *x->se)))
        return false;
    bool allocator = false; /* the trace has glibc's figures */
    for (size_t i = 0; i < n && !allocator; i++)
        allocator = s->points[i].reserved > 0;
    for (size_t i = 0; i < n; i++) {
        const summary_point_t *p = &s->points[i];
        double v;
        if (which == SERIES_HEAP)
            v = (double)(instant ? p->heap_live : p->heap_max);
        else if (which == SERIES_MAPPED)
            v = (double)p->mapped;
        else if (!p->total || (allocator && (!p->reserved || p->used <= p->reserved)))
            continue; /* before the allocator's first figures, or while it counts memory
                         never touched (the gap is unknown then, not 0) */
        else
            v = (double)(p->used - p->reserved);
        if (x->se)
            x->se[x->n] = instant ? p->heap_se : p->heap_max_se;
        x->v[x->n] = v;
        x->t[x->n] = p->t;
        x->at[x->n++] = i;
    }
    return true;
}

static void series_free(series_t *x)
{
    free(x->v);
    free(x->t);
    free(x->at);
    free(x->se);
}

/* The drift of one series (fitted on x) and its spikes (found in y, the
 * same samples, against the drift) into cand[] (room for max); their number. */
static size_t classify(const findings_config_t *c, const summary_t *s, const series_t *x,
                       const series_t *y, double min_growth, finding_t *cand, size_t max)
{
    size_t k = 0;
    trend_t d;
    if (max && findings_drift(c, s, x, min_growth, &cand[k], &d))
        k++;
    k += findings_spikes(c, s, y, &d, cand + k, max - k < SPIKES_PER_SERIES ? max - k : SPIKES_PER_SERIES);
    return k;
}

#define CANDIDATES (3 * (1 + SPIKES_PER_SERIES) + 1)

void findings_analyze(const summary_t *s, const mappings_t *m, const findings_config_t *c,
                      findings_t *out)
{
    out->n = 0;
    series_t gap = {0}, heap = {0}, heap_now = {0}, mapped = {0};
    finding_t *cand = malloc(CANDIDATES * sizeof *cand);
    bool ok = cand && series_make(s, SERIES_GAP, false, &gap) &&
              series_make(s, SERIES_HEAP, false, &heap) &&
              series_make(s, SERIES_HEAP, true, &heap_now) &&
              series_make(s, SERIES_MAPPED, false, &mapped);
    if (ok) {
        uint64_t max_total = 0;
        double heap_sum = 0;
        for (size_t i = 0; i < s->npoints; i++)
            if (s->points[i].total > max_total)
                max_total = s->points[i].total;
        for (size_t i = 0; i < heap.n; i++)
            heap_sum += heap.v[i];
        size_t ng = 0, nm = 0, nh = 0, nf = 0;
        finding_t *g = cand, *mp, *h;
        if (gap.n >= 5)
            ng = classify(c, s, &gap, &gap, 0, g, 1 + SPIKES_PER_SERIES);
        mp = g + ng;
        if (m && m->calls && mapped.n >= 5)
            nm = classify(c, s, &mapped, &mapped, 0, mp, 1 + SPIKES_PER_SERIES);
        h = mp + nm;
        if (heap.n >= 5)
            nh = classify(c, s, &heap_now, &heap, fmax(65536.0, 0.1 * heap_sum / (double)heap.n),
                          h, 1 + SPIKES_PER_SERIES);
        if (findings_fragmentation(c, s, h + nh))
            nf = 1;
        /* A gap finding and a mappings finding of the same class at the
         * same time are one: the mappings' when they make half of it. */
        bool drop_g[1 + SPIKES_PER_SERIES] = {0}, drop_m[1 + SPIKES_PER_SERIES] = {0};
        for (size_t j = 0; j < nm; j++) {
            bool paired = false;
            for (size_t i = 0; i < ng; i++)
                if (overlap(&g[i], &mp[j])) {
                    paired = true;
                    if ((double)mp[j].bytes * 2 >= (double)g[i].bytes)
                        drop_g[i] = true;
                    else
                        drop_m[j] = true;
                }
            if (!paired && !resident(s, &mp[j]))
                drop_m[j] = true;
        }
        for (size_t i = 0; i < ng; i++)
            if (!drop_g[i] && gap_spike_resident(s, &gap, &g[i]))
                keep(out, &g[i], s, m, c, max_total);
        for (size_t j = 0; j < nm; j++)
            if (!drop_m[j])
                keep(out, &mp[j], s, m, c, max_total);
        /* A burst of the heap whose memory the allocator then keeps is
         * the fragmentation's story, not a spike of the footprint: the
         * RSS did not come back down. */
        bool told[1 + SPIKES_PER_SERIES] = {0};
        for (size_t i = 0; nf && i < nh; i++) {
            finding_t *fr = &h[nh];
            size_t after = point_at(s, h[i].end) + 1;
            uint64_t next = after < s->npoints ? s->points[after].t : h[i].end;
            if (h[i].classification != FINDING_SPIKE || fr->start < h[i].start ||
                fr->start > next || (double)fr->bytes * 2 < (double)h[i].bytes)
                continue;
            size_t len = strlen(fr->description);
            char a1[32];
            snprintf(fr->description + len, sizeof fr->description - len,
                     " It is what is left of a burst of %s of the live heap, from %.3f s to %.3f s.",
                     units_format_bytes(h[i].bytes, a1, sizeof a1), secs(s, h[i].start),
                     secs(s, h[i].end));
            told[i] = true;
        }
        for (size_t i = 0; i < nh + nf; i++)
            if (i >= nh || !told[i])
                keep(out, &h[i], s, m, c, 0);
    }
    series_free(&gap);
    series_free(&heap);
    series_free(&heap_now);
    series_free(&mapped);
    free(cand);
    qsort(out->v, out->n, sizeof out->v[0], by_severity);
}
