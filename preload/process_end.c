/*
 * process_end: the end of this process's trace.  See process_end.h.
 */
#include "preload/process_end.h"

#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>

#include "ipc/arena.h"
#include "ipc/clock.h"
#include "preload/guard.h"
#include "preload/process.h"
#include "ipc/ring.h"
#include "preload/sandboxed.h"
#include "preload/say.h"
#include "ipc/seccomp.h"
#include "preload/thread.h"

#define END_STALL_NS 5000000000ull /* exit waits while the recorder makes progress */
#define END_UNSURE_NS 100000000ull /* ...less when it may be stuck at our own claim */

/* Why records are missing, in words (no strerror: this may run in a
 * signal handler). */
static const char *write_error(int e)
{
    switch (e) {
    case 0:
        return "events were lost";
    case ENOSPC:
        return "no space left on device";
    case EDQUOT:
        return "disk quota exceeded";
    case EFBIG:
        return "the file size limit, ulimit -f, is reached";
    case ENOMEM:
        return "out of memory";
    default:
        return "the trace file could not be written";
    }
}

static void warn_incomplete(region_t *r, bool acked)
{
    char line[PATH_MAX + 200];
    uint64_t dropped = atomic_load(&r->end_dropped);
    if (!acked)
        snprintf(line, sizeof line,
                 "memsim: %s may be incomplete: its recorder did not finish with it",
                 r->trace_path);
    else if (dropped)
        snprintf(line, sizeof line,
                 "memsim: %s is incomplete: %llu record%s could not be written (%s)", r->trace_path,
                 (unsigned long long)dropped, dropped == 1 ? "" : "s", write_error(r->write_errno));
    else
        return;
    say(line);
}

/* "memsim: TRACE: WHO ran out of memory for ITS TABLE: N events were
 * recorded without their WHAT", when n is not 0. */
static void say_without(const region_t *r, uint64_t n, const char *ran_out, const char *what)
{
    if (!n)
        return;
    char line[PATH_MAX + 200];
    snprintf(line, sizeof line, "memsim: %s: %s: %llu event%s recorded without %s %s",
             r->trace_path, ran_out, (unsigned long long)n, n == 1 ? " was" : "s were",
             n == 1 ? "its" : "their", what);
    say(line);
}

/* Memory that ran out on the way, each in one line: the recorder's for
 * some live blocks (its samples' live figures leave them out; the heap
 * records are whole) and for some threads (their events are recorded
 * as an unknown thread's), the process's own for some stacks (those
 * events are recorded without one). */
static void warn_short_of_memory(region_t *r)
{
    uint64_t n = atomic_load(&r->end_untracked);
    if (n) {
        char line[PATH_MAX + 200];
        snprintf(line, sizeof line,
                 "memsim: %s: the recorder ran out of memory for its live-block map: %llu block%s "
                 "untracked, so its samples undercount the live heap (the heap records are whole)",
                 r->trace_path, (unsigned long long)n, n == 1 ? " was" : "s were");
        say(line);
    }
    say_without(r, atomic_load(&r->end_threadless),
                "the recorder ran out of memory for its thread table", "thread");
    say_without(r, atomic_load(&r->stackless),
                "memsim ran out of memory for its stack table in the process", "stack");
}

/* The thread that posts the end; 0: none yet.  Another that comes to the
 * end meanwhile (a second SIGTERM, handled on another thread) posts no
 * second end, which the recorder, done with the first, would never
 * acknowledge (and the program would print "may be incomplete"): it
 * settles a post of its own the signal cut, waits for the first end to
 * be written, then goes on to end as it would natively. */
static _Atomic pid_t ending_tid;

static void wait_for_end(proc_t *p)
{
    uint64_t start = clock_ns();
    while (atomic_load(&p->active) && clock_ns() - start < END_STALL_NS + END_UNSURE_NS)
        sandbox_nap(1000000);
}

void process_end_forget(void)
{
    atomic_store(&ending_tid, 0);
}

void process_end(msg_end_t reason, int status, int sig)
{
    proc_t *p = memsim_proc;
    if (process_gone_at_end())
        return;
    if (!proc_tracing() || sandbox_getpid() != p->pid)
        return; /* a vfork child runs on its parent's memory: not its trace */
    pid_t none = 0, me = thread_tid();
    if (!atomic_compare_exchange_strong(&ending_tid, &none, me)) {
        if (none != me) { /* not the same thread again (a handler inside its own end) */
            /* A post of ours this signal cut is a hole the first end's
             * recorder would wait at: publish it first. */
            if (ring_settle(p->region))
                atomic_fetch_add(&p->region->interrupted, 1);
            wait_for_end(p);
        }
        return;
    }
    int saved = errno;
    GUARD_SCOPE;
    region_t *r = p->region;
    /* A signal may have interrupted this thread between the claim and the
     * publish of a post: nobody else will publish it.  If it cannot tell
     * whether it had claimed, the recorder may be stuck at a hole of ours
     * until the process is gone: then it finishes the trace on its own. */
    bool unsure = ring_settle(r) != 0;
    if (unsure) /* the event of a call that never returns: not a lost record */
        atomic_fetch_add(&r->interrupted, 1);
    ring_slot_t m = {.kind = MSG_END,
                     .tid = thread_tid(),
                     .t = clock_ticks(),
                     .a = (uint64_t)reason,
                     .b = (uint64_t)(int64_t)status,
                     .c = (uint64_t)(sig > 0 ? sig : 0)};
    uint32_t cut = atomic_load(&r->interrupted);
    uint64_t end = ring_post(r, &m, NULL, 0, RING_SYNC);
    /* Waited for in slices: another thread's handler (a second signal)
     * may cut a post of its own meanwhile, whose claim, if it took one,
     * is a hole before the end that no ack passes while the process
     * lives.  Then it is unsure too: the recorder finishes the trace once
     * the process is gone, and no "may be incomplete" is owed. */
    bool acked = false;
    for (uint64_t waited = 0; end && !acked;) {
        uint64_t slice = unsure                                  ? END_UNSURE_NS
                         : END_UNSURE_NS < END_STALL_NS - waited ? END_UNSURE_NS
                                                                 : END_STALL_NS - waited;
        acked = ring_wait_acked(r, end, slice) == 0;
        waited += slice;
        if (!unsure && atomic_load(&r->interrupted) != cut)
            unsure = true;
        else if (unsure || waited >= END_STALL_NS)
            break;
    }
    atomic_store(&p->active, false);
    if (atomic_load(&r->rec_state) == REC_FAILED) /* a joined recorder could not open it */
        say(r->error);
    else if (acked || !unsure)
        warn_incomplete(r, acked);
    if (acked)
        warn_short_of_memory(r);
    errno = saved;
}

void process_end_by(long nr, msg_end_t reason, int status)
{
    /* A sandbox that forbids the exit kills the process in it: the
     * recorder sees it vanish, as natively it dies. */
    if (seccomp_allows(nr, status, 0, 0, 0, 0, 0))
        process_end(reason, status, 0);
}

static _Atomic int exit_steps;
static int exit_status = -1;

static void exit_step(void)
{
    if (atomic_fetch_add(&exit_steps, 1) == 1)
        process_end_by(SYS_exit_group, END_EXIT, exit_status);
}

__attribute__((destructor(101))) static void memsim_stop(void)
{
    exit_step();
}

static void on_exit_status(int status, void *arg)
{
    (void)arg;
    exit_status = status & 0xff;
    exit_step();
}

static int quick_status = -1;

void process_quick_exit(int status)
{
    quick_status = status & 0xff;
}

static void on_quick_exit(void)
{
    process_end_by(SYS_exit_group, END_QUICK_EXIT, quick_status);
}

void process_end_install(void)
{
    on_exit(on_exit_status, NULL);
    at_quick_exit(on_quick_exit);
}
