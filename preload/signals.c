/*
 * signals: fatal signals and what the program sees of them.  See
 * signals.h.
 */
#include "preload/signals.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/guard.h"
#include "preload/process.h"
#include "preload/process_end.h"
#include "preload/real.h"
#include "preload/thread.h"

#define NSIG_ 65

static const int fatal_signals[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGILL,  SIGABRT, SIGBUS,
                                    SIGFPE,  SIGUSR1, SIGSEGV, SIGUSR2, SIGPIPE, SIGALRM,
                                    SIGTERM, SIGXCPU, SIGXFSZ, SIGSYS,  SIGVTALRM};

/* What the program set for signal s while memsim's handler stands in
 * for it: the kernel's own record of the program's SIG_DFL. */
static struct sigaction view[NSIG_];
/* memsim stands in for no signal (signals_withdraw). */
static _Atomic bool withdrawn;

static bool is_fatal(int sig)
{
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++)
        if (fatal_signals[i] == sig)
            return true;
    return false;
}

static void fatal_handler(int sig, siginfo_t *info, void *uctx);

static bool is_ours(const struct sigaction *sa)
{
    return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == fatal_handler;
}

static bool is_default(const struct sigaction *sa)
{
    return !(sa->sa_flags & SA_SIGINFO) && sa->sa_handler == SIG_DFL;
}

/* The program's SIG_DFL for sig is in place: note the kernel's record of
 * it and put memsim's handler in its stead. */
static void stand_in(int sig)
{
    if (atomic_load(&withdrawn))
        return;
    struct sigaction now;
    if (REAL(sigaction)(sig, NULL, &now) || !is_default(&now))
        return;
    view[sig] = now;
    struct sigaction sa = {.sa_sigaction = fatal_handler, .sa_flags = SA_SIGINFO | SA_ONSTACK};
    sigfillset(&sa.sa_mask);
    REAL(sigaction)(sig, &sa, NULL);
}

void signals_install(void)
{
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++)
        stand_in(fatal_signals[i]);
}

bool signals_withdraw(void)
{
    if (atomic_exchange(&withdrawn, true))
        return false;
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++) {
        int sig = fatal_signals[i];
        struct sigaction now;
        if (REAL(sigaction)(sig, NULL, &now) == 0 && is_ours(&now))
            REAL(sigaction)(sig, &view[sig], NULL);
    }
    return true;
}

void signals_restore(void)
{
    atomic_store(&withdrawn, false);
    signals_install();
}

static void fatal_handler(int sig, siginfo_t *info, void *uctx)
{
    (void)uctx;
    int saved = errno;
    guard_forever(); /* this thread records nothing more */
    process_end(END_SIGNAL, -1, sig);
    struct sigaction dfl = view[sig];
    dfl.sa_flags &= ~SA_RESETHAND;
    REAL(sigaction)(sig, &dfl, NULL);
    errno = saved;
    /* A fault re-executes the faulting instruction and dies of it; any
     * other signal is sent again, now with its default action. */
    bool fault = (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE) && info &&
                 info->si_code > 0;
    if (!fault) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, sig);
        pthread_sigmask(SIG_UNBLOCK, &set, NULL);
        raise(sig);
    }
}

int signals_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (sig <= 0 || sig >= NSIG_ || !is_fatal(sig))
        return REAL(sigaction)(sig, act, old);
    struct sigaction now;
    if (old) {
        if (REAL(sigaction)(sig, NULL, &now))
            return -1;
        *old = is_ours(&now) ? view[sig] : now;
    }
    if (act) {
        if (REAL(sigaction)(sig, act, NULL))
            return -1;
        if (is_default(act) && proc_tracing())
            stand_in(sig);
    }
    return 0;
}

sighandler_t signals_set(sighandler_t (*call)(int, sighandler_t), int sig, sighandler_t h)
{
    if (!call) {
        errno = ENOSYS;
        return SIG_ERR;
    }
    if (sig <= 0 || sig >= NSIG_ || !is_fatal(sig))
        return call(sig, h);
    sighandler_t before = view[sig].sa_handler;
    sighandler_t rc = call(sig, h);
    if (rc == SIG_ERR)
        return rc;
    if ((void *)rc == (void *)fatal_handler)
        rc = before; /* the program's SIG_DFL, as it set it */
    if (h == SIG_DFL && proc_tracing())
        stand_in(sig);
    return rc;
}

int signals_sigaltstack(const stack_t *ss, stack_t *old)
{
    bool ours = thread_altstack_ours();
    stack_t now;
    if (old) {
        if (syscall(SYS_sigaltstack, NULL, &now))
            return -1;
        /* The program set none: it sees none, even while its handler runs
         * on memsim's. */
        *old = ours ? (stack_t){.ss_sp = NULL, .ss_size = 0, .ss_flags = SS_DISABLE} : now;
    }
    if (ss) {
        if (syscall(SYS_sigaltstack, ss, NULL))
            return -1;
        if (ours)
            thread_altstack_gone(ss->ss_flags & SS_DISABLE);
    }
    return 0;
}
