/*
 * sandbox: entering a seccomp sandbox, and what memsim goes without in
 * it.  See sandbox.h.
 */
#include "preload/sandbox.h"
#include "preload/sandboxed.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>

#include "ipc/arena.h"
#include "ipc/clock.h"
#include "preload/guard.h"
#include "ipc/msg.h"
#include "preload/process.h"
#include "ipc/ring.h"
#include "preload/signals.h"
#include "preload/thread.h"
#include "preload/unwind.h"

#define P 4096L /* a pointer, for a judgement: no filter reads what it points at */


/* ---- what memsim goes without -------------------------------------------------------- */

static bool ok(long nr, long a0, long a1, long a2, long a3)
{
    return seccomp_allows(nr, a0, a1, a2, a3, 0, 0);
}

/* Each of memsim's calls, with the arguments it passes, judged on the
 * calling thread. */
static unsigned without_now(void)
{
    if (!seccomp_active())
        return 0;
    unsigned w = 0;
    if (!ok(SYS_sigaltstack, 0, P, 0, 0) || !ok(SYS_sigaltstack, P, 0, 0, 0))
        w |= SECCOMP_NO_ALTSTACK;
    if (!ok(SYS_mmap, 0, P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS))
        w |= SECCOMP_NO_MEMORY;
    if (!ok(SYS_futex, P, FUTEX_WAKE, INT_MAX, 0) || !ok(SYS_futex, P, FUTEX_WAIT, 0, P))
        w |= SECCOMP_NO_WAKE;
    /* The handler's way out: the default action back, the signal
     * unblocked and raised again (glibc's raise blocks every signal and
     * puts the mask back, and asks gettid and getpid). */
    if (!ok(SYS_rt_sigaction, SIGSEGV, P, 0, 8) || !ok(SYS_rt_sigprocmask, SIG_UNBLOCK, P, 0, 8) ||
        !ok(SYS_rt_sigprocmask, SIG_BLOCK, P, P, 8) ||
        !ok(SYS_rt_sigprocmask, SIG_SETMASK, P, 0, 8) || !ok(SYS_gettid, 0, 0, 0, 0) ||
        !ok(SYS_getpid, 0, 0, 0, 0) || !ok(SYS_tgkill, 1, 1, SIGTERM, 0))
        w |= SECCOMP_NO_SIGNALS;
    if (!ok(SYS_rt_sigprocmask, SIG_SETMASK, P, P, 8) || !ok(SYS_mincore, P, P, P, 0) ||
        !ok(SYS_process_vm_readv, 1, P, 1, P) || !ok(SYS_getpid, 0, 0, 0, 0))
        w |= SECCOMP_NO_UNWINDER;
    if (!ok(SYS_getrusage, RUSAGE_CHILDREN, P, 0, 0))
        w |= SECCOMP_NO_RUSAGE;
    if (!ok(SYS_gettid, 0, 0, 0, 0))
        w |= SECCOMP_NO_TID;
    if (!clock_fed_ && !clock_fed_all_ && !clock_tsc_ &&
        !ok(SYS_clock_gettime, CLOCK_MONOTONIC, P, 0, 0))
        w |= SECCOMP_NO_CLOCK;
    if (!sandbox_may_lock())
        w |= SECCOMP_NO_LOCKS;
    return w;
}

unsigned sandbox_without(void)
{
    if (!seccomp_active())
        return 0;
    if (seccomp_strict_)
        return without_now(); /* rare: a strict thread's own */
    return atomic_load_explicit(&seccomp_without_, memory_order_relaxed);
}

bool sandbox_may_lock(void)
{
    if (!seccomp_active() || proc_one_thread())
        return true;
    return ok(SYS_futex, P, FUTEX_WAIT_PRIVATE, 0, 0) && ok(SYS_futex, P, FUTEX_WAKE_PRIVATE, 1, 0);
}

/* ---- the TSC turned off ---------------------------------------------------------------- */

long sandbox_set_tsc(unsigned long how, sandbox_real_fn call, void *ctx)
{
    bool off = how == PR_TSC_SIGSEGV && proc_tracing();
    const clock_feed_t *was = clock_fed_all_;
    if (off)
        clock_feed_all(&memsim_proc->region->beat, true);
    int saved = errno;
    errno = 0;
    long rc = call(ctx);
    int e = errno;
    if (rc != 0 && off)
        clock_feed_all(was, false);
    else if (rc == 0 && how == PR_TSC_ENABLE)
        clock_feed_all(NULL, false);
    errno = e ? e : saved;
    return rc;
}

/* ---- entering a sandbox ----------------------------------------------------------------- */

static void post(unsigned mode, unsigned long flags, unsigned without, bool stops)
{
    ring_slot_t m = {.kind = MSG_SANDBOX,
                     .tid = thread_tid(),
                     .t = clock_ticks(),
                     .a = mode,
                     .b = (uint64_t)flags | (stops ? MSG_SANDBOX_STOPS : 0),
                     .c = without,
                     .d = seccomp_held()};
    ring_post(memsim_proc->region, &m, NULL, 0, 0);
}

long sandbox_enter(unsigned op, unsigned long flags, const void *prog, sandbox_real_fn call,
                   void *ctx)
{
    bool strict = op == SECCOMP_SET_MODE_STRICT;
    if ((!strict && op != SECCOMP_SET_MODE_FILTER) || guard_held() || !proc_tracing())
        return call(ctx);
    pid_t self = sandbox_getpid();
    if (self != memsim_proc->pid)
        return call(ctx); /* a vfork child: its parent's memory, not its trace */
    GUARD_SCOPE;
    unwind_need(); /* the loader's calls before the filter judges them */
    /* The thread as the sandbox will find it. */
    thread_area();
    seccomp_learn_tid(thread_tid());
    /* Judged by from here: the real call binds this thread (and with
     * TSYNC every thread) the moment it returns.  A filter memsim cannot
     * read through the kernel yet (an earlier one forbids
     * process_vm_readv) is read once the kernel has taken it: until then
     * every call of memsim's is forbidden. */
    bool was_opaque = seccomp_opaque();
    bool later = !strict && !seccomp_allows(SYS_process_vm_readv, self, P, 1, P, 1, 0);
    int h = -1;
    if (strict) {
        seccomp_set_strict(true);
        /* Strict mode makes the TSC fault in this thread, and the vDSO's
         * clock_gettime with it: its time is the recorder's from here. */
        clock_feed(&memsim_proc->region->beat, true);
    } else if (later)
        seccomp_set_opaque(true);
    else
        h = seccomp_hold(self, prog, false);
    unsigned without = without_now();
    if (!strict)
        atomic_store(&seccomp_without_, without);
    /* While rt_sigaction is still allowed (libc's: it is not judged). */
    bool withdrawn = (without & SECCOMP_NO_SIGNALS) && signals_withdraw();
    int saved = errno;
    errno = 0;
    long rc = call(ctx);
    int e = errno;
    bool done = rc == 0 || (!strict && (flags & SECCOMP_FILTER_FLAG_NEW_LISTENER) && rc > 0);
    if (!done) {
        /* Nothing changed in the kernel: nor here. */
        if (strict) {
            seccomp_set_strict(false);
            clock_feed(NULL, false);
        }
        seccomp_void(h);
        seccomp_set_opaque(was_opaque);
        atomic_store(&seccomp_without_, without_now());
        if (withdrawn)
            signals_restore();
        errno = e;
        return rc;
    }
    if (later) {
        seccomp_set_opaque(was_opaque);
        seccomp_hold(self, prog, true);
        without = without_now();
        atomic_store(&seccomp_without_, without);
        if (withdrawn && !(without & SECCOMP_NO_SIGNALS))
            signals_restore(); /* its calls are allowed after all */
    }
    bool stops = (without & SECCOMP_NO_CLOCK) != 0;
    post(strict ? SANDBOX_MODE_STRICT : SANDBOX_MODE_FILTER, strict ? 0 : flags, without, stops);
    if (stops)
        atomic_store(&memsim_proc->active, false);
    errno = e ? e : saved;
    return rc;
}
