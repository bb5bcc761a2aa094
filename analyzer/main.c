/*
 * memsim-analyze: turn memsim traces into answers.
 *
 *   memsim-analyze [options] TRACE|DIR...
 *
 * It reads each trace in one streaming pass (analyzer/process.h, which
 * feeds the consumers of analyzer/consumers.h: the summary, the
 * allocation sites, the program's mappings, the strategy replay), runs
 * the findings on what they gathered (analyzer/consume/findings.h), then prints
 * its reports (analyzer/report/report.h): text, JSON, a flame graph's
 * collapsed stacks, an HTML page, a flame graph as SVG, a pprof profile;
 * several of them from one pass with --output.  --diff compares two runs
 * (analyzer/report/diff.h).  This file only orchestrates.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/analysis.h"
#include "analyzer/report/diff.h"
#include "analyzer/escape.h"
#include "analyzer/read/inputs.h"
#include "analyzer/options.h"
#include "analyzer/process.h"
#include "analyzer/report/report.h"

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

/* Each form asked for, from one analysis: --collapsed and --flamegraph
 * alone; otherwise the files of --output, --html and --pprof, and the
 * report on stdout (--json, or the text) when no file was asked. */
static int write_reports(analysis_t *a, const analyze_opts_t *o)
{
    process_t *procs = a->procs;
    size_t n = a->n;
    symbols_t *sym = a->store;
    if (o->collapsed != ANALYZE_NO_COLLAPSED) {
        report_collapsed(procs, n, sym, (sites_key_t)o->collapsed);
        return 0;
    }
    if (o->flamegraph) {
        int out = report_flamegraph(procs, n, sym, o->flame_key, o->flamegraph);
        if (!out && strcmp(o->flamegraph, "-"))
            escape_line(stderr, "%s: the flame graph is in %s", ANALYZE_CMD, o->flamegraph);
        return out;
    }
    if (options_stdout_report(o))
        return o->json ? report_json(stdout, procs, n, sym, o, a->run_peak)
                       : report_text(stdout, procs, n, sym, o, a->run_peak);
    int rc = 0;
    char tmp[4200];
    const struct { const char *path, *opt; bool json; } files[] = {
        {o->out_text, "--output text", false}, {o->out_json, "--output json", true}};
    for (size_t i = 0; i < 2 && !rc; i++) {
        if (!files[i].path)
            continue;
        FILE *f = report_open(files[i].path, tmp, sizeof tmp, files[i].opt);
        rc = !f ? -1
             : (files[i].json ? report_json : report_text)(f, procs, n, sym, o, a->run_peak);
        if (f && report_close(f, files[i].path, tmp, files[i].opt))
            rc = -1;
    }
    if (!rc && o->html) {
        rc = report_html(procs, n, sym, o, a->run_peak, o->html);
        if (!rc && strcmp(o->html, "-") && !o->out_text && !o->out_json)
            escape_line(stderr, "%s: the report is in %s", ANALYZE_CMD, o->html);
    }
    if (!rc && o->out_pprof) {
        rc = report_pprof(procs, n, sym, o->out_pprof);
        if (!rc && strcmp(o->out_pprof, "-") && !o->out_text && !o->out_json)
            escape_line(stderr, "%s: the profile is in %s", ANALYZE_CMD, o->out_pprof);
    }
    return rc;
}

int main(int argc, char **argv)
{
    reserve_stack();
    analyze_opts_t o;
    if (options_parse(argc, argv, &o))
        return 2;
    suppress_t sup;
    if (suppress_init(&sup, o.default_suppressions, o.suppressions, o.nsuppressions)) {
        options_fini(&o);
        return 2;
    }
    /* One symbol store for every trace: processes of a tree share modules. */
    symbols_t store;
    /* The leak suppressions match the leaked stacks' frames: with sites
     * (a file of them asks for sites; the built-in list alone does not:
     * --sites 0 leaves the symbols, and their memory, out). */
    bool want_sites = o.sites || o.collapsed != ANALYZE_NO_COLLAPSED || o.flamegraph || o.html ||
                      o.out_pprof || o.diff || o.nsuppressions;
    if (want_sites && symbols_init(&store)) {
        fprintf(stderr, "%s: out of memory\n", ANALYZE_CMD);
        return 2;
    }
    symbols_t *sym = want_sites ? &store : NULL;
    int rc;
    if (o.diff) {
        rc = diff_main(argv[optind], argv[optind + 1], &o, sym, &sup);
    } else {
        analysis_t a;
        rc = analysis_run(&a, argv + optind, (size_t)(argc - optind), &o, sym, &sup);
        if (rc >= 0) {
            o.run_command = a.command;
            if (write_reports(&a, &o))
                rc = 2;
            int want = findings_severity_rank(o.fail_on);
            for (size_t i = 0; i < a.n && want >= 0 && !rc; i++)
                if (a.procs[i].ok && findings_worst(&a.procs[i].findings) >= want)
                    rc = 1;
        } else {
            rc = 2;
        }
        analysis_fini(&a);
    }
    if (sym)
        symbols_fini(sym);
    suppress_fini(&sup);
    options_fini(&o);
    return rc;
}
