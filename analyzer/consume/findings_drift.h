/*
 * findings_drift: the persistent drift of a series (see findings.h's
 * classes): a sustained rise, found on bucket means, fitted as a clamped
 * line (flat, the line, flat; maybe a step where it starts), refined at
 * the samples' own resolution, its slope Theil-Sen's.
 */
#ifndef MEMSIM_ANALYZER_FINDINGS_DRIFT_H
#define MEMSIM_ANALYZER_FINDINGS_DRIFT_H

#include <stdbool.h>

#include "analyzer/consume/findings_series.h"

/* The drift of x, if any, into *f and its trend into *d (d->on false
 * when none).  min_growth: the least rise, in the series' units. */
bool findings_drift(const findings_config_t *c, const summary_t *s, const series_t *x,
                    double min_growth, finding_t *f, trend_t *d);

#endif
