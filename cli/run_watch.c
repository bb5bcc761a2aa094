/*
 * run_watch: memsim run's polls, budgets and the end of the command's
 * group (see run_watch.h).
 */
#include "cli/run_watch.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/run_signals.h"
#include "lib/procfs.h"

double run_watch_since(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static double elapsed(const run_watch_t *w)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return run_watch_since(&w->start, &now);
}

/* The tree's RSS now: the command and every descendant still there.
 * *procs gets how many were read. */
static uint64_t tree_rss(run_watch_t *w, size_t *procs)
{
    size_t n = 0;
    for (;;) {
        if (procfs_descendants(w->pid, w->pids, w->cap, &n) != 0)
            n = 0;
        if (n <= w->cap)
            break;
        pid_t *more = realloc(w->pids, (n + RUN_PIDS_MIN) * sizeof *more);
        if (!more) {
            n = w->cap;
            break;
        }
        w->pids = more;
        w->cap = n + RUN_PIDS_MIN;
    }
    uint64_t sum = 0, rss;
    *procs = 0;
    if (procfs_read_rss(w->pid, &rss) == 0) {
        sum += rss;
        ++*procs;
    }
    for (size_t i = 0; i < n; i++) {
        if (procfs_read_rss(w->pids[i], &rss) == 0) {
            sum += rss;
            ++*procs;
        }
    }
    return sum;
}

static void sample(run_watch_t *w, double t, uint64_t rss, size_t procs)
{
    if (rss > w->peak)
        w->peak = rss;
    fprintf(w->rss, "{\"elapsed_s\": %.6f, \"tree_rss_bytes\": %" PRIu64 ", \"processes\": %zu}\n",
            t, rss, procs);
}

/* The budget exceeded at time t with tree RSS rss, or NULL.  As the
 * Python tool: wall first, each reached at >=. */
static const char *over_budget(const run_opts_t *o, double t, uint64_t rss)
{
    if (o->wall_s > 0 && t >= o->wall_s)
        return "wall_budget_exceeded";
    if (o->rss_mb > 0 && (double)rss >= o->rss_mb * RUN_MIB)
        return "rss_budget_exceeded";
    return NULL;
}

/* The command stopped (^Z reached its group, which holds the terminal):
 * take the terminal back and stop too, so the shell sees the job stop;
 * once continued, hand the terminal over again if it came back to us,
 * and continue the command's group. */
static void suspend(run_watch_t *w)
{
    if (!w->tty)
        return; /* a stop from elsewhere: whoever sent it continues it */
    run_signals_give_terminal(getpgrp());
    raise(SIGTSTP);
    if (run_signals_own_terminal())
        run_signals_give_terminal(w->pid);
    kill(-w->pid, SIGCONT);
}

/* Whether no process of the command's group is left. */
static bool group_gone(pid_t pgid)
{
    return kill(-pgid, 0) != 0 && errno == ESRCH;
}

void run_watch(const run_opts_t *o, run_watch_t *w)
{
    struct timespec next = w->start, now;
    bool reaped = false, killing = false;
    double deadline = 0;
    w->reason = "completed";
    for (;;) {
        next.tv_nsec += RUN_POLL_NS;
        if (next.tv_nsec >= 1000000000L) {
            next.tv_sec++;
            next.tv_nsec -= 1000000000L;
        }
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
            run_signals_forward(w->pid);
        run_signals_forward(w->pid);
        clock_gettime(CLOCK_MONOTONIC, &now);
        /* a period late (a stop): no catching up */
        if (run_watch_since(&next, &now) > RUN_POLL_S)
            next = now;
        double t = run_watch_since(&w->start, &now);

        if (!reaped) {
            int st;
            pid_t r = waitpid(w->pid, &st, WNOHANG | WUNTRACED);
            if (r == w->pid && WIFSTOPPED(st)) {
                suspend(w);
                continue;
            }
            if (r == w->pid) {
                reaped = true;
                w->status = st;
                w->wall_s = elapsed(w);
            }
        }
        if (reaped && (!killing || group_gone(w->pid)))
            return;
        if (killing && t >= deadline) {
            kill(-w->pid, SIGKILL);
            if (!reaped) {
                while (waitpid(w->pid, &w->status, 0) < 0 && errno == EINTR)
                    ;
                w->wall_s = elapsed(w);
            }
            return;
        }
        if (reaped)
            continue; /* the leader is gone; waiting for the rest of its group */

        size_t procs;
        uint64_t rss = tree_rss(w, &procs);
        sample(w, t, rss, procs);
        const char *why = killing ? NULL : over_budget(o, t, rss);
        if (why) {
            w->reason = why;
            killing = true;
            deadline = t + RUN_GRACE_S;
            kill(-w->pid, SIGTERM);
        }
    }
}
