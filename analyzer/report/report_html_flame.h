/*
 * report_html_flame: a process's flame graph in the HTML report, written
 * as a data block the page's script draws (and zooms, turns bottom-up):
 * the stacks kept, as a trie of [parent, name] nodes so that shared
 * prefixes are written once, and their weights (peak, calls, leaked,
 * temporaries; the mapping sites by bytes mapped at the mapped peak).
 */
#ifndef MEMSIM_ANALYZER_REPORT_HTML_FLAME_H
#define MEMSIM_ANALYZER_REPORT_HTML_FLAME_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "analyzer/report/report.h"

/* The page's function names: one string table for every flame graph of
 * the page (a make's compilers share most of theirs), written once at
 * the page's end as the data block "flame-names". */
typedef struct report_html_names_s {
    json_t *names;          /* index -> name */
    json_t *name_ids;       /* name -> index */
} report_html_names_t;

/* The flame graph of pr, the page's index-th section (its data block is
 * "flame-<index>"): full, the process the user ran or chose (more stacks
 * kept), else a brief one.  Its names go into *names. */
void report_html_flame(FILE *f, process_t *pr, symbols_t *store, frames_t *fr,
                       report_html_names_t *names, size_t index, bool full);

#endif
