/*
 * findings: the gap and heap classifiers.  See findings.h.
 */
#include "analyzer/findings.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/stats.h"
#include "core/units.h"

static const char *const default_remediation[][3] = {
    {"transient_spike",
     "Look at what the program does at the spike's time and phase: a burst of short-lived "
     "allocations or a large temporary buffer.",
     "Reuse buffers across iterations, or cap the size of the burst."},
    {"persistent_drift",
     "The footprint grows steadily: look for caches without a bound, lists that only grow, or "
     "allocations never freed (the leaks and sites).",
     "Compare two runs of different lengths: a leak grows with the run."},
    {"fragmentation_like",
     "The allocator holds much more than it hands out: freed memory is not returned or not "
     "reusable.",
     "Try malloc_trim, another allocator, or the strategies ranked by the replay."},
};

int findings_severity_rank(const char *severity)
{
    if (!severity)
        return -1;
    if (!strcmp(severity, "info"))
        return 0;
    if (!strcmp(severity, "warning"))
        return 1;
    if (!strcmp(severity, "critical"))
        return 2;
    return -1;
}

static json_t *remediation_for(const findings_config_t *c, const char *classification)
{
    json_t *custom = c->remediation ? json_object_get(c->remediation, classification) : NULL;
    if (json_is_array(custom))
        return json_deep_copy(custom);
    json_t *a = json_array();
    for (size_t i = 0; i < sizeof default_remediation / sizeof default_remediation[0]; i++)
        if (!strcmp(default_remediation[i][0], classification)) {
            json_array_append_new(a, json_string(default_remediation[i][1]));
            json_array_append_new(a, json_string(default_remediation[i][2]));
        }
    return a;
}

static double round_to(double v, int digits)
{
    double f = pow(10.0, digits);
    return round(v * f) / f;
}

static json_t *finding(const findings_config_t *c, const summary_t *s, const char *classification,
                       const char *series, const char *severity, double confidence,
                       json_t *evidence, const char *description, uint64_t t)
{
    const char *phase = summary_phase_at(s, t);
    return json_pack("{s:s, s:s, s:s, s:f, s:o, s:s, s:o, s:f, s:I, s:s?}", "classification",
                     classification, "series", series, "severity", severity, "confidence",
                     round_to(confidence, 3), "evidence", evidence, "description", description,
                     "remediation", remediation_for(c, classification), "evidence_at_s",
                     (double)(t - s->first_t) / 1e9, "evidence_t_ns", (json_int_t)t, "phase",
                     phase);
}

/* Transient spikes in v (n values at times t). */
static json_t *spikes(const findings_config_t *c, const summary_t *s, const char *series,
                      const double *v, const uint64_t *t, size_t n)
{
    double mean = stats_mean(v, n), std = stats_std(v, n);
    if (!(std > 0))
        return NULL;
    size_t count = 0, top = 0;
    for (size_t i = 0; i < n; i++) {
        if (stats_zscore(v[i], mean, std) > c->spike_z)
            count++;
        if (v[i] > v[top])
            top = i;
    }
    if (!count)
        return NULL;
    double max_z = stats_zscore(v[top], mean, std);
    char desc[256], a[32];
    snprintf(desc, sizeof desc, "%zu transient spike(s) in the %s (max z-score %.1f, peak %s).",
             count, !strcmp(series, "gap") ? "device-vs-allocator gap" : "live heap", max_z,
             units_format_bytes(v[top] > 0 ? (uint64_t)v[top] : 0, a, sizeof a));
    json_t *ev = json_pack("{s:I, s:f, s:f, s:f, s:f}", "spike_count", (json_int_t)count,
                           "max_bytes", v[top], "max_zscore", round_to(max_z, 3), "mean_bytes",
                           round_to(mean, 1), "std_bytes", round_to(std, 1));
    return finding(c, s, "transient_spike", series,
                   max_z > 2 * c->spike_z ? "critical" : "warning",
                   fmin(1.0, max_z / (3 * c->spike_z)), ev, desc, t[top]);
}

/* Upward drift in v over time; min_growth: bytes the fitted line must
 * rise over the run (0: no minimum). */
static json_t *drift(const findings_config_t *c, const summary_t *s, const char *series,
                     const double *v, const uint64_t *t, size_t n, double min_growth)
{
    if (n < 5)
        return NULL;
    double *x = malloc(n * sizeof *x);
    if (!x)
        return NULL;
    for (size_t i = 0; i < n; i++)
        x[i] = (double)(t[i] - t[0]);
    stats_linregress_t lr;
    int rc = stats_linregress(x, v, n, &lr);
    double span = x[n - 1];
    free(x);
    if (rc || !(lr.slope > 0) || lr.r_squared < c->drift_r2 || lr.slope * span < min_growth)
        return NULL;
    double per_s = lr.slope * 1e9;
    char desc[256], a[32];
    snprintf(desc, sizeof desc, "The %s is drifting upward at %s/s (R²=%.2f).",
             !strcmp(series, "gap") ? "device-vs-allocator gap" : "live heap",
             units_format_bytes((uint64_t)fabs(per_s), a, sizeof a), lr.r_squared);
    json_t *ev = json_pack("{s:f, s:f, s:f, s:f, s:f}", "slope_bytes_per_sec",
                           round_to(per_s, 1), "r_squared", round_to(lr.r_squared, 4), "p_value",
                           round_to(lr.p_value, 6), "start_bytes", v[0], "end_bytes", v[n - 1]);
    return finding(c, s, "persistent_drift", series,
                   lr.r_squared > 0.85 ? "critical" : "warning", fmin(1.0, lr.r_squared), ev,
                   desc, t[n - 1]);
}

static json_t *fragmentation(const findings_config_t *c, const summary_t *s, const double *gaps,
                             size_t ngaps)
{
    double sum = 0, max = 0;
    size_t n = 0, at = 0;
    for (size_t i = 0; i < s->npoints; i++) {
        const summary_point_t *p = &s->points[i];
        if (!p->total || !p->reserved)
            continue;
        double f = ((double)p->reserved - (double)p->allocated) / (double)p->reserved;
        sum += f;
        if (!n || f > max) {
            max = f;
            at = i;
        }
        n++;
    }
    if (!n || sum / (double)n < c->frag_ratio)
        return NULL;
    /* The finding's time: when the fragmentation set in, the first sample
     * within a point of the worst (holes that last keep it near there:
     * what moves it a little later is noise, such as a small arena growth). */
    for (size_t i = 0; i < s->npoints; i++) {
        const summary_point_t *p = &s->points[i];
        if (!p->total || !p->reserved)
            continue;
        double f = ((double)p->reserved - (double)p->allocated) / (double)p->reserved;
        if (f >= max - 0.01) {
            at = i;
            break;
        }
    }
    double avg = sum / (double)n;
    char desc[256];
    snprintf(desc, sizeof desc,
             "Allocator fragmentation averaging %.0f%% suggests reserved-but-unused memory is "
             "inflating the footprint.", 100 * avg);
    json_t *ev = json_pack("{s:f, s:f, s:f, s:I}", "avg_fragmentation_ratio", round_to(avg, 4),
                           "max_fragmentation_ratio", round_to(max, 4), "avg_gap_bytes",
                           round_to(stats_mean(gaps, ngaps), 1), "sample_count", (json_int_t)n);
    return finding(c, s, "fragmentation_like", "gap", avg > 0.5 ? "critical" : "warning",
                   fmin(1.0, avg / 0.6), ev, desc, s->points[at].t);
}

static int by_severity(const void *a, const void *b)
{
    json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    int sx = findings_severity_rank(json_string_value(json_object_get(x, "severity")));
    int sy = findings_severity_rank(json_string_value(json_object_get(y, "severity")));
    if (sx != sy)
        return sy - sx;
    double cx = json_real_value(json_object_get(x, "confidence"));
    double cy = json_real_value(json_object_get(y, "confidence"));
    return (cy > cx) - (cy < cx);
}

json_t *findings_analyze(const summary_t *s, const findings_config_t *c)
{
    json_t *found[8];
    size_t nf = 0;
    size_t n = s->npoints;
    double *gap = malloc((n + 1) * sizeof *gap), *heap = malloc((n + 1) * sizeof *heap);
    uint64_t *tg = malloc((n + 1) * sizeof *tg), *th = malloc((n + 1) * sizeof *th);
    size_t ng = 0, nh = 0;
    double max_ratio = 0, heap_sum = 0;
    if (gap && heap && tg && th) {
        for (size_t i = 0; i < n; i++) {
            const summary_point_t *p = &s->points[i];
            heap[nh] = (double)p->heap_live;
            th[nh++] = p->t;
            heap_sum += (double)p->heap_live;
            if (!p->total)
                continue;
            gap[ng] = (double)p->used - (double)p->reserved;
            tg[ng++] = p->t;
            double r = fabs(gap[ng - 1]) / (double)p->total;
            if (r > max_ratio)
                max_ratio = r;
        }
        json_t *f;
        if (ng >= 3 && max_ratio >= c->gap_ratio) {
            if ((f = spikes(c, s, "gap", gap, tg, ng)))
                found[nf++] = f;
            if ((f = drift(c, s, "gap", gap, tg, ng, 0)))
                found[nf++] = f;
            if ((f = fragmentation(c, s, gap, ng)))
                found[nf++] = f;
        }
        if (nh >= 3) {
            double mean_heap = heap_sum / (double)nh;
            if ((f = spikes(c, s, "heap_live", heap, th, nh)))
                found[nf++] = f;
            if ((f = drift(c, s, "heap_live", heap, th, nh, fmax(65536.0, 0.1 * mean_heap))))
                found[nf++] = f;
        }
    }
    free(gap);
    free(heap);
    free(tg);
    free(th);
    qsort(found, nf, sizeof found[0], by_severity);
    json_t *list = json_array();
    for (size_t i = 0; i < nf; i++)
        json_array_append_new(list, found[i]);
    return list;
}
