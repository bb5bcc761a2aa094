/*
 * findings: what the samples say about a trace's memory over time, in
 * three classes, each said of the series it was seen in.  The equations,
 * the defaults and why, and what each cannot see: docs/findings.md.
 *
 * Series (one value per sample):
 *   heap_live  the most requested bytes live since the sample before
 *              (from every event: a burst between samples is not lost)
 *   mapped     the program's own mappings, the most live since the sample
 *              before (analyzer/consume/mappings.h)
 *   gap        RSS − the allocator's reserved bytes (glibc's mallinfo2),
 *              at least 0: the mappings, thread stacks, code and file
 *              pages, other allocators; the whole RSS without allocator
 *              figures
 *
 * Classes:
 *   transient_spike     an excursion above a robust baseline (the median
 *                       of the series less its fitted drift, and its
 *                       spread: 1.4826 × the median absolute deviation)
 *                       by --spike-z spreads, that comes back down before
 *                       the last sample; each one a finding of its own
 *                       with its start, end and height above the baseline
 *   persistent_drift    the longest sustained growth: a line over a
 *                       stretch of at least --drift-span of the run and
 *                       ten samples, with R² at least --drift-r2, that fits better
 *                       than a single step does, whose growth lasts at
 *                       least as long as what follows it, and that does
 *                       not fall back (a hump, a sawtooth's tooth)
 *   fragmentation_like  the allocator holds free memory it does not
 *                       return: reserved − in use, at most what the RSS
 *                       has room for beside the heap and the mappings,
 *                       at least --frag-ratio of the allocator's resident
 *                       memory, for at least --frag-span of the run
 * Spikes and drifts are looked for in each series; fragmentation in the
 * allocator's figures (said of heap_live).  In a sampled trace heap_live
 * is an estimate: a spike or drift of it within 3 standard errors of the
 * difference it rests on is none (summary_point_t's heap_se).  A spike or drift of the gap
 * and one of the mappings at the same time are one finding: the mappings'
 * when they make half of it or more.
 *
 * Significance.  Each finding has its bytes at stake (a spike: its height
 * above the baseline; a drift: its fitted rise; fragmentation: the median
 * free memory held) and their share of the process's peak RSS.  Below
 * --min-bytes or --min-share there is no finding (a gap finding counts
 * below the share when its bytes reach --gap-ratio of the device total);
 * a gap finding whose bytes are mostly clean file pages (code, libraries,
 * files read) is none either.  Severity: the lower of two levels, one by
 * the share (warning from --warn-share, critical from --critical-share
 * of peak RSS) and one by the bytes themselves (warning from
 * --warn-bytes, critical from --critical-bytes): a share alone sits near
 * its threshold whenever a finding is most of a process's memory, which
 * the big ones are, and identical runs then land on either side.
 *
 * Composition.  Each finding says what its bytes at stake are made of at
 * its peak: a heap finding, the live heap; fragmentation, the allocator's
 * free memory; a mappings finding, the mapping sites; a gap finding, what
 * grew between its baseline and its peak: the program's mappings by
 * site, clean file pages, and other memory (anonymous or shared memory
 * outside the heap and the recorded mappings: thread stacks, another
 * allocator's).  The remediation follows the largest part.
 *
 * Findings are sorted critical first, then by bytes.
 */
#ifndef MEMSIM_ANALYZER_FINDINGS_H
#define MEMSIM_ANALYZER_FINDINGS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzer/consume/mappings.h"
#include "analyzer/consume/summary.h"

typedef struct findings_config_s {
    double gap_ratio;      /* default 0.01 */
    double spike_z;        /* default 3.5: robust spreads */
    double drift_r2;       /* default 0.8 */
    double drift_span;     /* default 0.2 of the run */
    double frag_ratio;     /* default 0.3 */
    double frag_span;      /* default 0.2 of the run */
    uint64_t min_bytes;    /* default 1 MiB */
    double min_share;      /* default 0.02 */
    double warn_share;     /* default 0.10 */
    double critical_share; /* default 0.50 */
    uint64_t warn_bytes;     /* default 16 MiB */
    uint64_t critical_bytes; /* default 256 MiB */
    json_t *remediation;   /* {"classification": ["text", ...]} overriding the defaults, or NULL */
} findings_config_t;

#define FINDINGS_DEFAULTS                                                                      \
    {.gap_ratio = 0.01, .spike_z = 3.5, .drift_r2 = 0.8, .drift_span = 0.2, .frag_ratio = 0.3, \
     .frag_span = 0.2, .min_bytes = 1u << 20, .min_share = 0.02, .warn_share = 0.10,          \
     .critical_share = 0.50, .warn_bytes = 16u << 20, .critical_bytes = 256u << 20}

typedef enum finding_class_e {
    FINDING_SPIKE,         /* transient_spike */
    FINDING_DRIFT,         /* persistent_drift */
    FINDING_FRAGMENTATION, /* fragmentation_like */
} finding_class_t;

typedef enum finding_series_e { SERIES_GAP, SERIES_HEAP, SERIES_MAPPED } finding_series_t;

typedef enum severity_e { SEVERITY_INFO, SEVERITY_WARNING, SEVERITY_CRITICAL } severity_t;

typedef enum attribution_kind_e {
    ATTRIBUTION_MAPPING,   /* the program's own mappings, by site */
    ATTRIBUTION_ALLOCATOR, /* the live heap, or the allocator's free memory */
    ATTRIBUTION_OTHER,     /* anonymous or shared memory outside both */
    ATTRIBUTION_FILE,      /* clean file pages: code, libraries, files read */
} attribution_kind_t;

typedef struct finding_evidence_s {
    const char *name;
    double value;
    bool integer; /* printed as a whole number */
} finding_evidence_t;

typedef struct finding_attribution_s {
    attribution_kind_t kind;
    uint64_t bytes;
    double share;     /* of the finding's bytes at stake */
    bool has_site;    /* mapping: site is a stack id */
    uint64_t site;
    bool file;        /* mapping: file-backed */
    const char *what; /* other and allocator: what it is, in words */
} finding_attribution_t;

#define FINDING_MAX_EVIDENCE 9
#define FINDING_MAX_ATTRIBUTION 40 /* mapping sites, then the other parts */
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
    uint64_t t;              /* its peak; fragmentation: when it set in (ns, as every t here) */
    uint64_t start, end;     /* its time range: the first and last samples in it */
    const char *phase;       /* the summary's phase at t, or NULL */
    finding_attribution_t attribution[FINDING_MAX_ATTRIBUTION];
    size_t nattribution;
    double mapping_share;    /* of the bytes at stake, the recorded mappings' */
    /* Where the evidence lies, for a plot: a drift's fitted line from
     * (t0, v0) to (t1, v1); a spike's or fragmentation's stretch [t0, t1]
     * at its baseline v0 and peak v1. */
    uint64_t t0, t1;
    double v0, v1;
} finding_t;

#define FINDINGS_MAX 16

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
