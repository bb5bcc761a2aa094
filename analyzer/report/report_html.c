/*
 * report_html: one self-contained HTML file (see report.h), in the frame
 * of analyzer/report/report_page.h (its style, its one script, a policy that
 * forbids every fetch).  Drawn here as inline SVG: the strategy bars, the
 * fragmentation maps, the request sizes, the processes over time.  The
 * timeline and the flame graph are data blocks the page's script draws
 * (and zooms, toggles, turns bottom-up).  Every string from a trace goes
 * through escape_html, or escape_json into a data block.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyzer/escape.h"
#include <jansson.h>
#include "analyzer/report/groups.h"
#include "analyzer/report/proctable.h"
#include "analyzer/report/report.h"
#include "analyzer/report/report_page.h"
#include "analyzer/report/report_allocators.h"
#include "analyzer/report/report_html_flame.h"
#include "analyzer/report/report_html_timeline.h"
#include "lib/units.h"

#define W 960           /* plot width in px */
#define TL_H 280        /* timeline height */
#define PAD_L 70
#define PAD_R 10
#define PAD_T 10
#define PAD_B 30

static const char *fmt_bytes(uint64_t b, char *buf, size_t len) { return units_format_bytes(b, buf, len); }

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
static double q32(double share) { return share <= 0 ? 0 : (double)(int)(share * 32 + 0.5) / 32; }

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
        /* the strip as runs of cells of one colour, "RRGGBB*N" each,
         * drawn into rects by the page's script: a rect written per run
         * took 60 KB a process.  Each share is rounded to 1/32 first, so
         * that cells no eye tells apart make one run. */
        fprintf(f, "<g class=\"runs\" data-x=\"%d\" data-y=\"%zu\" data-cw=\"%d\" data-h=\"%d\" data-runs=\"",
                lw, row * i + 4, cw, row - 8);
        int run = 0, rgb0 = -1;
        for (int c = 0; c <= REPLAY_MAP_CELLS; c++) {
            int rgb = -2;
            if (c < REPLAY_MAP_CELLS) {
                double al = q32(m->alloc[c] > 1 ? 1 : m->alloc[c]);
                double wa = q32(m->waste[c] > al ? al : m->waste[c] < 0 ? 0 : m->waste[c]);
                double rq = al - wa; /* asked for */
                double fr = q32(m->free[c] > 1 - al ? 1 - al : m->free[c]);
                fr = fr > 1 - al ? 1 - al : fr;
                double rest = 1 - al - fr;
                int red = (int)(rq * 31 + wa * 137 + fr * 244 + rest * 230);
                int green = (int)(rq * 78 + wa * 170 + fr * 162 + rest * 230);
                int blue = (int)(rq * 156 + wa * 230 + fr * 97 + rest * 230);
                rgb = red << 16 | green << 8 | blue;
            }
            if (rgb == rgb0)
                continue;
            if (rgb0 >= 0)
                fprintf(f, "%s%06x*%d", run ? " " : "", (unsigned)rgb0, c - run);
            run = c;
            rgb0 = rgb;
        }
        fputs("\"></g>", f);
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

/* ---- tables ------------------------------------------------------------------------ */

static void stack_details(FILE *f, process_t *pr, symbols_t *store, uint64_t id, frames_t *fr)
{
    size_t nf = pr->have_sites ? frames_of(store, sites_get(&pr->sites, id), fr) : 0;
    fputs("<details><summary>stack</summary><ol class=\"stack\">", f);
    /* terse markup (no </li>, <i> for where): a tree's page holds
     * thousands of these frames */
    for (size_t k = 0; k < nf; k++) {
        char label[64];
        const symbols_frame_t *sf = &fr->v[k];
        fputs("<li>", f);
        escape_html(f, sf->function ? sf->function : symbols_label(sf, label, sizeof label));
        if (sf->file) {
            fputs(" <i>at ", f);
            escape_html(f, frames_base_name(sf->file));
            fprintf(f, ":%u</i>", sf->line);
        } else if (sf->name) {
            fputs(" <i>in ", f);
            escape_html(f, sf->name);
            fputs("</i>", f);
        }
    }
    if (!nf)
        fputs("<li>(no frames)", f);
    fputs("</ol></details>", f);
}

/* A table of the top functions by key: every figure (each sums all the
 * function's stacks, analyzer/report/groups.h), sortable; its name opens its
 * callers and callees in the flame graph. */
static void sites_table(FILE *f, process_t *pr, symbols_t *store, const analyze_opts_t *o,
                        frames_t *fr, groups_t *g, sites_key_t key, const char *what,
                        const char *cls)
{
    groups_sort(g, &pr->sites, key);
    size_t ranked = groups_ranked(g), max = o->sites ? o->sites : ANALYZE_DEFAULT_SITES;
    fprintf(f, "<h3>Top allocating functions by %s</h3>\n", what);
    if (!ranked) {
        fputs("<p class=\"none\">None.</p>\n", f);
        return;
    }
    fprintf(f, "<table class=\"sortable sites %s\"><thead><tr><th>#</th><th>function</th>"
               "<th>live at peak</th><th>calls</th><th>temporary</th><th>allocated</th>"
               "<th>leaked</th><th>stacks</th></tr></thead><tbody>\n", cls);
    char a[32], b[32], c[32];
    size_t n = ranked < max ? ranked : max;
    for (size_t i = 0; i < n; i++) {
        const group_t *gr = &g->v[i];
        fprintf(f, "<tr><td data-v=\"%zu\">%zu</td><td><a href=\"#\" class=\"callers\" data-fn=\"", i + 1,
                i + 1);
        escape_html(f, gr->function);
        fputs("\" title=\"its callers and callees in the flame graph\">", f);
        escape_html(f, gr->name);
        fprintf(f, "</a></td><td class=\"num\" data-v=\"%" PRIu64 "\">%s</td><td class=\"num\" "
                   "data-v=\"%" PRIu64 "\">%" PRIu64 "</td><td class=\"num\" data-v=\"%" PRIu64
                   "\">%" PRIu64 "</td><td class=\"num\" data-v=\"%" PRIu64 "\">%s</td><td "
                   "class=\"num\" data-v=\"%" PRIu64 "\">%s in %" PRIu64 "</td><td data-v=\"%zu\">%zu ",
                gr->peak, fmt_bytes(gr->peak, a, sizeof a), gr->calls, gr->calls, gr->temporaries,
                gr->temporaries, gr->allocated, fmt_bytes(gr->allocated, b, sizeof b), gr->leaked,
                fmt_bytes(gr->leaked, c, sizeof c), gr->leaked_blocks, gr->nids, gr->nids);
        stack_details(f, pr, store, gr->ids[0], fr);
        fputs("</td></tr>\n", f);
    }
    fputs("</tbody></table>\n", f);
}

/* The program's own mapping sites, by bytes mapped at the mapped peak. */
static void mapping_table(FILE *f, process_t *pr, symbols_t *store, const analyze_opts_t *o,
                          frames_t *fr)
{
    const mappings_t *m = &pr->maps;
    fputs("<h3 id=\"mapping-sites\">Mapping sites: where the program's own mappings were made</h3>\n", f);
    uint64_t *ids;
    size_t n = m->calls ? mappings_top(m, MAPPINGS_BY_PEAK, o->sites ? o->sites : ANALYZE_DEFAULT_SITES,
                                       &ids) : 0;
    if (!n) {
        fputs("<p class=\"none\">None.</p>\n", f);
        return;
    }
    fputs("<table class=\"sortable mapping-sites\"><thead><tr><th>#</th><th>where</th><th>mapped at "
          "peak</th><th>mmap calls</th><th>mapped in all</th><th>still mapped at the end</th>"
          "<th>kind</th><th>stack</th></tr></thead><tbody>\n", f);
    char a[32], b[32], c[32], where[512];
    for (size_t i = 0; i < n; i++) {
        const mapping_site_t *ms = &m->sites[ids[i]];
        uint64_t peak = mappings_site_peak(m, ids[i], NULL);
        report_site_label(pr, store, ids[i], fr, where, sizeof where);
        fprintf(f, "<tr><td data-v=\"%zu\">%zu</td><td>", i + 1, i + 1);
        escape_html(f, where);
        fprintf(f, "</td><td class=\"num\" data-v=\"%" PRIu64 "\">%s</td><td class=\"num\" data-v=\"%"
                   PRIu64 "\">%" PRIu64 "</td><td class=\"num\" data-v=\"%" PRIu64 "\">%s</td><td "
                   "class=\"num\" data-v=\"%" PRIu64 "\">%s</td><td>%s</td><td>",
                peak, fmt_bytes(peak, a, sizeof a), ms->calls, ms->calls, ms->mapped,
                fmt_bytes(ms->mapped, b, sizeof b), ms->live, fmt_bytes(ms->live, c, sizeof c),
                ms->file ? "file-backed" : "anonymous");
        stack_details(f, pr, store, ids[i], fr);
        fputs("</td></tr>\n", f);
    }
    fputs("</tbody></table>\n", f);
    free(ids);
}

/* ---- a process --------------------------------------------------------------------- */

/* The section's heading (inside the <h2> it opens), its figures and a
 * line of counts. */
static void process_head(FILE *f, process_t *pr)
{
    const summary_t *s = &pr->s;
    char a[32], b[32], c[32], d[32];
    unsigned sev[3] = {0};
    for (size_t i = 0; i < pr->findings.n; i++)
        sev[pr->findings.v[i].severity]++;
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
    if (s->sample_bytes) /* the figures are estimates: their standard errors */
        fprintf(f, "<p>A sampled trace: an allocation in about every %s (%" PRIu64 " recorded); "
                   "the bytes are estimates: %s &plusmn; %s in all, peak heap &plusmn; %s, leaked "
                   "&plusmn; %s; calls and temporaries not counted, strategies not replayed; "
                   "%" PRIu64 " mmap calls.",
                fmt_bytes(s->sample_bytes, a, sizeof a), s->allocations,
                fmt_bytes(s->bytes_allocated, b, sizeof b),
                fmt_bytes((uint64_t)llround(summary_se(s->var_allocated)), c, sizeof c),
                fmt_bytes((uint64_t)llround(summary_se(s->var_peak_heap)), d, sizeof d),
                fmt_bytes((uint64_t)llround(summary_se(s->var_heap)), (char[32]){0}, 32),
                pr->maps.calls);
    else
        fprintf(f, "<p>%" PRIu64 " allocations (%" PRIu64 " reallocs), %s in all, %" PRIu64
                   " frees, %" PRIu64 " temporary; %" PRIu64 " mmap calls.",
                s->allocations, s->reallocs, fmt_bytes(s->bytes_allocated, a, sizeof a), s->frees,
                s->temporaries, pr->maps.calls);
    if (pr->suppressed_blocks)
        fprintf(f, " Leaks suppressed: %s in %" PRIu64 " blocks (the C runtime's and the loader's "
                   "one-time allocations, --suppressions).",
                fmt_bytes(pr->suppressed_bytes, a, sizeof a), pr->suppressed_blocks);
    fputs(" Trace: ", f);
    escape_html(f, pr->path);
    fputs(".</p>\n", f);
}

/* Each finding: what, where, what it is made of, what to do. */
static void finding_boxes(FILE *f, process_t *pr, symbols_t *store, frames_t *fr)
{
    const summary_t *s = &pr->s;
    char a[32];
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
}

/* The functions' tables: by peak; full, by calls (or bytes allocated in
 * a sampled trace), temporaries and leaks too. */
static void site_tables(FILE *f, process_t *pr, symbols_t *store, const analyze_opts_t *o,
                        frames_t *fr, bool full)
{
    const summary_t *s = &pr->s;
    groups_t g = {0};
    if (pr->have_sites && !groups_build(&g, &pr->sites, store, SITES_BY_PEAK, fr)) {
        sites_table(f, pr, store, o, fr, &g, SITES_BY_PEAK, "bytes live at the peak heap", "by-peak");
        if (full && s->sample_bytes) { /* no calls nor temporaries counted */
            sites_table(f, pr, store, o, fr, &g, SITES_BY_ALLOCATED, "bytes allocated (estimates)",
                        "by-allocated");
            sites_table(f, pr, store, o, fr, &g, SITES_BY_LEAKED, "leaked bytes", "by-leaked");
        } else if (full) {
            sites_table(f, pr, store, o, fr, &g, SITES_BY_CALLS, "calls", "by-calls");
            sites_table(f, pr, store, o, fr, &g, SITES_BY_TEMPORARIES,
                        "temporary allocations (freed right after they were made)", "by-temporaries");
            sites_table(f, pr, store, o, fr, &g, SITES_BY_LEAKED, "leaked bytes", "by-leaked");
        }
        groups_free(&g);
    }
}

/* full: the process the user ran, or one --all, --pid or --exe chose:
 * every table; else the figures, findings, timeline, flame graph and the
 * top functions by peak. */
static void process_section(FILE *f, process_t *pr, symbols_t *store, const analyze_opts_t *o,
                            frames_t *fr, report_html_names_t *names, size_t index, bool full)
{
    fprintf(f, "<section class=\"process\" id=\"p%zu\">\n<h2>", index);
    process_head(f, pr);
    finding_boxes(f, pr, store, fr);
    fputs("<h3>Timeline</h3>\n", f);
    report_html_timeline(f, pr, store, fr, index, full);
    fputs("<h3>Flame graph</h3>\n", f);
    report_html_flame(f, pr, store, fr, names, index, full);
    site_tables(f, pr, store, o, fr, full);
    if (full)
        mapping_table(f, pr, store, o, fr);
    fputs("<h3>Strategies: peak footprint of the replay, best first</h3>\n", f);
    strategies(f, pr);
    report_allocators_html(f, pr);
    maps(f, pr);
    fputs("<h3>Request sizes</h3>\n", f);
    histogram(f, &pr->s);
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
    /* the bars as data, drawn by the page's script: [name, pid, x,
     * width, lightness, seconds, peak RSS] each (a bar written as SVG
     * took 250 bytes, 170 KB for a make's 673 processes) */
    int row = 12, h = (int)k * row + 24, lw = 150;
    char a[32];
    double span = (double)(t1 - t0);
    json_t *bars = json_array();
    for (size_t r = 0; r < k; r++) {
        const process_t *pr = &procs[order[r]];
        const summary_t *s = &pr->s;
        double x0 = lw + (double)(s->start_unix_ns - t0) / span * (W - lw - PAD_R);
        double x1 = lw + (double)(s->start_unix_ns + (s->last_t - s->first_t) - t0) / span * (W - lw - PAD_R);
        unsigned light = 85 - (unsigned)(50.0 * (double)process_peak_rss(pr) / (double)top);
        json_array_append_new(bars, json_pack("[o, I, f, f, i, f, s]",
                                              escape_json(s->exe[0] ? frames_base_name(s->exe) : "?"),
                                              (json_int_t)s->pid, round(x0 * 10) / 10,
                                              round((x1 - x0 > 1 ? x1 - x0 : 1) * 10) / 10, (int)light,
                                              round((double)(s->last_t - s->first_t) / 1e6) / 1e3,
                                              fmt_bytes(process_peak_rss(pr), a, sizeof a)));
    }
    json_t *d = json_pack("{s:i, s:i, s:i, s:f, s:o}", "width", W, "row", row, "label", lw,
                          "seconds", span / 1e9, "bars", bars);
    fputs("<h2>Processes over time</h2>\n", f);
    report_page_data(f, "gantt-data", d);
    json_decref(d);
    fprintf(f, "<svg id=\"gantt\" class=\"plot\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "
               "data-src=\"gantt-data\"></svg>\n", W, h, W, h);
    free(order);
}

/* The process tree: indented, exec chains and small processes folded,
 * heaviest first, with command lines (analyzer/report/proctable.h). */
static void tree_table(FILE *f, const process_t *procs, const proctable_t *pt, const size_t *section)
{
    fputs("<table class=\"ptree\"><thead><tr><th>process</th><th>pid</th><th>calls</th><th>peak heap"
          "</th><th>peak mapped</th><th>peak RSS</th><th>leaked</th></tr></thead><tbody>\n", f);
    char a[32], b[32], c[32], d[32];
    for (size_t r = 0; r < pt->n; r++) {
        const proctable_row_t *row = &pt->v[r];
        int ind = (int)(row->depth > 12 ? 12 : row->depth) * 2;
        if (row->proc == SIZE_MAX) {
            fprintf(f, "<tr class=\"fold\"><td class=\"exe\">%*s(%zu smaller: ", ind, "", row->nfolded);
            escape_html(f, row->names);
            fprintf(f, ")</td><td></td><td class=\"num\">%" PRIu64 "</td><td class=\"num\">%s</td><td "
                       "class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td></tr>\n",
                    row->calls, fmt_bytes(row->peak_heap, a, sizeof a),
                    fmt_bytes(row->peak_mapped, b, sizeof b), fmt_bytes(row->peak_rss, c, sizeof c),
                    fmt_bytes(row->leaked, d, sizeof d));
            continue;
        }
        const process_t *pr = &procs[row->proc];
        const summary_t *s = &pr->s;
        fprintf(f, "<tr><td class=\"exe\">%*s", ind, "");
        if (section[row->proc] != SIZE_MAX)
            fprintf(f, "<a href=\"#p%zu\">", section[row->proc]);
        escape_html(f, s->exe[0] ? frames_base_name(s->exe) : "?");
        if (section[row->proc] != SIZE_MAX)
            fputs("</a>", f);
        fputs(" <span class=\"cmd\">", f);
        escape_html(f, s->argv);
        if (row->via[0]) {
            fputs(" (exec'd via ", f);
            escape_html(f, row->via);
            fputs(")", f);
        }
        fprintf(f, "</span></td><td>%" PRId64 "</td><td class=\"num\">%" PRIu64 "</td><td class=\"num\">%s"
                   "</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td></tr>\n",
                s->pid, s->allocations, fmt_bytes(s->peak_heap, a, sizeof a),
                fmt_bytes(pr->maps.peak, b, sizeof b),
                s->samples ? fmt_bytes(process_peak_rss(pr), c, sizeof c) : "-",
                fmt_bytes(s->leaked_bytes, d, sizeof d));
    }
    fputs("</tbody></table>\n", f);
}

int report_html(process_t *procs, size_t n, symbols_t *store, const analyze_opts_t *o,
                uint64_t run_peak, const char *path)
{
    char tmp[4200];
    FILE *f = report_open(path, tmp, sizeof tmp, "--html");
    if (!f)
        return -1;
    frames_t fr = {0};
    report_html_names_t names = {json_array(), json_object()};
    ptree_t t;
    proctable_t pt = {.main_proc = SIZE_MAX};
    size_t *order = report_order(procs, n), *section = malloc((n ? n : 1) * sizeof *section);
    bool have_tree = n > 1 && !report_tree(procs, n, &t);
    if (have_tree && proctable_build(&pt, procs, n, &t))
        pt = (proctable_t){.main_proc = SIZE_MAX};
    /* the title: the command that was run */
    char title[1200];
    size_t first = SIZE_MAX;
    for (size_t i = 0; i < n; i++)
        if (procs[i].ok && (first == SIZE_MAX || report_weight(&procs[i]) > report_weight(&procs[first])))
            first = i;
    snprintf(title, sizeof title, "memsim report: %s",
             o->run_command && o->run_command[0] ? o->run_command
             : first != SIZE_MAX ? procs[first].s.exe : "no trace");
    report_page_head(f, title);
    /* the sections: the program the user ran first, then the processes
     * that matter, heaviest first (as the text report) */
    uint64_t total = report_total_weight(procs, n);
    size_t shown = 0, main = n == 1 ? 0 : pt.main_proc;
    bool chosen = o->all || o->npids || o->exe;
    for (size_t i = 0; section && i < n; i++)
        section[i] = SIZE_MAX;
    if (section && main != SIZE_MAX && procs[main].ok && (!(o->npids || o->exe) || n == 1 ||
                                                          report_shown(&procs[main], o, total)))
        section[main] = shown++;
    for (size_t k = 0; order && section && k < n; k++) {
        process_t *pr = &procs[order[k]];
        if (order[k] != main && pr->ok && (n == 1 || report_shown(pr, o, total)))
            section[order[k]] = shown++;
    }
    if (n > 1) {
        char a[32];
        fprintf(f, "<p>%zu traces; peak tree RSS %s.</p>\n", n,
                fmt_bytes(report_tree_peak(procs, n, run_peak), a, sizeof a));
        if (pt.n && section) {
            fputs("<h2>Process tree</h2>\n", f);
            tree_table(f, procs, &pt, section);
        }
        gantt(f, procs, n);
    }
    for (size_t s = 0; section && s < shown; s++)
        for (size_t i = 0; i < n; i++)
            if (section[i] == s)
                process_section(f, &procs[i], store, o, &fr, &names, s,
                                i == main || chosen || n == 1);
    report_page_data(f, "flame-names", names.names);
    json_decref(names.names);
    json_decref(names.name_ids);
    report_page_tail(f);
    free(order);
    free(section);
    free(fr.v);
    if (have_tree)
        ptree_free(&t);
    proctable_free(&pt);
    return report_close(f, path, tmp, "--html");
}
