/*
 * process_exec: exec, posix_spawn, and the environment a child gets.
 *
 * A child that keeps libmemsim.so in LD_PRELOAD gets memsim's variables
 * (MEMSIM_OUTPUT made absolute, MEMSIM_ROOT_PID, MEMSIM_AHEAD and
 * MEMSIM_ARENA, preload/process_begin.h) added to its environment, so
 * it writes beside its parent, joins the tree's recorder and keeps quiet
 * about what an ancestor said already.
 */
#ifndef MEMSIM_PRELOAD_PROCESS_EXEC_H
#define MEMSIM_PRELOAD_PROCESS_EXEC_H

#include <sys/types.h>

/* At start-up: the variables ("NAME=value", each NULL or "" for none)
 * children that will be traced get; they must outlive the process's
 * execs (static storage).  Until then children's environments are left
 * as they are. */
void process_exec_vars(char *output, char *root, char *ahead);

/* The exec family, through call (which performs the real exec with the
 * environment it is given): the exec record before, exec_failed after
 * if it returned. */
typedef int (*process_exec_fn)(void *ctx, char *const envp[]);
int process_exec(const char *path, char *const argv[], char *const envp[], process_exec_fn call,
                 void *ctx);

/* posix_spawn and posix_spawnp, through call: the spawn record after. */
typedef int (*process_spawn_fn)(void *ctx, pid_t *child, char *const envp[]);
int process_spawn(const char *path, char *const argv[], char *const envp[], pid_t *pid,
                  process_spawn_fn call, void *ctx);

#endif
