/*
 * process_fork: fork, and copies of the process made by clone() without
 * fork.
 *
 * glibc's fork runs memsim's handlers: before it, the fork record (the
 * recorder forks itself there, in the ring's order) and a region of the
 * arena reserved for the child; in the child, its page filled and the
 * region published, so the child's recorder (a fork of the parent's)
 * starts from the parent's live blocks.  A copy no handler prepared
 * (preload/process.h) starts a trace of its own at its first hook.
 */
#ifndef MEMSIM_PRELOAD_PROCESS_FORK_H
#define MEMSIM_PRELOAD_PROCESS_FORK_H

#include <sys/types.h>

/* At start-up, once tracing is on: the fork handlers. */
void process_fork_install(void);

/* fork() returned pid in the parent (-1: it failed): the fork record. */
void process_forked(pid_t pid);

/* Start this copy's own trace (or say in one line why it stays untraced). */
void process_clone_copy(void);

#endif
