/*
 * report_page: the frame of memsim-analyze's HTML pages (the report and
 * --diff's): the head, with a Content-Security-Policy that forbids every
 * fetch (the page opens offline and nothing in it can load anything),
 * the style (analyzer/report/report.css), and at the end the one script
 * (analyzer/report/report.js) that draws the page's data blocks and makes its
 * tables, timelines and flame graphs explorable.  Both files are
 * embedded in the analyzer at build time (scripts/embed.sh).
 */
#ifndef MEMSIM_ANALYZER_REPORT_PAGE_H
#define MEMSIM_ANALYZER_REPORT_PAGE_H

#include <stdio.h>

#include <jansson.h>

/* Up to <body> and the page's <h1>: title (escaped here). */
void report_page_head(FILE *f, const char *title);
/* The script, then </body></html>. */
void report_page_tail(FILE *f);
/* A data block for the script: <script type="application/json" id=id>
 * with data (no "</" can end it early).  data is not taken. */
void report_page_data(FILE *f, const char *id, const json_t *data);

#endif
