/*
 * proctable: a process tree as people read it, for the reports' process
 * tables (text, JSON, HTML).
 *
 * The rows are the tree of analyzer/read/ptree.h with two folds:
 *   exec chains  an image that exec replaced (a launcher shim: pyenv's
 *                bash scripts, env, a shell's exec) is not a row of its
 *                own: the image it became is, "via" the names of those
 *                before it, and their children are its children;
 *   small ones   children whose subtree weighs under PROCTABLE_FOLD of the
 *                tree (report_weight: peak heap + peak mapped) and has no
 *                finding are one row under their parent: "N smaller
 *                processes", their figures summed.
 * Children come heaviest subtree first; depth is the indentation.
 *
 * The program the user ran is the row of the first root: the image its
 * exec chain ended in.
 */
#ifndef MEMSIM_ANALYZER_PROCTABLE_H
#define MEMSIM_ANALYZER_PROCTABLE_H

#include <stddef.h>
#include <stdint.h>

#include "analyzer/process.h"
#include "analyzer/read/ptree.h"

#define PROCTABLE_FOLD 0.01

typedef struct proctable_row_s {
    size_t proc;            /* the process (index) shown; SIZE_MAX: a fold of small ones */
    size_t parent_row;      /* SIZE_MAX for a root */
    unsigned depth;
    const char *how;        /* "fork", "spawn", or NULL (a root): how its chain began */
    char via[256];          /* the exec chain before it, names by blanks ("" when none) */
    uint64_t weight;        /* its chain's, or the fold's sum */
    uint64_t subtree;       /* with every descendant */
    /* a fold: */
    size_t nfolded;
    uint64_t calls, peak_heap, peak_mapped, peak_rss, leaked;
    char names[128];        /* the first names folded, by commas */
} proctable_row_t;

typedef struct proctable_s {
    proctable_row_t *v;     /* depth first */
    size_t n;
    size_t main_proc;       /* the program the user ran (index), SIZE_MAX when none */
    size_t main_row;
} proctable_t;

/* 0, or -1 without memory. */
int proctable_build(proctable_t *pt, const process_t *procs, size_t n, const ptree_t *t);
void proctable_free(proctable_t *pt);

#endif
