/*
 * findings_spike: the transient spikes of a series (see findings.h's
 * classes): excursions above a robust baseline, the series less its
 * fitted drift, that come back down before the exit's frees.
 */
#ifndef MEMSIM_ANALYZER_FINDINGS_SPIKE_H
#define MEMSIM_ANALYZER_FINDINGS_SPIKE_H

#include <stddef.h>

#include "analyzer/consume/findings_series.h"

#define SPIKES_PER_SERIES 5

/* The spikes of x (against trend d) into found[], at most max; their number. */
size_t findings_spikes(const findings_config_t *c, const summary_t *s, const series_t *x,
                       const trend_t *d, finding_t *found, size_t max);

#endif
