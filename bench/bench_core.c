/*
 * bench-core: alloc+free throughput of every allocation strategy through
 * the simulated device, against glibc malloc/free on the same sequence.
 *
 * Workload, per live count L (one sequence per L, shared by everyone):
 *   fill      allocate L blocks, sizes uniform in [16, 4096] bytes   untimed
 *   warm-up   max(L, BENCH_MIN_WARMUP) pairs                          untimed
 *   measure   N pairs, timed with CLOCK_MONOTONIC
 * where a pair frees the block in a uniformly random slot of the live
 * set and allocates a new block of a uniformly random size into that
 * slot, so exactly L blocks stay live.
 *
 * The warm-up grows with L because a freshly filled heap is not the heap
 * of a long-running program: until most blocks have been replaced once,
 * the fit strategies' free indexes are still growing (worst-fit at 1M
 * live ran 2.4 times faster over its first 250k pairs than after 2M).
 * A short fixed warm-up would compare a young heap at 1M with an aged
 * one at 10k and flatter exactly the strategies the targets are about.
 *
 * Sizes and victim slots come from lib/rng.h with a fixed seed and are
 * generated into arrays before any clock is read; every strategy and
 * glibc replay the same arrays, and a longer run only extends the
 * sequence (shorter runs replay a prefix of it).
 *
 * N is calibrated from the warm-up's last BENCH_CALIB_PAIRS pairs so
 * that one measurement takes about BENCH_TARGET_NS, unless --pairs fixes
 * it.  Each (strategy, L) is measured --reps times, each time on a fresh
 * device (or a fresh glibc live set), and the median pairs/s is
 * reported.  Devices are 1 TiB, so that no strategy can run out of room,
 * and created with no_timing, so that the device reads no clocks of its
 * own inside the measured loop.
 *
 * Targets (from the issue), evaluated when the live counts they need ran:
 *   1. keep = pairs/s at 1M live / pairs/s at 10k live; every strategy
 *      keeps at least half of glibc's keep (falls at most twice as much).
 *   2. best-fit at 100k live reaches a tenth of glibc's pairs/s there.
 *
 * Exit status: 0 (ran; targets are reported, not enforced, because
 * timing on shared machines is too noisy to gate on), 1 (an allocation
 * or a sanity check failed), 2 (usage).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sim/device.h"
#include "lib/rng.h"
#include "sim/strategy.h"

#define BENCH_NAME "bench-core"
#define BENCH_SEED 0x6d656d73696d2024ull /* fixed: same sequence on every run */
#define BENCH_MIN_SIZE 16                /* request sizes, uniform, inclusive */
#define BENCH_MAX_SIZE 4096
#define BENCH_ALIGN 16
#define BENCH_STREAM 0
#define BENCH_DEVICE_BYTES (1ull << 40) /* 1 TiB: far more than any live set */

#define BENCH_MIN_WARMUP 32768ull    /* untimed pairs; at least the live count */
#define BENCH_CALIB_PAIRS 16384ull   /* the warm-up's last pairs, timed */
#define BENCH_TARGET_NS 300000000ull /* aim: 0.3 s per measurement */
#define BENCH_MIN_PAIRS 10000ull     /* calibration bounds */
#define BENCH_MAX_PAIRS 20000000ull

#define BENCH_MAX_LIVES 16               /* entries in --live */
#define BENCH_MAX_LIVE 10000000ull       /* victims are uint32_t; glibc RSS ~2 KiB each */
#define BENCH_MAX_PAIRS_OPT 100000000ull /* --pairs: 6 bytes of sequence each */
#define BENCH_MAX_REPS 99

/* Live counts the targets compare. */
#define BENCH_KEEP_FROM 10000ull
#define BENCH_KEEP_TO 1000000ull
#define BENCH_BF_LIVE 100000ull
#define BENCH_BF_MIN_RATIO 0.1
#define BENCH_KEEP_FACTOR 0.5

static const uint64_t bench_default_live[] = {10000, 100000, 1000000};

/* ---- options ------------------------------------------------------------- */

/* One contestant: glibc (ops == NULL) or a strategy of the table. */
typedef struct bench_entrant_s {
    const char *name;                /* "glibc" or the strategy's name */
    const strategy_ops_t *ops;       /* NULL: glibc malloc/free */
    double rate[BENCH_MAX_LIVES];    /* median pairs/s, per index of opts.live */
    uint64_t pairs[BENCH_MAX_LIVES]; /* measured pairs per repetition */
} bench_entrant_t;

typedef struct bench_opts_s {
    bool json;
    uint64_t live[BENCH_MAX_LIVES]; /* ascending, no duplicates */
    size_t nlive;
    uint64_t pairs; /* 0: calibrate */
    uint64_t reps;
    bench_entrant_t *entrants; /* [0] is glibc, then strategies */
    size_t nentrants;
} bench_opts_t;

__attribute__((format(printf, 1, 2), noreturn))
static void bench_usage_error(const char *fmt, ...)
{
    va_list ap;
    fputs(BENCH_NAME ": ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(2);
}

__attribute__((format(printf, 1, 2), noreturn))
static void bench_die(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fputs(BENCH_NAME ": ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static void *bench_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        bench_die("out of host memory (%zu x %zu bytes)", n, size);
    return p;
}

static void bench_usage(FILE *f)
{
    char names[256];
    fprintf(f,
            "usage: " BENCH_NAME " [--json] [--live N[,N...]] [--strategy NAME[,NAME...]]\n"
            "                  [--pairs N] [--reps N]\n"
            "\n"
            "Measure alloc+free pairs per second of memsim's strategies through the\n"
            "simulated device, and of glibc malloc/free on the same sequence.\n"
            "Sizes are uniform in [%d, %d] bytes (fixed seed); each pair frees a\n"
            "uniformly random live block and allocates a new one in its place.\n"
            "\n"
            "  --json               print only one JSON object:\n"
            "                       {\"results\": [...], \"targets\": {...}}\n"
            "  --live N[,N...]      live blocks to hold (default 10000,100000,1000000;\n"
            "                       each 1..%llu)\n"
            "  --strategy LIST      strategies to run (default: all); glibc always\n"
            "                       runs, as the baseline.  Known: %s\n"
            "  --pairs N            measured pairs per repetition, after max(N, %llu)\n"
            "                       untimed warm-up pairs (default: calibrated to\n"
            "                       about %.1f s)\n"
            "  --reps N             repetitions of each measurement; the median is\n"
            "                       reported (default 3, at most %d)\n"
            "  -h, --help           show this help\n"
            "\n"
            "Exit status: 0 when every run completed (targets are reported, not\n"
            "enforced), 1 when an allocation or a sanity check failed, 2 for usage.\n"
            "\n"
            "EXAMPLES\n"
            "  " BENCH_NAME "                                 full run (about 90 s on 2 cores)\n"
            "  " BENCH_NAME " --live 10000 --reps 1           quick check\n"
            "  " BENCH_NAME " --strategy best-fit,buddy --json\n",
            BENCH_MIN_SIZE, BENCH_MAX_SIZE, (unsigned long long)BENCH_MAX_LIVE,
            strategy_names(names, sizeof names), (unsigned long long)BENCH_MIN_WARMUP,
            (double)BENCH_TARGET_NS / 1e9, BENCH_MAX_REPS);
}

/* A decimal number in [lo, hi] given to flag, or exit 2.  Only digits:
 * strtoull alone would take " 5", "+5" and wrap "-5" to a huge value. */
static uint64_t bench_parse_number(const char *flag, const char *s, uint64_t lo, uint64_t hi)
{
    if (*s < '0' || *s > '9')
        bench_usage_error("%s: \"%s\" is not a number", flag, s);
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end != '\0')
        bench_usage_error("%s: \"%s\" is not a number", flag, s);
    if (errno == ERANGE || v < lo || v > hi)
        bench_usage_error("%s: %s is out of range (%" PRIu64 "..%" PRIu64 ")", flag, s, lo, hi);
    return v;
}

/* Split a comma-separated value in place; calls item(ctx, piece) for
 * each piece.  Empty pieces ("1,,2", "1,") are usage errors. */
static void bench_parse_list(const char *flag, char *list, void (*item)(void *, const char *),
                             void *ctx)
{
    const char *whole = list;
    if (*list == '\0')
        bench_usage_error("%s: empty value", flag);
    for (char *p = list;;) {
        char *comma = strchr(p, ',');
        if (comma == p || *p == '\0')
            bench_usage_error("%s: empty item in \"%s\"", flag, whole);
        if (comma)
            *comma = '\0';
        item(ctx, p);
        if (!comma)
            break;
        *comma = ','; /* so that later messages can quote the whole value */
        p = comma + 1;
    }
}

static int bench_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void bench_add_live(void *ctx, const char *s)
{
    bench_opts_t *o = ctx;
    uint64_t v = bench_parse_number("--live", s, 1, BENCH_MAX_LIVE);
    for (size_t i = 0; i < o->nlive; i++)
        if (o->live[i] == v)
            return; /* the same count twice measures nothing new */
    if (o->nlive == BENCH_MAX_LIVES)
        bench_usage_error("--live: more than %d live counts", BENCH_MAX_LIVES);
    o->live[o->nlive++] = v;
}

static void bench_add_entrant(bench_opts_t *o, const char *name, const strategy_ops_t *ops)
{
    for (size_t i = 0; i < o->nentrants; i++)
        if (o->entrants[i].ops == ops)
            return;
    o->entrants[o->nentrants++] = (bench_entrant_t){.name = name, .ops = ops};
}

static void bench_add_strategy(void *ctx, const char *s)
{
    bench_opts_t *o = ctx;
    if (strcmp(s, "glibc") == 0)
        return; /* always entrant 0 */
    const strategy_ops_t *ops = strategy_find(s);
    if (!ops) {
        char names[256];
        bench_usage_error("--strategy: unknown strategy \"%s\" (known: %s, glibc)", s,
                          strategy_names(names, sizeof names));
    }
    bench_add_entrant(o, ops->name, ops);
}

/* The value of option name at argv[*i], as "--name value" or
 * "--name=value"; NULL when argv[*i] is another option. */
static char *bench_option_value(int argc, char **argv, int *i, const char *name)
{
    size_t n = strlen(name);
    char *arg = argv[*i];
    if (strncmp(arg, name, n) != 0)
        return NULL;
    if (arg[n] == '=')
        return arg + n + 1;
    if (arg[n] != '\0')
        return NULL;
    if (*i + 1 >= argc)
        bench_usage_error("%s: missing value", name);
    return argv[++*i];
}

static void bench_parse_args(int argc, char **argv, bench_opts_t *o)
{
    bool strategies_given = false;
    *o = (bench_opts_t){.reps = 3};
    o->entrants = bench_xcalloc(strategy_count() + 1, sizeof *o->entrants);
    bench_add_entrant(o, "glibc", NULL);
    for (int i = 1; i < argc; i++) {
        char *arg = argv[i], *v;
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            bench_usage(stdout);
            exit(0);
        } else if (strcmp(arg, "--json") == 0) {
            o->json = true;
        } else if (strncmp(arg, "--json=", 7) == 0) {
            bench_usage_error("--json: takes no value");
        } else if ((v = bench_option_value(argc, argv, &i, "--live"))) {
            o->nlive = 0; /* the last --live wins, as with every other option */
            bench_parse_list("--live", v, bench_add_live, o);
        } else if ((v = bench_option_value(argc, argv, &i, "--strategy"))) {
            o->nentrants = 1;
            bench_parse_list("--strategy", v, bench_add_strategy, o);
            strategies_given = true;
        } else if ((v = bench_option_value(argc, argv, &i, "--pairs"))) {
            o->pairs = bench_parse_number("--pairs", v, 1, BENCH_MAX_PAIRS_OPT);
        } else if ((v = bench_option_value(argc, argv, &i, "--reps"))) {
            o->reps = bench_parse_number("--reps", v, 1, BENCH_MAX_REPS);
        } else if (arg[0] == '-') {
            bench_usage_error("unknown option \"%s\" (see --help)", arg);
        } else {
            bench_usage_error("unexpected argument \"%s\" (see --help)", arg);
        }
    }
    if (!o->nlive) {
        o->nlive = sizeof bench_default_live / sizeof bench_default_live[0];
        memcpy(o->live, bench_default_live, sizeof bench_default_live);
    }
    qsort(o->live, o->nlive, sizeof o->live[0], bench_cmp_u64);
    if (!strategies_given)
        for (size_t i = 0; i < strategy_count(); i++)
            bench_add_entrant(o, strategy_at(i)->name, strategy_at(i));
}

/* ---- the sequence ------------------------------------------------------- */

/* Sizes and victims for one live count.  Pairs are generated on demand
 * from one continuing RNG stream, so any run's pairs are a prefix of a
 * longer run's, and the arrays only grow outside timed regions. */
typedef struct bench_seq_s {
    uint64_t live;
    uint64_t warmup;  /* pairs [0, warmup) are the warm-up, the rest measured */
    uint16_t *fill;   /* live sizes of the fill phase */
    uint16_t *size;   /* pair i allocates size[i] bytes ... */
    uint32_t *victim; /* ... into slot victim[i], after freeing that slot's block */
    size_t len, cap;  /* pairs generated, room in size[] and victim[] */
    rng_t rng;
} bench_seq_t;

static uint16_t bench_draw_size(rng_t *r)
{
    return (uint16_t)rng_between(r, BENCH_MIN_SIZE, BENCH_MAX_SIZE);
}

static void bench_seq_init(bench_seq_t *s, uint64_t live)
{
    *s = (bench_seq_t){.live = live, .warmup = live > BENCH_MIN_WARMUP ? live : BENCH_MIN_WARMUP};
    rng_seed(&s->rng, BENCH_SEED);
    s->fill = bench_xcalloc(live, sizeof *s->fill);
    for (uint64_t i = 0; i < live; i++)
        s->fill[i] = bench_draw_size(&s->rng);
}

/* Make sure pairs [0, n) exist. */
static void bench_seq_reserve(bench_seq_t *s, size_t n)
{
    if (n > s->cap) {
        size_t cap = s->cap ? s->cap : 65536;
        while (cap < n)
            cap *= 2;
        uint16_t *size = realloc(s->size, cap * sizeof *size);
        if (size)
            s->size = size;
        uint32_t *victim = realloc(s->victim, cap * sizeof *victim);
        if (victim)
            s->victim = victim;
        if (!size || !victim)
            bench_die("out of host memory for %zu pairs", cap);
        s->cap = cap;
    }
    for (; s->len < n; s->len++) {
        s->victim[s->len] = (uint32_t)rng_below(&s->rng, s->live);
        s->size[s->len] = bench_draw_size(&s->rng);
    }
}

static void bench_seq_fini(bench_seq_t *s)
{
    free(s->fill);
    free(s->size);
    free(s->victim);
}

/* ---- measurement --------------------------------------------------------- */

static uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Pairs for one measurement, from the warm-up's rate: about
 * BENCH_TARGET_NS worth, rounded up to two significant digits. */
static uint64_t bench_calibrate(uint64_t warm_pairs, uint64_t warm_ns)
{
    double rate = (double)warm_pairs * 1e9 / (double)(warm_ns ? warm_ns : 1);
    double want = rate * (double)BENCH_TARGET_NS / 1e9;
    uint64_t n = want > (double)BENCH_MAX_PAIRS ? BENCH_MAX_PAIRS : (uint64_t)want;
    if (n < BENCH_MIN_PAIRS)
        n = BENCH_MIN_PAIRS;
    uint64_t unit = 1;
    while (n / unit >= 100)
        unit *= 10;
    n = (n + unit - 1) / unit * unit;
    return n > BENCH_MAX_PAIRS ? BENCH_MAX_PAIRS : n;
}

/* One repetition's outcome. */
typedef struct bench_run_s {
    uint64_t warm_ns; /* time of the warm-up's last BENCH_CALIB_PAIRS */
    uint64_t ns;      /* time of the measured pairs */
} bench_run_t;

/* One entry of the live set: a device address or a glibc pointer. */
typedef union bench_slot_u {
    uint64_t addr;
    void *ptr;
} bench_slot_t;

/* What a repetition needs: *pairs == 0 asks it to calibrate and set it. */
typedef struct bench_job_s {
    const bench_entrant_t *who;
    bench_seq_t *seq;
    uint64_t *pairs;
    bench_slot_t *slots; /* the live set, seq->live entries */
} bench_job_t;

/* Once the warm-up has run: how many pairs to measure, calibrated if
 * asked from warm_ns, the time of the warm-up's last BENCH_CALIB_PAIRS
 * (the state closest to the one measured). */
static size_t bench_measured_pairs(bench_job_t *job, uint64_t warm_ns)
{
    if (!*job->pairs)
        *job->pairs = bench_calibrate(BENCH_CALIB_PAIRS, warm_ns);
    bench_seq_reserve(job->seq, job->seq->warmup + *job->pairs);
    return *job->pairs;
}

/* -- glibc: nothing but malloc and free, as a program would call them. -- */

static void bench_glibc_pairs(bench_slot_t *slot, const bench_seq_t *s, size_t from, size_t n)
{
    for (size_t i = from; i < from + n; i++) {
        uint32_t v = s->victim[i];
        free(slot[v].ptr);
        if (!(slot[v].ptr = malloc(s->size[i])))
            bench_die("glibc: live %" PRIu64 ": malloc of %u bytes failed", s->live,
                      (unsigned)s->size[i]);
    }
}

static void bench_glibc_run(bench_job_t *job, bench_run_t *run)
{
    bench_seq_t *s = job->seq;
    bench_slot_t *slot = job->slots;
    for (uint64_t i = 0; i < s->live; i++)
        if (!(slot[i].ptr = malloc(s->fill[i])))
            bench_die("glibc: live %" PRIu64 ": malloc of %u bytes failed during the fill", s->live,
                      (unsigned)s->fill[i]);
    size_t calib = s->warmup - BENCH_CALIB_PAIRS;
    bench_glibc_pairs(slot, s, 0, calib);
    uint64_t t0 = bench_now_ns();
    bench_glibc_pairs(slot, s, calib, BENCH_CALIB_PAIRS);
    run->warm_ns = bench_now_ns() - t0;
    size_t n = bench_measured_pairs(job, run->warm_ns);
    t0 = bench_now_ns();
    bench_glibc_pairs(slot, s, s->warmup, n);
    run->ns = bench_now_ns() - t0;
    for (uint64_t i = 0; i < s->live; i++)
        free(slot[i].ptr);
}

/* -- the simulated device -- */

/* Out of line so that the failure paths do not crowd the timed loop. */
__attribute__((noreturn, cold))
static void bench_device_failed(const char *strategy, uint64_t live, const char *op,
                                const device_result_t *r)
{
    bench_die("%s: live %" PRIu64 ": %s failed: %s", strategy, live, op, r->error);
}

static void bench_device_pairs(device_t *d, const char *name, bench_slot_t *slot,
                               const bench_seq_t *s, size_t from, size_t n)
{
    device_result_t r;
    for (size_t i = from; i < from + n; i++) {
        uint32_t v = s->victim[i];
        if (device_free(d, slot[v].addr, &r))
            bench_device_failed(name, s->live, "device_free", &r);
        if (device_alloc(d, s->size[i], BENCH_ALIGN, BENCH_STREAM, &r))
            bench_device_failed(name, s->live, "device_alloc", &r);
        slot[v].addr = r.addr;
    }
}

/* The pool must hold exactly the blocks the benchmark thinks it holds:
 * a strategy that loses or invents blocks would make its rate meaningless. */
static void bench_device_expect_live(const device_t *d, const char *name, uint64_t live,
                                     uint64_t want, const char *when)
{
    device_metrics_t m;
    device_metrics(d, &m);
    if (m.live_blocks != want)
        bench_die("%s: live %" PRIu64 ": %s the device holds %" PRIu64
                  " live blocks, expected %" PRIu64,
                  name, live, when, m.live_blocks, want);
}

static void bench_device_run(bench_job_t *job, bench_run_t *run)
{
    const char *name = job->who->name;
    bench_seq_t *s = job->seq;
    bench_slot_t *slot = job->slots;
    device_config_t cfg = {
        .total = BENCH_DEVICE_BYTES,
        .strategy = name,
        .no_timing = true,
    };
    device_t *d;
    char err[256];
    device_result_t r;
    if (device_create(&cfg, &d, err, sizeof err))
        bench_die("%s: cannot create the device: %s", name, err);
    for (uint64_t i = 0; i < s->live; i++) {
        if (device_alloc(d, s->fill[i], BENCH_ALIGN, BENCH_STREAM, &r))
            bench_device_failed(name, s->live, "device_alloc during the fill", &r);
        slot[i].addr = r.addr;
    }
    size_t calib = s->warmup - BENCH_CALIB_PAIRS;
    bench_device_pairs(d, name, slot, s, 0, calib);
    uint64_t t0 = bench_now_ns();
    bench_device_pairs(d, name, slot, s, calib, BENCH_CALIB_PAIRS);
    run->warm_ns = bench_now_ns() - t0;
    size_t n = bench_measured_pairs(job, run->warm_ns);
    t0 = bench_now_ns();
    bench_device_pairs(d, name, slot, s, s->warmup, n);
    run->ns = bench_now_ns() - t0;
    bench_device_expect_live(d, name, s->live, s->live, "after the measurement");
    for (uint64_t i = 0; i < s->live; i++)
        if (device_free(d, slot[i].addr, &r))
            bench_device_failed(name, s->live, "device_free while emptying", &r);
    bench_device_expect_live(d, name, s->live, 0, "after freeing everything");
    device_destroy(d);
}

static int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median pairs/s of reps repetitions; *pairs as in bench_job_t. */
static double bench_measure(const bench_entrant_t *who, bench_seq_t *seq, bench_slot_t *slots,
                            uint64_t reps, uint64_t *pairs)
{
    double rates[BENCH_MAX_REPS] = {0};
    bench_job_t job = {.who = who, .seq = seq, .pairs = pairs, .slots = slots};
    for (uint64_t k = 0; k < reps; k++) {
        bench_run_t run;
        if (who->ops)
            bench_device_run(&job, &run);
        else
            bench_glibc_run(&job, &run);
        rates[k] = (double)*pairs * 1e9 / (double)(run.ns ? run.ns : 1);
    }
    qsort(rates, reps, sizeof rates[0], bench_cmp_double);
    return reps % 2 ? rates[reps / 2] : (rates[reps / 2 - 1] + rates[reps / 2]) / 2;
}

/* Run everything: per live count one sequence, glibc first, then the
 * strategies in order.  Progress goes to stderr when someone watches. */
static void bench_run_all(bench_opts_t *o)
{
    bool progress = isatty(STDERR_FILENO);
    uint64_t max_live = o->live[o->nlive - 1];
    bench_slot_t *slots = bench_xcalloc(max_live, sizeof *slots);
    for (size_t l = 0; l < o->nlive; l++) {
        bench_seq_t seq;
        bench_seq_init(&seq, o->live[l]);
        bench_seq_reserve(&seq, seq.warmup + (o->pairs ? o->pairs : BENCH_MIN_PAIRS));
        for (size_t e = 0; e < o->nentrants; e++) {
            bench_entrant_t *who = &o->entrants[e];
            who->pairs[l] = o->pairs;
            who->rate[l] = bench_measure(who, &seq, slots, o->reps, &who->pairs[l]);
            if (progress)
                fprintf(stderr, BENCH_NAME ": %-10s live %8" PRIu64 ": %8.3f M pairs/s\n",
                        who->name, o->live[l], who->rate[l] / 1e6);
        }
        bench_seq_fini(&seq);
    }
    free(slots);
}

/* ---- targets -------------------------------------------------------------- */

/* Index of live count v in o->live, or -1 when it did not run. */
static int bench_live_index(const bench_opts_t *o, uint64_t v)
{
    for (size_t i = 0; i < o->nlive; i++)
        if (o->live[i] == v)
            return (int)i;
    return -1;
}

static const bench_entrant_t *bench_find_entrant(const bench_opts_t *o, const char *name)
{
    for (size_t i = 0; i < o->nentrants; i++)
        if (strcmp(o->entrants[i].name, name) == 0)
            return &o->entrants[i];
    return NULL;
}

typedef struct bench_targets_s {
    /* 1: throughput kept from 10k to 1M live blocks */
    bool keep_evaluated;
    int keep_from, keep_to; /* indexes into opts.live */
    double glibc_keep;
    double min_keep; /* glibc_keep * BENCH_KEEP_FACTOR */
    bool keep_pass;  /* every strategy keeps >= min_keep */
    /* 2: best-fit against glibc at 100k live blocks */
    bool bf_evaluated;
    double bf_rate, bf_glibc_rate, bf_ratio;
    bool bf_pass;
} bench_targets_t;

static double bench_keep(const bench_entrant_t *e, const bench_targets_t *t)
{
    return e->rate[t->keep_to] / e->rate[t->keep_from];
}

static void bench_eval_targets(const bench_opts_t *o, bench_targets_t *t)
{
    *t = (bench_targets_t){0};
    t->keep_from = bench_live_index(o, BENCH_KEEP_FROM);
    t->keep_to = bench_live_index(o, BENCH_KEEP_TO);
    if (t->keep_from >= 0 && t->keep_to >= 0 && o->nentrants > 1) {
        t->keep_evaluated = true;
        t->glibc_keep = bench_keep(&o->entrants[0], t);
        t->min_keep = t->glibc_keep * BENCH_KEEP_FACTOR;
        t->keep_pass = true;
        for (size_t i = 1; i < o->nentrants; i++)
            if (bench_keep(&o->entrants[i], t) < t->min_keep)
                t->keep_pass = false;
    }
    int at = bench_live_index(o, BENCH_BF_LIVE);
    const bench_entrant_t *bf = bench_find_entrant(o, "best-fit");
    if (at >= 0 && bf) {
        t->bf_evaluated = true;
        t->bf_rate = bf->rate[at];
        t->bf_glibc_rate = o->entrants[0].rate[at];
        t->bf_ratio = t->bf_rate / t->bf_glibc_rate;
        t->bf_pass = t->bf_ratio >= BENCH_BF_MIN_RATIO;
    }
}

/* ---- output ---------------------------------------------------------------- */

static const char *bench_verdict(bool pass) { return pass ? "PASS" : "FAIL"; }

static void bench_print_table(const bench_opts_t *o, const bench_targets_t *t, double wall_s)
{
    printf("bench-core: alloc+free pairs/s through the simulated device (1 TiB, no_timing)"
           " and glibc malloc/free\n");
    printf("workload: sizes uniform in [%d, %d] bytes, align %d, seed 0x%llx; a pair frees"
           " a uniformly\n"
           "          random live block and allocates into its slot; untimed: fill, then"
           " max(live, %llu)\n"
           "          warm-up pairs; pairs/s is the median of %llu reps\n\n",
           BENCH_MIN_SIZE, BENCH_MAX_SIZE, BENCH_ALIGN, (unsigned long long)BENCH_SEED,
           (unsigned long long)BENCH_MIN_WARMUP, (unsigned long long)o->reps);
    printf("%-10s %9s %10s %12s %9s\n", "strategy", "live", "pairs/rep", "M pairs/s", "vs glibc");
    for (size_t e = 0; e < o->nentrants; e++) {
        const bench_entrant_t *who = &o->entrants[e];
        for (size_t l = 0; l < o->nlive; l++)
            printf("%-10s %9" PRIu64 " %10" PRIu64 " %12.3f %9.3f\n", who->name, o->live[l],
                   who->pairs[l], who->rate[l] / 1e6, who->rate[l] / o->entrants[0].rate[l]);
    }
    if (t->keep_evaluated) {
        printf("\nthroughput kept from 10k to 1M live blocks (pairs/s at 1M / at 10k):\n");
        printf("  %-10s keeps %.3f of its 10k throughput at 1M\n", "glibc", t->glibc_keep);
        for (size_t e = 1; e < o->nentrants; e++) {
            double keep = bench_keep(&o->entrants[e], t);
            printf("  %-10s keeps %.3f of its 10k throughput at 1M  (glibc keeps %.3f, needs"
                   " >= %.3f)  %s\n",
                   o->entrants[e].name, keep, t->glibc_keep, t->min_keep,
                   bench_verdict(keep >= t->min_keep));
        }
    }
    printf("\ntargets:\n");
    if (t->keep_evaluated)
        printf("  %s  1. from 10k to 1M live blocks no strategy falls more than twice as much"
               " as glibc (keep >= %.3f)\n",
               bench_verdict(t->keep_pass), t->min_keep);
    else
        printf("  skip  1. keep ratio: needs --live to include 10000 and 1000000 and a"
               " strategy\n");
    if (t->bf_evaluated)
        printf("  %s  2. best-fit at 100k live reaches >= %.2f of glibc's pairs/s"
               " (%.3f: %.3f vs %.3f M pairs/s)\n",
               bench_verdict(t->bf_pass), BENCH_BF_MIN_RATIO, t->bf_ratio, t->bf_rate / 1e6,
               t->bf_glibc_rate / 1e6);
    else
        printf("  skip  2. best-fit at 100k: needs best-fit and --live to include 100000\n");
    printf("\ntotal %.1f s\n", wall_s);
}

/* A JSON string; names need no escaping today, but a strategy added
 * tomorrow should not be able to break the output. */
static void bench_json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

static void bench_print_json(const bench_opts_t *o, const bench_targets_t *t)
{
    printf("{\"results\": [");
    const char *sep = "";
    for (size_t e = 0; e < o->nentrants; e++)
        for (size_t l = 0; l < o->nlive; l++) {
            printf("%s\n  {\"strategy\": ", sep);
            bench_json_string(o->entrants[e].name);
            printf(", \"live\": %" PRIu64 ", \"pairs_per_s\": %.1f}", o->live[l],
                   o->entrants[e].rate[l]);
            sep = ",";
        }
    printf("\n],\n\"targets\": {\n  \"keep_10k_to_1m\": {\"evaluated\": %s",
           t->keep_evaluated ? "true" : "false");
    if (t->keep_evaluated) {
        printf(", \"glibc_keep\": %.4f, \"min_keep\": %.4f, \"pass\": %s, \"strategies\": [",
               t->glibc_keep, t->min_keep, t->keep_pass ? "true" : "false");
        for (size_t e = 1; e < o->nentrants; e++) {
            double keep = bench_keep(&o->entrants[e], t);
            printf("%s{\"strategy\": ", e > 1 ? ", " : "");
            bench_json_string(o->entrants[e].name);
            printf(", \"keep\": %.4f, \"pass\": %s}", keep, keep >= t->min_keep ? "true" : "false");
        }
        printf("]");
    }
    printf("},\n  \"best_fit_100k_vs_glibc\": {\"evaluated\": %s",
           t->bf_evaluated ? "true" : "false");
    if (t->bf_evaluated)
        printf(", \"best_fit_pairs_per_s\": %.1f, \"glibc_pairs_per_s\": %.1f, \"ratio\": %.4f,"
               " \"min_ratio\": %.2f, \"pass\": %s",
               t->bf_rate, t->bf_glibc_rate, t->bf_ratio, BENCH_BF_MIN_RATIO,
               t->bf_pass ? "true" : "false");
    printf("}\n}}\n");
}

int main(int argc, char **argv)
{
    bench_opts_t o;
    bench_targets_t t;
    bench_parse_args(argc, argv, &o);
    uint64_t t0 = bench_now_ns();
    bench_run_all(&o);
    double wall_s = (double)(bench_now_ns() - t0) / 1e9;
    bench_eval_targets(&o, &t);
    if (o.json)
        bench_print_json(&o, &t);
    else
        bench_print_table(&o, &t, wall_s);
    free(o.entrants);
    if (fflush(stdout) || ferror(stdout))
        bench_die("cannot write the results: %s", strerror(errno));
    return 0;
}
