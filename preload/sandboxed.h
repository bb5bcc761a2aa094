/*
 * sandboxed: the process's id and a short wait, through the calls a
 * seccomp sandbox allows (ipc/seccomp.h's judge): getpid and nanosleep
 * where allowed, the traced pid and a spin where not.  A leaf: the
 * process's life (preload/process*.c) uses it, and sandbox.c, which
 * calls into the signals and the end, is not on its path.
 */
#ifndef MEMSIM_PRELOAD_SANDBOXED_H
#define MEMSIM_PRELOAD_SANDBOXED_H

#include <stdint.h>
#include <sys/types.h>

/* The process's id, or the traced pid when getpid is forbidden (a vfork
 * child then passes for its parent). */
pid_t sandbox_getpid(void);

/* About ns nanoseconds: nanosleep where allowed, a spin otherwise. */
void sandbox_nap(uint64_t ns);

struct region_s;
/* An image exec'd with the TSC faulting (PR_SET_TSC before the exec),
 * or a fork's child of a process that turned it off: every thread takes
 * its time from the recorder (ipc/clock.h: clock_feed_all), region r's
 * once it is live; with r NULL, at the start, before the first reading
 * of a clock, from none yet (prctl(PR_GET_TSC) tells). */
void sandbox_tsc_at_start(struct region_s *r);

#endif
