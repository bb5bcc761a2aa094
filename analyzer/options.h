/*
 * options: memsim-analyze's command line (usage, parsing, defaults).
 * Each bad value gets one line naming the option; the caller exits 2.
 */
#ifndef MEMSIM_ANALYZER_OPTIONS_H
#define MEMSIM_ANALYZER_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "allocators/catalog.h"
#include "analyzer/consume/findings.h"
#include "analyzer/progress.h"
#include "analyzer/consume/replay.h"
#include "sim/strategy.h"

#define ANALYZE_CMD "memsim-analyze"
#define ANALYZE_DEFAULT_DEVICE (64ull << 30)
#define ANALYZE_DEFAULT_SITES 10
#define ANALYZE_NO_COLLAPSED (-1)
/* A trace whose peak heap is below this is not replayed unless -s asks. */
#define ANALYZE_REPLAY_MIN_HEAP (1ull << 20)
/* A process of a tree gets a full text report from this share of the
 * tree's peak (unless --all, --pid or --exe). */
#define ANALYZE_SHOWN_SHARE 0.01
#define ANALYZE_MAX_PIDS 64
#define ANALYZE_MAX_SUPPRESSIONS 16

typedef struct analyze_opts_s {
    bool json, replay;
    bool strategies_given;   /* -s named them */
    const strategy_ops_t *strategies[REPLAY_MAX_STRATEGIES];
    size_t nstrategies;
    uint64_t device_size;    /* 0: each trace's own */
    const char *fail_on;
    findings_config_t findings;
    uint64_t sites;          /* top sites shown per ranking (0: none) */
    int collapsed;           /* a sites_key_t, or ANALYZE_NO_COLLAPSED */
    progress_mode_t progress;
    /* Which processes of a tree get a full report (text): by default
     * those above ANALYZE_SHOWN_SHARE of the tree's peak; all; or those
     * --pid and --exe select. */
    bool all;
    int64_t pids[ANALYZE_MAX_PIDS];
    size_t npids;
    const char *exe;
    const char *html;        /* --html FILE, or NULL */
    const char *flamegraph;  /* --flamegraph FILE, or NULL */
    const char *flame_key;   /* --flamegraph-weight: peak, calls, leaked or mapped */
    /* --output FORM=FILE (and --html FILE, --pprof FILE): each form
     * written to its file, all from one pass; NULL when not asked. */
    const char *out_text, *out_json, *out_pprof;
    /* Leak suppressions (analyzer/report/suppress.h). */
    bool default_suppressions;                     /* not --no-default-suppressions */
    const char *suppressions[ANALYZE_MAX_SUPPRESSIONS]; /* --suppressions FILE, in order */
    size_t nsuppressions;
    /* --diff BASE NEW: the two inputs compared (analyzer/report/diff.h). */
    bool diff;
    double fail_on_growth;   /* --fail-on-growth PCT; < 0: not asked */
    catalog_spec_t allocators[CATALOG_MAX_SPECS]; /* --allocators: the real allocators */
    size_t nallocators;
    /* --allocators-pages all: every page of every block is written in
     * the real allocators' replays, as the strategies count every
     * requested byte; false (touched, the default): only the pages the
     * program touched of a large block, as it really ran. */
    bool allocators_all_pages;
    /* Not options: what main learned of the inputs, for the reports. */
    const char *run_command; /* memsim run's command (resources.json), "" when none */
} analyze_opts_t;

/* Whether the report goes to standard output: no --output, --html nor
 * --pprof asked for a file instead. */
bool options_stdout_report(const analyze_opts_t *o);

/* Parse argv into *o; the traces start at optind.  0, or -1 after one
 * line on stderr.  --help prints the usage and exits 0. */
int options_parse(int argc, char **argv, analyze_opts_t *o);
/* Free what parsing took (the remediation texts). */
void options_fini(analyze_opts_t *o);

#endif
