/*
 * run_results: what memsim run leaves when its command has ended:
 * DIR/resources.json (the run's record, with the field names and
 * reasons of measure_command in the Python tool memsim started from)
 * once every trace in DIR is finished, and one line on stderr saying how
 * the command ended and where the results are.
 */
#ifndef MEMSIM_CLI_RUN_RESULTS_H
#define MEMSIM_CLI_RUN_RESULTS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "cli/run_opts.h"
#include "cli/run_watch.h"

/* Whether name is a trace's: memsim.<exe>.<pid>.<n>.jsonl[.zst]. */
bool run_results_trace_name(const char *name);

/* The recorders, processes apart from the command, finish a trace a
 * moment after its process vanished (SIGKILL, the OOM killer): wait, at
 * most 10 s, until every trace in dir is finished (closed by its
 * recorder, or its process still running). */
void run_results_wait(const char *dir);

/* DIR/resources.json, with allocator (taken; NULL: none) as its
 * "allocator"; *ntraces gets how many traces dir holds.  0 or -1
 * (message printed). */
int run_results_write(const run_opts_t *o, const run_watch_t *w, const char *dir,
                      size_t *ntraces, json_t *allocator);

/* One line on stderr at the end: how it ended and where the results are. */
void run_results_say(const run_opts_t *o, const run_watch_t *w, const char *dir, size_t ntraces);

#endif
