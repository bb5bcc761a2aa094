/*
 * signals: memsim's handler for the signals that end a process, and what
 * the program sees of the dispositions and alternate stacks.
 *
 * For each signal whose default action ends the process, while the
 * program leaves it at SIG_DFL, memsim's handler stands in its place: it
 * writes the end record (preload/process.h) and then lets the signal
 * take the process as SIG_DFL would (a fault re-executes and dies of it;
 * any other signal is raised again).  Every way the program can set
 * SIG_DFL back (sigaction, signal, bsd_signal, sysv_signal, sigset) puts
 * memsim's handler back, hidden: a crash reporter that restores the
 * default and re-raises (Python's faulthandler, coreutils timeout) still
 * leaves a complete trace.  Every way the program reads a disposition
 * returns exactly what it set (the kernel's own answer for the SIG_DFL
 * it asked for, flags and mask included), and a handler or SIG_IGN the
 * program installs replaces memsim's.
 *
 * The handler runs with every signal blocked (a second SIGTERM waits
 * instead of killing the process before the end record) and on the
 * thread's alternate stack (preload/thread.h), so a stack overflow ends
 * with its end record too.  It takes no lock and allocates nothing.
 */
#ifndef MEMSIM_PRELOAD_SIGNALS_H
#define MEMSIM_PRELOAD_SIGNALS_H

#include <signal.h>
#include <stdbool.h>

/* At start: memsim's handler for every fatal signal left at SIG_DFL. */
void signals_install(void);

/* A seccomp sandbox is about to forbid what the handler needs to end
 * the process as the signal would (preload/sandbox.h): every disposition
 * memsim stands in for goes back to the program's SIG_DFL, and memsim
 * stands in for none from now on (such an end is seen by the recorder).
 * False when they were withdrawn already.  signals_restore: the sandbox
 * did not come (its call failed): memsim stands in again. */
bool signals_withdraw(void);
void signals_restore(void);

/* The hooks' side of each call (preload/hooks.c forwards to these). */
int signals_sigaction(int sig, const struct sigaction *act, struct sigaction *old);
sighandler_t signals_set(sighandler_t (*call)(int, sighandler_t), int sig, sighandler_t h);
int signals_sigaltstack(const stack_t *ss, stack_t *old);

#endif
