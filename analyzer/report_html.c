/*
 * report_html: one self-contained HTML file (see report.h): inline CSS,
 * inline SVG drawn here, and a few lines of inline script for the flame
 * graph's weight and search.  A Content-Security-Policy forbids every
 * fetch, so the file opens offline and nothing in it can load anything.
 * Every string from a trace goes through escape_html.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyzer/downsample.h"
#include "analyzer/escape.h"
#include "analyzer/flame.h"
#include "analyzer/groups.h"
#include "analyzer/report.h"
#include "analyzer/timeline.h"
#include "core/units.h"

#define W 960           /* plot width in px */
#define TL_H 280        /* timeline height */
#define PAD_L 70
#define PAD_R 10
#define PAD_T 10
#define PAD_B 30

static const char *fmt_bytes(uint64_t b, char *buf, size_t len) { return units_format_bytes(b, buf, len); }

/* ---- the timeline ---------------------------------------------------------------- */

typedef struct series_s {
    const char *name, *color;
    double *v;
} series_t;

static void polyline(FILE *f, const double *t, const double *v, size_t n, double t1, double vmax,
                     const char *color, const char *name)
{
    double ot[2 * W], ov[2 * W];
    size_t m = downsample_minmax(t, v, n, W - PAD_L - PAD_R, ot, ov);
    fprintf(f, "<polyline class=\"series\" data-name=\"%s\" fill=\"none\" stroke=\"%s\" "
               "stroke-width=\"1.5\" points=\"", name, color);
    for (size_t i = 0; i < m; i++) {
        double x = PAD_L + (t1 > 0 ? ot[i] / t1 : 0) * (W - PAD_L - PAD_R);
        double y = PAD_T + (1 - (vmax > 0 ? ov[i] / vmax : 0)) * (TL_H - PAD_T - PAD_B);
        fprintf(f, "%.1f,%.1f ", x, y);
    }
    fputs("\"/>\n", f);
}

static const char *const scolors[] = {"#8c564b", "#e377c2", "#bcbd22", "#393b79", "#ad494a",
                                      "#637939"};

static void timeline(FILE *f, process_t *pr, symbols_t *store, frames_t *fr)
{
    const summary_t *s = &pr->s;
    size_t n = s->npoints;
    if (n < 2) {
        fputs("<p class=\"none\">Fewer than two samples: no timeline.</p>\n", f);
        return;
    }
    double *t = malloc(n * sizeof *t);
    series_t ser[] = {
        {"RSS", "#d62728", NULL},          {"tree RSS", "#ff9896", NULL},
        {"heap live", "#1f77b4", NULL},    {"mapped live", "#2ca02c", NULL},
        {"heap + mapped", "#17becf", NULL}, {"allocator reserved", "#9467bd", NULL},
        {"gap (RSS - reserved)", "#7f7f7f", NULL},
    };
    size_t ns = sizeof ser / sizeof ser[0];
    bool ok = t != NULL, has_children = false;
    for (size_t i = 0; i < n; i++)
        has_children = has_children || s->points[i].tree_rss > s->points[i].used;
    for (size_t k = 0; k < ns; k++)
        ok = (ser[k].v = malloc(n * sizeof(double))) && ok;
    double vmax = 1;
    for (size_t i = 0; ok && i < n; i++) {
        const summary_point_t *p = &s->points[i];
        t[i] = summary_secs(s, p->t);
        double vals[] = {(double)p->used, (double)p->tree_rss, (double)p->heap_live, (double)p->mapped,
                         (double)(p->heap_live + p->mapped), (double)p->reserved,
                         p->used > p->reserved ? (double)(p->used - p->reserved) : 0};
        for (size_t k = 0; k < ns; k++) {
            ser[k].v[i] = vals[k];
            if (vals[k] > vmax)
                vmax = vals[k];
        }
    }
    /* heap and mapped live from every event (analyzer/timeline.h): each
     * bucket's minimum and maximum, so that what lived between two
     * samples is drawn too */
    const timeline_t *tl = &pr->timeline;
    size_t ne = 0;
    double *et = malloc(2 * TIMELINE_BUCKETS * sizeof *et);
    double *eh = malloc(2 * TIMELINE_BUCKETS * sizeof *eh);
    double *em = malloc(2 * TIMELINE_BUCKETS * sizeof *em);
    double *es = malloc(2 * TIMELINE_BUCKETS * sizeof *es);
    for (size_t i = 0; et && eh && em && es && i < tl->n; i++) {
        const timeline_bucket_t *b = &tl->v[i];
        if (!b->used)
            continue;
        double at = summary_secs(s, tl->t0 + (uint64_t)((double)i * (double)tl->width));
        double at2 = summary_secs(s, tl->t0 + (uint64_t)(((double)i + 0.99) * (double)tl->width));
        et[ne] = at, eh[ne] = (double)b->heap_min, em[ne] = (double)b->mapped_min;
        es[ne++] = (double)b->sum_min;
        et[ne] = at2, eh[ne] = (double)b->heap_max, em[ne] = (double)b->mapped_max;
        es[ne++] = (double)b->sum_max;
        if ((double)b->sum_max > vmax)
            vmax = (double)b->sum_max;
    }
    /* the strategies' footprints join the scale unless one is far above
     * the program's own memory (it would flatten everything else) */
    bool drawn[REPLAY_MAX_STRATEGIES] = {0};
    double own = vmax;
    for (size_t k = 0; k < pr->nresults; k++) {
        const replay_result_t *r = &pr->results[k];
        double top = 0;
        for (size_t i = 0; i < r->nseries && i < pr->nmarks; i++)
            top = (double)r->series[i] > top ? (double)r->series[i] : top;
        drawn[k] = r->nseries >= 2 && pr->nmarks >= 2 && top <= 3 * own;
        if (drawn[k] && top > vmax)
            vmax = top;
    }
    double t1 = ok ? t[n - 1] : 0;
    if (ne && et[ne - 1] > t1)
        t1 = et[ne - 1];
    char a[32];
    fprintf(f, "<svg id=\"timeline\" class=\"plot\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "
               "role=\"img\" aria-label=\"timeline\">\n", W, TL_H, W, TL_H);
    /* phases, shaded and named */
    for (size_t i = 0; ok && i < s->nphases; i++) {
        const summary_phase_t *ph = &s->phases[i];
        double b = summary_secs(s, ph->begin), e = ph->end == UINT64_MAX ? t1 : summary_secs(s, ph->end);
        double x0 = PAD_L + (t1 > 0 ? b / t1 : 0) * (W - PAD_L - PAD_R);
        double x1 = PAD_L + (t1 > 0 ? e / t1 : 0) * (W - PAD_L - PAD_R);
        fprintf(f, "<g class=\"phase\"><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
                   "fill=\"#%s\" opacity=\"0.35\"/><text x=\"%.1f\" y=\"%d\" class=\"phase-name\">",
                x0, PAD_T, x1 - x0 > 0.5 ? x1 - x0 : 0.5, TL_H - PAD_T - PAD_B,
                i % 2 ? "fde0c5" : "e5f5e0", x0 + 3, PAD_T + 12);
        escape_html(f, ph->name);
        fputs("</text></g>\n", f);
    }
    /* axes */
    for (int k = 0; k <= 4; k++) {
        double y = PAD_T + (1 - k / 4.0) * (TL_H - PAD_T - PAD_B);
        fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>"
                   "<text x=\"%d\" y=\"%.1f\" class=\"axis\" text-anchor=\"end\">%s</text>\n",
                PAD_L, W - PAD_R, y, y, PAD_L - 4, y + 4,
                fmt_bytes((uint64_t)(vmax * k / 4), a, sizeof a));
    }
    for (int k = 0; k <= 4; k++) {
        double x = PAD_L + k / 4.0 * (W - PAD_L - PAD_R);
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" class=\"axis\" text-anchor=\"middle\">%.2f s</text>\n",
                x, TL_H - 10, t1 * k / 4);
    }
    for (size_t k = 0; ok && k < ns; k++) {
        if (k == 1 && !has_children) /* the tree is the process itself */
            continue;
        if (ne && (k == 2 || k == 3 || k == 4)) /* from the events */
            polyline(f, et, k == 2 ? eh : k == 3 ? em : es, ne, t1, vmax, ser[k].color, ser[k].name);
        else
            polyline(f, t, ser[k].v, n, t1, vmax, ser[k].color, ser[k].name);
    }
    free(et);
    free(eh);
    free(em);
    free(es);
    /* each strategy's footprint at the samples, dashed */
    double *st = malloc((pr->nmarks + 1) * sizeof *st), *sv = malloc((pr->nmarks + 1) * sizeof *sv);
    for (size_t k = 0; ok && st && sv && k < pr->nresults; k++) {
        const replay_result_t *r = &pr->results[k];
        size_t m = r->nseries < pr->nmarks ? r->nseries : pr->nmarks;
        if (!drawn[k])
            continue;
        for (size_t i = 0; i < m; i++) {
            st[i] = summary_secs(s, pr->marks_t[i]);
            sv[i] = (double)r->series[i];
        }
        fprintf(f, "<g class=\"strategy-series\" stroke-dasharray=\"5 3\">");
        char name[64];
        snprintf(name, sizeof name, "footprint: %s", r->name);
        polyline(f, st, sv, m, t1, vmax, scolors[k % 6], name);
        fputs("</g>\n", f);
    }
    free(st);
    free(sv);
    /* findings where their evidence lies, described on hover */
    for (size_t i = 0; ok && i < pr->findings.n; i++) {
        const finding_t *fd = &pr->findings.v[i];
        double x = PAD_L + (t1 > 0 ? summary_secs(s, fd->t) / t1 : 0) * (W - PAD_L - PAD_R);
        char desc[1024];
        report_describe(pr, store, fd, fr, desc, sizeof desc);
        fprintf(f, "<g class=\"finding %s\"><title>[%s] %s: ", findings_severity_name(fd->severity),
                findings_severity_name(fd->severity), findings_class_words(fd->classification));
        escape_html(f, desc);
        report_part_t parts[FINDING_MAX_ATTRIBUTION];
        size_t np = report_parts(pr, store, fd, fr, parts);
        for (size_t k = 0; k < np; k++) {
            fprintf(f, "\n%.0f%% %s ", 100 * parts[k].share, fmt_bytes(parts[k].bytes, a, sizeof a));
            escape_html(f, parts[k].label);
        }
        fputs("</title>", f);
        double X0 = PAD_L + (t1 > 0 ? summary_secs(s, fd->t0) / t1 : 0) * (W - PAD_L - PAD_R);
        double X1 = PAD_L + (t1 > 0 ? summary_secs(s, fd->t1) / t1 : 0) * (W - PAD_L - PAD_R);
        if (fd->classification == FINDING_DRIFT) { /* its fitted line, from where it is >= 0 */
            double v0 = fd->v0;
            if (v0 < 0 && fd->v1 > 0) {
                X0 += (X1 - X0) * (-v0 / (fd->v1 - v0));
                v0 = 0;
            }
            double Y0 = PAD_T + (1 - (vmax > 0 ? v0 / vmax : 0)) * (TL_H - PAD_T - PAD_B);
            double Y1 = PAD_T + (1 - (vmax > 0 ? fd->v1 / vmax : 0)) * (TL_H - PAD_T - PAD_B);
            fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" class=\"fit\"/>",
                    X0, X1, Y0, Y1);
        } else { /* the stretch */
            fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" class=\"stretch\"/>",
                    X0, TL_H - PAD_B - 8, X1 - X0 > 2 ? X1 - X0 : 2, 8);
        }
        fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" class=\"finding-line\"/>"
                   "<circle cx=\"%.1f\" cy=\"%d\" r=\"6\"/></g>\n",
                x, x, PAD_T, TL_H - PAD_B, x, PAD_T + 6);
    }
    fputs("</svg>\n<p class=\"legend\">", f);
    for (size_t k = 0; k < ns; k++)
        if (k != 1 || has_children)
            fprintf(f, "<span style=\"color:%s\">&#9632;</span> %s &nbsp; ", ser[k].color,
                    ser[k].name);
    for (size_t k = 0; k < pr->nresults; k++)
        if (drawn[k])
            fprintf(f, "<span style=\"color:%s\">&#9473;</span> footprint under %s &nbsp; ",
                    scolors[k % 6], pr->results[k].name);
    fputs("<span class=\"critical\">&#9679;</span> a finding (hover for what it is)</p>\n", f);
    free(t);
    for (size_t k = 0; k < ns; k++)
        free(ser[k].v);
}

/* ---- strategies ------------------------------------------------------------------ */

static void strategies(FILE *f, const process_t *pr)
{
    char a[32], b[32];
    if (pr->replay_skipped) {
        fprintf(f, "<p class=\"none\">Not replayed: the peak heap is under %s.</p>\n",
                fmt_bytes(ANALYZE_REPLAY_MIN_HEAP, a, sizeof a));
        return;
    }
    if (!pr->nresults) {
        fputs("<p class=\"none\">No replay (--no-replay).</p>\n", f);
        return;
    }
    uint64_t max = 1;
    for (size_t i = 0; i < pr->nresults; i++)
        if (pr->results[i].m.peak_footprint > max)
            max = pr->results[i].m.peak_footprint;
    int rows = (int)pr->nresults, h = 24 * rows + 10, lw = 110;
    fprintf(f, "<svg id=\"strategies\" class=\"plot\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\">\n",
            W, h, W, h);
    for (size_t i = 0; i < pr->nresults; i++) {
        const replay_result_t *r = &pr->results[i];
        double w = (double)r->m.peak_footprint / (double)max * (W - lw - 260);
        fprintf(f, "<g class=\"bar%s\"><title>%s: peak footprint %s, J-W fragmentation %.1f%%, "
                   "internal at peak %s, failed %" PRIu64 "</title>"
                   "<text x=\"%d\" y=\"%zu\" text-anchor=\"end\">%s</text>"
                   "<rect x=\"%d\" y=\"%zu\" width=\"%.1f\" height=\"18\" fill=\"%s\"/>"
                   "<text x=\"%.1f\" y=\"%zu\">%s, %.1f%% J-W%s</text></g>\n",
                i == 0 ? " best" : "", r->name, fmt_bytes(r->m.peak_footprint, a, sizeof a),
                100 * r->m.jw_fragmentation, fmt_bytes(r->m.internal_at_peak, b, sizeof b),
                r->failed, lw - 6, 24 * i + 18, r->name, lw, 24 * i + 5, w > 1 ? w : 1,
                i == 0 ? "#2ca02c" : "#9ecae1", lw + (w > 1 ? w : 1) + 6, 24 * i + 18,
                fmt_bytes(r->m.peak_footprint, a, sizeof a), 100 * r->m.jw_fragmentation,
                i == 0 ? " (best)" : "");
    }
    fputs("</svg>\n", f);
}

/* The simulated address space of each strategy at its peak: a strip
 * per strategy, a cell per 2 px; blue where blocks are allocated,
 * orange where a segment's blocks are free, grey outside every segment. */
static void maps(FILE *f, const process_t *pr)
{
    size_t any = 0;
    for (size_t i = 0; i < pr->nresults; i++)
        any += pr->results[i].map != NULL;
    if (!any)
        return;
    int row = 26, lw = 110, cw = (W - lw - PAD_R) / REPLAY_MAP_CELLS;
    if (cw < 1)
        cw = 1;
    int h = row * (int)pr->nresults + 4;
    char a[32], b[32];
    fputs("<h3>Fragmentation maps: each strategy's address space at its peak</h3>\n", f);
    fprintf(f, "<svg id=\"fragmaps\" class=\"plot\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\">\n",
            W, h, W, h);
    for (size_t i = 0; i < pr->nresults; i++) {
        const replay_result_t *r = &pr->results[i];
        if (!r->map)
            continue;
        const replay_map_t *m = r->map;
        fprintf(f, "<g class=\"fragmap\"><title>%s: %s of address space drawn, peak footprint %s "
                   "then (after %" PRIu64 " requests); dark blue asked for, light blue allocated past "
                   "the request, orange free in a segment, grey in no segment</title><text x=\"%d\" y=\"%zu\" text-anchor=\"end\" "
                   "class=\"axis\">%s</text>",
                r->name, fmt_bytes(m->span, a, sizeof a), fmt_bytes(m->footprint, b, sizeof b),
                m->requests, lw - 6, row * i + 16, r->name);
        /* a rect per run of cells of one colour */
        int run = 0, rgb0 = -1;
        for (int c = 0; c <= REPLAY_MAP_CELLS; c++) {
            int rgb = -2;
            if (c < REPLAY_MAP_CELLS) {
                double al = m->alloc[c] > 1 ? 1 : m->alloc[c];
                double wa = m->waste[c] > al ? al : m->waste[c] < 0 ? 0 : m->waste[c];
                double rq = al - wa; /* asked for */
                double fr = m->free[c] > 1 - al ? 1 - al : m->free[c], rest = 1 - al - fr;
                int red = (int)(rq * 31 + wa * 137 + fr * 244 + rest * 230);
                int green = (int)(rq * 78 + wa * 170 + fr * 162 + rest * 230);
                int blue = (int)(rq * 156 + wa * 230 + fr * 97 + rest * 230);
                rgb = red << 16 | green << 8 | blue;
            }
            if (rgb == rgb0)
                continue;
            if (rgb0 >= 0)
                fprintf(f, "<rect x=\"%d\" y=\"%zu\" width=\"%d\" height=\"%d\" fill=\"#%06x\"/>",
                        lw + run * cw, row * i + 4, (c - run) * cw, row - 8, (unsigned)rgb0);
            run = c;
            rgb0 = rgb;
        }
        fputs("</g>\n", f);
    }
    fputs("</svg>\n<p class=\"legend\"><span style=\"color:#1f4e9c\">&#9632;</span> allocated, "
          "asked for &nbsp; <span style=\"color:#89aae6\">&#9632;</span> allocated past the "
          "request (internal fragmentation: rounding) &nbsp; <span style=\"color:#f4a261\">&#9632;</span> free in a segment &nbsp; "
          "<span style=\"color:#e6e6e6\">&#9632;</span> in no segment; each strip is the space "
          "that strategy's footprint counts: each segment up to its highest block in use, "
          "end to end (caching: from the base to its highest segment's end)</p>\n", f);
}

/* ---- request sizes ----------------------------------------------------------------- */

static void histogram(FILE *f, const summary_t *s)
{
    int lo = 64, hi = 0;
    uint64_t max = 0;
    for (int k = 0; k <= 64; k++)
        if (s->size_hist[k]) {
            lo = k < lo ? k : lo;
            hi = k > hi ? k : hi;
            max = s->size_hist[k] > max ? s->size_hist[k] : max;
        }
    if (!max) {
        fputs("<p class=\"none\">No allocations.</p>\n", f);
        return;
    }
    int bars = hi - lo + 1, bw = (W - PAD_L) / (bars > 0 ? bars : 1), h = 180;
    if (bw > 60)
        bw = 60;
    fprintf(f, "<svg id=\"sizes\" class=\"plot\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\">\n",
            W, h + 40, W, h + 40);
    char a[32];
    for (int k = lo; k <= hi; k++) {
        double bh = (double)s->size_hist[k] / (double)max * h;
        int x = PAD_L + (k - lo) * bw;
        fprintf(f, "<g><title>%s to %s: %" PRIu64 " allocations</title>"
                   "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"#6baed6\"/>"
                   "<text x=\"%d\" y=\"%d\" class=\"axis\" text-anchor=\"middle\">%s</text></g>\n",
                k ? fmt_bytes(1ull << (k - 1), a, sizeof a) : "0 B",
                k ? fmt_bytes(k < 64 ? (1ull << k) - 1 : UINT64_MAX, (char[32]){0}, 32) : "0 B",
                s->size_hist[k], x, 10 + h - bh, bw - 2, bh, x + bw / 2, h + 28,
                k ? fmt_bytes(1ull << (k - 1), a, sizeof a) : "0");
    }
    fputs("</svg>\n", f);
}

/* ---- the flame graph (an icicle: roots on top; analyzer/flame.h) ------------------- */

static void flame(FILE *f, process_t *pr, symbols_t *store, frames_t *fr, const char *key,
                  bool shown)
{
    flame_node_t root;
    bool bytes = strcmp(key, "calls") != 0;
    flame_build(&root, pr, store, fr, key, NULL);
    int depth = flame_depth(&root);
    fprintf(f, "<svg class=\"flame plot\" data-key=\"%s\" viewBox=\"0 0 %d %d\" width=\"%d\" "
               "height=\"%d\"%s>\n", key, W, depth * FLAME_ROW, W, depth * FLAME_ROW,
            shown ? "" : " style=\"display:none\"");
    if (root.w)
        flame_draw(f, &root, W, bytes);
    else
        fprintf(f, "<text x=\"10\" y=\"14\">nothing to weigh by %s</text>\n", key);
    fputs("</svg>\n", f);
    flame_free(&root);
}

/* ---- tables ------------------------------------------------------------------------ */

static void stack_details(FILE *f, process_t *pr, symbols_t *store, uint64_t id, frames_t *fr)
{
    size_t nf = pr->have_sites ? frames_of(store, sites_get(&pr->sites, id), fr) : 0;
    fputs("<details><summary>stack</summary><ol class=\"stack\">", f);
    for (size_t k = 0; k < nf; k++) {
        char label[64];
        const symbols_frame_t *sf = &fr->v[k];
        fputs("<li>", f);
        escape_html(f, sf->function ? sf->function : symbols_label(sf, label, sizeof label));
        if (sf->file) {
            fputs(" <span class=\"at\">at ", f);
            escape_html(f, frames_base_name(sf->file));
            fprintf(f, ":%u</span>", sf->line);
        } else if (sf->name) {
            fputs(" <span class=\"at\">in ", f);
            escape_html(f, sf->name);
            fputs("</span>", f);
        }
        fputs("</li>", f);
    }
    if (!nf)
        fputs("<li>(no frames)</li>", f);
    fputs("</ol></details>", f);
}

static void sites_table(FILE *f, process_t *pr, symbols_t *store, const analyze_opts_t *o,
                        frames_t *fr, sites_key_t key, const char *what)
{
    if (!pr->have_sites)
        return;
    groups_t g;
    if (groups_build(&g, &pr->sites, store, key, fr))
        return;
    char a[32], b[32], c[32];
    size_t ranked = groups_ranked(&g);
    if (!ranked) {
        fprintf(f, "<h3>Top allocating functions by %s</h3>\n<p class=\"none\">None.</p>\n", what);
        groups_free(&g);
        return;
    }
    fprintf(f, "<h3>Top allocating functions by %s</h3>\n<table class=\"sites\"><tr><th>#</th>"
               "<th>function</th><th>live at peak</th><th>calls</th><th>allocated</th>"
               "<th>leaked</th><th>stacks</th></tr>\n", what);
    size_t n = ranked < (o->sites ? o->sites : 10) ? ranked : (o->sites ? o->sites : 10);
    for (size_t i = 0; i < n; i++) {
        const group_t *gr = &g.v[i];
        fprintf(f, "<tr><td>%zu</td><td>", i + 1);
        escape_html(f, gr->name);
        fprintf(f, "</td><td>%s</td><td>%" PRIu64 "</td><td>%s</td><td>%s in %" PRIu64
                   "</td><td>%zu ",
                fmt_bytes(gr->peak, a, sizeof a), gr->calls, fmt_bytes(gr->allocated, b, sizeof b),
                fmt_bytes(gr->leaked, c, sizeof c), gr->leaked_blocks, gr->nids);
        stack_details(f, pr, store, gr->ids[0], fr);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
    groups_free(&g);
}

/* ---- a process --------------------------------------------------------------------- */

static void process_section(FILE *f, process_t *pr, symbols_t *store, const analyze_opts_t *o,
                            frames_t *fr, size_t index)
{
    const summary_t *s = &pr->s;
    char a[32], b[32], c[32], d[32];
    unsigned sev[3] = {0};
    for (size_t i = 0; i < pr->findings.n; i++)
        sev[pr->findings.v[i].severity]++;
    fprintf(f, "<section class=\"process\" id=\"p%zu\">\n<h2>", index);
    escape_html(f, s->exe[0] ? s->exe : "?");
    fprintf(f, " <span class=\"pid\">pid %" PRId64 "</span></h2>\n<p class=\"cmd\"><code>", s->pid);
    escape_html(f, s->argv[0] ? s->argv : s->exe);
    fputs("</code></p>\n", f);
    fprintf(f, "<div class=\"cards\"><div><b>%.3f s</b>duration</div><div><b>%s</b>peak heap</div>"
               "<div><b>%s</b>peak mapped</div><div><b>%s</b>peak RSS</div><div><b>%s</b>leaked in "
               "%" PRIu64 " blocks</div><div><b>%u / %u / %u</b>critical / warning / info</div></div>\n",
            (double)(s->last_t - s->first_t) / 1e9, fmt_bytes(s->peak_heap, a, sizeof a),
            fmt_bytes(pr->maps.peak, b, sizeof b), fmt_bytes(process_peak_rss(pr), c, sizeof c),
            fmt_bytes(s->leaked_bytes, d, sizeof d), s->leaked_allocations, sev[SEVERITY_CRITICAL],
            sev[SEVERITY_WARNING], sev[SEVERITY_INFO]);
    fprintf(f, "<p>%" PRIu64 " allocations (%" PRIu64 " reallocs), %s in all, %" PRIu64
               " frees, %" PRIu64 " temporary; %" PRIu64 " mmap calls. Trace: ",
            s->allocations, s->reallocs, fmt_bytes(s->bytes_allocated, a, sizeof a), s->frees,
            s->temporaries, pr->maps.calls);
    escape_html(f, pr->path);
    fputs(".</p>\n<h3>Timeline</h3>\n", f);
    timeline(f, pr, store, fr);
    fputs("<h3>Findings</h3>\n", f);
    if (!pr->findings.n)
        fputs("<p class=\"none\">None.</p>\n", f);
    for (size_t i = 0; i < pr->findings.n; i++) {
        const finding_t *fd = &pr->findings.v[i];
        char desc[1024];
        report_describe(pr, store, fd, fr, desc, sizeof desc);
        fprintf(f, "<div class=\"finding-box %s\"><b>[%s] %s in %s</b> (%s, %.0f%% of peak RSS, from "
                   "%.3f s to %.3f s, peak at %.3f s) <p>", findings_severity_name(fd->severity),
                findings_severity_name(fd->severity), findings_class_words(fd->classification),
                findings_series_words(fd->series), fmt_bytes(fd->bytes, a, sizeof a),
                100 * fd->share_of_rss, summary_secs(s, fd->start), summary_secs(s, fd->end),
                summary_secs(s, fd->t));
        escape_html(f, desc);
        fputs("</p>", f);
        report_part_t parts[FINDING_MAX_ATTRIBUTION];
        size_t np = report_parts(pr, store, fd, fr, parts);
        if (np)
            fputs("<p>What it is made of at its peak:</p><ul class=\"parts\">", f);
        for (size_t k = 0; k < np; k++) {
            fprintf(f, "<li>%.0f%% %s ", 100 * parts[k].share, fmt_bytes(parts[k].bytes, a, sizeof a));
            if (parts[k].has_site)
                fprintf(f, "%s mappings made at ", parts[k].file ? "file" : "anonymous");
            escape_html(f, parts[k].label);
            fputs("</li>", f);
        }
        if (np)
            fputs("</ul>", f);
        fputs("<ul>", f);
        for (size_t k = 0; k < fd->nremediation; k++) {
            fputs("<li>", f);
            escape_html(f, fd->remediation[k]);
            fputs("</li>", f);
        }
        fputs("</ul></div>\n", f);
    }
    fputs("<h3>Strategies: peak footprint of the replay, best first</h3>\n", f);
    strategies(f, pr);
    maps(f, pr);
    fputs("<h3>Flame graph</h3>\n<p class=\"controls\">weight: "
          "<label><input type=\"radio\" name=\"w", f);
    fprintf(f, "%zu\" value=\"peak\" checked> live at peak</label> <label><input type=\"radio\" "
               "name=\"w%zu\" value=\"calls\"> calls</label> <label><input type=\"radio\" name=\"w%zu\" "
               "value=\"leaked\"> leaked bytes</label> <label><input type=\"radio\" name=\"w%zu\" "
               "value=\"mapped\"> mapped bytes</label> &nbsp; search: <input type=\"search\" "
               "class=\"find\" placeholder=\"function\"></p>\n<div class=\"flames\">\n",
            index, index, index, index);
    flame(f, pr, store, fr, "peak", true);
    flame(f, pr, store, fr, "calls", false);
    flame(f, pr, store, fr, "leaked", false);
    flame(f, pr, store, fr, "mapped", false);
    fputs("</div>\n", f);
    sites_table(f, pr, store, o, fr, SITES_BY_PEAK, "bytes live at the peak heap");
    sites_table(f, pr, store, o, fr, SITES_BY_LEAKED, "leaked bytes");
    fputs("<h3>Request sizes</h3>\n", f);
    histogram(f, s);
    fputs("</section>\n", f);
}

/* A process tree over time: a bar per process from its start to its
 * last record, by start, coloured by its peak RSS (darker: more). */
static void gantt(FILE *f, const process_t *procs, size_t n)
{
    uint64_t t0 = UINT64_MAX, t1 = 0, top = 1;
    size_t rows = 0;
    for (size_t i = 0; i < n; i++) {
        const summary_t *s = &procs[i].s;
        if (!procs[i].ok || !s->start_unix_ns)
            continue;
        uint64_t b = s->start_unix_ns, e = b + (s->last_t - s->first_t);
        t0 = b < t0 ? b : t0;
        t1 = e > t1 ? e : t1;
        top = process_peak_rss(&procs[i]) > top ? process_peak_rss(&procs[i]) : top;
        rows++;
    }
    if (!rows || t1 <= t0)
        return;
    size_t *order = malloc(n * sizeof *order), k = 0;
    if (!order)
        return;
    for (size_t i = 0; i < n; i++)
        if (procs[i].ok && procs[i].s.start_unix_ns)
            order[k++] = i;
    for (size_t i = 1; i < k; i++) /* by start */
        for (size_t j = i; j > 0 && procs[order[j - 1]].s.start_unix_ns > procs[order[j]].s.start_unix_ns; j--) {
            size_t x = order[j];
            order[j] = order[j - 1];
            order[j - 1] = x;
        }
    int row = 12, h = (int)k * row + 24, lw = 150;
    char a[32];
    fprintf(f, "<h2>Processes over time</h2>\n<svg id=\"gantt\" class=\"plot\" viewBox=\"0 0 %d %d\" "
               "width=\"%d\" height=\"%d\">\n", W, h, W, h);
    double span = (double)(t1 - t0);
    for (size_t r = 0; r < k; r++) {
        const process_t *pr = &procs[order[r]];
        const summary_t *s = &pr->s;
        double x0 = lw + (double)(s->start_unix_ns - t0) / span * (W - lw - PAD_R);
        double x1 = lw + (double)(s->start_unix_ns + (s->last_t - s->first_t) - t0) / span * (W - lw - PAD_R);
        unsigned light = 85 - (unsigned)(50.0 * (double)process_peak_rss(pr) / (double)top);
        fputs("<g class=\"proc\"><title>", f);
        escape_html(f, s->exe);
        fprintf(f, " (pid %" PRId64 "): %.3f s, peak RSS %s</title><text x=\"%d\" y=\"%zu\" "
                   "class=\"axis\" text-anchor=\"end\">", s->pid, (double)(s->last_t - s->first_t) / 1e9,
                fmt_bytes(process_peak_rss(pr), a, sizeof a), lw - 4, r * row + 10);
        escape_html(f, s->exe[0] ? frames_base_name(s->exe) : "?");
        fprintf(f, " %" PRId64 "</text><rect x=\"%.1f\" y=\"%zu\" width=\"%.1f\" height=\"%d\" "
                   "fill=\"hsl(5,70%%,%u%%)\"/></g>\n", s->pid, x0, r * row + 1,
                x1 - x0 > 1 ? x1 - x0 : 1, row - 2, light);
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"axis\">0 s</text><text x=\"%d\" y=\"%d\" "
               "class=\"axis\" text-anchor=\"end\">%.2f s</text>\n</svg>\n",
            lw, h - 4, W - PAD_R, h - 4, span / 1e9);
    free(order);
}

static const char css[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:1000px}"
    "h1{font-size:1.4em}h2{border-top:2px solid #ddd;padding-top:.6em}.pid{color:#888;font-size:.7em}"
    ".cards{display:flex;flex-wrap:wrap;gap:.6em}.cards div{background:#f4f6f8;padding:.5em .8em;"
    "border-radius:6px;min-width:8em}.cards b{display:block;font-size:1.2em}"
    ".plot{display:block;max-width:100%;height:auto;background:#fff}.grid{stroke:#eee}"
    ".axis{font-size:11px;fill:#666}.phase-name{font-size:11px;fill:#555}"
    ".finding circle{fill:#d62728;cursor:help}.finding.warning circle{fill:#ff7f0e}"
    ".finding.info circle{fill:#1f77b4}.finding-line{stroke:#d62728;stroke-dasharray:4 3}"
    ".fit{stroke:#000;stroke-width:2;stroke-dasharray:8 4;opacity:.6}.stretch{fill:#ff7f0e;opacity:.6}"
    ".finding-box{border-left:4px solid #d62728;padding:.2em .8em;margin:.5em 0;background:#fdf2f2}"
    ".finding-box.warning{border-color:#ff7f0e;background:#fff6ec}.finding-box.info{border-color:"
    "#1f77b4;background:#eef5fb}.critical{color:#d62728}.none{color:#888}"
    ".bar text{font-size:12px}.fname{font-size:11px;pointer-events:none}"
    ".frame rect{stroke:#fff;stroke-width:.5}.frame.hit rect{fill:#e377c2}"
    "table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #eee;padding:.2em .4em;"
    "text-align:left;vertical-align:top}.stack{margin:.2em 0;padding-left:1.5em;font-family:monospace;"
    "font-size:12px}.at{color:#888}.legend{font-size:12px}";

/* The flame graph's weight switch and search: nothing else runs. */
static const char script[] =
    "document.querySelectorAll('section.process').forEach(function(s){"
    "s.querySelectorAll('input[type=radio]').forEach(function(r){r.addEventListener('change',"
    "function(){s.querySelectorAll('svg.flame').forEach(function(g){g.style.display="
    "g.getAttribute('data-key')===r.value?'':'none';});});});"
    "var q=s.querySelector('input.find');if(q)q.addEventListener('input',function(){var v="
    "q.value.toLowerCase();s.querySelectorAll('g.frame').forEach(function(g){var t=g.querySelector("
    "'title').textContent.toLowerCase();g.classList.toggle('hit',v!==''&&t.indexOf(v)>=0);});});});";

int report_html(process_t *procs, size_t n, symbols_t *store, const analyze_opts_t *o,
                uint64_t run_peak, const char *path)
{
    char tmp[4200];
    bool to_stdout = !strcmp(path, "-");
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = to_stdout ? stdout : fopen(tmp, "w");
    if (!f) {
        escape_line(stderr, "%s: --html: cannot write %s: %s", ANALYZE_CMD, tmp, strerror(errno));
        return -1;
    }
    frames_t fr = {0};
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
          "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n<title>memsim: ",
          f);
    size_t first = SIZE_MAX, shown = 0;
    for (size_t i = 0; i < n; i++)
        if (procs[i].ok && (first == SIZE_MAX || report_weight(&procs[i]) > report_weight(&procs[first])))
            first = i;
    escape_html(f, first != SIZE_MAX ? procs[first].s.exe : "no trace");
    fprintf(f, "</title>\n<style>%s</style></head><body>\n<h1>memsim report: ", css);
    escape_html(f, first != SIZE_MAX ? procs[first].s.exe : "no trace");
    fputs("</h1>\n", f);
    if (n > 1)
        gantt(f, procs, n);
    if (n > 1) {
        char a[32];
        fprintf(f, "<p>%zu traces; peak tree RSS %s.</p>\n<table class=\"tree\"><tr><th>pid</th>"
                   "<th>exe</th><th>peak heap</th><th>peak mapped</th><th>peak RSS</th></tr>\n",
                n, fmt_bytes(report_tree_peak(procs, n, run_peak), a, sizeof a));
        for (size_t i = 0; i < n; i++) {
            if (!procs[i].ok)
                continue;
            char b[32], c[32];
            fprintf(f, "<tr><td>%" PRId64 "</td><td>", procs[i].s.pid);
            escape_html(f, procs[i].s.exe);
            fprintf(f, "</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
                    fmt_bytes(procs[i].s.peak_heap, a, sizeof a),
                    fmt_bytes(procs[i].maps.peak, b, sizeof b),
                    fmt_bytes(process_peak_rss(&procs[i]), c, sizeof c));
        }
        fputs("</table>\n", f);
    }
    /* the processes that matter, heaviest first (as the text report) */
    uint64_t total = report_total_weight(procs, n);
    size_t *order = report_order(procs, n);
    for (size_t k = 0; order && k < n; k++) {
        process_t *pr = &procs[order[k]];
        if (pr->ok && (n == 1 || report_shown(pr, o, total)))
            process_section(f, pr, store, o, &fr, shown++);
    }
    free(order);
    fprintf(f, "<script>%s</script>\n</body></html>\n", script);
    free(fr.v);
    bool bad = ferror(f);
    if (to_stdout) {
        if (fflush(f) || bad) {
            escape_line(stderr, "%s: --html: cannot write the standard output: %s", ANALYZE_CMD,
                        strerror(errno));
            return -1;
        }
        return 0;
    }
    if (fclose(f) || bad || rename(tmp, path)) {
        escape_line(stderr, "%s: --html: cannot write %s: %s", ANALYZE_CMD, path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}
