/*
 * run: `memsim run`, a command under libmemsim.so, watched from outside.
 *
 * The command runs in its own process group with the preload in its
 * environment; memsim run polls the RSS of its process tree every 10 ms
 * into DIR/rss.jsonl, ends the group when a wall or RSS budget is
 * exceeded, and writes DIR/resources.json beside the traces; with
 * --analyze, DIR/report.txt and DIR/report.json (run_report.h).
 */
#ifndef MEMSIM_CLI_RUN_H
#define MEMSIM_CLI_RUN_H

/* Exit status: the command's own (0..255), 128+signal when a signal
 * ended it, 127 (not found) or 126 (not executable) when it could not
 * be executed, 2 for bad input (nothing was started), 1 when memsim run
 * could not start it. */
int run_main(int argc, char **argv);

#include <stdio.h>

/* memsim run --help's text. */
void run_usage(FILE *f);

#include <signal.h>

/* The signals memsim run passes on to the command (INT, TERM, HUP,
 * QUIT) and, during --analyze, to the analyzer. */
#define RUN_NSIGNALS 4
extern const int run_signals[RUN_NSIGNALS];
/* Catch them with fn, without SA_RESTART (sleeps and reads return
 * EINTR); a signal ignored when memsim run started (nohup, a background
 * job of a shell) stays ignored.  found gets the dispositions that were,
 * for run_signals_restore. */
void run_signals_catch(void (*fn)(int), struct sigaction found[RUN_NSIGNALS]);
void run_signals_restore(const struct sigaction found[RUN_NSIGNALS]);

#endif
