/*
 * analysis: one run's traces read: the inputs given (traces, run
 * directories), every trace through its pass (analyzer/process.h), the
 * leak suppressions applied.  memsim-analyze makes one; --diff makes
 * two (analyzer/report/diff.h) over one symbol store.
 */
#ifndef MEMSIM_ANALYZER_ANALYSIS_H
#define MEMSIM_ANALYZER_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "analyzer/read/inputs.h"
#include "analyzer/options.h"
#include "analyzer/process.h"
#include "analyzer/report/suppress.h"
#include "analyzer/read/symbols.h"

typedef struct analysis_s {
    paths_t paths;        /* the traces, and memsim run's resources.json figures */
    process_t *procs;     /* one per path; ok false for a trace that could not be read */
    size_t n;
    symbols_t *store;     /* shared, not owned; NULL: no sites */
    uint64_t run_peak;    /* paths.run_peak_tree_rss */
    char command[1024];   /* what was run: memsim run's command, else the first
                             process's argv, else its exe; "" when unknown */
} analysis_t;

/* Read the inputs args[0..nargs-1] into *a, each trace through its pass,
 * then the suppressions sup (may be NULL).  0; 2 when an input could not
 * be read (after one line each; the others are read); -1 on a usage or
 * memory error (nothing to report). */
int analysis_run(analysis_t *a, char *const *args, size_t nargs, const analyze_opts_t *o,
                 symbols_t *store, suppress_t *sup);
void analysis_fini(analysis_t *a);

/* The suppressed leaks of every process, summed. */
void analysis_suppressed(const analysis_t *a, uint64_t *bytes, uint64_t *blocks);

#endif
