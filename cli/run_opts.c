/*
 * run_opts: memsim run's options and --help (see run_opts.h).
 */
#include "cli/run_opts.h"

#include <float.h>
#include <getopt.h>
#include <limits.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/paths.h"
#include "cli/run_watch.h"
#include "lib/args.h"
#include "lib/opts.h"
#include "lib/sampling.h"
#include "sim/strategy.h"

#define CMD RUN_CMD

/* What the preload accepts (ipc/config.h): refused here, before the
 * command starts, rather than there, where it would run untraced. */
#define RUN_DEVICE_SIZE_MIN 4096u
#define RUN_SAMPLE_MS_MAX 3600000u
#define RUN_DEVICE_SIZE_MAX (1ull << 50) /* 1 PiB */

/* The budgets' ranges: a poll to a year, a MiB to 16 TiB. */
#define RUN_WALL_S_MIN RUN_POLL_S
#define RUN_WALL_S_MAX (365.0 * 86400.0)
#define RUN_RSS_MB_MIN 1.0
#define RUN_RSS_MB_MAX (16.0 * 1024.0 * 1024.0)

/* ---------------------------------------------------------------------
 * Options
 * ------------------------------------------------------------------- */

/* A positive finite number in [lo, hi] (unit: what it counts, for the
 * message): refuses 0, negatives, NaN, infinities, text, and what is
 * out of range. */
static int parse_budget(const char *opt, const char *s, double lo, double hi, const char *unit,
                        double *out)
{
    if (args_real(CMD, opt, s, -DBL_MAX, DBL_MAX, out))
        return -1;
    if (*out <= 0) {
        fprintf(stderr, "%s: %s: %s is not a positive number\n", CMD, opt, s);
        return -1;
    }
    if (*out < lo) {
        fprintf(stderr, "%s: %s: %s is below the minimum %g %s\n", CMD, opt, s, lo, unit);
        return -1;
    }
    if (*out > hi) {
        fprintf(stderr, "%s: %s: %s is above the maximum %.0f %s\n", CMD, opt, s, hi, unit);
        return -1;
    }
    return 0;
}

/* An option a comparison's runs get too: opt, and its value when it
 * has one.  Given again, it replaces its earlier value, as the last one
 * wins for the run itself: each option is in pass once, so the five that
 * are passed on fit however often they are repeated. */
static void pass_on(run_opts_t *o, const char *opt, const char *arg)
{
    for (size_t i = 0; i < o->npass; i++)
        if (strcmp(o->pass[i], opt) == 0) {
            if (arg)
                o->pass[i + 1] = arg;
            return;
        }
    o->pass[o->npass++] = opt;
    if (arg)
        o->pass[o->npass++] = arg;
}

static int set_out(void *v, const opts_opt_t *opt, const char *arg)
{
    (void)opt;
    if (!*arg) {
        fprintf(stderr, "%s: --out: the directory name is empty\n", CMD);
        return -1;
    }
    ((run_opts_t *)v)->out = arg;
    return 0;
}

static int set_strategy(void *v, const opts_opt_t *opt, const char *s)
{
    (void)opt;
    if (strcmp(s, "none") == 0 || strategy_find(s)) {
        ((run_opts_t *)v)->strategy = s;
        return 0;
    }
    char names[256];
    fprintf(stderr, "%s: --strategy: unknown strategy \"%s\" (known: none, %s)\n", CMD, s,
            strategy_names(names, sizeof names));
    return -1;
}

static int set_device_size(void *v, const opts_opt_t *opt, const char *arg)
{
    run_opts_t *o = v;
    (void)opt;
    if (args_size(CMD, "--device-size", arg, RUN_DEVICE_SIZE_MIN, &o->device_size))
        return -1;
    if (o->device_size > RUN_DEVICE_SIZE_MAX) {
        fprintf(stderr, "%s: --device-size: %s is above the maximum 1P\n", CMD, arg);
        return -1;
    }
    return 0;
}

static int set_sample_ms(void *v, const opts_opt_t *opt, const char *arg)
{
    run_opts_t *o = v;
    (void)opt;
    pass_on(o, "--sample-ms", arg);
    if (args_count(CMD, "--sample-ms", arg, 1, &o->sample_ms))
        return -1;
    if (o->sample_ms > RUN_SAMPLE_MS_MAX) {
        fprintf(stderr, "%s: --sample-ms: %s is above the maximum %u\n", CMD, arg,
                RUN_SAMPLE_MS_MAX);
        return -1;
    }
    return 0;
}

static int set_sample_bytes(void *v, const opts_opt_t *opt, const char *arg)
{
    run_opts_t *o = v;
    (void)opt;
    if (args_size(CMD, "--sample-bytes", arg, 1, &o->sample_bytes))
        return -1;
    if (o->sample_bytes > SAMPLING_BYTES_MAX) {
        fprintf(stderr, "%s: --sample-bytes: %s is above the maximum 1G\n", CMD, arg);
        return -1;
    }
    return 0;
}

static int set_sampled(void *v, const opts_opt_t *opt, const char *arg)
{
    (void)opt, (void)arg;
    ((run_opts_t *)v)->sample_bytes = SAMPLING_BYTES_DEFAULT;
    return 0;
}

static int set_wall(void *v, const opts_opt_t *opt, const char *arg)
{
    run_opts_t *o = v;
    (void)opt;
    pass_on(o, "--wall-s", arg);
    return parse_budget("--wall-s", arg, RUN_WALL_S_MIN, RUN_WALL_S_MAX, "s", &o->wall_s);
}

static int set_rss(void *v, const opts_opt_t *opt, const char *arg)
{
    run_opts_t *o = v;
    (void)opt;
    pass_on(o, "--rss-mb", arg);
    return parse_budget("--rss-mb", arg, RUN_RSS_MB_MIN, RUN_RSS_MB_MAX, "MiB", &o->rss_mb);
}

static int set_no_children(void *v, const opts_opt_t *opt, const char *arg)
{
    run_opts_t *o = v;
    (void)opt;
    o->no_children = true;
    pass_on(o, "--no-children", arg);
    return 0;
}

static int set_no_compress(void *v, const opts_opt_t *opt, const char *arg)
{
    run_opts_t *o = v;
    (void)opt;
    o->no_compress = true;
    pass_on(o, "--no-compress", arg);
    return 0;
}

static int set_analyze_opts(void *v, const opts_opt_t *opt, const char *arg)
{
    run_opts_t *o = v;
    (void)opt;
    if (run_report_opts_add(CMD, &o->aopts, arg))
        return -1;
    o->analyze = true;
    return 0;
}

static int set_compare(void *v, const opts_opt_t *opt, const char *arg)
{
    run_opts_t *o = v;
    (void)opt;
    o->compare = true;
    o->compare_list = arg;
    return 0;
}

static int set_exe(void *v, const opts_opt_t *opt, const char *arg)
{
    (void)opt;
    if (!*arg) {
        fprintf(stderr, "%s: --exe: the executable's name is empty\n", CMD);
        return -1;
    }
    ((run_opts_t *)v)->compare_exe = arg;
    return 0;
}

static int help(void *o, const opts_opt_t *opt, const char *arg)
{
    (void)o, (void)opt, (void)arg;
    run_usage(stdout);
    exit(0);
}

static void help_sample_ms(char *buf, size_t len, const char *fmt)
{
    snprintf(buf, len, fmt, RUN_SAMPLE_MS_MAX);
}

static void help_wall(char *buf, size_t len, const char *fmt)
{
    snprintf(buf, len, fmt, RUN_WALL_S_MIN, RUN_WALL_S_MAX);
}

static void help_rss(char *buf, size_t len, const char *fmt)
{
    snprintf(buf, len, fmt, RUN_RSS_MB_MIN, RUN_RSS_MB_MAX);
}

#define AT(field) offsetof(run_opts_t, field)
static const opts_opt_t run_options[] = {
    {"out", 'o', OPTS_ARG, "DIR", .call = set_out,
     .help = "output directory, created if missing; one that exists\n"
             "must be empty (default: a new\n"
             "memsim-<exe>-<YYYYmmdd-HHMMSS>/ in the current directory)"},
    {"force", 'f', OPTS_NO_ARG, NULL, OPTS_SET, AT(force),
     .help = "reuse a --out DIR that is not empty: the files of the\n"
             "run before (traces, rss.jsonl, resources.json, reports)\n"
             "are removed first, nothing else"},
    {"strategy", 's', OPTS_ARG, "NAME", .call = set_strategy, .format = strategy_names_help,
     .help = "shadow device strategy, or \"none\"; known: %s"},
    {"device-size", 'd', OPTS_ARG, "SIZE", .call = set_device_size,
     .help = "shadow device size, 4K to 1P, e.g. 512M (default:\n"
             "physical memory)"},
    {"sample-ms", 0, OPTS_ARG, "N", .call = set_sample_ms, .format = help_sample_ms,
     .help = "the preload's sampling period, 1 to %u ms (default 100)"},
    {"sample-bytes", 0, OPTS_ARG, "N", .call = set_sample_bytes,
     .help = "a sampled trace: allocations sampled by bytes, one in\n"
             "about every N bytes allocated (1 to 1G, e.g. 512K,\n"
             "4M): the heap's figures are estimates, cheap enough to\n"
             "leave on (MEMSIM_SAMPLE_BYTES)"},
    {"sample", 0, OPTS_NO_ARG, NULL, .call = set_sampled, .help = "the same at 512K"},
    {"wall-s", 0, OPTS_ARG, "S", .call = set_wall, .format = help_wall,
     .help = "wall-time budget, %g to %.0f s (365 days)"},
    {"rss-mb", 0, OPTS_ARG, "M", .call = set_rss, .format = help_rss,
     .help = "process tree RSS budget, %g to %.0f MiB (16 TiB)"},
    {"no-children", 0, OPTS_NO_ARG, NULL, .call = set_no_children,
     .help = "trace only CMD itself (RSS still counts the whole tree)"},
    {"no-compress", 0, OPTS_NO_ARG, NULL, .call = set_no_compress,
     .help = "write plain JSON-lines traces (default: zstd, .jsonl.zst)"},
    {"analyze", 0, OPTS_NO_ARG, NULL, OPTS_SET, AT(analyze),
     .help = "afterwards, memsim-analyze's reports into DIR/report.txt,\n"
             "DIR/report.json and DIR/report.html; report.txt shown\n"
             "on stdout when it is a terminal, else on stderr (the\n"
             "exit status stays CMD's)"},
    {"analyze-opts", 0, OPTS_ARG, "OPTS", .call = set_analyze_opts,
     .help = "memsim-analyze's options for --analyze (implies it),\n"
             "split at blanks, e.g. \"--sites 20 --fail-on warning\";\n"
             "not --json, --html, --collapsed nor --flamegraph"},
    {"allocator", 0, OPTS_ARG, "SPEC", OPTS_TEXT, AT(alloc_spec),
     .help = "run CMD with a real allocator preloaded (glibc,\n"
             "jemalloc, mimalloc, tcmalloc; settings after a colon,\n"
             "e.g. jemalloc:dirty_decay_ms=0) and measure each\n"
             "process's heap RSS into DIR/meter.PID.json and\n"
             "resources.json"},
    {"compare-allocators", 0, OPTS_MAYBE_ARG, "[=LIST]", .call = set_compare,
     .help = "run CMD once per allocator (default: all four) into\n"
             "DIR/SPEC/, replay the first run's trace through each\n"
             "(memsim-analyze --allocators) and print predicted\n"
             "against measured peak heap RSS (DIR/allocators.json)"},
    {"exe", 0, OPTS_ARG, "NAME", .call = set_exe,
     .help = "the process --compare-allocators compares: the\n"
             "executable's path or file name, e.g. cc1 (default: the\n"
             "process of the tree with the most heap operations)"},
    {"help", 'h', OPTS_NO_ARG, NULL, .call = help, .help = "this text"},
};
#undef AT

/* '+': options stop at the command, so its own options stay its own. */
static const opts_cmd_t run_cmd = {
    CMD, true, 25, run_options, sizeof run_options / sizeof *run_options,
};

void run_usage(FILE *f)
{
    fprintf(f,
            "usage: memsim run [options] [--] CMD [ARGS...]\n"
            "\n"
            "Run CMD under libmemsim.so (every process of its tree traced), sum the RSS of\n"
            "its process tree every 10 ms from outside, and stop the tree when a budget is\n"
            "exceeded.  The traces, rss.jsonl (one poll a line) and resources.json (exit\n"
            "code, reason, wall time, peak tree RSS) go into one directory.  `--` is needed\n"
            "only when CMD starts with '-'.\n"
            "\n");
    opts_help(f, &run_cmd);
    fprintf(f,
            "\n"
            "A budget exceeded sends SIGTERM to CMD's process group, then SIGKILL %.0f s later\n"
            "to what is left; resources.json says which (reason \"wall_budget_exceeded\" or\n"
            "\"rss_budget_exceeded\"; \"completed\" otherwise).  When no trace appeared, one\n"
            "line says why (a static or setuid program is out of LD_PRELOAD's reach).\n"
            "\n"
            "Exit status: CMD's own, or 128+N when signal N ended it; %d when a budget\n"
            "stopped it (as timeout(1) does); 127 when CMD is not found, 126 when it cannot\n"
            "be executed; 2 for bad input (nothing is started); 1 when memsim run could not\n"
            "start it.\n"
            "\n"
            "EXAMPLES\n"
            "  memsim run ./my-program --input data.bin\n"
            "  memsim run --out results --rss-mb 2048 --wall-s 600 -- make -j4\n"
            "  memsim run -s buddy -d 1G --no-children python3 train.py\n"
            "  memsim run --sample --analyze ./my-service   # sampled: cheap, estimates\n"
            "  memsim run --analyze ./my-program >out.txt   # out.txt: the program's output\n"
            "  memsim run --analyze-opts '--sites 20 --fail-on warning' ./my-program\n"
            "  memsim run --allocator jemalloc:dirty_decay_ms=0 ./my-program\n"
            "  memsim run --compare-allocators=glibc,mimalloc ./my-program\n"
            "  memsim run --compare-allocators --exe cc1 gcc -O2 -c big.c\n",
            RUN_GRACE_S, RUN_BUDGET_EXIT);
}

/* The command and what the options ask together: after the options. */
static int check(int argc, char **argv, run_opts_t *o)
{
    if (optind >= argc) {
        fprintf(stderr, "%s: no command to run (usage: memsim run [options] [--] CMD [ARGS...])\n",
                CMD);
        return -1;
    }
    if (!*argv[optind]) {
        fprintf(stderr, "%s: the command is an empty string\n", CMD);
        return -1;
    }
    if (o->force && !o->out) {
        fprintf(stderr, "%s: --force needs --out (the default directory is always new)\n", CMD);
        return -1;
    }
    o->argv = argv + optind;
    if (o->aopts.n && run_report_opts_check(CMD, &o->aopts))
        return -1;
    if (o->compare && (o->alloc_spec || o->analyze)) {
        fprintf(stderr, "%s: --compare-allocators excludes --allocator and --analyze\n", CMD);
        return -1;
    }
    if (o->compare_exe && !o->compare) {
        fprintf(stderr, "%s: --exe chooses the process --compare-allocators compares: it needs "
                        "--compare-allocators\n", CMD);
        return -1;
    }
    if (o->compare && o->compare_list) {
        catalog_spec_t specs[CATALOG_MAX_SPECS];
        size_t n;
        char err[256];
        if (catalog_parse_list(o->compare_list, specs, CATALOG_MAX_SPECS, &n, err, sizeof err)) {
            fprintf(stderr, "%s: --compare-allocators: %s\n", CMD, err);
            return -1;
        }
    }
    char self_dir[PATH_MAX];
    if (o->alloc_spec && (paths_self_dir(CMD, self_dir, sizeof self_dir) ||
                          run_alloc_parse(CMD, o->alloc_spec, self_dir, &o->alloc)))
        return -1;
    return 0;
}

int run_opts_parse(int argc, char **argv, run_opts_t *o)
{
    *o = (run_opts_t){0};
    optind = 1;
    if (opts_parse(&run_cmd, argc, argv, o))
        return -1;
    return check(argc, argv, o);
}
