/*
 * analysis: one run's traces read.  See analysis.h.
 */
#include "analyzer/analysis.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/escape.h"

/* The command of the run: memsim run's, else the argv of the process
 * that started first (the root of the tree). */
static void find_command(analysis_t *a)
{
    if (a->paths.run_command[0]) {
        snprintf(a->command, sizeof a->command, "%s", a->paths.run_command);
        return;
    }
    const process_t *first = NULL;
    for (size_t i = 0; i < a->n; i++)
        if (a->procs[i].ok && (!first || a->procs[i].s.start_unix_ns < first->s.start_unix_ns))
            first = &a->procs[i];
    if (first)
        snprintf(a->command, sizeof a->command, "%s", first->s.argv[0] ? first->s.argv : first->s.exe);
}

int analysis_run(analysis_t *a, char *const *args, size_t nargs, const analyze_opts_t *o,
                 symbols_t *store, suppress_t *sup)
{
    memset(a, 0, sizeof *a);
    a->store = store;
    for (size_t i = 0; i < nargs; i++)
        if (inputs_collect(args[i], &a->paths))
            return -1;
    a->n = a->paths.n;
    a->run_peak = a->paths.run_peak_tree_rss;
    a->procs = calloc(a->n ? a->n : 1, sizeof *a->procs);
    if (!a->procs) {
        fprintf(stderr, "%s: out of memory\n", ANALYZE_CMD);
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < a->n; i++)
        if (process_analyze(&a->procs[i], a->paths.v[i], o, store))
            rc = 2;
    /* A run of one process: memsim run's polls are its tree's. */
    if (a->n == 1 && a->procs[0].ok && a->run_peak > a->procs[0].s.peak_tree_rss)
        a->procs[0].s.peak_tree_rss = a->run_peak;
    frames_t fr = {0};
    for (size_t i = 0; sup && store && i < a->n; i++) {
        process_t *pr = &a->procs[i];
        if (!pr->ok || !pr->have_sites)
            continue;
        suppress_apply(sup, &pr->sites, store, &fr, &pr->suppressed_bytes, &pr->suppressed_blocks);
        summary_t *s = &pr->s;
        s->leaked_bytes -= pr->suppressed_bytes < s->leaked_bytes ? pr->suppressed_bytes : s->leaked_bytes;
        s->leaked_allocations -= pr->suppressed_blocks < s->leaked_allocations
                                     ? pr->suppressed_blocks : s->leaked_allocations;
    }
    free(fr.v);
    find_command(a);
    return rc;
}

void analysis_suppressed(const analysis_t *a, uint64_t *bytes, uint64_t *blocks)
{
    *bytes = *blocks = 0;
    for (size_t i = 0; i < a->n; i++)
        if (a->procs[i].ok) {
            *bytes += a->procs[i].suppressed_bytes;
            *blocks += a->procs[i].suppressed_blocks;
        }
}

void analysis_fini(analysis_t *a)
{
    for (size_t i = 0; i < a->n; i++)
        process_fini(&a->procs[i]);
    free(a->procs);
    inputs_free(&a->paths);
    memset(a, 0, sizeof *a);
}
