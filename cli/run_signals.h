/*
 * run_signals: the signals memsim run passes on, and the terminal.
 *
 * SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to memsim run go on to the
 * command's process group while it runs (the command then ends as it
 * would, and its traces get their end records), and to the analyzer
 * during --analyze (run_report.h).  The terminal's foreground group is
 * handed to the command and taken back.  Used by the run's start and
 * watch and by run_report; it calls nothing of theirs.
 */
#ifndef MEMSIM_CLI_RUN_SIGNALS_H
#define MEMSIM_CLI_RUN_SIGNALS_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

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

/* Catch them to be forwarded (run_signals_forward); the dispositions
 * found are kept for run_signals_release, which puts them back. */
void run_signals_hold(void);
void run_signals_release(void);
/* Send each signal caught since the last call on to process group pgid. */
void run_signals_forward(pid_t pgid);

/* Make pgid the terminal's foreground group (SIGTTOU ignored meanwhile:
 * a process outside the foreground group gets it for that). */
void run_signals_give_terminal(pid_t pgid);
/* Whether stdin is a terminal whose foreground group is memsim run's. */
bool run_signals_own_terminal(void);

#endif
