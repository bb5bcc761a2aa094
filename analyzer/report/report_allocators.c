/*
 * report_allocators: the real allocators in each report.  See
 * report_allocators.h.
 */
#include "analyzer/report/report_allocators.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocators/oplog.h"
#include "analyzer/consume/allocators.h"
#include "analyzer/report/downsample.h"
#include "analyzer/escape.h"
#include "lib/units.h"

static const char *const kind_names[OPLOG_KINDS] = {
    [OPLOG_MALLOC] = "malloc", [OPLOG_CALLOC] = "calloc", [OPLOG_REALLOC] = "realloc",
    [OPLOG_MEMALIGN] = "memalign", [OPLOG_POSIX_MEMALIGN] = "posix_memalign",
    [OPLOG_ALIGNED_ALLOC] = "aligned_alloc", [OPLOG_VALLOC] = "valloc", [OPLOG_PVALLOC] = "pvalloc",
    [OPLOG_FREE] = "free"};

static const allocators_t *of(const process_t *pr)
{
    return pr->allocators && (pr->allocators->nrows || pr->allocators->problem[0]) ? pr->allocators
                                                                                     : NULL;
}

static double overhead(const allocators_t *a, const alloc_row_t *r)
{
    return a->peak_live ? (double)r->peak_rss / (double)a->peak_live - 1 : 0.0;
}

static uint64_t best_peak(const allocators_t *a)
{
    return a->nordered ? a->rows[a->order[0]].peak_rss : 0;
}

size_t report_allocators_ranking(const process_t *pr, rank_entry_t *out)
{
    size_t n = 0;
    const allocators_t *a = of(pr);
    for (size_t i = 0; a && i < a->nordered; i++) {
        const alloc_row_t *r = &a->rows[a->order[i]];
        out[n++] = (rank_entry_t){r->spec->label, false, r->peak_rss};
    }
    for (size_t i = 0; i < pr->nresults; i++)
        if (!pr->results[i].failed)
            out[n++] = (rank_entry_t){pr->results[i].name, true, pr->results[i].m.peak_footprint};
    for (size_t i = 1; i < n; i++) /* stable: allocators before strategies among equals */
        for (size_t k = i; k > 0 && out[k].peak < out[k - 1].peak; k--) {
            rank_entry_t t = out[k];
            out[k] = out[k - 1];
            out[k - 1] = t;
        }
    return n;
}

/* What switching from the allocator the program ran with to the best
 * replayed would save: false when there is nothing to say. */
static bool switching(const allocators_t *a, const alloc_row_t **from, const alloc_row_t **to)
{
    *from = allocators_ran_with_row(a);
    *to = a->nordered ? &a->rows[a->order[0]] : NULL;
    return *from && *to;
}

static void series_ns(const alloc_row_t *r, char *buf, size_t len, double v)
{
    (void)r;
    if (v >= 1e6)
        snprintf(buf, len, "%.2f ms", v / 1e6);
    else if (v >= 1e3)
        snprintf(buf, len, "%.2f us", v / 1e3);
    else
        snprintf(buf, len, "%.0f ns", v);
}

/* ---- text ---------------------------------------------------------------------------- */

/* Why the allocator the program ran with has no figures to switch from:
 * no row of it without settings, or that row's status. */
static void no_switch(FILE *f, const allocators_t *a)
{
    const char *why = "which was not replayed without settings";
    for (size_t i = 0; i < a->nrows; i++) {
        const alloc_row_t *r = &a->rows[i];
        if (r->spec->a == a->ran_with && !r->spec->nsettings && r->status == ALLOC_MISSING)
            why = "which is not installed here";
        else if (r->spec->a == a->ran_with && !r->spec->nsettings && r->status == ALLOC_FAILED)
            why = "whose replay failed";
    }
    escape_line(f, "  switching:      the program ran with %s, %s", a->ran_with->name, why);
}

void report_allocators_text_brief(FILE *f, const process_t *pr)
{
    const allocators_t *a = of(pr);
    if (!a)
        return;
    if (a->problem[0]) {
        escape_line(f, "  allocators:     not replayed: %s", a->problem);
        return;
    }
    char line[1024], b1[32], b2[32];
    size_t at = 0;
    uint64_t best = best_peak(a);
    for (size_t i = 0; i < a->nordered && at < sizeof line; i++) {
        const alloc_row_t *r = &a->rows[a->order[i]];
        if (i)
            snprintf(b1, sizeof b1, "+%s", units_format_bytes(r->peak_rss - best, b2, sizeof b2));
        else
            snprintf(b1, sizeof b1, "%s", units_format_bytes(r->peak_rss, b2, sizeof b2));
        at += (size_t)snprintf(line + at, sizeof line - at, "%s%s %s", i ? ", " : "",
                               r->spec->label, b1);
    }
    size_t nother = a->nrows - a->nordered;
    if (nother && at < sizeof line)
        at += (size_t)snprintf(line + at, sizeof line - at, "%s%zu not replayed", at ? "; " : "",
                               nother);
    escape_line(f, "  allocators:     %s (peak RSS, best first; --pid %" PRId64 " shows the table)",
                line, pr->s.pid);
    const alloc_row_t *from, *to;
    if (switching(a, &from, &to) && from != to)
        escape_line(f, "  switching:      from %s to %s would save %s (%.1f%%)", from->spec->label,
                    to->spec->label, units_format_bytes(from->peak_rss - to->peak_rss, b1, sizeof b1),
                    100.0 * (double)(from->peak_rss - to->peak_rss) / (double)from->peak_rss);
}

/* The rows not replayed, each with why. */
static void rows_not_replayed(FILE *f, const allocators_t *a)
{
    for (size_t i = 0; i < a->nrows; i++) {
        const alloc_row_t *r = &a->rows[i];
        if (r->status == ALLOC_MISSING)
            escape_line(f, "    %-28s not installed: %s", r->spec->label, r->message);
        else if (r->status == ALLOC_FAILED)
            escape_line(f, "    %-28s failed: %s", r->spec->label, r->message);
    }
}

void report_allocators_text(FILE *f, const process_t *pr)
{
    const allocators_t *a = of(pr);
    if (!a)
        return;
    char b1[32], b2[32], b3[32];
    if (a->problem[0]) {
        escape_line(f, "  allocators:     not replayed: %s", a->problem);
        return;
    }
    if (!a->nordered) { /* no figures: no table, ranking or switching */
        fprintf(f, "  allocators (the trace's %" PRIu64 " heap operations on %u %s): none "
                "replayed\n", a->ops, a->threads, a->threads == 1 ? "thread" : "threads");
        rows_not_replayed(f, a);
        return;
    }
    fprintf(f, "  allocators (the trace's %" PRIu64 " heap operations on %u %s, replayed through each "
           "in a process of its own, best first; %.2f s in parallel):\n",
           a->ops, a->threads, a->threads == 1 ? "thread" : "threads", a->wall_s);
    fprintf(f, "    %-28s %10s %11s %9s %10s %9s %8s %8s\n", "allocator", "peak RSS", "over best",
           "overhead", "RSS at end", "faults", "CPU/op", "wall/op");
    uint64_t best = best_peak(a);
    for (size_t i = 0; i < a->nordered; i++) {
        const alloc_row_t *r = &a->rows[a->order[i]];
        char over[40] = "best", cpu[24], wall[24];
        if (i)
            snprintf(over, sizeof over, "+%s", units_format_bytes(r->peak_rss - best, b2, sizeof b2));
        series_ns(r, cpu, sizeof cpu, r->ops ? r->cpu_s * 1e9 / (double)r->ops : 0);
        series_ns(r, wall, sizeof wall, allocators_ns_per_op(r));
        escape_line(f, "    %-28s %10s %11s %8.1f%% %10s %9" PRIu64 " %8s %8s%s",
                    r->spec->label, units_format_bytes(r->peak_rss, b1, sizeof b1), over,
                    100 * overhead(a, r), units_format_bytes(r->end_rss, b3, sizeof b3),
                    r->minor_faults + r->major_faults, cpu, wall,
                    r->failed ? " (requests refused)" : "");
        for (int k = 0; k < OPLOG_KINDS; k++)
            if (r->substituted & (1u << k))
                fprintf(f, "      (%s is not %s's: those calls went through its posix_memalign)\n",
                       kind_names[k], r->spec->a->name);
    }
    rows_not_replayed(f, a);
    fprintf(f, "    peak RSS: the most memory the replay held resident over what it held at its start\n"
           "    (the allocator's own and its blocks' pages, each block written once%s); overhead:\n"
           "    peak RSS / peak live - 1 (Johnstone-Wilson; peak live %s); RSS at end: still\n"
           "    held after the last operation; faults: page faults; CPU/op and wall/op: the\n"
           "    replay's CPU time (every thread) and wall time per operation.\n",
           a->all_pages ? ", on every page" : "", units_format_bytes(a->peak_live, b1, sizeof b1));
    rank_entry_t rank[CATALOG_MAX_SPECS + REPLAY_MAX_STRATEGIES];
    size_t n = report_allocators_ranking(pr, rank);
    if (n > 1 && pr->nresults) {
        fprintf(f, "  ranking (allocators by peak RSS, strategies by peak footprint, best first):\n");
        for (size_t i = 0; i < n; i++) {
            char over[40] = "best";
            if (i)
                snprintf(over, sizeof over, "+%s",
                         units_format_bytes(rank[i].peak - rank[0].peak, b2, sizeof b2));
            char name[200];
            snprintf(name, sizeof name, "%s%s", rank[i].name, rank[i].strategy ? " (strategy)" : "");
            escape_line(f, "    %2zu. %-28s %10s %11s", i + 1, name,
                        units_format_bytes(rank[i].peak, b1, sizeof b1), over);
        }
    }
    const alloc_row_t *from, *to;
    if (switching(a, &from, &to)) {
        if (from == to)
            escape_line(f, "  switching:      the program ran with %s, already the best of "
                        "those replayed (%s)", from->spec->label,
                        units_format_bytes(from->peak_rss, b1, sizeof b1));
        else
            escape_line(f, "  switching:      the program ran with %s (%s at its peak); "
                        "%s would save %s (%.1f%%)", from->spec->label,
                        units_format_bytes(from->peak_rss, b1, sizeof b1), to->spec->label,
                        units_format_bytes(from->peak_rss - to->peak_rss, b2, sizeof b2),
                        100.0 * (double)(from->peak_rss - to->peak_rss) / (double)from->peak_rss);
    } else if (a->ran_with) {
        no_switch(f, a);
    }
}

/* ---- JSON ---------------------------------------------------------------------------- */

static json_t *series_json(const alloc_row_t *r)
{
    json_t *t = json_array(), *ops = json_array(), *rss = json_array();
    for (size_t i = 0; i < r->nseries; i++) {
        json_array_append_new(t, json_real(r->series[i].t_s));
        json_array_append_new(ops, json_integer((json_int_t)r->series[i].ops));
        json_array_append_new(rss, json_integer((json_int_t)r->series[i].rss));
    }
    return json_pack("{s:o, s:o, s:o}", "t_s", t, "ops", ops, "rss_bytes", rss);
}

static json_t *row_json(const allocators_t *a, const alloc_row_t *r, bool best)
{
    static const char *const status[] = {"ok", "missing", "failed"};
    json_t *settings = json_object();
    for (size_t k = 0; k < r->spec->nsettings; k++)
        json_object_set_new(settings, r->spec->keys[k], json_string(r->spec->values[k]));
    json_t *o = json_pack("{s:s, s:s, s:o, s:s}", "name", r->spec->label, "allocator",
                          r->spec->a->name, "settings", settings, "status", status[r->status]);
    if (r->status != ALLOC_OK) {
        json_object_set_new(o, r->status == ALLOC_MISSING ? "install" : "message",
                            json_string(r->message));
        return o;
    }
    uint64_t bestp = best_peak(a);
    json_t *subs = json_array();
    for (int k = 0; k < OPLOG_KINDS; k++)
        if (r->substituted & (1u << k))
            json_array_append_new(subs, json_string(kind_names[k]));
    json_object_update_new(
        o, json_pack("{s:I, s:b, s:I, s:f, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:o, s:b}",
                     "peak_rss_bytes", (json_int_t)r->peak_rss, "peak_exact", r->peak_exact,
                     "over_best_bytes", (json_int_t)(r->peak_rss - bestp), "overhead",
                     overhead(a, r), "end_rss_bytes", (json_int_t)r->end_rss, "minor_faults",
                     (json_int_t)r->minor_faults, "major_faults", (json_int_t)r->major_faults,
                     "failed_requests", (json_int_t)r->failed, "operations", (json_int_t)r->ops,
                     "cpu_s", r->cpu_s, "wall_s", r->wall_s, "cpu_ns_per_op",
                     r->ops ? r->cpu_s * 1e9 / (double)r->ops : 0.0, "wall_ns_per_op",
                     allocators_ns_per_op(r), "substituted", subs, "best", best));
    json_object_set_new(o, "series", series_json(r));
    return o;
}

json_t *report_allocators_json(const process_t *pr)
{
    const allocators_t *a = of(pr);
    if (!a)
        return json_null();
    json_t *rows = json_array();
    for (size_t i = 0; i < a->nordered; i++)
        json_array_append_new(rows, row_json(a, &a->rows[a->order[i]], i == 0));
    for (size_t i = 0; i < a->nrows; i++)
        if (a->rows[i].status != ALLOC_OK)
            json_array_append_new(rows, row_json(a, &a->rows[i], false));
    json_t *ranking = json_array();
    rank_entry_t rank[CATALOG_MAX_SPECS + REPLAY_MAX_STRATEGIES];
    size_t n = report_allocators_ranking(pr, rank);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(ranking, json_pack("{s:s, s:s, s:I, s:I}", "name", rank[i].name,
                                                 "kind", rank[i].strategy ? "strategy" : "allocator",
                                                 "peak_bytes", (json_int_t)rank[i].peak,
                                                 "over_best_bytes",
                                                 (json_int_t)(rank[i].peak - rank[0].peak)));
    const alloc_row_t *from, *to;
    json_t *sw = json_null();
    if (switching(a, &from, &to))
        sw = json_pack("{s:s, s:s, s:I, s:I, s:I, s:f}", "from", from->spec->label, "to",
                       to->spec->label, "from_peak_rss_bytes", (json_int_t)from->peak_rss,
                       "to_peak_rss_bytes", (json_int_t)to->peak_rss, "saves_bytes",
                       (json_int_t)(from->peak_rss - to->peak_rss), "saves_share",
                       from->peak_rss ? (double)(from->peak_rss - to->peak_rss) / (double)from->peak_rss
                                      : 0.0);
    return json_pack("{s:s?, s:s?, s:s, s:I, s:I, s:I, s:I, s:I, s:f, s:o, s:o, s:o}", "ran_with",
                     a->ran_with ? a->ran_with->name : NULL, "problem",
                     a->problem[0] ? a->problem : NULL, "pages", a->all_pages ? "all" : "touched",
                     "operations", (json_int_t)a->ops,
                     "threads", (json_int_t)a->threads, "windows", (json_int_t)a->windows, "slots",
                     (json_int_t)a->nslots, "peak_live_bytes", (json_int_t)a->peak_live, "wall_s",
                     a->wall_s, "rows", rows, "ranking", ranking, "switch", sw);
}

/* ---- HTML ---------------------------------------------------------------------------- */

#define HW 960
#define HH 220
#define HL 70
#define HB 30

static const char *const colors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                     "#8c564b", "#e377c2", "#7f7f7f"};

/* The ranking as bars: the allocators' peak RSS and the strategies'
 * peak footprint, best first. */
static void ranking_bars(FILE *f, const process_t *pr)
{
    char b1[32], b2[32];
    rank_entry_t rank[CATALOG_MAX_SPECS + REPLAY_MAX_STRATEGIES];
    size_t n = report_allocators_ranking(pr, rank);
    uint64_t max = 1;
    for (size_t i = 0; i < n; i++)
        if (rank[i].peak > max)
            max = rank[i].peak;
    int lw = 200, h = 24 * (int)n + 10;
    fprintf(f, "<svg id=\"allocators\" class=\"plot\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\">\n",
            HW, h, HW, h);
    for (size_t i = 0; i < n; i++) {
        double w = (double)rank[i].peak / (double)max * (HW - lw - 260);
        if (w < 1)
            w = 1;
        fprintf(f, "<g class=\"bar%s\"><title>", i == 0 ? " best" : "");
        escape_html(f, rank[i].name);
        fprintf(f, ": %s %s</title><text x=\"%d\" y=\"%zu\" text-anchor=\"end\">", rank[i].strategy
                ? "peak footprint (strategy)" : "peak RSS (allocator)",
                units_format_bytes(rank[i].peak, b1, sizeof b1), lw - 6, 24 * i + 18);
        escape_html(f, rank[i].name);
        fprintf(f, "%s</text><rect x=\"%d\" y=\"%zu\" width=\"%.1f\" height=\"18\" fill=\"%s\"/>"
                   "<text x=\"%.1f\" y=\"%zu\">%s%s%s</text></g>\n",
                rank[i].strategy ? " (strategy)" : "", lw, 24 * i + 5, w,
                rank[i].strategy ? "#9ecae1" : "#fdae6b", lw + w + 6, 24 * i + 18,
                units_format_bytes(rank[i].peak, b1, sizeof b1), i ? ", +" : " (best)",
                i ? units_format_bytes(rank[i].peak - rank[0].peak, b2, sizeof b2) : "");
    }
    fputs("</svg>\n", f);
}

/* RSS over the operations, one line per allocator, and their legend. */
static void rss_lines(FILE *f, const allocators_t *a)
{
    char b1[32];
    uint64_t top = 1;
    for (size_t i = 0; i < a->nordered; i++)
        for (size_t k = 0; k < a->rows[a->order[i]].nseries; k++)
            if (a->rows[a->order[i]].series[k].rss > top)
                top = a->rows[a->order[i]].series[k].rss;
    fprintf(f, "<p>RSS of each replay over the trace's operations (0 to %" PRIu64 "), up to %s:</p>\n"
               "<svg id=\"allocator-rss\" class=\"plot\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\">\n",
            a->ops, units_format_bytes(top, b1, sizeof b1), HW, HH, HW, HH);
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>\n", HL, HH - HB,
            HW - 10, HH - HB);
    for (size_t i = 0; i < a->nordered; i++) {
        const alloc_row_t *r = &a->rows[a->order[i]];
        if (!r->nseries || !a->ops)
            continue;
        double t[2 * HW], v[2 * HW], *x = NULL, *y = NULL;
        size_t m = r->nseries;
        /* by operation: the points in operation order */
        if (!(x = malloc(m * sizeof *x)) || !(y = malloc(m * sizeof *y))) {
            free(x);
            continue;
        }
        for (size_t k = 0; k < m; k++) {
            x[k] = (double)r->series[k].ops;
            y[k] = (double)r->series[k].rss;
        }
        size_t k2 = downsample_minmax(x, y, m, HW - HL - 10, t, v);
        free(x);
        free(y);
        fprintf(f, "<polyline class=\"series\" fill=\"none\" stroke-width=\"1.5\" stroke=\"%s\" "
                   "points=\"", colors[i % (sizeof colors / sizeof colors[0])]);
        for (size_t k = 0; k < k2; k++)
            fprintf(f, "%.1f,%.1f ", HL + t[k] / (double)a->ops * (HW - HL - 10),
                    10 + (1 - v[k] / (double)top) * (HH - HB - 10));
        fputs("\"><title>", f);
        escape_html(f, r->spec->label);
        fputs("</title></polyline>\n", f);
    }
    fputs("</svg>\n<p class=\"legend\">", f);
    for (size_t i = 0; i < a->nordered; i++) {
        fprintf(f, "<span style=\"color:%s\">&#9632; ", colors[i % (sizeof colors / sizeof colors[0])]);
        escape_html(f, a->rows[a->order[i]].spec->label);
        fputs("</span> ", f);
    }
    fputs("</p>\n", f);
}

/* Each allocator's figures, and a line for each one that did not run. */
static void figures_table(FILE *f, const allocators_t *a)
{
    char b1[32], b2[32];
    fputs("<table class=\"sites\"><tr><th>allocator</th><th>peak RSS</th><th>overhead</th>"
          "<th>RSS at end</th><th>page faults</th><th>CPU per op</th><th>wall per op</th></tr>\n", f);
    for (size_t i = 0; i < a->nordered; i++) {
        const alloc_row_t *r = &a->rows[a->order[i]];
        char cpu[24], wall[24];
        series_ns(r, cpu, sizeof cpu, r->ops ? r->cpu_s * 1e9 / (double)r->ops : 0);
        series_ns(r, wall, sizeof wall, allocators_ns_per_op(r));
        fputs("<tr><td>", f);
        escape_html(f, r->spec->label);
        fprintf(f, "</td><td>%s</td><td>%.1f%%</td><td>%s</td><td>%" PRIu64 "</td><td>%s</td>"
                   "<td>%s</td></tr>\n", units_format_bytes(r->peak_rss, b1, sizeof b1),
                100 * overhead(a, r), units_format_bytes(r->end_rss, b2, sizeof b2),
                r->minor_faults + r->major_faults, cpu, wall);
    }
    for (size_t i = 0; i < a->nrows; i++) {
        const alloc_row_t *r = &a->rows[i];
        if (r->status == ALLOC_OK)
            continue;
        fputs("<tr><td>", f);
        escape_html(f, r->spec->label);
        fprintf(f, "</td><td colspan=\"6\">%s: ", r->status == ALLOC_MISSING ? "not installed" : "failed");
        escape_html(f, r->message);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
}

/* What switching from the allocator the program ran with would save. */
static void switch_advice(FILE *f, const allocators_t *a)
{
    char b1[32], b2[32];
    const alloc_row_t *from, *to;
    if (switching(a, &from, &to)) {
        fputs("<p>", f);
        if (from == to) {
            fputs("The program ran with ", f);
            escape_html(f, from->spec->label);
            fputs(", already the best of those replayed.", f);
        } else {
            fputs("The program ran with ", f);
            escape_html(f, from->spec->label);
            fprintf(f, " (%s at its peak); ", units_format_bytes(from->peak_rss, b1, sizeof b1));
            escape_html(f, to->spec->label);
            fprintf(f, " would save %s (%.1f%%).", units_format_bytes(from->peak_rss - to->peak_rss, b2, sizeof b2),
                    100.0 * (double)(from->peak_rss - to->peak_rss) / (double)from->peak_rss);
        }
        fputs("</p>\n", f);
    }
}

void report_allocators_html(FILE *f, const process_t *pr)
{
    const allocators_t *a = of(pr);
    if (!a)
        return;
    fputs("<h3>Real allocators: the trace replayed through each, peak RSS, best first</h3>\n", f);
    if (a->problem[0]) {
        fputs("<p class=\"none\">Not replayed: ", f);
        escape_html(f, a->problem);
        fputs(".</p>\n", f);
        return;
    }
    ranking_bars(f, pr);
    rss_lines(f, a);
    figures_table(f, a);
    switch_advice(f, a);
}
