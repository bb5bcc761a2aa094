/*
 * poller: the thread inside the traced process that samples what the
 * operating system charges it (and its child tree) every
 * MEMSIM_SAMPLE_MS, writing `sample` records through the recorder.
 *
 * It is started with every signal blocked (so the program's signals go
 * to the program's threads), holds memsim's reentrancy guard for its
 * whole life (its own allocations are never recorded), is restarted in a
 * forked child, and is stopped and joined at exit.
 */
#ifndef MEMSIM_PRELOAD_POLLER_H
#define MEMSIM_PRELOAD_POLLER_H

/* The reentrancy guard of the calling thread, set for good: the poller
 * calls it first thing (hooks.c owns the guard). */
typedef void (*poller_guard_fn)(void);

/* Start sampling every interval_ms.  0, or -1 when the thread cannot be
 * created (the trace then has no samples). */
int poller_start(unsigned interval_ms, poller_guard_fn enter_guard);
/* Stop and join (at exit).  Safe when not started. */
void poller_stop(void);
/* In a forked child: the thread is gone; forget it (then start again). */
void poller_forget(void);

#endif
