/*
 * diff: two runs side by side (memsim-analyze --diff BASE NEW), each a
 * trace or a run directory, read as memsim-analyze reads one
 * (analyzer/analysis.h) over one symbol store.
 *
 * What is compared:
 *   totals     peak heap, peak RSS, peak mapped, leaked bytes, calls
 *              (allocations), temporary allocations; a tree's are summed
 *              over its processes (peak RSS: the tree's peak)
 *   functions  allocating functions (analyzer/report/groups.h), matched by name
 *              and source file, never by address, so a rebuilt binary
 *              still matches: live at the peak, leaked bytes, calls
 *   sites      allocation stacks matched by their frames' functions and
 *              source lines, from the allocating frame outward
 *              (DIFF_SITE_FRAMES of them)
 *   findings   by classification and series (and process name in a
 *              tree): those that appeared in NEW, those resolved
 *   flame      a flame graph of both runs' stacks weighted by bytes live
 *              at the peak, each frame as wide as the larger of its two
 *              weights, red where it grew, blue where it shrank
 *
 * --fail-on-growth PCT exits 1 when the peak heap or the leaked bytes
 * grew by more than PCT percent (from nothing to something is growth
 * beyond any PCT).
 */
#ifndef MEMSIM_ANALYZER_DIFF_H
#define MEMSIM_ANALYZER_DIFF_H

#include "analyzer/options.h"
#include "analyzer/report/suppress.h"
#include "analyzer/read/symbols.h"

#define DIFF_SITE_FRAMES 4

/* The whole of --diff: read both, write the report o asks (text on
 * stdout, --json, --html FILE).  The exit status: 0, 1 (--fail-on-growth
 * or --fail-on), 2 (unreadable input, a report not written). */
int diff_main(const char *base, const char *new_, const analyze_opts_t *o, symbols_t *store,
              suppress_t *sup);

#endif
