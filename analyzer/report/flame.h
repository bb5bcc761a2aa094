/*
 * flame: a flame graph's tree of stacks and its drawing as SVG, shared by
 * the HTML report (an inline graph per process, report_html.c) and the
 * self-contained SVG of --flamegraph (report_flamegraph.c); --diff's
 * graph of two runs (diff.c) is the same tree, weighing each node twice.
 *
 * The tree: the root weighs everything; each child is a frame, outermost
 * first, weighing the stacks that go through it (w == sum of the kids'
 * w, or more when a stack ends at the node).  Drawn as an icicle: the
 * root on top, each frame as wide as its share of its parent.
 */
#ifndef MEMSIM_ANALYZER_FLAME_H
#define MEMSIM_ANALYZER_FLAME_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analyzer/read/frames.h"
#include "analyzer/process.h"

#define FLAME_ROW 17      /* px per frame */
#define FLAME_STACKS 2000 /* stacks weighed, heaviest first */
#define FLAME_DEPTH 48    /* frames kept of a stack, outermost first */

typedef struct flame_node_s {
    char *name;                 /* the frame's function, or its module+offset */
    uint64_t w;                 /* bytes or calls through it */
    uint64_t base;              /* a difference graph's (analyzer/report/diff.c): the bytes through it
                                   in the base run, w being the new run's; else 0 */
    struct flame_node_s *kids;  /* nkids used of cap */
    size_t nkids, cap;
} flame_node_t;

/* Add pr's stacks weighted by key ("peak", "calls", "leaked": the sites;
 * "mapped": the mapping sites) under root, below a node named prefix
 * when not NULL (a process of a tree).  Out of memory loses stacks, not
 * the tree's consistency. */
void flame_add(flame_node_t *root, process_t *pr, symbols_t *store, frames_t *fr,
               const char *key, const char *prefix);
/* A new root ("all", or "all calls" for calls) with pr's stacks. */
void flame_build(flame_node_t *root, process_t *pr, symbols_t *store, frames_t *fr,
                 const char *key, const char *prefix);
/* n's child named name, added (weighing 0) when new; NULL when the host
 * is out of memory. */
flame_node_t *flame_child(flame_node_t *n, const char *name);
/* Rows from the root to the deepest frame. */
int flame_depth(const flame_node_t *n);
/* root and every frame wider than 0.3 px as <g class="frame"> elements
 * (a <title> with the name and weight, a <rect>, a <text> when it fits)
 * width px wide, from y 0; bytes: weights are bytes, else counts. */
void flame_draw(FILE *f, const flame_node_t *root, double width, bool bytes);
void flame_free(flame_node_t *n);

#endif
