/*
 * ptree: see ptree.h.  Quadratic in the traces, which number in the
 * hundreds for a build, not millions.
 */
#include "analyzer/read/ptree.h"

#include <stdbool.h>
#include <stdlib.h>

/* a started before b (ties by index, so the order is total). */
static bool before(const ptree_item_t *v, size_t a, size_t b)
{
    return v[a].start != v[b].start ? v[a].start < v[b].start : a < b;
}

static size_t parent_of(const ptree_item_t *v, size_t n, size_t i, const char **via)
{
    size_t best = PTREE_NONE;
    for (size_t j = 0; j < n; j++) /* the image an exec replaced */
        if (j != i && v[j].pid == v[i].pid && v[i].pid && before(v, j, i) &&
            (best == PTREE_NONE || before(v, best, j)))
            best = j;
    if (best != PTREE_NONE) {
        *via = "exec";
        return best;
    }
    for (size_t j = 0; j < n; j++)
        if (j != i && v[j].pid == v[i].ppid && v[i].ppid && v[j].start <= v[i].start &&
            (best == PTREE_NONE || before(v, best, j)))
            best = j;
    *via = best == PTREE_NONE ? NULL : v[i].forked ? "fork" : "spawn";
    return best;
}

static void visit(ptree_t *t, const ptree_item_t *v, size_t i, unsigned depth, size_t *at)
{
    t->order[(*at)++] = i;
    t->depth[i] = depth;
    for (;;) { /* children by start time: the earliest not yet placed */
        size_t next = PTREE_NONE;
        for (size_t j = 0; j < t->n; j++)
            if (t->parent[j] == i && t->depth[j] == UINT32_MAX &&
                (next == PTREE_NONE || before(v, j, next)))
                next = j;
        if (next == PTREE_NONE)
            return;
        /* An exec continues the process: same depth. */
        visit(t, v, next, t->via[next] && t->via[next][0] == 'e' ? depth : depth + 1, at);
    }
}

int ptree_build(ptree_t *t, const ptree_item_t *v, size_t n)
{
    t->n = n;
    t->parent = calloc(n ? n : 1, sizeof *t->parent);
    t->via = calloc(n ? n : 1, sizeof *t->via);
    t->order = calloc(n ? n : 1, sizeof *t->order);
    t->depth = calloc(n ? n : 1, sizeof *t->depth);
    if (!t->parent || !t->via || !t->order || !t->depth) {
        ptree_free(t);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        t->parent[i] = parent_of(v, n, i, &t->via[i]);
        t->depth[i] = UINT32_MAX;
    }
    /* A cycle (pid reuse, clocks that disagree) would leave items
     * unplaced: cut it by making its earliest member a root. */
    size_t at = 0;
    for (;;) {
        size_t root = PTREE_NONE;
        for (size_t i = 0; i < n; i++)
            if (t->depth[i] == UINT32_MAX && t->parent[i] == PTREE_NONE &&
                (root == PTREE_NONE || before(v, i, root)))
                root = i;
        if (root == PTREE_NONE) {
            for (size_t i = 0; i < n; i++)
                if (t->depth[i] == UINT32_MAX && (root == PTREE_NONE || before(v, i, root)))
                    root = i;
            if (root == PTREE_NONE)
                break;
            t->parent[root] = PTREE_NONE;
            t->via[root] = NULL;
        }
        visit(t, v, root, 0, &at);
    }
    return 0;
}

void ptree_free(ptree_t *t)
{
    free(t->parent);
    free(t->via);
    free(t->order);
    free(t->depth);
    t->parent = t->order = NULL;
    t->via = NULL;
    t->depth = NULL;
}
