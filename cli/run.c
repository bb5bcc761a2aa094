/*
 * run: `memsim run` — run a command under libmemsim.so and watch what the
 * operating system charges its process tree.
 *
 * The measurement is that of measure_command in the Python tool memsim
 * started from (its record's field names and reasons are kept): the
 * command runs in a new process group; the parent, which is not traced,
 * sums the RSS of the command and of its current descendants every 10
 * ms; a wall or RSS budget ends the whole group.  Everything is checked before anything is
 * made or started, so bad input leaves nothing behind.
 *
 * Output directory DIR:
 *   memsim.<exe>.<pid>.<n>.jsonl.zst   the traces (written by memsim-recorder; .jsonl with --no-compress)
 *   rss.jsonl                      one poll a line: elapsed_s, tree_rss_bytes, processes
 *   resources.json                 the run's record (run_results.c)
 *   report.txt, report.json        with --analyze: memsim-analyze's report (run_report.c)
 */
#include "cli/run.h"

#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/paths.h"
#include "cli/run_allocators.h"
#include "cli/run_env.h"
#include "cli/run_opts.h"
#include "cli/run_out.h"
#include "cli/run_report.h"
#include "cli/run_results.h"
#include "cli/run_signals.h"
#include "cli/run_start.h"
#include "cli/run_watch.h"
#include "cli/untraced.h"

#define CMD RUN_CMD

/* Start, watch and record the command: run_main's exit status. */
static int run_command(const run_opts_t *o, const run_paths_t *p, char **env, run_watch_t *w)
{
    int rc = run_start(o, env, w);
    if (rc == 1) {
        run_out_remove(p);
        return 1;
    }
    if (rc == 2) { /* exec failed: the child said why */
        if (w->tty && tcgetpgrp(STDIN_FILENO) == w->pid)
            run_signals_give_terminal(getpgrp());
        run_out_remove(p);
        return WIFEXITED(w->status) ? WEXITSTATUS(w->status) : 127;
    }
    run_watch(o, w);
    /* A command shorter than one poll shows no RSS in the polls: the
     * kernel's peak of the largest waited-for process is a floor. */
    struct rusage ru;
    if (getrusage(RUSAGE_CHILDREN, &ru) == 0 && (uint64_t)ru.ru_maxrss * 1024 > w->peak)
        w->peak = (uint64_t)ru.ru_maxrss * 1024;
    if (w->tty && tcgetpgrp(STDIN_FILENO) == w->pid)
        run_signals_give_terminal(getpgrp());
    run_signals_release();

    int err = fclose(w->rss);
    w->rss = NULL;
    if (err)
        fprintf(stderr, "%s: cannot write %s/rss.jsonl: %s\n", CMD, p->dir, strerror(errno));
    size_t ntraces = 0;
    run_results_wait(p->dir);
    json_t *alloc = o->alloc.on ? run_alloc_collect(CMD, &o->alloc, p->dir) : NULL;
    run_results_write(o, w, p->dir, &ntraces, alloc);
    run_results_say(o, w, p->dir, ntraces);
    if (!ntraces)
        untraced_explain(CMD, o->argv[0]);
    if (o->analyze && ntraces)
        run_report(CMD, p->self_dir, p->dir, &o->aopts);
    if (strcmp(w->reason, "completed") != 0)
        return RUN_BUDGET_EXIT;
    return WIFSIGNALED(w->status) ? 128 + WTERMSIG(w->status) : WEXITSTATUS(w->status);
}

int run_main(int argc, char **argv)
{
    run_opts_t o;
    static run_paths_t p;
    /* Everything checked before anything is made or started. */
    if (run_opts_parse(argc, argv, &o) || run_out_check(&o) ||
        paths_self_dir(CMD, p.self_dir, sizeof p.self_dir) ||
        paths_preload(CMD, p.self_dir, p.preload) || run_out_make(&o, &p))
        return 2;
    if (o.compare) {
        o.pass[o.npass] = NULL;
        int rc = run_alloc_compare(CMD, p.self_dir, p.dir, o.compare_list, o.compare_exe,
                                   (char *const *)o.pass, o.argv);
        run_report_opts_free(&o.aopts);
        return rc;
    }

    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/rss.jsonl", p.dir);
    size_t own = 0;
    run_watch_t w = {.cap = RUN_PIDS_MIN};
    char **env = run_env_make(&o, &p, &own);
    w.pids = malloc(w.cap * sizeof *w.pids);
    int rc = 1;
    if (!env || !w.pids) {
        fprintf(stderr, "%s: out of memory\n", CMD);
        run_out_remove(&p);
    } else if (!(w.rss = fopen(path, "we"))) {
        fprintf(stderr, "%s: cannot create %s: %s\n", CMD, path, strerror(errno));
        run_out_remove(&p);
    } else {
        rc = run_command(&o, &p, env, &w);
    }
    if (w.rss)
        fclose(w.rss);
    free(w.pids);
    run_env_free(env, own);
    run_report_opts_free(&o.aopts);
    return rc;
}
