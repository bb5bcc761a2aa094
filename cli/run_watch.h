/*
 * run_watch: memsim run's watch of its command: the tree's RSS polled
 * every 10 ms into DIR/rss.jsonl, the budgets checked, and when one is
 * exceeded the command's group ended (SIGTERM, then SIGKILL).
 */
#ifndef MEMSIM_CLI_RUN_WATCH_H
#define MEMSIM_CLI_RUN_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include "cli/run_opts.h"

#define RUN_POLL_NS 10000000L /* the tree's RSS is read every 10 ms */
#define RUN_POLL_S 0.01       /* the same, as resources.json reports it */
#define RUN_GRACE_S 2.0       /* SIGTERM to SIGKILL, when the group lingers */
#define RUN_MIB (1024.0 * 1024.0)
#define RUN_PIDS_MIN 256 /* first size of the descendants buffer */

/* The watch of one command; see run_watch(). */
typedef struct run_watch_s {
    pid_t pid;             /* the command's pid, also its process group */
    struct timespec start; /* CLOCK_MONOTONIC just before the fork */
    FILE *rss;             /* DIR/rss.jsonl */
    pid_t *pids;           /* descendants buffer, cap entries */
    size_t cap;
    uint64_t peak;      /* most tree RSS of any poll, bytes */
    const char *reason; /* "completed" or the budget exceeded */
    int status;         /* the command's wait status */
    double wall_s;      /* start to the command's end */
    bool tty;           /* the terminal was handed to the command's group */
} run_watch_t;

/* Seconds from a to b. */
double run_watch_since(const struct timespec *a, const struct timespec *b);

/* Poll every RUN_POLL_NS until the command w->pid ends: record the
 * tree's RSS, check o's budgets, and when one is exceeded, SIGTERM the
 * group, then SIGKILL it after RUN_GRACE_S unless it is gone by then.
 * The command is the only process reaped (descendants are their own
 * parents' business).  Sets w->reason, w->status, w->wall_s, w->peak. */
void run_watch(const run_opts_t *o, run_watch_t *w);

#endif
