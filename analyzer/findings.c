/*
 * findings: the gap and heap classifiers.  See findings.h.
 */
#include "analyzer/findings.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/stats.h"
#include "core/units.h"

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
static const char *const severity_names[] = {
    [SEVERITY_INFO] = "info", [SEVERITY_WARNING] = "warning", [SEVERITY_CRITICAL] = "critical"};
static const char *const kind_names[] = {
    [ATTRIBUTION_MAPPING] = "mapping", [ATTRIBUTION_ALLOCATOR] = "allocator",
    [ATTRIBUTION_OTHER] = "other"};

const char *findings_class_name(finding_class_t c) { return class_names[c]; }
const char *findings_series_name(finding_series_t s) { return s == SERIES_GAP ? "gap" : "heap_live"; }
const char *findings_class_words(finding_class_t c) { return class_words[c]; }
const char *findings_series_words(finding_series_t s)
{
    return s == SERIES_GAP ? "the gap between RSS and the allocator" : "the live heap";
}
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

/* ---- remediation ---------------------------------------------------------------- */

typedef struct remedy_s {
    finding_class_t c;
    bool mapping; /* for a gap the program's mappings explain */
    const char *text[2];
} remedy_t;

static const remedy_t remedies[] = {
    {FINDING_SPIKE, false,
     {"Look at what the program does at the spike's time and phase: a burst of short-lived "
      "allocations or a large temporary buffer.",
      "Reuse buffers across iterations, or cap the size of the burst."}},
    {FINDING_SPIKE, true,
     {"The spike is the program's own mappings (the mapping sites below): unmap a region as "
      "soon as it is done with.",
      "Map and touch less at once, or reuse one region instead of mapping new ones."}},
    {FINDING_DRIFT, false,
     {"The footprint grows steadily: look for caches without a bound, lists that only grow, "
      "or allocations never freed (the leaks and sites).",
      "Compare two runs of different lengths: a leak grows with the run."}},
    {FINDING_DRIFT, true,
     {"The program maps memory and does not unmap it (the mapping sites below): munmap the "
      "regions it no longer uses.",
      "Reuse a region instead of mapping a new one each time, or bound how many stay mapped."}},
    {FINDING_FRAGMENTATION, false,
     {"The allocator holds much more than it hands out: freed memory is not returned or not "
      "reusable.",
      "Try malloc_trim, another allocator, or the strategies ranked by the replay."}},
};

static void remediate(const findings_config_t *c, finding_t *f)
{
    bool mapping = f->mapping_share >= 0.5;
    const char *name = class_names[f->classification];
    char key[64];
    snprintf(key, sizeof key, "%s/mapping", name);
    json_t *custom = NULL;
    if (c->remediation) {
        if (mapping)
            custom = json_object_get(c->remediation, key);
        if (!json_is_array(custom))
            custom = json_object_get(c->remediation, name);
    }
    f->nremediation = 0;
    if (json_is_array(custom)) {
        for (size_t i = 0; i < json_array_size(custom) && f->nremediation < FINDING_MAX_REMEDIATION; i++) {
            const char *t = json_string_value(json_array_get(custom, i));
            if (t)
                f->remediation[f->nremediation++] = t;
        }
        return;
    }
    for (size_t i = 0; i < sizeof remedies / sizeof remedies[0]; i++)
        if (remedies[i].c == f->classification && remedies[i].mapping == mapping) {
            f->remediation[f->nremediation++] = remedies[i].text[0];
            f->remediation[f->nremediation++] = remedies[i].text[1];
            return;
        }
    for (size_t i = 0; i < sizeof remedies / sizeof remedies[0]; i++)
        if (remedies[i].c == f->classification) {
            f->remediation[f->nremediation++] = remedies[i].text[0];
            f->remediation[f->nremediation++] = remedies[i].text[1];
            return;
        }
}

/* ---- the detectors ------------------------------------------------------------------ */

static double round_to(double v, int digits)
{
    double f = pow(10.0, digits);
    return round(v * f) / f;
}

static void evidence(finding_t *f, const char *name, double v, bool integer)
{
    if (f->nevidence < FINDING_MAX_EVIDENCE)
        f->evidence[f->nevidence++] = (finding_evidence_t){.name = name, .value = v,
                                                           .integer = integer};
}

static const char *series_words(finding_series_t s)
{
    return s == SERIES_GAP ? "device-vs-allocator gap" : "live heap";
}

/* A series of the samples: values and their times. */
typedef struct series_s {
    finding_series_t which;
    double *v;
    uint64_t *t;
    size_t n;
} series_t;

static bool spikes(const findings_config_t *c, const series_t *x, finding_t *f)
{
    double mean = stats_mean(x->v, x->n), std = stats_std(x->v, x->n);
    if (!(std > 0))
        return false;
    size_t count = 0, top = 0;
    for (size_t i = 0; i < x->n; i++) {
        if (stats_zscore(x->v[i], mean, std) > c->spike_z)
            count++;
        if (x->v[i] > x->v[top])
            top = i;
    }
    if (!count)
        return false;
    double max_z = stats_zscore(x->v[top], mean, std);
    char a[32];
    *f = (finding_t){.classification = FINDING_SPIKE, .series = x->which,
                     .confidence = round_to(fmin(1.0, max_z / (3 * c->spike_z)), 3),
                     .bytes = x->v[top] > mean ? (uint64_t)(x->v[top] - mean) : 0,
                     .t = x->t[top], .t0 = x->t[top], .t1 = x->t[top], .v0 = x->v[top],
                     .v1 = x->v[top]};
    snprintf(f->description, sizeof f->description,
             "%zu transient spike%s in the %s (max z-score %.1f, peak %s).", count,
             count == 1 ? "" : "s", series_words(x->which), max_z,
             units_format_bytes(x->v[top] > 0 ? (uint64_t)x->v[top] : 0, a, sizeof a));
    evidence(f, "spike_count", (double)count, true);
    evidence(f, "max_bytes", x->v[top], false);
    evidence(f, "max_zscore", round_to(max_z, 3), false);
    evidence(f, "mean_bytes", round_to(mean, 1), false);
    evidence(f, "std_bytes", round_to(std, 1), false);
    return true;
}

/* Upward drift; min_growth: bytes the fitted line must rise over the run. */
static bool drift(const findings_config_t *c, const series_t *x, double min_growth, finding_t *f)
{
    if (x->n < 5)
        return false;
    double *t = malloc(x->n * sizeof *t);
    if (!t)
        return false;
    for (size_t i = 0; i < x->n; i++)
        t[i] = (double)(x->t[i] - x->t[0]);
    stats_linregress_t lr;
    int rc = stats_linregress(t, x->v, x->n, &lr);
    double span = t[x->n - 1];
    free(t);
    if (rc || !(lr.slope > 0) || lr.r_squared < c->drift_r2 || lr.slope * span < min_growth)
        return false;
    double per_s = lr.slope * 1e9;
    char a[32];
    *f = (finding_t){.classification = FINDING_DRIFT, .series = x->which,
                     .confidence = round_to(fmin(1.0, lr.r_squared), 3),
                     .bytes = (uint64_t)(lr.slope * span), .t = x->t[x->n - 1],
                     .t0 = x->t[0], .t1 = x->t[x->n - 1], .v0 = lr.intercept,
                     .v1 = lr.intercept + lr.slope * span};
    snprintf(f->description, sizeof f->description, "The %s is drifting upward at %s/s (R²=%.2f).",
             series_words(x->which), units_format_bytes((uint64_t)fabs(per_s), a, sizeof a),
             lr.r_squared);
    evidence(f, "slope_bytes_per_sec", round_to(per_s, 1), false);
    evidence(f, "r_squared", round_to(lr.r_squared, 4), false);
    evidence(f, "p_value", round_to(lr.p_value, 6), false);
    evidence(f, "start_bytes", x->v[0], false);
    evidence(f, "end_bytes", x->v[x->n - 1], false);
    return true;
}

static bool fragmentation(const findings_config_t *c, const summary_t *s, const series_t *gap,
                          finding_t *f)
{
    double sum = 0, max = 0, held = 0;
    size_t n = 0, at = 0;
    for (size_t i = 0; i < s->npoints; i++) {
        const summary_point_t *p = &s->points[i];
        if (!p->total || !p->reserved)
            continue;
        double r = ((double)p->reserved - (double)p->allocated) / (double)p->reserved;
        sum += r;
        held += (double)p->reserved - (double)p->allocated;
        if (!n || r > max)
            max = r;
        n++;
    }
    if (!n || sum / (double)n < c->frag_ratio)
        return false;
    /* The finding's time: when the fragmentation set in, the first sample
     * within a point of the worst (what moves it a little later is noise,
     * such as a small arena growth). */
    for (size_t i = 0; i < s->npoints; i++) {
        const summary_point_t *p = &s->points[i];
        if (!p->total || !p->reserved)
            continue;
        if (((double)p->reserved - (double)p->allocated) / (double)p->reserved >= max - 0.01) {
            at = i;
            break;
        }
    }
    double avg = sum / (double)n;
    /* the stretch: from the first to the last sample at the threshold */
    uint64_t s0 = 0, s1 = 0;
    bool in = false;
    for (size_t i = 0; i < s->npoints; i++) {
        const summary_point_t *p = &s->points[i];
        if (!p->total || !p->reserved ||
            ((double)p->reserved - (double)p->allocated) / (double)p->reserved < c->frag_ratio)
            continue;
        if (!in)
            s0 = p->t;
        s1 = p->t;
        in = true;
    }
    *f = (finding_t){.classification = FINDING_FRAGMENTATION, .series = SERIES_GAP,
                     .t0 = s0, .t1 = s1,
                     .confidence = round_to(fmin(1.0, avg / 0.6), 3),
                     .bytes = held > 0 ? (uint64_t)(held / (double)n) : 0,
                     .t = s->points[at].t};
    char a[32];
    snprintf(f->description, sizeof f->description,
             "Allocator fragmentation averaging %.0f%% (%s reserved but not in use) suggests "
             "reserved-but-unused memory is inflating the footprint.",
             100 * avg, units_format_bytes(f->bytes, a, sizeof a));
    evidence(f, "avg_fragmentation_ratio", round_to(avg, 4), false);
    evidence(f, "max_fragmentation_ratio", round_to(max, 4), false);
    evidence(f, "avg_gap_bytes", round_to(stats_mean(gap->v, gap->n), 1), false);
    evidence(f, "sample_count", (double)n, true);
    return true;
}

/* ---- attribution -------------------------------------------------------------------- */

static void attribute(finding_t *f, attribution_kind_t kind, uint64_t bytes, uint64_t of,
                      const char *what)
{
    if (!bytes || f->nattribution >= FINDING_MAX_ATTRIBUTION)
        return;
    f->attribution[f->nattribution++] = (finding_attribution_t){
        .kind = kind, .bytes = bytes, .share = of ? (double)bytes / (double)of : 0, .what = what};
}

#define SHOWN_MAPPING_SITES 4

/* The recorded mappings' part of `bytes` (of a gap of `gap`), over the
 * mapping sites: in proportion to their bytes at the mapped peak or at
 * the end, whichever total is nearer the mappings live at the time. */
static uint64_t attribute_mappings(finding_t *f, const mappings_t *m, uint64_t mapped,
                                   uint64_t bytes, uint64_t gap)
{
    if (!m || !bytes)
        return 0;
    uint64_t d_peak = m->peak > mapped ? m->peak - mapped : mapped - m->peak;
    uint64_t d_end = m->live > mapped ? m->live - mapped : mapped - m->live;
    mappings_key_t key = d_peak <= d_end ? MAPPINGS_BY_PEAK : MAPPINGS_BY_END;
    uint64_t total = key == MAPPINGS_BY_PEAK ? m->peak : m->live;
    uint64_t *ids;
    size_t n = total ? mappings_top(m, key, SHOWN_MAPPING_SITES, &ids) : 0;
    uint64_t given = 0;
    for (size_t i = 0; i < n && f->nattribution < FINDING_MAX_ATTRIBUTION; i++) {
        uint64_t file = 0;
        uint64_t k = key == MAPPINGS_BY_PEAK ? mappings_site_peak(m, ids[i], &file)
                                             : m->sites[ids[i]].live;
        if (key == MAPPINGS_BY_END)
            file = m->sites[ids[i]].live_file;
        uint64_t b = (uint64_t)((double)bytes * ((double)k / (double)total));
        if (b > bytes - given)
            b = bytes - given;
        if (!b)
            continue;
        f->attribution[f->nattribution++] = (finding_attribution_t){
            .kind = ATTRIBUTION_MAPPING, .bytes = b, .share = (double)b / (double)gap,
            .has_site = true, .site = ids[i], .file = file * 2 > k};
        given += b;
    }
    free(ids);
    if (given < bytes)
        attribute(f, ATTRIBUTION_MAPPING, bytes - given, gap, "other mapping sites");
    return bytes;
}

/* The latest sample at or before point i with a smaps_rollup, else the
 * first after; NULL when none has one. */
static const summary_point_t *rollup_near(const summary_t *s, size_t i)
{
    for (size_t k = i + 1; k-- > 0;)
        if (s->points[k].rollup_rss)
            return &s->points[k];
    for (size_t k = i + 1; k < s->npoints; k++)
        if (s->points[k].rollup_rss)
            return &s->points[k];
    return NULL;
}

static void explain_gap(finding_t *f, const summary_t *s, const mappings_t *m, size_t i)
{
    const summary_point_t *p = &s->points[i];
    if (p->used <= p->reserved)
        return;
    uint64_t gap = p->used - p->reserved, left = gap;
    uint64_t mapped = p->mapped < left ? p->mapped : left;
    left -= attribute_mappings(f, m, p->mapped, mapped, gap);
    f->mapping_share = (double)mapped / (double)gap;
    if (!p->reserved && left) { /* no allocator figures: the heap is in the gap */
        uint64_t heap = p->heap_live < left ? p->heap_live : left;
        attribute(f, ATTRIBUTION_ALLOCATOR, heap, gap,
                  "the heap's blocks (the allocator's own figures are unknown)");
        left -= heap;
    }
    if (!left)
        return;
    const summary_point_t *r = rollup_near(s, i);
    if (!r) {
        attribute(f, ATTRIBUTION_OTHER, left, gap,
                  "not in the recorded mappings (the trace has no smaps_rollup)");
        return;
    }
    uint64_t file = r->rollup_rss - r->rollup_anon;
    file = file > p->mapped_file ? file - p->mapped_file : 0;
    if (file > left)
        file = left;
    attribute(f, ATTRIBUTION_OTHER, file, gap,
              "file pages: code, libraries and files read, not in recorded mappings");
    left -= file;
    attribute(f, ATTRIBUTION_OTHER, left, gap,
              "anonymous memory outside the heap and the recorded mappings: thread stacks, "
              "the allocator's own mappings, memory it has not returned");
}

/* Appends the attribution's gist to the description. */
static void describe_attribution(finding_t *f, const mappings_t *m)
{
    if (f->series != SERIES_GAP || f->mapping_share < 0.01)
        return;
    size_t len = strlen(f->description);
    uint64_t anon = 0, all = 0;
    for (size_t i = 0; i < f->nattribution; i++)
        if (f->attribution[i].kind == ATTRIBUTION_MAPPING) {
            all += f->attribution[i].bytes;
            anon += f->attribution[i].file ? 0 : f->attribution[i].bytes;
        }
    const char *what = anon == all ? "anonymous mappings" : anon == 0 ? "file mappings"
                                                                        : "mappings";
    uint64_t calls = m ? m->calls : 0;
    char never[64] = "";
    if (f->classification == FINDING_DRIFT && m)
        snprintf(never, sizeof never, ", %s never unmapped",
                 units_format_bytes(m->live, (char[32]){0}, 32));
    snprintf(f->description + len, sizeof f->description - len,
             " %.0f%% of it is the program's own %s (%" PRIu64 " mmap call%s%s).",
             100 * f->mapping_share, what, calls, calls == 1 ? "" : "s", never);
}

/* ---- the analysis ---------------------------------------------------------------------- */

static int by_severity(const void *a, const void *b)
{
    const finding_t *x = a, *y = b;
    if (x->severity != y->severity)
        return (int)y->severity - (int)x->severity;
    return (y->bytes > x->bytes) - (y->bytes < x->bytes);
}

static size_t point_at(const summary_t *s, uint64_t t)
{
    for (size_t i = 0; i < s->npoints; i++)
        if (s->points[i].t == t)
            return i;
    return s->npoints ? s->npoints - 1 : 0;
}

/* Keeps f when it is significant: its severity, attribution, remediation. */
static void keep(findings_t *out, finding_t *f, const summary_t *s, const mappings_t *m,
                 const findings_config_t *c, uint64_t max_total)
{
    uint64_t rss = summary_peak_rss(s);
    f->share_of_rss = rss ? (double)f->bytes / (double)rss : 0;
    bool machine = f->series == SERIES_GAP && max_total &&
                   (double)f->bytes >= c->gap_ratio * (double)max_total;
    if (f->bytes < c->min_bytes || (f->share_of_rss < c->min_share && !machine))
        return;
    f->severity = f->share_of_rss >= c->critical_share ? SEVERITY_CRITICAL
                  : f->share_of_rss >= c->warn_share   ? SEVERITY_WARNING
                                                       : SEVERITY_INFO;
    f->phase = summary_phase_at(s, f->t);
    if (f->classification == FINDING_FRAGMENTATION) {
        attribute(f, ATTRIBUTION_ALLOCATOR, f->bytes, f->bytes,
                  "reserved by the allocator but not in use");
    } else if (f->series == SERIES_GAP) {
        explain_gap(f, s, m, point_at(s, f->t));
        describe_attribution(f, m);
    } else {
        attribute(f, ATTRIBUTION_ALLOCATOR, f->bytes, f->bytes, "the live heap");
    }
    remediate(c, f);
    if (out->n < FINDINGS_MAX)
        out->v[out->n++] = *f;
}

void findings_analyze(const summary_t *s, const mappings_t *m, const findings_config_t *c,
                      findings_t *out)
{
    out->n = 0;
    size_t n = s->npoints;
    series_t gap = {.which = SERIES_GAP}, heap = {.which = SERIES_HEAP};
    gap.v = malloc((n + 1) * sizeof *gap.v);
    heap.v = malloc((n + 1) * sizeof *heap.v);
    gap.t = malloc((n + 1) * sizeof *gap.t);
    heap.t = malloc((n + 1) * sizeof *heap.t);
    uint64_t max_total = 0;
    double heap_sum = 0;
    finding_t f;
    if (gap.v && heap.v && gap.t && heap.t) {
        for (size_t i = 0; i < n; i++) {
            const summary_point_t *p = &s->points[i];
            heap.v[heap.n] = (double)p->heap_live;
            heap.t[heap.n++] = p->t;
            heap_sum += (double)p->heap_live;
            if (!p->total)
                continue;
            gap.v[gap.n] = (double)p->used - (double)p->reserved;
            gap.t[gap.n++] = p->t;
            if (p->total > max_total)
                max_total = p->total;
        }
        if (gap.n >= 3) {
            if (spikes(c, &gap, &f))
                keep(out, &f, s, m, c, max_total);
            if (drift(c, &gap, 0, &f))
                keep(out, &f, s, m, c, max_total);
            if (fragmentation(c, s, &gap, &f))
                keep(out, &f, s, m, c, max_total);
        }
        if (heap.n >= 3) {
            double mean_heap = heap_sum / (double)heap.n;
            if (spikes(c, &heap, &f))
                keep(out, &f, s, m, c, 0);
            if (drift(c, &heap, fmax(65536.0, 0.1 * mean_heap), &f))
                keep(out, &f, s, m, c, 0);
        }
    }
    free(gap.v);
    free(heap.v);
    free(gap.t);
    free(heap.t);
    qsort(out->v, out->n, sizeof out->v[0], by_severity);
}
