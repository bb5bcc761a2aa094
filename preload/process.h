/*
 * process: the traced process's life as memsim sees it — start-up, the
 * order of the exit paths, fork, exec, posix_spawn, copies made by
 * clone() without fork, and the environment its children get.
 *
 * The state the hooks test on every call lives in one page marked
 * MADV_WIPEONFORK: in any copy of the process that no fork handler of
 * glibc's set up (clone() without CLONE_VM, a raw fork system call) it
 * reads as zeros, so such a copy never posts into its parent's ring;
 * the first hook it runs starts a trace of its own (process_clone_copy).
 * glibc's fork runs memsim's handlers, which fill the page for the child.
 *
 * Exit: the end record goes out when both memsim's on_exit handler
 * (which knows the status) and its destructor have run — the destructor
 * runs in _dl_fini, after the program's libraries' destructors, so their
 * frees are in the trace.  _exit, _Exit, quick_exit (an at_quick_exit
 * handler registered first, so it runs last), a fatal signal
 * (preload/signals.h) and the recorder's own watch of the process (for
 * SIGKILL and the rest) end it otherwise.
 */
#ifndef MEMSIM_PRELOAD_PROCESS_H
#define MEMSIM_PRELOAD_PROCESS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <sys/types.h>

#if defined(__has_include)
#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>
#define MEMSIM_HAVE_SINGLE_THREADED 1
#endif
#endif

#include "ipc/config.h"
#include "ipc/msg.h"

struct region_s;

typedef struct proc_s {
    _Atomic bool active;      /* this process's events are posted */
    pid_t pid;                /* whose fields these are; 0 in an unprepared copy */
    struct region_s *region;  /* its region of the arena */
    void *arena;
} proc_t;

/* The page (a zeroed static one until tracing starts). */
extern proc_t *memsim_proc;
/* The pid tracing was last started for, in ordinary memory: a copy of
 * the process keeps it while its page reads as zeros. */
extern pid_t memsim_traced_pid;
/* MEMSIM_MMAP: the program's own mappings are recorded. */
extern bool memsim_track_maps;

/* A clone() through memsim's hook shared the address space (CLONE_VM
 * without CLONE_VFORK): a thread glibc may not know of. */
extern _Atomic bool memsim_shared_clone;

/* The process has one thread, the caller: glibc says so (its malloc
 * skips its locks on the same word; pthread_create clears it before the
 * thread exists) and no clone through memsim shared the memory.  Only
 * the caller could make a second thread, so the answer holds for as
 * long as the caller does not.  false where glibc does not tell. */
static inline bool proc_one_thread(void)
{
#ifdef MEMSIM_HAVE_SINGLE_THREADED
    return __libc_single_threaded &&
           !atomic_load_explicit(&memsim_shared_clone, memory_order_relaxed);
#else
    return false;
#endif
}

static inline bool proc_tracing(void)
{
    return atomic_load_explicit(&memsim_proc->active, memory_order_relaxed);
}

/* A copy of a traced process that no fork handler prepared. */
static inline bool proc_is_clone_copy(void)
{
    return __builtin_expect(memsim_traced_pid != 0, 0) && memsim_proc->pid == 0;
}

/* Start this copy's own trace (or say in one line why it stays untraced). */
void process_clone_copy(void);

/* The end of this process's trace: reason, status (or -1), signal (or 0).
 * Waits for the recorder to write it. */
void process_end(msg_end_t reason, int status, int sig);
/* The same for an exit the process makes by system call nr (exit_group,
 * or exit from its only thread), unless a seccomp sandbox forbids that
 * call: the kernel then kills the process, and its recorder sees it go. */
void process_end_by(long nr, msg_end_t reason, int status);

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

/* The ring closed under a post: its recorder is gone.  Tracing stops
 * (what the process does from now on is recorded nowhere) and the
 * exit's "may be incomplete" line is kept for the end.  On memsim's
 * stack, inside a post: nothing is unmapped here. */
void process_recorder_gone(void);
/* After process_recorder_gone, from a hook outside any post: in a
 * process of one thread, the arena and the tables are given back
 * (preload/release.h). */
void process_release_stopped(void);

/* fork() returned pid in the parent (-1: it failed): the fork record. */
void process_forked(pid_t pid);

/* quick_exit(status) is about to run the at_quick_exit handlers. */
void process_quick_exit(int status);

#endif
