/*
 * findings: what the samples say, as the reference gap analysis
 * (seeds/004) classifies it.
 *
 * The gap series is device used (RSS) − allocator reserved (glibc's
 * mallinfo2) over the samples whose device total is known:
 *   transient_spike     sample z-scores of the gap above --spike-z
 *   persistent_drift    least-squares slope of the gap over time > 0 with
 *                       R² at least --drift-r2 (and its p-value)
 *   fragmentation_like  mean of (reserved − allocated) ÷ reserved at
 *                       least --frag-ratio
 * Gap findings need three samples or more (drift five) and a gap of at
 * least --gap-ratio of the device total somewhere, as in the seed.
 * The same spike and drift detectors run on the heap-live series (memsim's
 * live requested bytes): steady heap growth is the leak signal.  A heap
 * drift also needs its fitted growth over the run to be at least 64 KiB
 * and a tenth of the mean heap, so a calm heap stays quiet.
 *
 * Each finding has the seed's severity and confidence rules, evidence
 * figures, a description with human units, remediation text, the time of
 * its evidence and the phase that time falls in.  Sorted critical first,
 * then by confidence.
 */
#ifndef MEMSIM_ANALYZER_FINDINGS_H
#define MEMSIM_ANALYZER_FINDINGS_H

#include <jansson.h>

#include "analyzer/summary.h"

typedef struct findings_config_s {
    double gap_ratio;  /* default 0.01 */
    double spike_z;    /* default 3.0 */
    double drift_r2;   /* default 0.7 */
    double frag_ratio; /* default 0.3 */
    json_t *remediation; /* {"classification": ["text", ...]} overriding the defaults, or NULL */
} findings_config_t;

#define FINDINGS_DEFAULTS {.gap_ratio = 0.01, .spike_z = 3.0, .drift_r2 = 0.7, .frag_ratio = 0.3}

/* The findings of one trace, as a JSON array (the caller owns it). */
json_t *findings_analyze(const summary_t *s, const findings_config_t *c);

/* 0 info, 1 warning, 2 critical, -1 unknown. */
int findings_severity_rank(const char *severity);

#endif
