/*
 * memsim-analyze: turn memsim traces into answers.
 *
 *   memsim-analyze [options] TRACE|DIR...
 *
 * It reads traces (streaming), and reports the summary (allocations,
 * frees, bytes, peak heap and when, peak RSS and tree RSS from the
 * samples, temporaries, leaks), the findings of the samples (gap and
 * heap spikes, drift, fragmentation: analyzer/findings.h), the
 * strategy replay (the trace's allocations through every strategy of
 * core/, ranked) and the allocation sites (analyzer/sites.h: per call
 * stack, calls, bytes, peak contribution and leaks, the top ones
 * symbolized offline by analyzer/symbols.h).  --collapsed writes every
 * stack as a flame graph's collapsed line instead of the report.
 * Only the stacks printed are symbolized.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyzer/escape.h"
#include "analyzer/findings.h"
#include "analyzer/progress.h"
#include "analyzer/ptree.h"
#include "analyzer/reader.h"
#include "analyzer/replay.h"
#include "analyzer/sites.h"
#include "analyzer/summary.h"
#include "analyzer/symbols.h"
#include "cli/args.h"
#include "core/strategy.h"
#include "core/units.h"

#define CMD "memsim-analyze"
#define MAX_STRATEGIES 16
#define DEFAULT_DEVICE (64ull << 30)
#define DEFAULT_SITES 10
#define SHOWN_FRAMES 8 /* frames of a site in the text report; the rest are counted */
#define NO_COLLAPSED (-1)

typedef struct analyze_opts_s {
    bool json, replay;
    const strategy_ops_t *strategies[MAX_STRATEGIES];
    size_t nstrategies;
    uint64_t device_size; /* 0: each trace's own */
    const char *fail_on;
    findings_config_t findings;
    uint64_t sites;      /* top sites shown per ranking (0: none) */
    int collapsed;       /* a sites_key_t, or NO_COLLAPSED */
    progress_mode_t progress;
} analyze_opts_t;

typedef struct process_s {
    char path[4096];
    summary_t s;
    reader_t r;
    replay_result_t results[MAX_STRATEGIES];
    size_t nresults;
    json_t *findings;
    bool ok;
    bool have_sites;         /* sites and space are set up */
    sites_t sites;
    symbols_space_t space;   /* the trace's modules, for the sites' frames */
    unsigned site_problems;  /* bit per SITES_E_* code reported */
} process_t;

static void usage(FILE *f)
{
    char names[256];
    fprintf(f,
            "usage: memsim-analyze [options] TRACE|DIR...\n"
            "\n"
            "Read memsim traces (one, several, or a directory of a process tree's) and\n"
            "report what the program did with memory, and how its allocations would fare\n"
            "under every allocation strategy.\n"
            "\n"
            "      --json              one JSON object for tools (docs/analysis-format.md)\n"
            "  -s, --strategy A,B      replay only these (known: %s)\n"
            "      --no-replay         skip the strategy replay\n"
            "      --sites N           top N allocation sites by peak, by calls and by\n"
            "                          leaked bytes (default 10; 0: none)\n"
            "      --collapsed[=KEY]   write every stack as a flame graph's collapsed line\n"
            "                          weighted by KEY: peak (default), calls or leaked;\n"
            "                          instead of the report\n"
            "  -d, --device-size SIZE  the replay device (default: the trace's own)\n"
            "      --progress          show progress on stderr from the start (default: on\n"
            "                          a terminal, once reading takes over 2 s)\n"
            "      --no-progress       never show progress\n"
            "      --fail-on SEVERITY  exit 1 when a finding reaches info, warning or critical\n"
            "      --spike-z Z         z-score above which a sample is a spike (default 3)\n"
            "      --drift-r2 R2       R² from which a rising series is a drift (default 0.7)\n"
            "      --frag-ratio F      mean (reserved - in use) / reserved that is\n"
            "                          fragmentation (default 0.3)\n"
            "      --gap-ratio G       gap / device total below which the gap is ignored\n"
            "                          (default 0.01)\n"
            "      --remediation FILE  JSON {\"classification\": [\"text\", ...]} replacing the\n"
            "                          built-in remediation texts\n"
            "  -h, --help              this text\n"
            "\n"
            "Exit status: 0, 1 when a finding reaches --fail-on, 2 for usage or unreadable\n"
            "input.\n"
            "\n"
            "EXAMPLES\n"
            "  memsim-analyze memsim-myprog-20261130-120000/\n"
            "  memsim-analyze --json memsim.myprog.4242.0.jsonl\n"
            "  memsim-analyze -s best-fit,buddy -d 2G memsim.myprog.4242.0.jsonl\n"
            "  memsim-analyze --collapsed=leaked memsim.myprog.4242.0.jsonl | flamegraph.pl\n",
            strategy_names(names, sizeof names));
}

static int parse(int argc, char **argv, analyze_opts_t *o)
{
    enum { OPT_JSON = 256, OPT_NO_REPLAY, OPT_FAIL_ON, OPT_SPIKE, OPT_DRIFT, OPT_FRAG, OPT_GAP,
           OPT_REMEDIATION, OPT_SITES, OPT_COLLAPSED, OPT_PROGRESS, OPT_NO_PROGRESS };
    static const struct option longopts[] = {
        {"json", no_argument, NULL, OPT_JSON},
        {"strategy", required_argument, NULL, 's'},
        {"no-replay", no_argument, NULL, OPT_NO_REPLAY},
        {"device-size", required_argument, NULL, 'd'},
        {"fail-on", required_argument, NULL, OPT_FAIL_ON},
        {"spike-z", required_argument, NULL, OPT_SPIKE},
        {"drift-r2", required_argument, NULL, OPT_DRIFT},
        {"frag-ratio", required_argument, NULL, OPT_FRAG},
        {"gap-ratio", required_argument, NULL, OPT_GAP},
        {"remediation", required_argument, NULL, OPT_REMEDIATION},
        {"sites", required_argument, NULL, OPT_SITES},
        {"collapsed", optional_argument, NULL, OPT_COLLAPSED},
        {"progress", no_argument, NULL, OPT_PROGRESS},
        {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    *o = (analyze_opts_t){.replay = true, .findings = FINDINGS_DEFAULTS, .sites = DEFAULT_SITES,
                          .collapsed = NO_COLLAPSED};
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":s:d:h", longopts, NULL)) != -1) {
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
                    fprintf(stderr, "%s: --strategy: unknown strategy \"%s\" (known: %s)\n", CMD,
                            name, strategy_names(names, sizeof names));
                    return -1;
                }
                if (o->nstrategies < MAX_STRATEGIES)
                    o->strategies[o->nstrategies++] = ops;
            }
            if (!o->nstrategies) {
                fprintf(stderr, "%s: --strategy: no strategy named\n", CMD);
                return -1;
            }
            break;
        }
        case 'd':
            if (args_size(CMD, "--device-size", optarg, 4096, &o->device_size))
                return -1;
            break;
        case OPT_FAIL_ON:
            if (strcmp(optarg, "info") && strcmp(optarg, "warning") && strcmp(optarg, "critical")) {
                fprintf(stderr, "%s: --fail-on: \"%s\" is not a severity (info, warning, "
                                "critical)\n", CMD, optarg);
                return -1;
            }
            o->fail_on = optarg;
            break;
        case OPT_SPIKE:
            if (args_real(CMD, "--spike-z", optarg, 0.0, 1e6, &o->findings.spike_z))
                return -1;
            break;
        case OPT_DRIFT:
            if (args_real(CMD, "--drift-r2", optarg, 0.0, 1.0, &o->findings.drift_r2))
                return -1;
            break;
        case OPT_FRAG:
            if (args_real(CMD, "--frag-ratio", optarg, 0.0, 1.0, &o->findings.frag_ratio))
                return -1;
            break;
        case OPT_GAP:
            if (args_real(CMD, "--gap-ratio", optarg, 0.0, 1.0, &o->findings.gap_ratio))
                return -1;
            break;
        case OPT_REMEDIATION: {
            json_error_t err;
            json_t *r = json_load_file(optarg, 0, &err);
            if (!json_is_object(r)) {
                fprintf(stderr, "%s: --remediation: %s:%d: %s\n", CMD, optarg, err.line,
                        r ? "not a JSON object" : err.text);
                json_decref(r);
                return -1;
            }
            o->findings.remediation = r;
            break;
        }
        case OPT_PROGRESS:
            o->progress = PROGRESS_ALWAYS;
            break;
        case OPT_NO_PROGRESS:
            o->progress = PROGRESS_NEVER;
            break;
        case OPT_SITES:
            if (args_count(CMD, "--sites", optarg, 0, &o->sites))
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
                        CMD, optarg);
                return -1;
            }
            break;
        case 'h': usage(stdout); exit(0);
        case ':':
            fprintf(stderr, "%s: %s needs a value\n", CMD, argv[optind - 1]);
            return -1;
        default:
            fprintf(stderr, "%s: unknown option \"%s\" (see %s --help)\n", CMD, argv[optind - 1],
                    CMD);
            return -1;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "%s: no trace given (see %s --help)\n", CMD, CMD);
        return -1;
    }
    if (o->json && o->collapsed != NO_COLLAPSED) {
        fprintf(stderr, "%s: --json and --collapsed exclude each other\n", CMD);
        return -1;
    }
    if (o->collapsed != NO_COLLAPSED)
        o->replay = false; /* collapsed stacks have no room for it */
    if (!o->nstrategies)
        for (size_t i = 0; i < strategy_count() && i < MAX_STRATEGIES; i++)
            o->strategies[o->nstrategies++] = strategy_at(i);
    return 0;
}

/* ---- inputs ------------------------------------------------------------------ */

typedef struct paths_s {
    char **v;
    size_t n, cap;
} paths_t;

static int add_path(paths_t *p, const char *path)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 16;
        char **v = realloc(p->v, cap * sizeof *v);
        if (!v)
            return -1;
        p->v = v;
        p->cap = cap;
    }
    p->v[p->n] = strdup(path);
    return p->v[p->n] ? (int)++p->n * 0 : -1;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool ends_with(const char *s, size_t len, const char *tail)
{
    size_t n = strlen(tail);
    return len >= n && strcmp(s + len - n, tail) == 0;
}

/* A directory contributes its memsim.*.jsonl and memsim.*.jsonl.zst
 * files, in name order. */
static int collect(const char *arg, paths_t *p)
{
    if (strcmp(arg, "-") == 0) { /* standard input */
        for (size_t i = 0; i < p->n; i++)
            if (strcmp(p->v[i], "-") == 0) {
                escape_line(stderr, "%s: standard input (-) is given twice", CMD);
                return -1;
            }
        return add_path(p, arg);
    }
    struct stat st;
    if (stat(arg, &st)) {
        escape_line(stderr, "%s: cannot read %s: %s", CMD, arg, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        return add_path(p, arg);
    DIR *d = opendir(arg);
    if (!d) {
        escape_line(stderr, "%s: cannot read %s: %s", CMD, arg, strerror(errno));
        return -1;
    }
    size_t first = p->n;
    char path[4096];
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (strncmp(e->d_name, "memsim.", 7) ||
            !(ends_with(e->d_name, len, ".jsonl") || ends_with(e->d_name, len, ".jsonl.zst")))
            continue;
        snprintf(path, sizeof path, "%s/%s", arg, e->d_name);
        if (add_path(p, path)) {
            closedir(d);
            return -1;
        }
    }
    closedir(d);
    if (p->n == first) {
        escape_line(stderr, "%s: %s holds no memsim traces (memsim.*.jsonl[.zst])", CMD, arg);
        return -1;
    }
    qsort(p->v + first, p->n - first, sizeof *p->v, by_name);
    return 0;
}

/* ---- one trace ------------------------------------------------------------------ */

/* One line for a problem sites_add found, the first of its kind in the trace. */
static void site_problem(process_t *pr, int rc)
{
    unsigned bit = 1u << -rc;
    if (pr->site_problems & bit)
        return;
    pr->site_problems |= bit;
    unsigned long long id = pr->sites.problem_id;
    char what[160];
    switch (rc) {
    case SITES_E_NOMEM:
        snprintf(what, sizeof what, "out of memory: the allocation sites are incomplete");
        break;
    case SITES_E_RECORD:
        snprintf(what, sizeof what, "a stack record without a valid id and frames; skipped");
        break;
    case SITES_E_DUPLICATE:
        snprintf(what, sizeof what, "stack %llu is recorded twice; the first record is kept", id);
        break;
    case SITES_E_UNDEFINED:
        snprintf(what, sizeof what, "stack %llu is used but no stack record came before; its "
                                    "frames are unknown", id);
        break;
    case SITES_E_RANGE:
        snprintf(what, sizeof what, "stack id %llu is far beyond the others; counted as no stack",
                 id);
        break;
    default:
        snprintf(what, sizeof what, "a module record without a valid op, path, base or size; "
                                    "skipped");
        break;
    }
    escape_line(stderr, "%s: %s:%ld: %s", CMD, pr->path, pr->r.lineno, what);
}

/* Worker threads for the replay: one per processor beyond the one
 * reading the trace (which helps too when the replay falls behind). */
static unsigned replay_threads(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus > 1 ? (unsigned)(cpus - 1 < 8 ? cpus - 1 : 8) : 0;
}

static int analyze(const analyze_opts_t *o, symbols_t *store, process_t *pr)
{
    if (reader_open(&pr->r, pr->path))
        return -1;
    if (summary_init(&pr->s)) {
        reader_close(&pr->r);
        return -1;
    }
    if (store) {
        symbols_space_init(&pr->space, store);
        if (sites_init(&pr->sites, &pr->space)) {
            fprintf(stderr, "%s: out of memory\n", CMD);
            symbols_space_fini(&pr->space);
            summary_fini(&pr->s);
            reader_close(&pr->r);
            return -1;
        }
        pr->have_sites = true;
    }
    replay_set_t *replay = NULL;
    event_t e;
    bool started = false;
    struct stat st;
    progress_t prog;
    FILE *under = tracein_file(pr->r.in);
    progress_begin(&prog, o->progress, pr->path,
                   under && fstat(fileno(under), &st) == 0 && S_ISREG(st.st_mode)
                       ? (uint64_t)st.st_size : 0);
    uint64_t records = 0;
    while (reader_next(&pr->r, &e)) {
        if ((++records & 0xffff) == 0) {
            off_t at = under ? ftello(under) : 0;
            progress_update(&prog, at > 0 ? (uint64_t)at : 0, records);
        }
        summary_add(&pr->s, &e);
        if (pr->have_sites) {
            int rc = sites_add_with(&pr->sites, &e, &pr->s);
            if (rc)
                site_problem(pr, rc);
        }
        if (!started && e.type == EV_META) {
            started = true;
            uint64_t dev = o->device_size ? o->device_size
                           : pr->s.device_size ? pr->s.device_size : DEFAULT_DEVICE;
            if (o->replay && o->nstrategies && !(replay = replay_set_create(replay_threads())))
                escape_line(stderr, "%s: %s: replay: out of memory", CMD, pr->path);
            for (size_t i = 0; replay && i < o->nstrategies; i++) {
                char err[256];
                if (replay_set_add(replay, o->strategies[i]->name, dev, err, sizeof err))
                    escape_line(stderr, "%s: %s: replay with %s: %s", CMD, pr->path,
                                o->strategies[i]->name, err);
            }
        }
        if (!replay)
            continue;
        if (e.type == EV_ALLOC)
            replay_set_alloc(replay, e.addr, e.size, e.align);
        else if (e.type == EV_FREE)
            replay_set_free(replay, e.addr);
        else if (e.type == EV_REALLOC)
            replay_set_realloc(replay, e.old_addr, e.addr, e.size);
    }
    progress_end(&prog);
    summary_finish(&pr->s);
    if (pr->have_sites)
        sites_finish(&pr->sites);
    pr->findings = findings_analyze(&pr->s, &o->findings);
    pr->nresults = replay ? replay_set_count(replay) : 0;
    if (replay)
        replay_set_results(replay, pr->results);
    replay_set_destroy(replay);
    if (!pr->r.lineno)
        return -1; /* the reader said why: empty, or not a trace */
    if (!pr->r.by_type[EV_META])
        escape_line(stderr, "%s: %s: no meta record; not a memsim trace?", CMD, pr->path);
    if (pr->s.dropped)
        escape_line(stderr, "%s: %s: its end record says %" PRIu64 " records could not be "
                    "written (a full disk, the file size limit): the figures are of what was",
                    CMD, pr->path, pr->s.dropped);
    return 0;
}

/* Index of the best replay: fewest failed requests, then the smallest
 * peak footprint. */
static size_t best_of(const process_t *pr)
{
    size_t best = 0;
    for (size_t i = 1; i < pr->nresults; i++) {
        const replay_result_t *a = &pr->results[i], *b = &pr->results[best];
        if (a->failed < b->failed ||
            (a->failed == b->failed && a->m.peak_footprint < b->m.peak_footprint))
            best = i;
    }
    return best;
}

/* ---- outputs ---------------------------------------------------------------------- */

/* A site's frames, resolved, inlined calls included, innermost first. */
typedef struct frames_s {
    symbols_frame_t *v;
    size_t n, cap;
} frames_t;

static size_t site_frames(symbols_t *store, const site_t *st, frames_t *out)
{
    out->n = 0;
    for (uint32_t i = 0; i < st->nframes; i++) {
        const symbols_frame_t *f;
        size_t n = symbols_resolve(store, st->modules ? st->modules[i] : SYMBOLS_NO_MODULE,
                                   st->frames[i], &f);
        for (size_t k = 0; k < n; k++) {
            if (out->n == out->cap) {
                size_t cap = out->cap ? out->cap * 2 : 64;
                symbols_frame_t *v = realloc(out->v, cap * sizeof *v);
                if (!v)
                    return out->n;
                out->v = v;
                out->cap = cap;
            }
            out->v[out->n++] = f[k];
        }
    }
    return out->n;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Names read from a module's file may be any bytes: escape_json. */
static json_t *frame_json(const symbols_frame_t *f)
{
    return json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:b}", "address", (json_int_t)f->address,
                     "module", escape_json(f->module), "offset",
                     f->module ? json_integer((json_int_t)f->offset) : json_null(), "function",
                     escape_json(f->function), "file", escape_json(f->file), "line",
                     f->line ? json_integer(f->line) : json_null(), "inlined", f->inlined);
}

/* The top sites by peak, as JSON objects. */
static json_t *sites_json(process_t *pr, symbols_t *store, const analyze_opts_t *o)
{
    json_t *out = json_array();
    if (!pr->have_sites)
        return out;
    uint64_t *ids;
    size_t n = sites_top(&pr->sites, SITES_BY_PEAK, o->sites, &ids);
    frames_t fr = {0};
    for (size_t i = 0; i < n; i++) {
        const site_t *st = sites_get(&pr->sites, ids[i]);
        json_t *frames = json_array();
        size_t nf = site_frames(store, st, &fr);
        for (size_t k = 0; k < nf; k++)
            json_array_append_new(frames, frame_json(&fr.v[k]));
        json_array_append_new(
            out, json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:o}", "id", (json_int_t)ids[i],
                           "calls", (json_int_t)st->calls, "allocated_bytes",
                           (json_int_t)st->allocated, "peak_bytes",
                           (json_int_t)sites_peak_bytes(&pr->sites, ids[i]), "leaked_bytes",
                           (json_int_t)st->live, "leaked_allocations",
                           (json_int_t)st->live_blocks, "frames", frames));
    }
    free(fr.v);
    free(ids);
    return out;
}

static void print_frame(const symbols_frame_t *f)
{
    char label[64];
    if (f->function && f->file)
        escape_line(stdout, "        %s at %s:%u%s", f->function, base_name(f->file), f->line,
                    f->inlined ? " (inlined)" : "");
    else if (f->function && f->name)
        escape_line(stdout, "        %s in %s", f->function, f->name);
    else
        escape_line(stdout, "        %s", symbols_label(f, label, sizeof label));
}

static void print_sites(process_t *pr, symbols_t *store, const analyze_opts_t *o)
{
    static const char *const by[] = {
        [SITES_BY_PEAK] = "peak", [SITES_BY_CALLS] = "calls",
        [SITES_BY_LEAKED] = "leaked bytes"};
    if (!pr->have_sites || !o->sites)
        return;
    frames_t fr = {0};
    for (int key = SITES_BY_PEAK; key <= SITES_BY_LEAKED; key++) {
        uint64_t *ids;
        size_t n = sites_top(&pr->sites, (sites_key_t)key, o->sites, &ids);
        printf("  top sites by %s:%s\n", by[key], n ? "" : " none");
        for (size_t i = 0; i < n; i++) {
            const site_t *st = sites_get(&pr->sites, ids[i]);
            char a[32], b[32], c[32];
            printf("    #%zu  peak %s, %" PRIu64 " calls, %s allocated, leaked %s in %" PRIu64
                   " blocks (stack %" PRIu64 ")\n",
                   i + 1, units_format_bytes(sites_peak_bytes(&pr->sites, ids[i]), a, sizeof a),
                   st->calls, units_format_bytes(st->allocated, b, sizeof b),
                   units_format_bytes(st->live, c, sizeof c), st->live_blocks, ids[i]);
            size_t nf = site_frames(store, st, &fr);
            if (!nf)
                printf("        (%s)\n", ids[i] ? "no stack record" : "no stack recorded");
            for (size_t k = 0; k < nf && k < SHOWN_FRAMES; k++)
                print_frame(&fr.v[k]);
            if (nf > SHOWN_FRAMES)
                printf("        … %zu more frames\n", nf - SHOWN_FRAMES);
        }
        free(ids);
    }
    free(fr.v);
}

/* A frame name for a collapsed line: ';' separates frames and the last
 * blank the weight, so neither may appear inside one: blanks become '_'
 * (C++ names are full of them), ';' is escaped like the rest (\x3b). */
static void put_frame_name(const char *s)
{
    for (;;) {
        size_t n = strcspn(s, " ");
        escape_write(stdout, s, n, ";");
        if (!s[n])
            return;
        putchar('_');
        s += n + 1;
    }
}

/* Every stack with a weight, one line each: frames outermost first. */
static void print_collapsed(process_t *pr, symbols_t *store, sites_key_t key, bool prefix)
{
    if (!pr->have_sites)
        return;
    frames_t fr = {0};
    for (uint64_t id = 0; id < sites_count(&pr->sites); id++) {
        uint64_t w = sites_key(&pr->sites, id, key);
        if (!w)
            continue;
        if (prefix) {
            put_frame_name(pr->s.exe[0] ? base_name(pr->s.exe) : "?");
            printf(":%" PRId64 ";", pr->s.pid);
        }
        size_t n = site_frames(store, sites_get(&pr->sites, id), &fr);
        if (!n)
            printf(id ? "[stack_%" PRIu64 "]" : "[no_stack]", id);
        for (size_t k = n; k-- > 0;) {
            char label[64];
            put_frame_name(fr.v[k].function ? fr.v[k].function
                                            : symbols_label(&fr.v[k], label, sizeof label));
            if (k)
                putchar(';');
        }
        printf(" %" PRIu64 "\n", w);
    }
    free(fr.v);
}

static uint64_t peak_rss(const summary_t *s) { return s->peak_hwm > s->peak_rss ? s->peak_hwm : s->peak_rss; }

static json_t *process_json(process_t *pr, symbols_t *store, const analyze_opts_t *o)
{
    const summary_t *s = &pr->s;
    json_t *by_type = json_object();
    for (int t = 0; t < EV_COUNT; t++)
        if (pr->r.by_type[t])
            json_object_set_new(by_type, event_type_name((event_type_t)t),
                                json_integer(pr->r.by_type[t]));
    /* The trace's path is the user's, any bytes: escape_json. */
    json_t *summary = json_pack(
        "{s:o, s:I, s:s, s:s?, s:b, s:I, s:f, s:o, s:I, s:I, s:I, s:I, s:I, s:f, s:I, s:I, s:I, s:I,"
        " s:I, s:I, s:I, s:I, s:I}",
        "trace", escape_json(pr->path), "pid", (json_int_t)s->pid, "exe", s->exe,
        "end_reason", s->end_reason[0] ? s->end_reason : NULL, "truncated", pr->r.truncated,
        "dropped", (json_int_t)s->dropped,
        "duration_s", (double)(s->last_t - s->first_t) / 1e9, "records_by_type", by_type,
        "allocations", (json_int_t)s->allocations, "frees", (json_int_t)s->frees,
        "reallocs", (json_int_t)s->reallocs, "bytes_allocated", (json_int_t)s->bytes_allocated,
        "peak_heap_bytes", (json_int_t)s->peak_heap,
        "peak_heap_at_s", (double)(s->peak_heap_t - s->first_t) / 1e9,
        "peak_rss_bytes", (json_int_t)peak_rss(s), "peak_tree_rss_bytes",
        (json_int_t)s->peak_tree_rss, "samples", (json_int_t)s->samples,
        "leaked_bytes", (json_int_t)s->leaked_bytes,
        "leaked_allocations", (json_int_t)s->leaked_allocations,
        "temporary_allocations", (json_int_t)s->temporaries,
        "unknown_frees", (json_int_t)s->unknown_frees, "bad_lines", (json_int_t)pr->r.bad_lines,
        "unknown_records", (json_int_t)pr->r.unknown);
    json_t *strategies = json_array();
    size_t best = best_of(pr);
    for (size_t i = 0; i < pr->nresults; i++) {
        const replay_result_t *r = &pr->results[i];
        json_array_append_new(
            strategies,
            json_pack("{s:s, s:I, s:f, s:I, s:f, s:I, s:I, s:I, s:f, s:b}", "name", r->name,
                      "peak_footprint_bytes", (json_int_t)r->m.peak_footprint, "fragmentation",
                      r->m.jw_fragmentation, "internal_fragmentation_at_peak_bytes",
                      (json_int_t)r->m.internal_at_peak, "external_fragmentation_at_peak",
                      r->m.external_at_peak, "largest_free_bytes",
                      (json_int_t)r->m.largest_free, "failed_requests", (json_int_t)r->failed,
                      "requests", (json_int_t)r->requests, "events_per_s", r->events_per_s,
                      "best", pr->nresults > 1 && i == best));
    }
    return json_pack("{s:o, s:O, s:o, s:o}", "summary", summary, "findings", pr->findings,
                     "strategies", strategies, "sites", sites_json(pr, store, o));
}

static void print_strategies(const process_t *pr)
{
    char a[32], c[32];
    if (!pr->nresults)
        return;
    printf("  strategies (the trace's allocations replayed):\n");
    printf("    %-10s %11s %9s %11s %9s %8s\n", "strategy", "peak foot", "J-W frag", "int@peak",
           "ext@peak", "failed");
    size_t best = best_of(pr);
    for (size_t i = 0; i < pr->nresults; i++) {
        const replay_result_t *r = &pr->results[i];
        printf("    %-10s %11s %8.1f%% %11s %8.1f%% %8" PRIu64 "%s\n", r->name,
               units_format_bytes(r->m.peak_footprint, a, sizeof a), 100 * r->m.jw_fragmentation,
               units_format_bytes(r->m.internal_at_peak, c, sizeof c),
               100 * r->m.external_at_peak, r->failed,
               pr->nresults > 1 && i == best ? "  <- best" : "");
    }
}

static void print_text(process_t *pr, symbols_t *store, const analyze_opts_t *o)
{
    const summary_t *s = &pr->s;
    char a[32], b[32];
    escape_line(stdout, "== %s (pid %" PRId64 ") — %s", s->exe[0] ? s->exe : "?", s->pid,
                pr->path);
    char lost[96] = "";
    if (s->dropped)
        snprintf(lost, sizeof lost, "; %" PRIu64 " records dropped: the figures are of what "
                 "was written", s->dropped);
    escape_line(stdout, "  ended:          %s%s%s",
                pr->r.truncated ? "truncated (no end record)" : s->end_reason, lost,
                pr->r.bad_lines ? " — some lines could not be read" : "");
    printf("  duration:       %.3f s\n", (double)(s->last_t - s->first_t) / 1e9);
    printf("  allocations:    %" PRIu64 " (%" PRIu64 " reallocs), %s in all; %" PRIu64
           " frees; %" PRIu64 " temporary\n",
           s->allocations, s->reallocs, units_format_bytes(s->bytes_allocated, a, sizeof a),
           s->frees, s->temporaries);
    printf("  peak heap:      %s at %.3f s\n", units_format_bytes(s->peak_heap, a, sizeof a),
           (double)(s->peak_heap_t - s->first_t) / 1e9);
    if (s->samples)
        printf("  peak RSS:       %s (tree %s, %" PRIu64 " samples)\n",
               units_format_bytes(peak_rss(s), a, sizeof a),
               units_format_bytes(s->peak_tree_rss, b, sizeof b), s->samples);
    printf("  leaked:         %s in %" PRIu64 " blocks\n",
           units_format_bytes(s->leaked_bytes, a, sizeof a), s->leaked_allocations);
    size_t nf = json_array_size(pr->findings);
    printf("  findings:       %s\n", nf ? "" : "none");
    for (size_t i = 0; i < nf; i++) {
        json_t *f = json_array_get(pr->findings, i);
        const char *phase = json_string_value(json_object_get(f, "phase"));
        escape_line(stdout, "    [%s] %s (%s, confidence %.2f, at %.3f s%s%s)",
                    json_string_value(json_object_get(f, "severity")),
                    json_string_value(json_object_get(f, "classification")),
                    json_string_value(json_object_get(f, "series")),
                    json_real_value(json_object_get(f, "confidence")),
                    json_real_value(json_object_get(f, "evidence_at_s")), phase ? ", phase " : "",
                    phase ? phase : "");
        escape_line(stdout, "    %s", json_string_value(json_object_get(f, "description")));
        json_t *rem = json_object_get(f, "remediation");
        for (size_t k = 0; k < json_array_size(rem); k++)
            escape_line(stdout, "      - %s", json_string_value(json_array_get(rem, k)));
    }
    print_strategies(pr);
    print_sites(pr, store, o);
}

/* The process tree of the traces that could be read (procs[i].ok); the
 * others are roots of their own, listed last. */
static int tree_of(const process_t *procs, size_t n, ptree_t *t)
{
    ptree_item_t *items = calloc(n ? n : 1, sizeof *items);
    if (!items)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const summary_t *s = &procs[i].s;
        items[i] = procs[i].ok ? (ptree_item_t){.pid = s->pid, .ppid = s->ppid,
                                                .start = s->start_unix_ns, .forked = s->forked}
                               : (ptree_item_t){.start = UINT64_MAX};
    }
    int rc = ptree_build(t, items, n);
    free(items);
    return rc;
}

/* The highest tree RSS any process sampled. */
static uint64_t peak_tree_rss(const process_t *procs, size_t n)
{
    uint64_t peak = 0;
    for (size_t i = 0; i < n; i++)
        if (procs[i].ok && procs[i].s.peak_tree_rss > peak)
            peak = procs[i].s.peak_tree_rss;
    return peak;
}

static json_t *tree_json(const process_t *procs, const ptree_t *t)
{
    json_t *nodes = json_array();
    for (size_t k = 0; k < t->n; k++) {
        size_t i = t->order[k];
        if (!procs[i].ok)
            continue;
        const summary_t *s = &procs[i].s;
        json_t *node = json_pack("{s:I, s:I, s:s, s:I}", "process", (json_int_t)i, "pid",
                                 (json_int_t)s->pid, "exe", s->exe, "depth",
                                 (json_int_t)t->depth[i]);
        json_object_set_new(node, "parent", t->parent[i] == PTREE_NONE
                                                ? json_null()
                                                : json_integer((json_int_t)t->parent[i]));
        json_object_set_new(node, "via", t->via[i] ? json_string(t->via[i]) : json_null());
        json_array_append_new(nodes, node);
    }
    return json_pack("{s:I, s:I, s:o}", "processes", (json_int_t)t->n, "peak_tree_rss_bytes",
                     (json_int_t)peak_tree_rss(procs, t->n), "nodes", nodes);
}

/* The overview of several traces: one line per process, in tree order. */
static void print_tree(const process_t *procs, const ptree_t *t)
{
    char a[32], b[32], c[32];
    printf("process tree: %zu traces, peak tree RSS %s\n", t->n,
           units_format_bytes(peak_tree_rss(procs, t->n), a, sizeof a));
    printf("  %8s %10s %10s %10s %8s  %s\n", "pid", "peak heap", "peak RSS", "leaked",
           "findings", "process");
    for (size_t k = 0; k < t->n; k++) {
        size_t i = t->order[k];
        if (!procs[i].ok)
            continue;
        const summary_t *s = &procs[i].s;
        const char *slash = strrchr(s->exe, '/');
        escape_line(stdout, "  %8" PRId64 " %10s %10s %10s %8zu  %*s%s%s%s", s->pid,
                    units_format_bytes(s->peak_heap, a, sizeof a),
                    s->samples ? units_format_bytes(peak_rss(s), b, sizeof b) : "-",
                    units_format_bytes(s->leaked_bytes, c, sizeof c),
                    json_array_size(procs[i].findings),
                    (int)(2 * (t->depth[i] < 20 ? t->depth[i] : 20)), "",
                    t->via[i] ? t->via[i] : "", t->via[i] ? " " : "",
                    slash ? slash + 1 : s->exe[0] ? s->exe : "?");
    }
    putchar('\n');
}

int main(int argc, char **argv)
{
    analyze_opts_t o;
    if (parse(argc, argv, &o))
        return 2;
    paths_t paths = {0};
    for (int i = optind; i < argc; i++)
        if (collect(argv[i], &paths))
            return 2;
    process_t *procs = calloc(paths.n, sizeof *procs);
    if (!procs) {
        fprintf(stderr, "%s: out of memory\n", CMD);
        return 2;
    }
    /* One symbol store for every trace: processes of a tree share modules. */
    symbols_t store;
    bool want_sites = o.sites || o.collapsed != NO_COLLAPSED;
    if (want_sites && symbols_init(&store)) {
        fprintf(stderr, "%s: out of memory\n", CMD);
        return 2;
    }
    symbols_t *sym = want_sites ? &store : NULL;
    int rc = 0;
    for (size_t i = 0; i < paths.n; i++) {
        snprintf(procs[i].path, sizeof procs[i].path, "%s", paths.v[i]);
        procs[i].ok = analyze(&o, sym, &procs[i]) == 0;
        if (!procs[i].ok)
            rc = 2;
    }
    if (o.collapsed != NO_COLLAPSED) {
        for (size_t i = 0; i < paths.n; i++)
            if (procs[i].ok)
                print_collapsed(&procs[i], sym, (sites_key_t)o.collapsed, paths.n > 1);
    } else if (o.json) {
        json_t *out;
        if (paths.n == 1) {
            out = procs[0].ok ? process_json(&procs[0], sym, &o) : json_object();
        } else {
            /* processes: in the order of the paths (a failed trace is an
             * empty object, so tree indices stay valid); tree: who started
             * whom, depth first. */
            json_t *list = json_array();
            for (size_t i = 0; i < paths.n; i++)
                json_array_append_new(list, procs[i].ok ? process_json(&procs[i], sym, &o)
                                                        : json_object());
            ptree_t t;
            if (tree_of(procs, paths.n, &t)) {
                fprintf(stderr, "%s: out of memory\n", CMD);
                return 2;
            }
            out = json_pack("{s:o, s:o}", "processes", list, "tree", tree_json(procs, &t));
            ptree_free(&t);
        }
        json_dumpf(out, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        putchar('\n');
        json_decref(out);
    } else if (paths.n == 1) {
        if (procs[0].ok)
            print_text(&procs[0], sym, &o);
    } else {
        ptree_t t;
        if (tree_of(procs, paths.n, &t)) {
            fprintf(stderr, "%s: out of memory\n", CMD);
            return 2;
        }
        print_tree(procs, &t);
        for (size_t k = 0; k < t.n; k++)
            if (procs[t.order[k]].ok) {
                print_text(&procs[t.order[k]], sym, &o);
                if (k + 1 < t.n)
                    putchar('\n');
            }
        ptree_free(&t);
    }
    int want = findings_severity_rank(o.fail_on);
    for (size_t i = 0; i < paths.n && want >= 0 && !rc; i++)
        for (size_t k = 0; k < json_array_size(procs[i].findings); k++) {
            json_t *f = json_array_get(procs[i].findings, k);
            if (findings_severity_rank(json_string_value(json_object_get(f, "severity"))) >= want)
                rc = 1;
        }
    for (size_t i = 0; i < paths.n; i++) {
        json_decref(procs[i].findings);
        reader_close(&procs[i].r);
        summary_fini(&procs[i].s);
        if (procs[i].have_sites) {
            sites_fini(&procs[i].sites);
            symbols_space_fini(&procs[i].space);
        }
        free(paths.v[i]);
    }
    if (sym)
        symbols_fini(sym);
    free(paths.v);
    free(procs);
    json_decref(o.findings.remediation);
    return rc;
}
