/*
 * findings_frag: fragmentation (see findings.h's classes): the free
 * memory the allocator holds and does not return, from its own figures,
 * over the longest stretch of samples that show it.
 */
#ifndef MEMSIM_ANALYZER_FINDINGS_FRAG_H
#define MEMSIM_ANALYZER_FINDINGS_FRAG_H

#include <stdbool.h>

#include "analyzer/consume/findings_series.h"

/* The fragmentation of s, if any, into *f (said of the heap). */
bool findings_fragmentation(const findings_config_t *c, const summary_t *s, finding_t *f);

#endif
