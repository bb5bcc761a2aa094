/*
 * memsim-analyze: turn memsim traces into answers.
 *
 *   memsim-analyze [options] TRACE|DIR...
 *
 * It reads each trace in one streaming pass (analyzer/process.h, which
 * feeds the consumers of analyzer/consumers.h: the summary, the
 * allocation sites, the program's mappings, the strategy replay), runs
 * the findings on what they gathered (analyzer/findings.h), then prints
 * one of its reports (analyzer/report.h): text, JSON, a flame graph's
 * collapsed stacks, an HTML page or a flame graph as SVG.  This file only orchestrates.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/escape.h"
#include "analyzer/inputs.h"
#include "analyzer/options.h"
#include "analyzer/process.h"
#include "analyzer/report.h"

/* Stack that the main thread maps before it reads anything.  Under an
 * address-space limit (ulimit -v) the heap can take every byte of it,
 * and a stack that must then grow cannot: the kernel charges growth to
 * the same limit, and the program dies of SIGSEGV.  libdw's line tables
 * (dwarf_getsrclines) take about 160 KiB of stack at once.  A stack
 * touched now keeps its pages mapped, so running out of memory later
 * ends in the one-line message, not a crash. */
#define STACK_RESERVE (1024 * 1024)

static __attribute__((noinline)) void reserve_stack(void)
{
    char pad[STACK_RESERVE];
    for (size_t i = STACK_RESERVE; i >= 4096; i -= 4096) /* down, as a stack grows */
        ((volatile char *)pad)[i - 1] = 0;
}

int main(int argc, char **argv)
{
    reserve_stack();
    analyze_opts_t o;
    if (options_parse(argc, argv, &o))
        return 2;
    paths_t paths = {0};
    for (int i = optind; i < argc; i++)
        if (inputs_collect(argv[i], &paths))
            return 2;
    process_t *procs = calloc(paths.n, sizeof *procs);
    if (!procs) {
        fprintf(stderr, "%s: out of memory\n", ANALYZE_CMD);
        return 2;
    }
    /* One symbol store for every trace: processes of a tree share modules. */
    symbols_t store;
    bool want_sites = o.sites || o.collapsed != ANALYZE_NO_COLLAPSED || o.flamegraph;
    if (want_sites && symbols_init(&store)) {
        fprintf(stderr, "%s: out of memory\n", ANALYZE_CMD);
        return 2;
    }
    symbols_t *sym = want_sites ? &store : NULL;
    int rc = 0;
    for (size_t i = 0; i < paths.n; i++)
        if (process_analyze(&procs[i], paths.v[i], &o, sym))
            rc = 2;
    /* A run of one process: memsim run's polls are its tree's. */
    if (paths.n == 1 && procs[0].ok && paths.run_peak_tree_rss > procs[0].s.peak_tree_rss)
        procs[0].s.peak_tree_rss = paths.run_peak_tree_rss;
    int out;
    if (o.collapsed != ANALYZE_NO_COLLAPSED) {
        report_collapsed(procs, paths.n, sym, (sites_key_t)o.collapsed);
        out = 0;
    } else if (o.flamegraph) {
        out = report_flamegraph(procs, paths.n, sym, o.flame_key, o.flamegraph);
        if (!out && strcmp(o.flamegraph, "-"))
            escape_line(stderr, "%s: the flame graph is in %s", ANALYZE_CMD, o.flamegraph);
    } else if (o.html) {
        out = report_html(procs, paths.n, sym, &o, paths.run_peak_tree_rss, o.html);
        if (!out && strcmp(o.html, "-"))
            escape_line(stderr, "%s: the report is in %s", ANALYZE_CMD, o.html);
    } else if (o.json) {
        out = report_json(procs, paths.n, sym, &o, paths.run_peak_tree_rss);
    } else {
        out = report_text(procs, paths.n, sym, &o, paths.run_peak_tree_rss);
    }
    if (out)
        rc = 2;
    int want = findings_severity_rank(o.fail_on);
    for (size_t i = 0; i < paths.n && want >= 0 && !rc; i++)
        if (procs[i].ok && findings_worst(&procs[i].findings) >= want)
            rc = 1;
    for (size_t i = 0; i < paths.n; i++)
        process_fini(&procs[i]);
    if (sym)
        symbols_fini(sym);
    inputs_free(&paths);
    free(procs);
    options_fini(&o);
    return rc;
}
