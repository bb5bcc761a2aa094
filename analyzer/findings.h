/*
 * findings: what the samples say, as the reference gap analysis
 * (seeds/004) classifies it, and how much of it the program's own
 * mappings explain.
 *
 * The gap series is device used (RSS) − allocator reserved (glibc's
 * mallinfo2) over the samples whose device total is known:
 *   transient_spike     sample z-scores of the gap above --spike-z
 *   persistent_drift    least-squares slope of the gap over time > 0 with
 *                       R² at least --drift-r2 (and its p-value)
 *   fragmentation_like  mean of (reserved − allocated) ÷ reserved at
 *                       least --frag-ratio
 * Gap findings need three samples or more (drift five).  The same spike
 * and drift detectors run on the heap-live series (memsim's live
 * requested bytes): steady heap growth is the leak signal.  A heap drift
 * also needs its fitted growth over the run to be at least 64 KiB and a
 * tenth of the mean heap.
 *
 * Significance.  Each finding has the bytes at stake (a spike: its peak
 * above the series' mean; a drift: its fitted growth over the run;
 * fragmentation: the mean of reserved − allocated) and their share of
 * the process's peak RSS.  Below the floor (--min-bytes, default 1 MiB,
 * and --min-share, default 2% of peak RSS) no finding is reported;
 * above it the severity is info, warning from --warn-share (10%), and
 * critical from --critical-share (50%).  The machine's size does not
 * decide: a gap also counts when it reaches --gap-ratio of the device
 * total, but only above the byte floor.
 *
 * Attribution.  A gap finding says what the gap is made of at the time
 * of its evidence: the program's recorded mappings live then (kind
 * mapping, split over the mapping sites in proportion to the sites'
 * bytes at the mapped peak or at the end, whichever total is nearer),
 * then from the latest smaps_rollup at or before it, file pages not in
 * recorded file mappings and the rest of the anonymous memory (kind
 * other); a trace without allocator figures (not glibc's malloc) counts
 * the live heap as kind allocator.  A heap finding is the allocator's.
 * When mappings explain most of a gap, its remediation is about
 * mappings.
 *
 * Findings are sorted critical first, then by bytes.
 */
#ifndef MEMSIM_ANALYZER_FINDINGS_H
#define MEMSIM_ANALYZER_FINDINGS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzer/mappings.h"
#include "analyzer/summary.h"

typedef struct findings_config_s {
    double gap_ratio;      /* default 0.01 */
    double spike_z;        /* default 3.0 */
    double drift_r2;       /* default 0.7 */
    double frag_ratio;     /* default 0.3 */
    uint64_t min_bytes;    /* default 1 MiB */
    double min_share;      /* default 0.02 */
    double warn_share;     /* default 0.10 */
    double critical_share; /* default 0.50 */
    json_t *remediation;   /* {"classification": ["text", ...]} overriding the defaults, or NULL */
} findings_config_t;

#define FINDINGS_DEFAULTS                                                                      \
    {.gap_ratio = 0.01, .spike_z = 3.0, .drift_r2 = 0.7, .frag_ratio = 0.3,                   \
     .min_bytes = 1u << 20, .min_share = 0.02, .warn_share = 0.10, .critical_share = 0.50}

typedef enum finding_class_e {
    FINDING_SPIKE,         /* transient_spike */
    FINDING_DRIFT,         /* persistent_drift */
    FINDING_FRAGMENTATION, /* fragmentation_like */
} finding_class_t;

typedef enum finding_series_e { SERIES_GAP, SERIES_HEAP } finding_series_t;

typedef enum severity_e { SEVERITY_INFO, SEVERITY_WARNING, SEVERITY_CRITICAL } severity_t;

typedef enum attribution_kind_e {
    ATTRIBUTION_MAPPING,
    ATTRIBUTION_ALLOCATOR,
    ATTRIBUTION_OTHER,
} attribution_kind_t;

typedef struct finding_evidence_s {
    const char *name;
    double value;
    bool integer; /* printed as a whole number */
} finding_evidence_t;

typedef struct finding_attribution_s {
    attribution_kind_t kind;
    uint64_t bytes;
    double share;     /* of the finding's gap */
    bool has_site;    /* mapping: site is a stack id */
    uint64_t site;
    bool file;        /* mapping: file-backed */
    const char *what; /* other and allocator: what it is, in words */
} finding_attribution_t;

#define FINDING_MAX_EVIDENCE 6
#define FINDING_MAX_ATTRIBUTION 8
#define FINDING_MAX_REMEDIATION 4

typedef struct finding_s {
    finding_class_t classification;
    finding_series_t series;
    severity_t severity;
    double confidence;
    uint64_t bytes;          /* at stake */
    double share_of_rss;     /* bytes ÷ peak RSS (0 without samples) */
    finding_evidence_t evidence[FINDING_MAX_EVIDENCE];
    size_t nevidence;
    char description[384];
    const char *remediation[FINDING_MAX_REMEDIATION]; /* static, or the config's */
    size_t nremediation;
    uint64_t t;              /* the evidence's time (ns since the trace's start) */
    const char *phase;       /* the summary's, or NULL */
    finding_attribution_t attribution[FINDING_MAX_ATTRIBUTION];
    size_t nattribution;
    double mapping_share;    /* of the gap, the recorded mappings' */
    /* Where the evidence lies, for a plot: a drift's fitted line from
     * (t0, v0) to (t1, v1); a fragmentation's stretch [t0, t1]; a
     * spike's sample (t0 = t1 = t, v0 = v1 = its value). */
    uint64_t t0, t1;
    double v0, v1;
} finding_t;

#define FINDINGS_MAX 8

typedef struct findings_s {
    finding_t v[FINDINGS_MAX];
    size_t n;
} findings_t;

/* The findings of one trace into *out. */
void findings_analyze(const summary_t *s, const mappings_t *m, const findings_config_t *c,
                      findings_t *out);

const char *findings_class_name(finding_class_t c);
const char *findings_series_name(finding_series_t s);
/* The class and the series in words, for people: "transient spike",
 * "the live heap" (the names above are JSON's and --remediation's). */
const char *findings_class_words(finding_class_t c);
const char *findings_series_words(finding_series_t s);
const char *findings_severity_name(severity_t s);
const char *findings_kind_name(attribution_kind_t k);
/* SEVERITY_* of a name, or -1. */
int findings_severity_rank(const char *severity);
/* The highest severity among the findings, or -1 when none. */
int findings_worst(const findings_t *f);

#endif
