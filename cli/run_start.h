/*
 * run_start: memsim run's command started: forked into a process group
 * of its own (the terminal's foreground group when memsim run had it),
 * with the environment made by run_env and the signals memsim run
 * forwards caught in the parent (run_signals.h), then exec'd.
 */
#ifndef MEMSIM_CLI_RUN_START_H
#define MEMSIM_CLI_RUN_START_H

#include "cli/run_opts.h"
#include "cli/run_watch.h"

/* Fork and exec the command o->argv with env; w->pid, w->start, w->tty.
 * 0; 1 when the fork failed (one line said why); 2 when exec failed
 * (the child said why in one line; w->status then holds its status:
 * 127 not found, 126 found but not executable). */
int run_start(const run_opts_t *o, char **env, run_watch_t *w);

#endif
