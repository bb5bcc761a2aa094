/*
 * options: memsim-analyze's command line.  See options.h.
 */
#include "analyzer/options.h"

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/consume/sites.h"
#include "lib/args.h"
#include "include/memsim.h"

static void usage(FILE *f)
{
    char names[256], anames[128];
    fprintf(f,
            "usage: memsim-analyze [options] TRACE|DIR...\n"
            "   or: memsim analyze [options] TRACE|DIR...\n"
            "\n"
            "Read memsim traces (one, several, or a directory of a process tree's) and\n"
            "report what the program did with memory, and how its allocations would fare\n"
            "under every allocation strategy.\n"
            "\n"
            "      --json              one JSON object for tools (docs/analysis-format.md)\n"
            "      --html FILE         write one self-contained interactive HTML report to\n"
            "                          FILE instead (-: standard output; it opens offline\n"
            "                          in any browser)\n"
            "      --pprof FILE        write a gzipped pprof profile (profile.proto) to FILE\n"
            "                          instead: allocations, bytes, in use at the peak and\n"
            "                          leaked, for go tool pprof, speedscope, Pyroscope, Parca\n"
            "  -o, --output FORM=FILE  write the report as FORM (text, json, html, pprof) to\n"
            "                          FILE; several of them come from one pass\n"
            "      --diff BASE NEW     compare two runs (traces or run directories): the\n"
            "                          totals, functions and findings that grew or shrank\n"
            "                          (text, --json, or --html FILE)\n"
            "      --fail-on-growth PCT\n"
            "                          with --diff: exit 1 when the peak heap or the leaked\n"
            "                          bytes grew by more than PCT percent\n"
            "      --suppressions FILE leaks to leave out of the leak figures: one pattern a\n"
            "                          line (leak:PATTERN or PATTERN; * any text; # comments)\n"
            "                          matched against any frame's function, library or\n"
            "                          source file\n"
            "      --no-default-suppressions\n"
            "                          count the C runtime's and the loader's one-time\n"
            "                          allocations as leaks too\n"
            "  -s, --strategy A,B      replay only these (known: %s)\n"
            "      --no-replay         skip the strategy replay\n"
            "      --allocators A,B    replay the trace through these real allocators too,\n"
            "                          each in a process of its own (known: %s); settings\n"
            "                          after a colon make a row of their own:\n"
            "                          'glibc:M_ARENA_MAX=1,jemalloc:dirty_decay_ms=0'\n"
            "      --sites N           top N allocation sites by peak, by calls and by\n"
            "                          leaked bytes (default 10; 0: none)\n"
            "      --collapsed[=KEY]   write every stack as a flame graph's collapsed line\n"
            "                          weighted by KEY: peak (default), calls or leaked;\n"
            "                          instead of the report\n"
            "      --flamegraph FILE   write a flame graph of every stack to FILE, one\n"
            "                          self-contained SVG (-: standard output), instead of\n"
            "                          the report\n"
            "      --flamegraph-weight KEY\n"
            "                          its weight: peak (bytes live at the peak heap, the\n"
            "                          default), calls, leaked or mapped (the program's own\n"
            "                          mappings at their peak)\n"
            "  -d, --device-size SIZE  the replay device (default: the trace's own)\n"
            "      --all               a full report for every process of a tree (default:\n"
            "                          those above 1%% of the tree's peak)\n"
            "      --pid PID[,PID]     full reports for these processes only\n"
            "      --exe NAME          full reports for the processes of this executable\n"
            "                          (its path or file name)\n"
            "      --progress          show progress on stderr from the start (default: on\n"
            "                          a terminal, once reading takes over 2 s)\n"
            "      --no-progress       never show progress\n"
            "      --fail-on SEVERITY  exit 1 when a finding reaches info, warning or critical\n"
            "      --spike-z Z         robust spreads (1.4826 x the median absolute\n"
            "                          deviation) above the baseline from which a sample is\n"
            "                          a spike (default 3.5)\n"
            "      --drift-r2 R2       R² from which a rising stretch is a drift (default 0.8)\n"
            "      --drift-span F      the least share of the run a drift lasts (default 0.2)\n"
            "      --frag-ratio F      free memory the allocator holds, as a share of its\n"
            "                          resident memory, that is fragmentation (default 0.3)\n"
            "      --frag-span F       the least share of the run it lasts (default 0.2)\n"
            "      --gap-ratio G       a gap of this share of the device total counts\n"
            "                          whatever its share of RSS (default 0.01)\n"
            "      --min-bytes SIZE    no finding below these bytes at stake (default 1M)\n"
            "      --min-share S       nor below this share of peak RSS (default 0.02)\n"
            "      --warn-share S      a warning from this share of peak RSS (default 0.1)\n"
            "      --critical-share S  critical from this share of peak RSS (default 0.5)\n"
            "      --warn-bytes SIZE   a warning also needs these bytes (default 16M)\n"
            "      --critical-bytes SIZE\n"
            "                          critical also needs these bytes (default 256M)\n"
            "      --remediation FILE  JSON {\"classification\": [\"text\", ...]} replacing the\n"
            "                          built-in remediation texts\n"
            "      --version           the version\n"
            "  -h, --help              this text\n"
            "\n"
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
            "  memsim-analyze --pprof heap.pb.gz DIR && go tool pprof -top heap.pb.gz\n",
            strategy_names(names, sizeof names), catalog_names(anames, sizeof anames));
}

int options_parse(int argc, char **argv, analyze_opts_t *o)
{
    enum { OPT_JSON = 256, OPT_NO_REPLAY, OPT_FAIL_ON, OPT_SPIKE, OPT_DRIFT, OPT_FRAG, OPT_GAP,
           OPT_REMEDIATION, OPT_SITES, OPT_COLLAPSED, OPT_PROGRESS, OPT_NO_PROGRESS,
           OPT_MIN_BYTES, OPT_MIN_SHARE, OPT_WARN_SHARE, OPT_CRITICAL_SHARE, OPT_DRIFT_SPAN,
           OPT_FRAG_SPAN, OPT_WARN_BYTES, OPT_CRITICAL_BYTES, OPT_ALL, OPT_PID,
           OPT_EXE, OPT_HTML, OPT_FLAMEGRAPH, OPT_FLAME_WEIGHT, OPT_PPROF, OPT_DIFF,
           OPT_FAIL_GROWTH, OPT_SUPPRESSIONS, OPT_NO_DEFAULT_SUPP, OPT_VERSION,
           OPT_ALLOCATORS };
    static const struct option longopts[] = {
        {"json", no_argument, NULL, OPT_JSON},
        {"strategy", required_argument, NULL, 's'},
        {"no-replay", no_argument, NULL, OPT_NO_REPLAY},
        {"allocators", required_argument, NULL, OPT_ALLOCATORS},
        {"device-size", required_argument, NULL, 'd'},
        {"fail-on", required_argument, NULL, OPT_FAIL_ON},
        {"spike-z", required_argument, NULL, OPT_SPIKE},
        {"drift-r2", required_argument, NULL, OPT_DRIFT},
        {"frag-ratio", required_argument, NULL, OPT_FRAG},
        {"gap-ratio", required_argument, NULL, OPT_GAP},
        {"min-bytes", required_argument, NULL, OPT_MIN_BYTES},
        {"min-share", required_argument, NULL, OPT_MIN_SHARE},
        {"warn-share", required_argument, NULL, OPT_WARN_SHARE},
        {"critical-share", required_argument, NULL, OPT_CRITICAL_SHARE},
        {"drift-span", required_argument, NULL, OPT_DRIFT_SPAN},
        {"frag-span", required_argument, NULL, OPT_FRAG_SPAN},
        {"warn-bytes", required_argument, NULL, OPT_WARN_BYTES},
        {"critical-bytes", required_argument, NULL, OPT_CRITICAL_BYTES},
        {"remediation", required_argument, NULL, OPT_REMEDIATION},
        {"sites", required_argument, NULL, OPT_SITES},
        {"collapsed", optional_argument, NULL, OPT_COLLAPSED},
        {"progress", no_argument, NULL, OPT_PROGRESS},
        {"all", no_argument, NULL, OPT_ALL},
        {"pid", required_argument, NULL, OPT_PID},
        {"exe", required_argument, NULL, OPT_EXE},
        {"html", required_argument, NULL, OPT_HTML},
        {"flamegraph", required_argument, NULL, OPT_FLAMEGRAPH},
        {"flamegraph-weight", required_argument, NULL, OPT_FLAME_WEIGHT},
        {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
        {"pprof", required_argument, NULL, OPT_PPROF},
        {"output", required_argument, NULL, 'o'},
        {"diff", no_argument, NULL, OPT_DIFF},
        {"fail-on-growth", required_argument, NULL, OPT_FAIL_GROWTH},
        {"suppressions", required_argument, NULL, OPT_SUPPRESSIONS},
        {"no-default-suppressions", no_argument, NULL, OPT_NO_DEFAULT_SUPP},
        {"version", no_argument, NULL, OPT_VERSION},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    *o = (analyze_opts_t){.replay = true, .findings = FINDINGS_DEFAULTS, .sites = ANALYZE_DEFAULT_SITES,
                          .collapsed = ANALYZE_NO_COLLAPSED, .default_suppressions = true,
                          .fail_on_growth = -1, .run_command = ""};
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":s:d:ho:", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_JSON: o->json = true; break;
        case OPT_NO_REPLAY: o->replay = false; break;
        case 's': {
            char *list = optarg, *save = NULL;
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
            break;
        }
        case OPT_ALLOCATORS: {
            char err[256];
            if (catalog_parse_list(optarg, o->allocators, CATALOG_MAX_SPECS, &o->nallocators, err,
                                   sizeof err)) {
                fprintf(stderr, "%s: --allocators: %s\n", ANALYZE_CMD, err);
                return -1;
            }
            break;
        }
        case 'd':
            if (args_size(ANALYZE_CMD, "--device-size", optarg, 4096, &o->device_size))
                return -1;
            break;
        case OPT_FAIL_ON:
            if (strcmp(optarg, "info") && strcmp(optarg, "warning") && strcmp(optarg, "critical")) {
                fprintf(stderr, "%s: --fail-on: \"%s\" is not a severity (info, warning, "
                                "critical)\n", ANALYZE_CMD, optarg);
                return -1;
            }
            o->fail_on = optarg;
            break;
        case OPT_SPIKE:
            if (args_real(ANALYZE_CMD, "--spike-z", optarg, 0.0, 1e6, &o->findings.spike_z))
                return -1;
            break;
        case OPT_DRIFT:
            if (args_real(ANALYZE_CMD, "--drift-r2", optarg, 0.0, 1.0, &o->findings.drift_r2))
                return -1;
            break;
        case OPT_FRAG:
            if (args_real(ANALYZE_CMD, "--frag-ratio", optarg, 0.0, 1.0, &o->findings.frag_ratio))
                return -1;
            break;
        case OPT_GAP:
            if (args_real(ANALYZE_CMD, "--gap-ratio", optarg, 0.0, 1.0, &o->findings.gap_ratio))
                return -1;
            break;
        case OPT_MIN_BYTES:
            if (args_size(ANALYZE_CMD, "--min-bytes", optarg, 0, &o->findings.min_bytes))
                return -1;
            break;
        case OPT_MIN_SHARE:
            if (args_real(ANALYZE_CMD, "--min-share", optarg, 0.0, 1.0, &o->findings.min_share))
                return -1;
            break;
        case OPT_WARN_SHARE:
            if (args_real(ANALYZE_CMD, "--warn-share", optarg, 0.0, 1.0, &o->findings.warn_share))
                return -1;
            break;
        case OPT_CRITICAL_SHARE:
            if (args_real(ANALYZE_CMD, "--critical-share", optarg, 0.0, 1.0,
                          &o->findings.critical_share))
                return -1;
            break;
        case OPT_DRIFT_SPAN:
            if (args_real(ANALYZE_CMD, "--drift-span", optarg, 0.0, 1.0, &o->findings.drift_span))
                return -1;
            break;
        case OPT_FRAG_SPAN:
            if (args_real(ANALYZE_CMD, "--frag-span", optarg, 0.0, 1.0, &o->findings.frag_span))
                return -1;
            break;
        case OPT_WARN_BYTES:
            if (args_size(ANALYZE_CMD, "--warn-bytes", optarg, 0, &o->findings.warn_bytes))
                return -1;
            break;
        case OPT_CRITICAL_BYTES:
            if (args_size(ANALYZE_CMD, "--critical-bytes", optarg, 0, &o->findings.critical_bytes))
                return -1;
            break;
        case OPT_REMEDIATION: {
            json_error_t err;
            json_t *r = json_load_file(optarg, 0, &err);
            if (!json_is_object(r)) {
                fprintf(stderr, "%s: --remediation: %s:%d: %s\n", ANALYZE_CMD, optarg, err.line,
                        r ? "not a JSON object" : err.text);
                json_decref(r);
                return -1;
            }
            o->findings.remediation = r;
            break;
        }
        case OPT_ALL:
            o->all = true;
            break;
        case OPT_PID: {
            char *list = optarg, *save = NULL;
            for (char *p = strtok_r(list, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
                uint64_t pid;
                if (args_count(ANALYZE_CMD, "--pid", p, 1, &pid))
                    return -1;
                if (o->npids == ANALYZE_MAX_PIDS) {
                    fprintf(stderr, "%s: --pid: more than %d pids\n", ANALYZE_CMD,
                            ANALYZE_MAX_PIDS);
                    return -1;
                }
                o->pids[o->npids++] = (int64_t)pid;
            }
            break;
        }
        case OPT_HTML:
            if (!*optarg) {
                fprintf(stderr, "%s: --html: an empty file name\n", ANALYZE_CMD);
                return -1;
            }
            o->html = optarg;
            break;
        case OPT_FLAMEGRAPH:
            if (!*optarg) {
                fprintf(stderr, "%s: --flamegraph: an empty file name\n", ANALYZE_CMD);
                return -1;
            }
            o->flamegraph = optarg;
            break;
        case OPT_FLAME_WEIGHT:
            if (strcmp(optarg, "peak") && strcmp(optarg, "calls") && strcmp(optarg, "leaked") &&
                strcmp(optarg, "mapped")) {
                fprintf(stderr, "%s: --flamegraph-weight: \"%s\" is not a weight (peak, calls, "
                                "leaked, mapped)\n", ANALYZE_CMD, optarg);
                return -1;
            }
            o->flame_key = optarg;
            break;
        case OPT_EXE:
            if (!*optarg) {
                fprintf(stderr, "%s: --exe: an empty name\n", ANALYZE_CMD);
                return -1;
            }
            o->exe = optarg;
            break;
        case OPT_PROGRESS:
            o->progress = PROGRESS_ALWAYS;
            break;
        case OPT_NO_PROGRESS:
            o->progress = PROGRESS_NEVER;
            break;
        case OPT_SITES:
            if (args_count(ANALYZE_CMD, "--sites", optarg, 0, &o->sites))
                return -1;
            break;
        case OPT_COLLAPSED:
            if (!optarg || !strcmp(optarg, "peak"))
                o->collapsed = SITES_BY_PEAK;
            else if (!strcmp(optarg, "calls"))
                o->collapsed = SITES_BY_CALLS;
            else if (!strcmp(optarg, "leaked"))
                o->collapsed = SITES_BY_LEAKED;
            else {
                fprintf(stderr, "%s: --collapsed: \"%s\" is not a weight (peak, calls, leaked)\n",
                        ANALYZE_CMD, optarg);
                return -1;
            }
            break;
        case OPT_PPROF:
        case 'o': {
            const char *form = c == OPT_PPROF ? "pprof" : optarg, *file = optarg;
            size_t len = strcspn(optarg, "=");
            if (c == 'o') {
                if (!optarg[len]) {
                    fprintf(stderr, "%s: --output: \"%s\" is not FORM=FILE (text, json, html, "
                                    "pprof)\n", ANALYZE_CMD, optarg);
                    return -1;
                }
                file = optarg + len + 1;
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
                        c == 'o' ? "--output" : "--pprof");
                return -1;
            }
            *to = file;
            break;
        }
        case OPT_DIFF:
            o->diff = true;
            break;
        case OPT_FAIL_GROWTH:
            if (args_real(ANALYZE_CMD, "--fail-on-growth", optarg, 0.0, 1e9, &o->fail_on_growth))
                return -1;
            break;
        case OPT_SUPPRESSIONS:
            if (o->nsuppressions == ANALYZE_MAX_SUPPRESSIONS) {
                fprintf(stderr, "%s: --suppressions: more than %d files\n", ANALYZE_CMD,
                        ANALYZE_MAX_SUPPRESSIONS);
                return -1;
            }
            o->suppressions[o->nsuppressions++] = optarg;
            break;
        case OPT_NO_DEFAULT_SUPP:
            o->default_suppressions = false;
            break;
        case OPT_VERSION:
            printf("%s %s\n", ANALYZE_CMD, MEMSIM_VERSION);
            exit(0);
        case 'h': usage(stdout); exit(0);
        case ':':
            fprintf(stderr, "%s: %s needs a value\n", ANALYZE_CMD, argv[optind - 1]);
            return -1;
        default:
            fprintf(stderr, "%s: unknown option \"%s\" (see %s --help)\n", ANALYZE_CMD, argv[optind - 1],
                    ANALYZE_CMD);
            return -1;
        }
    }
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
    if (o->diff && (o->collapsed != ANALYZE_NO_COLLAPSED || o->flamegraph || o->out_pprof ||
                    o->out_text || o->out_json)) {
        fprintf(stderr, "%s: --diff writes text, --json or --html FILE\n", ANALYZE_CMD);
        return -1;
    }
    if ((o->out_text || o->out_json || o->out_pprof) &&
        (o->flamegraph || o->collapsed != ANALYZE_NO_COLLAPSED || o->json)) {
        fprintf(stderr, "%s: --output and --pprof exclude --json, --collapsed and --flamegraph\n",
                ANALYZE_CMD);
        return -1;
    }
    if (o->flamegraph && (o->json || o->html || o->collapsed != ANALYZE_NO_COLLAPSED)) {
        fprintf(stderr, "%s: --flamegraph excludes --json, --html and --collapsed\n", ANALYZE_CMD);
        return -1;
    }
    if (o->flame_key && !o->flamegraph) {
        fprintf(stderr, "%s: --flamegraph-weight needs --flamegraph\n", ANALYZE_CMD);
        return -1;
    }
    if (!o->flame_key)
        o->flame_key = "peak";
    if (o->flamegraph)
        o->replay = false; /* a flame graph has no room for it */
    if (o->html && (o->json || o->collapsed != ANALYZE_NO_COLLAPSED)) {
        fprintf(stderr, "%s: --html excludes --json and --collapsed\n", ANALYZE_CMD);
        return -1;
    }
    if (o->json && o->collapsed != ANALYZE_NO_COLLAPSED) {
        fprintf(stderr, "%s: --json and --collapsed exclude each other\n", ANALYZE_CMD);
        return -1;
    }
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
