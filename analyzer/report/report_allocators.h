/*
 * report_allocators: the real allocators' section of each report (text,
 * JSON, HTML), from a process's allocators_t (analyzer/consume/allocators.h),
 * with the ranking of allocators and strategies together and what
 * switching from the allocator the program ran with would save.  Each
 * report calls its function where the strategies end; a process replayed
 * through no allocator prints nothing (JSON: null).
 */
#ifndef MEMSIM_ANALYZER_REPORT_ALLOCATORS_H
#define MEMSIM_ANALYZER_REPORT_ALLOCATORS_H

#include <jansson.h>
#include <stdio.h>

#include "analyzer/process.h"

void report_allocators_text(FILE *f, const process_t *pr);
/* A process of a tree shown briefly: each replayed allocator's peak RSS
 * (the best's, then "+X" over it) on one line, with the --pid that shows
 * the table, and what switching would save. */
void report_allocators_text_brief(FILE *f, const process_t *pr);
json_t *report_allocators_json(const process_t *pr);
void report_allocators_html(FILE *f, const process_t *pr);

/* One entry of the ranking: an allocator's peak RSS or a strategy's
 * peak footprint. */
typedef struct rank_entry_s {
    const char *name;
    bool strategy;
    uint64_t peak;
} rank_entry_t;

/* The ranking into out (room for CATALOG_MAX_SPECS + REPLAY_MAX_STRATEGIES),
 * best first; its length. */
size_t report_allocators_ranking(const process_t *pr, rank_entry_t *out);

#endif
