/*
 * process: what the analyzer learns of one trace (one process), in one
 * streaming pass that feeds every record to the consumers of
 * analyzer/consumers.h, then runs the findings on what they gathered.
 */
#ifndef MEMSIM_ANALYZER_PROCESS_H
#define MEMSIM_ANALYZER_PROCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzer/consume/findings.h"
#include "analyzer/consume/mappings.h"
#include "analyzer/options.h"
#include "analyzer/read/reader.h"
#include "analyzer/consume/replay.h"
#include "analyzer/consume/sites.h"
#include "analyzer/consume/summary.h"
#include "analyzer/read/symbols.h"
#include "analyzer/consume/timeline.h"

typedef struct process_s {
    char path[4096];
    const analyze_opts_t *o;
    symbols_t *store;        /* NULL: no sites wanted */
    reader_t r;
    summary_t s;
    mappings_t maps;
    timeline_t timeline;     /* heap and mapped live over time, from every event */
    bool have_sites;         /* sites and space are set up */
    sites_t sites;
    symbols_space_t space;   /* the trace's modules, for the sites' frames */
    unsigned site_problems;  /* bit per SITES_E_* code reported */
    replay_set_t *replay;    /* while the pass runs */
    bool replay_started;     /* the meta record set it up */
    bool replay_skipped;     /* the peak heap was below ANALYZE_REPLAY_MIN_HEAP */
    replay_result_t results[REPLAY_MAX_STRATEGIES];
    size_t nresults;         /* sorted by peak footprint, best first */
    uint64_t *marks_t;       /* the time of each sample, where the replay noted its
                                strategies' footprints (results[].series) */
    size_t nmarks, cap_marks;
    struct alloc_writer_s *alloc_writer; /* --allocators: the operation file, while read */
    struct allocators_s *allocators;     /* --allocators: the real allocators' figures */
    findings_t findings;
    /* Leaks the suppressions left out (analyzer/report/suppress.h): the summary's
     * leaked_bytes and leaked_allocations are what remains. */
    uint64_t suppressed_bytes, suppressed_blocks;
    bool ok;                 /* read: the reports may use it */
} process_t;

/* Read the trace at path through every consumer.  0, or -1 after one
 * line on stderr (unreadable, empty, or not a memsim trace). */
int process_analyze(process_t *pr, const char *path, const analyze_opts_t *o, symbols_t *store);
void process_fini(process_t *pr);

/* The peak RSS of the process: VmHWM, or the highest VmRSS sampled. */
uint64_t process_peak_rss(const process_t *pr);

#endif
