/*
 * consumers: what reads the records of a trace, behind one table, as
 * the strategies sit behind strategy_ops_t.  process_analyze calls each
 * consumer's init before the first record, event for every record (in
 * the table's order: the sites read which block the summary just ended
 * or added, the mappings note their live bytes in the summary's newest
 * sample), and finish after the last.
 *
 *   summary    analyzer/consume/summary.h: the headline figures, the samples
 *   sites      analyzer/consume/sites.h: per allocation stack (when wanted)
 *   mappings   analyzer/consume/mappings.h: the program's own mappings
 *   timeline   analyzer/consume/timeline.h: heap and mapped live over time, per event
 *   replay     analyzer/consume/replay.h: the allocations through every strategy
 *   allocators analyzer/consume/allocators.h: the heap operations through real
 *              allocators (only with --allocators)
 */
#ifndef MEMSIM_ANALYZER_CONSUMERS_H
#define MEMSIM_ANALYZER_CONSUMERS_H

#include "analyzer/process.h"

typedef struct consumer_s {
    const char *name;
    int (*init)(process_t *pr);    /* 0, or -1 after one line on stderr */
    void (*event)(process_t *pr, const event_t *e);
    void (*finish)(process_t *pr);
    void (*fini)(process_t *pr);   /* after the reports; only if init succeeded */
} consumer_t;

extern const consumer_t *const consumers[];
extern const size_t nconsumers;

#endif
