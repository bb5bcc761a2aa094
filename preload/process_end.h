/*
 * process_end: the end of this process's trace, and the order of the
 * exit paths.
 *
 * The end record goes out when both memsim's on_exit handler (which
 * knows the status) and its destructor have run — the destructor runs
 * in _dl_fini, after the program's libraries' destructors, so their
 * frees are in the trace.  _exit, _Exit, quick_exit (an at_quick_exit
 * handler registered first, so it runs last), a fatal signal
 * (preload/signals.h) and the recorder's own watch of the process (for
 * SIGKILL and the rest) end it otherwise.
 */
#ifndef MEMSIM_PRELOAD_PROCESS_END_H
#define MEMSIM_PRELOAD_PROCESS_END_H

#include "ipc/msg.h"

/* At start-up, once tracing is on: the on_exit and at_quick_exit
 * handlers that end the trace. */
void process_end_install(void);

/* The end of this process's trace: reason, status (or -1), signal (or 0).
 * Waits for the recorder to write it. */
void process_end(msg_end_t reason, int status, int sig);
/* The same for an exit the process makes by system call nr (exit_group,
 * or exit from its only thread), unless a seccomp sandbox forbids that
 * call: the kernel then kills the process, and its recorder sees it go. */
void process_end_by(long nr, msg_end_t reason, int status);

/* quick_exit(status) is about to run the at_quick_exit handlers. */
void process_quick_exit(int status);

/* In a fork's child: the end to come is its own, whichever thread of
 * the parent was ending. */
void process_end_forget(void);

#endif
