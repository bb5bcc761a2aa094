/*
 * options: memsim-analyze's command line.  See options.h.
 */
#include "analyzer/options.h"

#include <getopt.h>
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/consume/sites.h"
#include "lib/args.h"
#include "lib/opts.h"
#include "include/memsim.h"

static void usage(FILE *f);

/* ---- the options that need more than a field ---------------------------------------- */

static int set_strategies(void *v, const opts_opt_t *opt, const char *arg)
{
    analyze_opts_t *o = v;
    char *list = (char *)arg, *save = NULL; /* getopt's optarg: argv's own, writable */
    (void)opt;
    o->nstrategies = 0;
    for (char *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        const strategy_ops_t *ops = strategy_find(name);
        if (!ops) {
            char names[256];
            fprintf(stderr, "%s: --strategy: unknown strategy \"%s\" (known: %s)\n", ANALYZE_CMD,
                    name, strategy_names(names, sizeof names));
            return -1;
        }
        o->strategies_given = true;
        if (o->nstrategies < REPLAY_MAX_STRATEGIES)
            o->strategies[o->nstrategies++] = ops;
    }
    if (!o->nstrategies) {
        fprintf(stderr, "%s: --strategy: no strategy named\n", ANALYZE_CMD);
        return -1;
    }
    return 0;
}

static int set_allocators(void *v, const opts_opt_t *opt, const char *arg)
{
    analyze_opts_t *o = v;
    char err[256];
    (void)opt;
    if (catalog_parse_list(arg, o->allocators, CATALOG_MAX_SPECS, &o->nallocators, err,
                           sizeof err)) {
        fprintf(stderr, "%s: --allocators: %s\n", ANALYZE_CMD, err);
        return -1;
    }
    return 0;
}

static int set_fail_on(void *v, const opts_opt_t *opt, const char *arg)
{
    (void)opt;
    if (strcmp(arg, "info") && strcmp(arg, "warning") && strcmp(arg, "critical")) {
        fprintf(stderr, "%s: --fail-on: \"%s\" is not a severity (info, warning, "
                        "critical)\n", ANALYZE_CMD, arg);
        return -1;
    }
    ((analyze_opts_t *)v)->fail_on = arg;
    return 0;
}

static int set_remediation(void *v, const opts_opt_t *opt, const char *arg)
{
    json_error_t err;
    json_t *r = json_load_file(arg, 0, &err);
    (void)opt;
    if (!json_is_object(r)) {
        fprintf(stderr, "%s: --remediation: %s:%d: %s\n", ANALYZE_CMD, arg, err.line,
                r ? "not a JSON object" : err.text);
        json_decref(r);
        return -1;
    }
    ((analyze_opts_t *)v)->findings.remediation = r;
    return 0;
}

static int set_pids(void *v, const opts_opt_t *opt, const char *arg)
{
    analyze_opts_t *o = v;
    char *list = (char *)arg, *save = NULL;
    (void)opt;
    for (char *p = strtok_r(list, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        uint64_t pid;
        if (args_count(ANALYZE_CMD, "--pid", p, 1, &pid))
            return -1;
        if (o->npids == ANALYZE_MAX_PIDS) {
            fprintf(stderr, "%s: --pid: more than %d pids\n", ANALYZE_CMD, ANALYZE_MAX_PIDS);
            return -1;
        }
        o->pids[o->npids++] = (int64_t)pid;
    }
    return 0;
}

/* --html, --flamegraph and --exe: a name that is not empty, into the
 * field at opt->at. */
static int set_name(void *v, const opts_opt_t *opt, const char *arg)
{
    if (!*arg) {
        fprintf(stderr, "%s: --%s: an empty %s\n", ANALYZE_CMD, opt->name,
                opt->at == offsetof(analyze_opts_t, exe) ? "name" : "file name");
        return -1;
    }
    *(const char **)((char *)v + opt->at) = arg;
    return 0;
}

static int set_flame_weight(void *v, const opts_opt_t *opt, const char *arg)
{
    (void)opt;
    if (strcmp(arg, "peak") && strcmp(arg, "calls") && strcmp(arg, "leaked") &&
        strcmp(arg, "mapped")) {
        fprintf(stderr, "%s: --flamegraph-weight: \"%s\" is not a weight (peak, calls, "
                        "leaked, mapped)\n", ANALYZE_CMD, arg);
        return -1;
    }
    ((analyze_opts_t *)v)->flame_key = arg;
    return 0;
}

static int set_allocators_pages(void *v, const opts_opt_t *opt, const char *arg)
{
    (void)opt;
    if (strcmp(arg, "touched") && strcmp(arg, "all")) {
        fprintf(stderr, "%s: --allocators-pages: \"%s\" is neither touched nor all\n",
                ANALYZE_CMD, arg);
        return -1;
    }
    ((analyze_opts_t *)v)->allocators_all_pages = strcmp(arg, "all") == 0;
    return 0;
}

static int set_progress(void *v, const opts_opt_t *opt, const char *arg)
{
    (void)arg;
    ((analyze_opts_t *)v)->progress =
        strcmp(opt->name, "no-progress") ? PROGRESS_ALWAYS : PROGRESS_NEVER;
    return 0;
}

static int set_collapsed(void *v, const opts_opt_t *opt, const char *arg)
{
    analyze_opts_t *o = v;
    (void)opt;
    if (!arg || !strcmp(arg, "peak"))
        o->collapsed = SITES_BY_PEAK;
    else if (!strcmp(arg, "calls"))
        o->collapsed = SITES_BY_CALLS;
    else if (!strcmp(arg, "leaked"))
        o->collapsed = SITES_BY_LEAKED;
    else {
        fprintf(stderr, "%s: --collapsed: \"%s\" is not a weight (peak, calls, leaked)\n",
                ANALYZE_CMD, arg);
        return -1;
    }
    return 0;
}

/* --output FORM=FILE, and --pprof FILE (FORM pprof). */
static int set_output(void *v, const opts_opt_t *opt, const char *arg)
{
    analyze_opts_t *o = v;
    bool pprof = !strcmp(opt->name, "pprof");
    const char *form = pprof ? "pprof" : arg, *file = arg;
    size_t len = strcspn(arg, "=");
    if (!pprof) {
        if (!arg[len]) {
            fprintf(stderr, "%s: --output: \"%s\" is not FORM=FILE (text, json, html, "
                            "pprof)\n", ANALYZE_CMD, arg);
            return -1;
        }
        file = arg + len + 1;
    } else {
        len = strlen(form);
    }
    const char **to = !strncmp(form, "text", len) && len == 4    ? &o->out_text
                      : !strncmp(form, "json", len) && len == 4  ? &o->out_json
                      : !strncmp(form, "html", len) && len == 4  ? &o->html
                      : !strncmp(form, "pprof", len) && len == 5 ? &o->out_pprof
                                                                 : NULL;
    if (!to) {
        fprintf(stderr, "%s: --output: \"%.*s\" is not a form (text, json, html, pprof)\n",
                ANALYZE_CMD, (int)len, form);
        return -1;
    }
    if (!*file) {
        fprintf(stderr, "%s: %s: an empty file name\n", ANALYZE_CMD,
                pprof ? "--pprof" : "--output");
        return -1;
    }
    *to = file;
    return 0;
}

static int set_suppressions(void *v, const opts_opt_t *opt, const char *arg)
{
    analyze_opts_t *o = v;
    (void)opt;
    if (o->nsuppressions == ANALYZE_MAX_SUPPRESSIONS) {
        fprintf(stderr, "%s: --suppressions: more than %d files\n", ANALYZE_CMD,
                ANALYZE_MAX_SUPPRESSIONS);
        return -1;
    }
    o->suppressions[o->nsuppressions++] = arg;
    return 0;
}

static int version(void *o, const opts_opt_t *opt, const char *arg)
{
    (void)o, (void)opt, (void)arg;
    printf("%s %s\n", ANALYZE_CMD, MEMSIM_VERSION);
    exit(0);
}

static int help(void *o, const opts_opt_t *opt, const char *arg)
{
    (void)o, (void)opt, (void)arg;
    usage(stdout);
    exit(0);
}

static void help_allocators(char *buf, size_t len, const char *fmt)
{
    char names[128];
    snprintf(buf, len, fmt, catalog_names(names, sizeof names));
}

/* ---- the table ------------------------------------------------------------------------ */

#define AT(field) offsetof(analyze_opts_t, field)
#define FINDING(name, field, text)                                                          \
    {name, 0, OPTS_ARG, "F", OPTS_REAL, AT(findings.field), .lo = 0.0, .hi = 1.0, .help = text}
static const opts_opt_t analyze_options[] = {
    {"json", 0, OPTS_NO_ARG, NULL, OPTS_SET, AT(json),
     .help = "one JSON object for tools (docs/analysis-format.md)"},
    {"html", 0, OPTS_ARG, "FILE", .at = AT(html), .call = set_name,
     .help = "write one self-contained interactive HTML report to\n"
             "FILE instead (-: standard output; it opens offline\n"
             "in any browser)"},
    {"pprof", 0, OPTS_ARG, "FILE", .call = set_output,
     .help = "write a gzipped pprof profile (profile.proto) to FILE\n"
             "instead: allocations, bytes, in use at the peak and\n"
             "leaked, for go tool pprof, speedscope, Pyroscope, Parca"},
    {"output", 'o', OPTS_ARG, "FORM=FILE", .call = set_output,
     .help = "write the report as FORM (text, json, html, pprof) to\n"
             "FILE; several of them come from one pass"},
    {"diff", 0, OPTS_NO_ARG, "BASE NEW", OPTS_SET, AT(diff),
     .help = "compare two runs (traces or run directories): the\n"
             "totals, functions and findings that grew or shrank\n"
             "(text, --json, or --html FILE)"},
    {"fail-on-growth", 0, OPTS_ARG, "PCT", OPTS_REAL, AT(fail_on_growth), .lo = 0.0, .hi = 1e9,
     .help = "with --diff: exit 1 when the peak heap or the leaked\n"
             "bytes grew by more than PCT percent"},
    {"suppressions", 0, OPTS_ARG, "FILE", .call = set_suppressions,
     .help = "leaks to leave out of the leak figures: one pattern a\n"
             "line (leak:PATTERN or PATTERN; * any text; # comments)\n"
             "matched against any frame's function, library or\n"
             "source file"},
    {"no-default-suppressions", 0, OPTS_NO_ARG, NULL, OPTS_CLEAR, AT(default_suppressions),
     .help = "count the C runtime's and the loader's one-time\n"
             "allocations as leaks too"},
    {"strategy", 's', OPTS_ARG, "A,B", .call = set_strategies, .format = strategy_names_help,
     .help = "replay only these (known: %s)"},
    {"no-replay", 0, OPTS_NO_ARG, NULL, OPTS_CLEAR, AT(replay),
     .help = "skip the strategy replay"},
    {"allocators", 0, OPTS_ARG, "A,B", .call = set_allocators, .format = help_allocators,
     .help = "replay the trace through these real allocators too,\n"
             "each in a process of its own (known: %s); settings\n"
             "after a colon make a row of their own:\n"
             "'glibc:M_ARENA_MAX=1,jemalloc:dirty_decay_ms=0'"},
    {"allocators-pages", 0, OPTS_ARG, "WHICH", .call = set_allocators_pages,
     .help = "the pages of a large block their replays write:\n"
             "touched (default: those the program touched, as it\n"
             "ran) or all (every page, as the strategies count\n"
             "every requested byte)"},
    {"sites", 0, OPTS_ARG, "N", OPTS_COUNT, AT(sites), .min = 0,
     .help = "top N allocation sites by peak, by calls and by\n"
             "leaked bytes (default 10; 0: none)"},
    {"collapsed", 0, OPTS_MAYBE_ARG, "[=KEY]", .call = set_collapsed,
     .help = "write every stack as a flame graph's collapsed line\n"
             "weighted by KEY: peak (default), calls or leaked;\n"
             "instead of the report"},
    {"flamegraph", 0, OPTS_ARG, "FILE", .at = AT(flamegraph), .call = set_name,
     .help = "write a flame graph of every stack to FILE, one\n"
             "self-contained SVG (-: standard output), instead of\n"
             "the report"},
    {"flamegraph-weight", 0, OPTS_ARG, "KEY", .call = set_flame_weight,
     .help = "its weight: peak (bytes live at the peak heap, the\n"
             "default), calls, leaked or mapped (the program's own\n"
             "mappings at their peak)"},
    {"device-size", 'd', OPTS_ARG, "SIZE", OPTS_SIZE, AT(device_size), .min = 4096,
     .help = "the replay device (default: the trace's own)"},
    {"all", 0, OPTS_NO_ARG, NULL, OPTS_SET, AT(all),
     .help = "a full report for every process of a tree (default:\n"
             "those above 1% of the tree's peak)"},
    {"pid", 0, OPTS_ARG, "PID[,PID]", .call = set_pids,
     .help = "full reports for these processes only"},
    {"exe", 0, OPTS_ARG, "NAME", .at = AT(exe), .call = set_name,
     .help = "full reports for the processes of this executable\n"
             "(its path or file name)"},
    {"progress", 0, OPTS_NO_ARG, NULL, .call = set_progress,
     .help = "show progress on stderr from the start (default: on\n"
             "a terminal, once reading takes over 2 s)"},
    {"no-progress", 0, OPTS_NO_ARG, NULL, .call = set_progress,
     .help = "never show progress"},
    {"fail-on", 0, OPTS_ARG, "SEVERITY", .call = set_fail_on,
     .help = "exit 1 when a finding reaches info, warning or critical"},
    {"spike-z", 0, OPTS_ARG, "Z", OPTS_REAL, AT(findings.spike_z), .lo = 0.0, .hi = 1e6,
     .help = "robust spreads (1.4826 x the median absolute\n"
             "deviation) above the baseline from which a sample is\n"
             "a spike (default 3.5)"},
    {"drift-r2", 0, OPTS_ARG, "R2", OPTS_REAL, AT(findings.drift_r2), .lo = 0.0, .hi = 1.0,
     .help = "R² from which a rising stretch is a drift (default 0.8)"},
    FINDING("drift-span", drift_span, "the least share of the run a drift lasts (default 0.2)"),
    FINDING("frag-ratio", frag_ratio,
            "free memory the allocator holds, as a share of its\n"
            "resident memory, that is fragmentation (default 0.3)"),
    FINDING("frag-span", frag_span, "the least share of the run it lasts (default 0.2)"),
    {"gap-ratio", 0, OPTS_ARG, "G", OPTS_REAL, AT(findings.gap_ratio), .lo = 0.0, .hi = 1.0,
     .help = "a gap of this share of the device total counts\n"
             "whatever its share of RSS (default 0.01)"},
    {"min-bytes", 0, OPTS_ARG, "SIZE", OPTS_SIZE, AT(findings.min_bytes), .min = 0,
     .help = "no finding below these bytes at stake (default 1M)"},
    {"min-share", 0, OPTS_ARG, "S", OPTS_REAL, AT(findings.min_share), .lo = 0.0, .hi = 1.0,
     .help = "nor below this share of peak RSS (default 0.02)"},
    {"warn-share", 0, OPTS_ARG, "S", OPTS_REAL, AT(findings.warn_share), .lo = 0.0, .hi = 1.0,
     .help = "a warning from this share of peak RSS (default 0.1)"},
    {"critical-share", 0, OPTS_ARG, "S", OPTS_REAL, AT(findings.critical_share), .lo = 0.0,
     .hi = 1.0, .help = "critical from this share of peak RSS (default 0.5)"},
    {"warn-bytes", 0, OPTS_ARG, "SIZE", OPTS_SIZE, AT(findings.warn_bytes), .min = 0,
     .help = "a warning also needs these bytes (default 16M)"},
    {"critical-bytes", 0, OPTS_ARG, "SIZE", OPTS_SIZE, AT(findings.critical_bytes), .min = 0,
     .help = "critical also needs these bytes (default 256M)"},
    {"remediation", 0, OPTS_ARG, "FILE", .call = set_remediation,
     .help = "JSON {\"classification\": [\"text\", ...]} replacing the\n"
             "built-in remediation texts"},
    {"version", 0, OPTS_NO_ARG, NULL, .call = version, .help = "the version"},
    {"help", 'h', OPTS_NO_ARG, NULL, .call = help, .help = "this text"},
};
#undef FINDING
#undef AT

static const opts_cmd_t analyze_cmd = {
    ANALYZE_CMD, false, 26, analyze_options, sizeof analyze_options / sizeof *analyze_options,
};

static void usage(FILE *f)
{
    fprintf(f, "usage: memsim-analyze [options] TRACE|DIR...\n"
               "   or: memsim analyze [options] TRACE|DIR...\n"
               "\n"
               "Read memsim traces (one, several, or a directory of a process tree's) and\n"
               "report what the program did with memory, and how its allocations would fare\n"
               "under every allocation strategy.\n"
               "\n");
    opts_help(f, &analyze_cmd);
    fprintf(f, "\n"
               "Exit status: 0, 1 when a finding reaches --fail-on (or the growth\n"
               "--fail-on-growth), 2 for usage or unreadable input.\n"
               "\n"
               "EXAMPLES\n"
               "  memsim-analyze memsim-myprog-20261130-120000/\n"
               "  memsim-analyze --json memsim.myprog.4242.0.jsonl\n"
               "  memsim-analyze -s best-fit,buddy -d 2G memsim.myprog.4242.0.jsonl\n"
               "  memsim-analyze --allocators glibc,jemalloc,mimalloc,tcmalloc DIR\n"
               "  memsim-analyze --flamegraph leaks.svg --flamegraph-weight leaked DIR\n"
               "  memsim-analyze --diff before/ after/ --fail-on-growth 5\n"
               "  memsim-analyze --pprof heap.pb.gz DIR && go tool pprof -top heap.pb.gz\n");
}

/* ---- what the options ask together ---------------------------------------------------- */

/* The inputs and the forms asked for: 0, or -1 after one line. */
static int check(int argc, analyze_opts_t *o)
{
    bool collapsed = o->collapsed != ANALYZE_NO_COLLAPSED;
    if (optind >= argc) {
        fprintf(stderr, "%s: no trace given (see %s --help)\n", ANALYZE_CMD, ANALYZE_CMD);
        return -1;
    }
    if (o->diff && argc - optind != 2) {
        fprintf(stderr, "%s: --diff compares two runs: BASE NEW (%d given)\n", ANALYZE_CMD,
                argc - optind);
        return -1;
    }
    if (o->fail_on_growth >= 0 && !o->diff) {
        fprintf(stderr, "%s: --fail-on-growth needs --diff\n", ANALYZE_CMD);
        return -1;
    }
    if (o->diff && (collapsed || o->flamegraph || o->out_pprof || o->out_text || o->out_json)) {
        fprintf(stderr, "%s: --diff writes text, --json or --html FILE\n", ANALYZE_CMD);
        return -1;
    }
    if ((o->out_text || o->out_json || o->out_pprof) && (o->flamegraph || collapsed || o->json)) {
        fprintf(stderr, "%s: --output and --pprof exclude --json, --collapsed and --flamegraph\n",
                ANALYZE_CMD);
        return -1;
    }
    if (o->flamegraph && (o->json || o->html || collapsed)) {
        fprintf(stderr, "%s: --flamegraph excludes --json, --html and --collapsed\n", ANALYZE_CMD);
        return -1;
    }
    if (o->flame_key && !o->flamegraph) {
        fprintf(stderr, "%s: --flamegraph-weight needs --flamegraph\n", ANALYZE_CMD);
        return -1;
    }
    if (o->html && (o->json || collapsed)) {
        fprintf(stderr, "%s: --html excludes --json and --collapsed\n", ANALYZE_CMD);
        return -1;
    }
    if (o->json && collapsed) {
        fprintf(stderr, "%s: --json and --collapsed exclude each other\n", ANALYZE_CMD);
        return -1;
    }
    return 0;
}

int options_parse(int argc, char **argv, analyze_opts_t *o)
{
    *o = (analyze_opts_t){.replay = true, .findings = FINDINGS_DEFAULTS, .sites = ANALYZE_DEFAULT_SITES,
                          .collapsed = ANALYZE_NO_COLLAPSED, .default_suppressions = true,
                          .fail_on_growth = -1, .run_command = ""};
    if (opts_parse(&analyze_cmd, argc, argv, o) || check(argc, o))
        return -1;
    if (!o->flame_key)
        o->flame_key = "peak";
    if (o->flamegraph)
        o->replay = false; /* a flame graph has no room for it */
    if (o->collapsed != ANALYZE_NO_COLLAPSED)
        o->replay = false; /* collapsed stacks have no room for it */
    if (!o->nstrategies)
        for (size_t i = 0; i < strategy_count() && i < REPLAY_MAX_STRATEGIES; i++)
            o->strategies[o->nstrategies++] = strategy_at(i);
    return 0;
}

bool options_stdout_report(const analyze_opts_t *o)
{
    return !o->out_text && !o->out_json && !o->out_pprof && !o->html;
}

void options_fini(analyze_opts_t *o)
{
    json_decref(o->findings.remediation);
    o->findings.remediation = NULL;
}
