/*
 * run_start: memsim run's command forked and exec'd (see run_start.h).
 */
#include "cli/run_start.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/run_signals.h"

#define CMD RUN_CMD

/* In the child: own group, the terminal if handed over, signals as
 * memsim run found them, then exec.  On failure one line, errno down
 * errfd (close-on-exec: EOF tells the parent exec succeeded) and the
 * shells' status: 127 not found, 126 found but not executable. */
static void child_exec(char **argv, char **env, bool tty, const sigset_t *mask, int errfd)
{
    setpgid(0, 0);
    if (tty)
        run_signals_give_terminal(getpid());
    run_signals_release();
    sigprocmask(SIG_SETMASK, mask, NULL);
    execvpe(argv[0], argv, env);
    int e = errno;
    dprintf(STDERR_FILENO, "%s: cannot run %s: %s\n", CMD, argv[0], strerror(e));
    (void)!write(errfd, &e, sizeof e);
    _exit(e == ENOENT ? 127 : 126);
}

/* Fork and exec the command; w->pid, w->start, w->tty.  0; 1 when the
 * fork failed; 2 when exec failed (w->status then holds the child's). */
int run_start(const run_opts_t *o, char **env, run_watch_t *w)
{
    sigset_t block, old;
    sigemptyset(&block);
    for (size_t i = 0; i < RUN_NSIGNALS; i++)
        sigaddset(&block, run_signals[i]);
    /* Blocked across the fork: a signal then waits for the handlers (in
     * the parent) or for the default dispositions (in the child). */
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0) {
        fprintf(stderr, "%s: cannot start %s: pipe: %s\n", CMD, o->argv[0], strerror(errno));
        return 1;
    }
    sigprocmask(SIG_BLOCK, &block, &old);
    run_signals_hold();
    w->tty = run_signals_own_terminal();
    fflush(NULL);
    clock_gettime(CLOCK_MONOTONIC, &w->start);
    w->pid = fork();
    if (w->pid == 0) {
        close(pfd[0]);
        child_exec(o->argv, env, w->tty, &old, pfd[1]);
    }
    int fork_errno = errno;
    close(pfd[1]);
    if (w->pid < 0) {
        close(pfd[0]);
        run_signals_release();
        sigprocmask(SIG_SETMASK, &old, NULL);
        fprintf(stderr, "%s: cannot start %s: fork: %s\n", CMD, o->argv[0], strerror(fork_errno));
        return 1;
    }
    /* Also here: whichever of the two runs first, the group exists before
     * anything is sent to it (EACCES: the child has exec'd, and did it). */
    setpgid(w->pid, w->pid);
    if (w->tty)
        run_signals_give_terminal(w->pid);
    sigprocmask(SIG_SETMASK, &old, NULL);

    int e;
    ssize_t n;
    while ((n = read(pfd[0], &e, sizeof e)) < 0 && errno == EINTR)
        run_signals_forward(w->pid);
    close(pfd[0]);
    if (n != (ssize_t)sizeof e)
        return 0;
    while (waitpid(w->pid, &w->status, 0) < 0 && errno == EINTR)
        ;
    return 2;
}
