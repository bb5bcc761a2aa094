/*
 * process_fork: fork and clone copies.  See process_fork.h.
 */
#include "preload/process_fork.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "ipc/arena.h"
#include "ipc/clock.h"
#include "preload/guard.h"
#include "preload/modules.h"
#include "ipc/msg.h"
#include "preload/process.h"
#include "preload/process_begin.h"
#include "preload/process_end.h"
#include "ipc/ring.h"
#include "preload/sandboxed.h"
#include "preload/say.h"
#include "ipc/seccomp.h"
#include "preload/stacks.h"
#include "preload/thread.h"

/* Per thread: glibc runs the fork handlers of several threads' forks at
 * once (it drops its lock around each handler), and the child is a copy
 * of the thread that forked, whose values it reads. */
static __thread proc_t forking __attribute__((tls_model("initial-exec"))); /* the parent's page
                                                                             as it was */
static __thread region_t *fork_region __attribute__((tls_model("initial-exec"))); /* the child's,
                                                                      reserved before the fork */

/* Before fork (any fork: glibc's own for daemon() and forkpty too; maybe
 * in a signal handler: nothing here locks). */
static void atfork_prepare(void)
{
    forking = *memsim_proc;
    fork_region = NULL;
    if (!proc_tracing() || sandbox_getpid() != forking.pid)
        return;
    GUARD_SCOPE;
    region_t *r = forking.region;
    /* A fork from a signal handler that interrupted one of this thread's
     * posts: the recorder stops at that post until the handler returns,
     * which may wait for the child (waitpid).  The child then gets a
     * recorder of its own rather than one the parent's would fork. */
    if (process_cfg.trace_children && !ring_posting())
        fork_region = arena_reserve(forking.arena);
    /* The recorder forks itself here, in the ring's order: the child's
     * recorder starts from the live map and the device as of now. */
    ring_slot_t m = {.kind = MSG_FORK,
                     .tid = thread_tid(),
                     .t = clock_ticks(),
                     .a = fork_region ? fork_region->index : MSG_NO_REGION};
    if (!ring_post(r, &m, NULL, 0, RING_SYNC) && fork_region) {
        arena_release(forking.arena, fork_region, true); /* nobody will take it */
        fork_region = NULL;
    }
}

/* A fork that failed with EAGAIN under a process limit (RLIMIT_NPROC):
 * the tree's recorder is one of the user's processes it counts, so the
 * limit may have been reached because of it.  Said once.  Its calls are
 * asked of a seccomp sandbox first (seccomp_call). */
static void say_nproc(void)
{
    static _Atomic bool said;
    struct rlimit rl;
    if (seccomp_call(SYS_getuid, 0, 0, 0, 0, 0, 0) <= 0 || /* root (no limit), or forbidden */
        seccomp_call(SYS_prlimit64, 0, RLIMIT_NPROC, 0, (long)&rl, 0, 0) ||
        rl.rlim_cur == RLIM_INFINITY || atomic_exchange(&said, true))
        return;
    char line[200];
    snprintf(line, sizeof line,
             "memsim: fork failed (EAGAIN) under the process limit (ulimit -u %llu), which "
             "counts memsim's recorder as one of this user's processes",
             (unsigned long long)rl.rlim_cur);
    say(line);
}

void process_forked(pid_t pid)
{
    int e = errno;
    if (!proc_tracing() || sandbox_getpid() != memsim_proc->pid)
        return;
    GUARD_SCOPE;
    if (pid < 0 && e == EAGAIN)
        say_nproc();
    region_t *child = fork_region;
    if (pid < 0 && child) {
        atomic_store(&child->state, REGION_FORK_FAILED);
        region_wake(&child->pid_futex);
    }
    ring_slot_t m = {.kind = MSG_FORK_DONE,
                     .tid = thread_tid(),
                     .t = clock_ticks(),
                     .a = child ? child->index : MSG_NO_REGION,
                     .b = pid > 0 ? (uint64_t)pid : 0};
    ring_post(memsim_proc->region, &m, NULL, 0, 0);
}

static void atfork_child(void)
{
    pid_t pid = process_self_pid();
    proc_t *p = memsim_proc; /* wiped by the kernel, if it is the page */
    process_end_forget();    /* the child's end is its own */
    p->pid = pid;
    p->arena = forking.arena;
    p->region = NULL;
    atomic_store(&p->active, false);
    memsim_traced_pid = pid;
    thread_forget_tid();
    ring_forget_thread();
    if (!forking.active || forking.pid == 0) {
        /* The parent was not traced; or it was, and stopped (its recorder
         * gone) with threads that kept it from giving its arena back:
         * this copy has one thread. */
        if (forking.pid != 0 && forking.arena)
            process_stop(forking.arena);
        return;
    }
    GUARD_SCOPE;
    stacks_reset(); /* the child's trace numbers its stacks afresh */
    if (!process_cfg.trace_children) {
        process_stop(forking.arena);
        return;
    }
    if (fork_region) {
        /* The parent's recorder forked a recorder for this region, with
         * its state: it waits for our pid. */
        process_publish(forking.arena, fork_region, forking.pid, REGION_INHERITED, NULL);
        p->region = fork_region;
        sandbox_tsc_at_start(fork_region); /* a parent without the TSC: nor the child */
        memsim_traced_pid = pid;
        atomic_store(&p->active, true);
        return;
    }
    /* No region left in the arena: a recorder of our own, without the
     * parent's live blocks (frees of them are unknown to it).  Not in a
     * seccomp sandbox, whose filters bind the child too: starting one
     * makes calls the program never makes (clone, memfd_create, ...). */
    if (seccomp_active()) {
        process_stop(forking.arena);
        say("memsim: a child forked in a seccomp sandbox found no free region: it is not traced");
        return;
    }
    char err[PATH_MAX + 256];
    modules_reset();
    if (process_begin(false, forking.pid,
                      "forked without a free region: blocks allocated before the fork are unknown",
                      err, sizeof err)) {
        process_stop(forking.arena);
        say(err);
    }
}

void process_clone_copy(void)
{
    GUARD_SCOPE;
    pid_t parent = memsim_traced_pid;
    memsim_proc->pid = process_self_pid(); /* once: the next hook sees a prepared page */
    memsim_traced_pid = memsim_proc->pid;
    thread_forget_tid();
    ring_forget_thread();
    stacks_reset();
    modules_reset();
    if (seccomp_active()) { /* as a fork's child without a region */
        say("memsim: a copy made by clone() in a seccomp sandbox is not traced");
        return;
    }
    char why[128], err[PATH_MAX + 256];
    snprintf(why, sizeof why,
             "a copy of process %ld made by clone() without fork: blocks allocated before the "
             "copy are unknown",
             (long)parent);
    if (process_begin(false, parent, why, err, sizeof err)) {
        char line[PATH_MAX + 400];
        snprintf(line, sizeof line,
                 "memsim: process %ld, made by clone() without fork, is not traced: %s",
                 (long)memsim_proc->pid, err);
        say(line);
    }
}

void process_fork_install(void)
{
    pthread_atfork(atfork_prepare, NULL, atfork_child);
}
