/*
 * simulate: `memsim simulate` — run a seeded random workload through
 * the simulated device under each strategy and print a comparison.
 */
#include "cli/simulate.h"

#include <getopt.h>
#include <stddef.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/args.h"
#include "sim/device.h"
#include "lib/opts.h"
#include "lib/units.h"
#include "sim/workload.h"

#define CMD "memsim simulate"

typedef struct simulate_opts_s {
    const char *strategy; /* NULL: all */
    workload_config_t work;
    uint64_t device_size;
    bool json, status, check;
} simulate_opts_t;

typedef struct simulate_row_s {
    const strategy_ops_t *ops;
    workload_report_t rep;
    device_metrics_t m;
    device_stats_t st;
    const char *why; /* invariant violated under --check, or NULL */
} simulate_row_t;

static void usage(FILE *f);

static int set_strategy(void *v, const opts_opt_t *opt, const char *arg)
{
    simulate_opts_t *o = v;
    (void)opt;
    o->strategy = strcmp(arg, "all") ? arg : NULL;
    if (o->strategy && !strategy_find(o->strategy)) {
        char names[256];
        fprintf(stderr, "%s: --strategy: unknown strategy \"%s\" (known: all, %s)\n", CMD, arg,
                strategy_names(names, sizeof names));
        return -1;
    }
    return 0;
}

static int set_align(void *v, const opts_opt_t *opt, const char *arg)
{
    simulate_opts_t *o = v;
    (void)opt;
    if (args_size(CMD, "--align", arg, 1, &o->work.align))
        return -1;
    if (o->work.align & (o->work.align - 1)) {
        fprintf(stderr, "%s: --align: %s is not a power of two\n", CMD, arg);
        return -1;
    }
    return 0;
}

static int help(void *o, const opts_opt_t *opt, const char *arg)
{
    (void)o, (void)opt, (void)arg;
    usage(stdout);
    exit(0);
}

#define AT(field) offsetof(simulate_opts_t, field)
static const opts_opt_t simulate_options[] = {
    {"strategy", 's', OPTS_ARG, "NAME", .call = set_strategy, .format = strategy_names_help,
     .help = "one strategy, or \"all\" (default); known: %s"},
    {"ops", 'n', OPTS_ARG, "N", OPTS_COUNT, AT(work.operations), .min = 0,
     .help = "operations (default 100000)"},
    {"min-size", 0, OPTS_ARG, "SIZE", OPTS_SIZE, AT(work.min_size), .min = 1,
     .help = "smallest request (default 64)"},
    {"max-size", 0, OPTS_ARG, "SIZE", OPTS_SIZE, AT(work.max_size), .min = 1,
     .help = "largest request (default 4096)"},
    {"free-prob", 'p', OPTS_ARG, "P", OPTS_REAL, AT(work.free_probability), .lo = 0.0, .hi = 1.0,
     .help = "chance that an operation frees a live block (default 0.3)"},
    {"seed", 0, OPTS_ARG, "N", OPTS_COUNT, AT(work.seed), .min = 0,
     .help = "random seed (default 1)"},
    {"align", 0, OPTS_ARG, "N", .call = set_align,
     .help = "alignment of every request, a power of two (default 16)"},
    {"device-size", 'd', OPTS_ARG, "SIZE", OPTS_SIZE, AT(device_size), .min = 1,
     .help = "device capacity, e.g. 512M, 2G (default 1G)"},
    {"status", 0, OPTS_NO_ARG, NULL, OPTS_SET, AT(status),
     .help = "print every segment and block at the end (one strategy)"},
    {"check", 0, OPTS_NO_ARG, NULL, OPTS_SET, AT(check),
     .help = "verify the pool's invariants after every operation"},
    {"json", 0, OPTS_NO_ARG, NULL, OPTS_SET, AT(json),
     .help = "one JSON object for tools instead of the table"},
    {"help", 'h', OPTS_NO_ARG, NULL, .call = help, .help = "this text"},
};
#undef AT

static const opts_cmd_t simulate_cmd = {
    CMD, false, 25, simulate_options, sizeof simulate_options / sizeof *simulate_options,
};

static void usage(FILE *f)
{
    fprintf(f, "usage: memsim simulate [options]\n"
               "\n"
               "Run a seeded random workload of allocations and frees through the simulated\n"
               "device under one or every allocation strategy, and compare footprint and\n"
               "fragmentation.\n"
               "\n");
    opts_help(f, &simulate_cmd);
    fprintf(f, "\n"
               "EXAMPLES\n"
               "  memsim simulate\n"
               "  memsim simulate -s buddy -n 20000 --max-size 64K --json\n"
               "  memsim simulate -n 200000 -p 0.45 --min-size 16 --max-size 16K -d 256M\n");
}

static int parse(int argc, char **argv, simulate_opts_t *o)
{
    workload_config_t w = WORKLOAD_DEFAULTS;
    w.operations = 100000;
    w.align = 16;
    *o = (simulate_opts_t){.work = w, .device_size = 1ull << 30};
    optind = 1;
    if (opts_parse(&simulate_cmd, argc, argv, o))
        return -1;
    if (optind < argc) {
        fprintf(stderr, "%s: unexpected argument \"%s\"\n", CMD, argv[optind]);
        return -1;
    }
    char err[160];
    if (workload_validate(&o->work, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", CMD, err);
        return -1;
    }
    if (o->status && !o->strategy) {
        fprintf(stderr, "%s: --status needs one --strategy\n", CMD);
        return -1;
    }
    return 0;
}

/* Run the workload under one strategy; 0, or 2 when the device can't start. */
static int run_one(const simulate_opts_t *o, const strategy_ops_t *ops, simulate_row_t *row)
{
    char err[256];
    device_t *d;
    device_config_t cfg = {.total = o->device_size, .strategy = ops->name};
    if (device_create(&cfg, &d, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", CMD, err);
        return 2;
    }
    memset(row, 0, sizeof *row);
    row->ops = ops;
    int rc = workload_run(d, &o->work, &row->rep, o->check, &row->why);
    if (rc == POOL_EHOST) {
        fprintf(stderr, "%s: out of host memory running %s\n", CMD, ops->name);
        device_destroy(d);
        return 2;
    }
    device_metrics(d, &row->m);
    row->st = *device_stats(d, (size_t)strategy_index(ops));
    if (o->status)
        device_print_status(d, stdout);
    device_destroy(d);
    return 0;
}

static double mean_ns(uint64_t total, uint64_t n) { return n ? (double)total / (double)n : 0.0; }

/* The row with the smallest peak footprint among those that failed
 * the fewest requests. */
static size_t best_row(const simulate_row_t *rows, size_t n)
{
    size_t best = 0;
    for (size_t i = 1; i < n; i++) {
        const simulate_row_t *a = &rows[i], *b = &rows[best];
        if (a->rep.failed_allocations < b->rep.failed_allocations ||
            (a->rep.failed_allocations == b->rep.failed_allocations &&
             a->m.peak_footprint < b->m.peak_footprint))
            best = i;
    }
    return best;
}

static void print_table(const simulate_opts_t *o, const simulate_row_t *rows, size_t n)
{
    char a[32], b[32], c[32], e[32];
    const workload_config_t *w = &o->work;
    printf("workload: %" PRIu64 " operations, sizes %" PRIu64 "..%" PRIu64
           " B, free probability %.2f, seed %" PRIu64 ", device %s\n\n",
           w->operations, w->min_size, w->max_size, w->free_probability, w->seed,
           units_format_bytes(o->device_size, a, sizeof a));
    printf("%-10s %9s %7s %9s %11s %11s %8s %11s %8s %11s %8s %8s\n", "strategy", "allocs",
           "failed", "frees", "peak live", "peak foot", "J-W frag", "int@peak", "ext@peak",
           "largest", "ns/alloc", "ns/free");
    size_t best = best_row(rows, n);
    for (size_t i = 0; i < n; i++) {
        const simulate_row_t *r = &rows[i];
        printf("%-10s %9" PRIu64 " %7" PRIu64 " %9" PRIu64 " %11s %11s %7.1f%% %11s %7.1f%% %11s "
               "%8.0f %8.0f%s\n",
               r->ops->name, r->rep.allocations, r->rep.failed_allocations, r->rep.frees,
               units_format_bytes(r->m.peak_live_requested, a, sizeof a),
               units_format_bytes(r->m.peak_footprint, b, sizeof b),
               100.0 * r->m.jw_fragmentation,
               units_format_bytes(r->m.internal_at_peak, c, sizeof c),
               100.0 * r->m.external_at_peak, units_format_bytes(r->m.largest_free, e, sizeof e),
               mean_ns(r->st.alloc_ns, r->st.allocations), mean_ns(r->st.free_ns, r->st.frees),
               n > 1 && i == best ? "  <- best" : "");
    }
    printf("\npeak foot: most memory the strategy held from the device (its heap extent, or\n"
           "its reserved segments for caching); J-W frag: peak footprint / peak live - 1\n"
           "(Johnstone & Wilson); int@peak: block bytes beyond the requests when the footprint\n"
           "peaked; ext@peak: 1 - largest free / free bytes then.\n");
    for (size_t i = 0; i < n; i++)
        if (rows[i].why)
            printf("%s: invariant violated: %s\n", rows[i].ops->name, rows[i].why);
}

static json_t *row_json(const simulate_row_t *r)
{
    const device_metrics_t *m = &r->m;
    return json_pack(
        "{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:I, s:f, s:I, s:I, s:I, s:I, s:f,"
        " s:f, s:f, s:f, s:f, s:I, s:I, s:o}",
        "name", r->ops->name,
        "allocations", (json_int_t)r->rep.allocations,
        "failed_requests", (json_int_t)r->rep.failed_allocations,
        "frees", (json_int_t)r->rep.frees,
        "peak_live_bytes", (json_int_t)m->peak_live_requested,
        "peak_footprint_bytes", (json_int_t)m->peak_footprint,
        "live_at_peak_bytes", (json_int_t)m->live_at_peak,
        "internal_fragmentation_at_peak_bytes", (json_int_t)m->internal_at_peak,
        "external_fragmentation_at_peak_bytes", (json_int_t)m->free_at_peak,
        "external_fragmentation_at_peak", m->external_at_peak,
        "largest_free_bytes", (json_int_t)m->largest_free,
        "fragmentation", m->jw_fragmentation,
        "reserved_bytes", (json_int_t)m->reserved,
        "live_bytes", (json_int_t)m->live_requested,
        "allocated_bytes", (json_int_t)m->live_allocated,
        "internal_fragmentation_bytes", (json_int_t)m->internal_fragmentation,
        "external_fragmentation", m->external_fragmentation,
        "seed_fragmentation", m->seed_fragmentation,
        "utilization", m->utilization,
        "mean_alloc_ns", mean_ns(r->st.alloc_ns, r->st.allocations),
        "mean_free_ns", mean_ns(r->st.free_ns, r->st.frees),
        "current_bytes", (json_int_t)r->st.current_bytes,
        "active_blocks", (json_int_t)r->st.active_blocks,
        "invariant_violation", r->why ? json_string(r->why) : json_null());
}

static int print_json(const simulate_opts_t *o, const simulate_row_t *rows, size_t n)
{
    const workload_config_t *w = &o->work;
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(list, row_json(&rows[i]));
    json_t *root = json_pack(
        "{s:{s:I, s:I, s:I, s:f, s:I, s:I}, s:{s:I, s:I}, s:o, s:s}",
        "workload", "operations", (json_int_t)w->operations, "min_size", (json_int_t)w->min_size,
        "max_size", (json_int_t)w->max_size, "free_probability", w->free_probability,
        "seed", (json_int_t)w->seed, "align", (json_int_t)w->align,
        "device", "total_bytes", (json_int_t)o->device_size, "base",
        (json_int_t)DEVICE_DEFAULT_BASE,
        "strategies", list, "best", rows[best_row(rows, n)].ops->name);
    if (!root)
        return 2;
    json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    putchar('\n');
    json_decref(root);
    return 0;
}

int simulate_main(int argc, char **argv)
{
    simulate_opts_t o;
    if (parse(argc, argv, &o))
        return 2;
    size_t n = o.strategy ? 1 : strategy_count();
    simulate_row_t *rows = calloc(n, sizeof *rows);
    if (!rows) {
        fprintf(stderr, "%s: out of host memory\n", CMD);
        return 2;
    }
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        rc = run_one(&o, o.strategy ? strategy_find(o.strategy) : strategy_at(i), &rows[i]);
    if (!rc)
        rc = o.json ? print_json(&o, rows, n) : (print_table(&o, rows, n), 0);
    for (size_t i = 0; i < n && !rc; i++)
        if (rows[i].why)
            rc = 1;
    free(rows);
    return rc;
}
