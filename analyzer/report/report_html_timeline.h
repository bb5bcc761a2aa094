/*
 * report_html_timeline: a process's timeline in the HTML report, written
 * as a data block the page's script draws (and zooms, toggles): the
 * samples' series (RSS, tree RSS, the allocator's reserved memory, the
 * gap), heap and mapped live from every event, each strategy's
 * footprint, the phases and the findings.
 */
#ifndef MEMSIM_ANALYZER_REPORT_HTML_TIMELINE_H
#define MEMSIM_ANALYZER_REPORT_HTML_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "analyzer/report/report.h"

/* The timeline of pr, the page's index-th section (its data block is
 * "timeline-<index>"): full, 300 points a series at most, else half; a
 * line saying there is none under two samples. */
void report_html_timeline(FILE *f, process_t *pr, symbols_t *store, frames_t *fr, size_t index,
                          bool full);

#endif
