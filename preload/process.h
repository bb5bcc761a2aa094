/*
 * process: the state of the traced process that every hook reads — the
 * page, the traced pid, whether maps are tracked and whether a clone
 * shared the address space — and the two ways tracing stops (the
 * recorder gone, or tracing over for good).  The process's life is in
 * the files beside this one, which read and set this state and which
 * nothing here calls:
 *
 *   process_begin  a trace for this process: the settings read at
 *                  start-up, a recorder started or joined, a region
 *                  published
 *   process_start  start-up (the library's constructor)
 *   process_end    the end record and the order of the exit paths
 *   process_fork   fork and copies made by clone() without fork
 *   process_exec   exec, posix_spawn and the environment children get
 *
 * The state the hooks test on every call lives in one page marked
 * MADV_WIPEONFORK: in any copy of the process that no fork handler of
 * glibc's set up (clone() without CLONE_VM, a raw fork system call) it
 * reads as zeros, so such a copy never posts into its parent's ring;
 * the first hook it runs starts a trace of its own (process_clone_copy).
 * glibc's fork runs memsim's handlers, which fill the page for the child.
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

/* The page, from sysmem, marked to read as zeros in unprepared copies;
 * NULL without memory.  Once: later calls return the same page. */
proc_t *process_page(void);

/* The process's id.  In a sandbox that forbids getpid, the calling
 * thread's id, which is the process's where this is asked: a fork's
 * child and a clone's copy have that one thread. */
pid_t process_self_pid(void);

/* Tracing is over for good in this process: memsim_proc back to the
 * static page of zeros, the traced pid forgotten (no hook takes the
 * process for a copy to trace), the address space given back
 * (release_all(arena); arena may be NULL). */
void process_stop(void *arena);

/* The ring closed under a post: its recorder is gone.  Tracing stops
 * (what the process does from now on is recorded nowhere) and the
 * exit's "may be incomplete" line is kept for the end.  On memsim's
 * stack, inside a post: nothing is unmapped here. */
void process_recorder_gone(void);
/* After process_recorder_gone, from a hook outside any post: in a
 * process of one thread, the arena and the tables are given back
 * (preload/release.h). */
void process_release_stopped(void);
/* At the end of a process whose recorder went: says the line kept by
 * process_recorder_gone (once) and returns true; false otherwise. */
bool process_gone_at_end(void);

#endif
