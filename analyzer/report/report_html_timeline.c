/*
 * report_html_timeline: the timeline's data block.  See
 * report_html_timeline.h.
 */
#include "analyzer/report/report_html_timeline.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/report/downsample.h"
#include "analyzer/escape.h"
#include "analyzer/report/report_page.h"
#include "analyzer/consume/timeline.h"
#include "lib/units.h"

#define TL_BUCKETS 300 /* points kept of a series: twice this at most (min and max) */

/* One series into the data: its times and values, cut to `buckets`
 * buckets' minima and maxima (analyzer/report/downsample.h), TL_BUCKETS at most. */
static void add_series(json_t *list, const char *name, const char *color, bool on, bool dash,
                       const double *t, const double *v, size_t n, size_t buckets)
{
    double ot[2 * TL_BUCKETS + 2], ov[2 * TL_BUCKETS + 2];
    buckets = buckets > TL_BUCKETS ? TL_BUCKETS : buckets;
    size_t m = n <= 2 * buckets ? n : downsample_minmax(t, v, n, buckets, ot, ov);
    const double *tt = n <= 2 * buckets ? t : ot, *vv = n <= 2 * buckets ? v : ov;
    json_t *jt = json_array(), *jv = json_array();
    for (size_t i = 0; i < m; i++) {
        json_array_append_new(jt, json_real(round(tt[i] * 1e4) / 1e4));
        json_array_append_new(jv, json_integer((json_int_t)vv[i]));
    }
    json_array_append_new(list, json_pack("{s:s, s:s, s:b, s:b, s:o, s:o}", "name", name, "color",
                                          color, "on", on, "dash", dash, "t", jt, "v", jv));
}

static const char *const scolors[] = {"#8c564b", "#e377c2", "#bcbd22", "#393b79", "#ad494a",
                                      "#637939"};

/* The samples' series: RSS, tree RSS (when the process's children show
 * in it), the allocator's reserved memory, and the gap (off at first). */
static void sampled_series(json_t *series, const summary_t *s, size_t buckets)
{
    size_t n = s->npoints;
    double *t = malloc((n ? n : 1) * sizeof *t), *v = malloc((n ? n : 1) * sizeof *v);
    bool has_children = false;
    for (size_t i = 0; i < n; i++)
        has_children = has_children || s->points[i].tree_rss > s->points[i].used;
    enum { RSS, TREE, RESERVED, GAP };
    static const struct { const char *name, *color; } sampled[] = {
        {"RSS", "#d62728"}, {"tree RSS", "#ff9896"}, {"allocator reserved", "#9467bd"},
        {"gap (RSS - reserved)", "#7f7f7f"}};
    for (int k = 0; t && v && n >= 2 && k < 4; k++) {
        if (k == TREE && !has_children)
            continue;
        for (size_t i = 0; i < n; i++) {
            const summary_point_t *p = &s->points[i];
            t[i] = summary_secs(s, p->t);
            v[i] = k == RSS ? (double)p->used : k == TREE ? (double)p->tree_rss
                 : k == RESERVED ? (double)p->reserved
                 : p->used > p->reserved ? (double)(p->used - p->reserved) : 0;
        }
        add_series(series, sampled[k].name, sampled[k].color, k != GAP, false, t, v, n, buckets);
    }
    free(t);
    free(v);
}

/* Heap and mapped live from every event, each bucket's min and max; *t1
 * raised to the last bucket's end. */
static void event_series(json_t *series, process_t *pr, size_t buckets, double *t1)
{
    const summary_t *s = &pr->s;
    const timeline_t *tl = &pr->timeline;
    double *et = malloc(2 * TIMELINE_BUCKETS * sizeof *et), *ev[3];
    for (int k = 0; k < 3; k++)
        ev[k] = malloc(2 * TIMELINE_BUCKETS * sizeof **ev);
    size_t ne = 0;
    for (size_t i = 0; et && ev[0] && ev[1] && ev[2] && i < tl->n; i++) {
        const timeline_bucket_t *b = &tl->v[i];
        if (!b->used)
            continue;
        et[ne] = summary_secs(s, tl->t0 + (uint64_t)((double)i * (double)tl->width));
        et[ne + 1] = summary_secs(s, tl->t0 + (uint64_t)(((double)i + 0.99) * (double)tl->width));
        ev[0][ne] = (double)b->heap_min, ev[0][ne + 1] = (double)b->heap_max;
        ev[1][ne] = (double)b->mapped_min, ev[1][ne + 1] = (double)b->mapped_max;
        ev[2][ne] = (double)b->sum_min, ev[2][ne + 1] = (double)b->sum_max;
        ne += 2;
    }
    static const struct { const char *name, *color; } evs[] = {
        {"heap live", "#1f77b4"}, {"mapped live", "#2ca02c"}, {"heap + mapped", "#17becf"}};
    for (int k = 0; ne >= 2 && k < 3; k++)
        add_series(series, evs[k].name, evs[k].color, true, false, et, ev[k], ne, buckets);
    if (ne && et[ne - 1] > *t1)
        *t1 = et[ne - 1];
    free(et);
    for (int k = 0; k < 3; k++)
        free(ev[k]);
}

/* Each strategy's footprint at the samples, dashed, off at first. */
static void strategy_series(json_t *series, process_t *pr, size_t buckets)
{
    const summary_t *s = &pr->s;
    double *st = malloc((pr->nmarks + 1) * sizeof *st), *sv = malloc((pr->nmarks + 1) * sizeof *sv);
    for (size_t k = 0; st && sv && k < pr->nresults; k++) {
        const replay_result_t *r = &pr->results[k];
        size_t m = r->nseries < pr->nmarks ? r->nseries : pr->nmarks;
        if (m < 2)
            continue;
        for (size_t i = 0; i < m; i++) {
            st[i] = summary_secs(s, pr->marks_t[i]);
            sv[i] = (double)r->series[i];
        }
        char name[64];
        snprintf(name, sizeof name, "footprint: %s", r->name);
        add_series(series, name, scolors[k % 6], false, true, st, sv, m, buckets);
    }
    free(st);
    free(sv);
}

/* The phases, the last one open to t1. */
static json_t *phases_data(const summary_t *s, double t1)
{
    json_t *phases = json_array();
    for (size_t i = 0; i < s->nphases; i++) {
        const summary_phase_t *ph = &s->phases[i];
        json_array_append_new(phases, json_pack("{s:o, s:f, s:f}", "name", escape_json(ph->name), "b",
                                                summary_secs(s, ph->begin), "e",
                                                ph->end == UINT64_MAX ? t1 : summary_secs(s, ph->end)));
    }
    return phases;
}

/* The findings: each one's stretch or fitted line, and its text. */
static json_t *findings_data(process_t *pr, symbols_t *store, frames_t *fr)
{
    const summary_t *s = &pr->s;
    json_t *findings = json_array();
    for (size_t i = 0; i < pr->findings.n; i++) {
        const finding_t *fd = &pr->findings.v[i];
        char text[3000], a[32];
        int at = snprintf(text, sizeof text, "[%s] %s: ", findings_severity_name(fd->severity),
                          findings_class_words(fd->classification));
        report_describe(pr, store, fd, fr, text + at, sizeof text - (size_t)at);
        report_part_t parts[FINDING_MAX_ATTRIBUTION];
        size_t np = report_parts(pr, store, fd, fr, parts);
        for (size_t k = 0; k < np; k++) {
            size_t len = strlen(text);
            snprintf(text + len, sizeof text - len, "\n%.0f%% %s %s", 100 * parts[k].share,
                     units_format_bytes(parts[k].bytes, a, sizeof a), parts[k].label);
        }
        double v0 = fd->v0, T0 = summary_secs(s, fd->t0), T1 = summary_secs(s, fd->t1);
        if (fd->classification == FINDING_DRIFT && v0 < 0 && fd->v1 > 0) { /* from where it is >= 0 */
            T0 += (T1 - T0) * (-v0 / (fd->v1 - v0));
            v0 = 0;
        }
        json_array_append_new(findings, json_pack("{s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:o}", "kind",
                                                  fd->classification == FINDING_DRIFT ? "fit" : "stretch",
                                                  "severity", findings_severity_name(fd->severity), "t",
                                                  summary_secs(s, fd->t), "t0", T0, "t1", T1, "v0", v0,
                                                  "v1", fd->v1, "text", escape_json(text)));
    }
    return findings;
}

/* A series whose times are an earlier one's names that one instead (the
 * strategies' footprints share the samples' times). */
static void share_times(json_t *series)
{
    for (size_t i = 1; i < json_array_size(series); i++) {
        json_t *si = json_array_get(series, i);
        for (size_t j = 0; j < i; j++) {
            json_t *tj = json_object_get(json_array_get(series, j), "t");
            if (json_is_array(tj) && json_equal(json_object_get(si, "t"), tj)) {
                json_object_set_new(si, "t", json_integer((json_int_t)j));
                break;
            }
        }
    }
}

/* The timeline's data: the samples' series, heap and mapped live from
 * every event, each strategy's footprint (off at first), the phases and
 * the findings.  buckets: each series' points, TL_BUCKETS in a full
 * section, half in a brief one (a make's compilers' timelines were a
 * third of its page). */
static json_t *timeline_data(process_t *pr, symbols_t *store, frames_t *fr, size_t buckets)
{
    const summary_t *s = &pr->s;
    size_t n = s->npoints;
    double t1 = n ? summary_secs(s, s->points[n - 1].t) : 0;
    json_t *series = json_array();
    sampled_series(series, s, buckets);
    event_series(series, pr, buckets, &t1);
    strategy_series(series, pr, buckets);
    json_t *phases = phases_data(s, t1), *findings = findings_data(pr, store, fr);
    share_times(series);
    return json_pack("{s:f, s:f, s:o, s:o, s:o}", "t0", 0.0, "t1", t1 > 0 ? t1 : 1e-3, "series",
                     series, "phases", phases, "findings", findings);
}

void report_html_timeline(FILE *f, process_t *pr, symbols_t *store, frames_t *fr, size_t index,
                          bool full)
{
    if (pr->s.npoints < 2) {
        fputs("<p class=\"none\">Fewer than two samples: no timeline.</p>\n", f);
        return;
    }
    char id[32];
    snprintf(id, sizeof id, "timeline-%zu", index);
    json_t *d = timeline_data(pr, store, fr, full ? TL_BUCKETS : TL_BUCKETS / 2);
    report_page_data(f, id, d);
    json_decref(d);
    fprintf(f, "<div class=\"timeline\" id=\"timeline\" data-src=\"%s\"></div>\n", id);
}
