/*
 * sigdisp: the signal dispositions a program sets are the ones it reads.
 *
 * Sets SIGUSR1 with sigset(SIG_IGN), SIGUSR2 with sysv_signal(SIG_IGN),
 * SIGHUP with bsd_signal(SIG_IGN), SIGTERM with signal(SIG_IGN) and
 * SIGINT with sigaction({SIG_DFL, SA_RESTART, mask {SIGQUIT}}); leaves
 * SIGQUIT and SIGPIPE alone.  Then reads each back with sigaction(sig,
 * NULL, &old) and prints "NAME: handler=DFL|IGN|other flags=0xN
 * mask_quit=0|1" (flags without SA_RESTORER, which libc adds), and with
 * the return value of signal(sig, SIG_IGN): "NAME: signal=DFL|IGN|other".
 * The same lines with and without anything preloaded.
 */
#include <signal.h>
#include <stdio.h>

#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000
#endif

/* In glibc, not declared by <signal.h> for POSIX 2008 and later. */
extern __sighandler_t bsd_signal(int, __sighandler_t);

static const char *kind(void (*h)(int))
{
    return h == SIG_DFL ? "DFL" : h == SIG_IGN ? "IGN" : "other";
}

int main(void)
{
    static const struct {
        int sig;
        const char *name;
    } sigs[] = {{SIGUSR1, "USR1"}, {SIGUSR2, "USR2"}, {SIGHUP, "HUP"},   {SIGTERM, "TERM"},
                {SIGINT, "INT"},   {SIGQUIT, "QUIT"}, {SIGPIPE, "PIPE"}};
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* sigset: still in use */
    sigset(SIGUSR1, SIG_IGN);
#pragma GCC diagnostic pop
    sysv_signal(SIGUSR2, SIG_IGN);
    bsd_signal(SIGHUP, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    struct sigaction sa = {.sa_handler = SIG_DFL, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGQUIT);
    if (sigaction(SIGINT, &sa, NULL))
        return 1;
    for (unsigned i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old;
        if (sigaction(sigs[i].sig, NULL, &old))
            return 1;
        printf("%s: handler=%s flags=0x%x mask_quit=%d\n", sigs[i].name, kind(old.sa_handler),
               (unsigned)old.sa_flags & ~(unsigned)SA_RESTORER,
               sigismember(&old.sa_mask, SIGQUIT));
    }
    for (unsigned i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        printf("%s: signal=%s\n", sigs[i].name, kind(signal(sigs[i].sig, SIG_IGN)));
    return 0;
}
