/*
 * run_signals: memsim run's forwarded signals and the terminal (see
 * run_signals.h).
 */
#include "cli/run_signals.h"

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <termios.h>
#include <unistd.h>

const int run_signals[RUN_NSIGNALS] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
static volatile sig_atomic_t run_pending[RUN_NSIGNALS];

static void on_signal(int sig)
{
    for (size_t i = 0; i < RUN_NSIGNALS; i++)
        if (run_signals[i] == sig)
            run_pending[i] = 1;
}

void run_signals_forward(pid_t pgid)
{
    for (size_t i = 0; i < RUN_NSIGNALS; i++) {
        if (run_pending[i]) {
            run_pending[i] = 0;
            kill(-pgid, run_signals[i]);
        }
    }
}

void run_signals_catch(void (*fn)(int), struct sigaction found[RUN_NSIGNALS])
{
    struct sigaction sa = {.sa_handler = fn};
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < RUN_NSIGNALS; i++) {
        sigaction(run_signals[i], NULL, &found[i]);
        if (found[i].sa_handler != SIG_IGN)
            sigaction(run_signals[i], &sa, NULL);
    }
}

void run_signals_restore(const struct sigaction found[RUN_NSIGNALS])
{
    for (size_t i = 0; i < RUN_NSIGNALS; i++)
        sigaction(run_signals[i], &found[i], NULL);
}

/* Catch the forwarded signals with on_signal, so that the loop forwards
 * them at once; the dispositions found go to run_found for
 * run_signals_release. */
static struct sigaction run_found[RUN_NSIGNALS];

void run_signals_hold(void) { run_signals_catch(on_signal, run_found); }

void run_signals_release(void) { run_signals_restore(run_found); }

/* Make pgid the terminal's foreground group.  A process outside the
 * foreground group gets SIGTTOU for that unless it ignores it. */
void run_signals_give_terminal(pid_t pgid)
{
    struct sigaction ign = {.sa_handler = SIG_IGN}, old;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGTTOU, &ign, &old);
    tcsetpgrp(STDIN_FILENO, pgid);
    sigaction(SIGTTOU, &old, NULL);
}

/* Whether stdin is a terminal whose foreground group is memsim run's. */
bool run_signals_own_terminal(void)
{
    return isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
}
