/*
 * proctable: a process tree's rows.  See proctable.h.  Quadratic in the
 * traces, as ptree.
 */
#include "analyzer/report/proctable.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/read/frames.h"
#include "analyzer/report/report.h"

typedef struct work_s {
    const process_t *procs;
    const ptree_t *t;
    size_t n;
    size_t *end;      /* each image's chain end: the image it became by exec */
    uint64_t *own;    /* a chain end's weight: its chain's */
    uint64_t *sub;    /* a chain end's subtree weight */
    uint64_t total;
    proctable_t *pt;
    size_t cap;
} work_t;

static bool is_exec(const ptree_t *t, size_t j) { return t->via[j] && !strcmp(t->via[j], "exec"); }

static const char *name_of(const process_t *pr)
{
    return pr->s.exe[0] ? frames_base_name(pr->s.exe) : "?";
}

/* The image i became: its exec child's chain end (the latest to start,
 * when a broken tree gives several). */
static size_t chain_end(const work_t *w, size_t i)
{
    for (size_t guard = 0; guard < w->n; guard++) {
        size_t next = SIZE_MAX;
        for (size_t j = 0; j < w->n; j++)
            if (w->procs[j].ok && w->t->parent[j] == i && is_exec(w->t, j))
                next = j;
        if (next == SIZE_MAX)
            return i;
        i = next;
    }
    return i;
}

/* The images whose chain ends at e, outermost first, are those j with
 * end[j] == e; the chain's start is the one whose parent is not exec. */
static size_t chain_start(const work_t *w, size_t e)
{
    size_t s = e;
    while (is_exec(w->t, s) && w->t->parent[s] != PTREE_NONE)
        s = w->t->parent[s];
    return s;
}

/* Whether j (a chain end) is a child of chain end e: its chain's start
 * has a parent (not by exec) inside e's chain. */
static bool child_of(const work_t *w, size_t j, size_t e)
{
    size_t s = chain_start(w, j);
    size_t p = w->t->parent[s];
    return p != PTREE_NONE && !is_exec(w->t, s) && w->end[p] == e && j != e;
}

static uint64_t subtree(work_t *w, size_t e, unsigned depth)
{
    if (w->sub[e] != UINT64_MAX)
        return w->sub[e];
    uint64_t sum = w->own[e];
    for (size_t j = 0; depth < 64 && j < w->n; j++)
        if (w->procs[j].ok && w->end[j] == j && child_of(w, j, e))
            sum += subtree(w, j, depth + 1);
    return w->sub[e] = sum;
}

static bool has_findings(const work_t *w, size_t e)
{
    for (size_t j = 0; j < w->n; j++)
        if (w->procs[j].ok && w->end[j] == e && w->procs[j].findings.n)
            return true;
    return false;
}

static proctable_row_t *new_row(work_t *w)
{
    if (w->pt->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 16;
        proctable_row_t *v = realloc(w->pt->v, cap * sizeof *v);
        if (!v)
            return NULL;
        w->pt->v = v;
        w->cap = cap;
    }
    proctable_row_t *r = &w->pt->v[w->pt->n++];
    memset(r, 0, sizeof *r);
    r->proc = r->parent_row = SIZE_MAX;
    return r;
}

static int fold_into(work_t *w, proctable_row_t *r, size_t e)
{
    const process_t *pr = &w->procs[e];
    r->nfolded++;
    r->calls += pr->s.allocations;
    r->peak_heap += pr->s.peak_heap;
    r->peak_mapped += pr->maps.peak;
    uint64_t rss = process_peak_rss(pr);
    r->peak_rss = rss > r->peak_rss ? rss : r->peak_rss;
    r->leaked += pr->s.leaked_bytes;
    r->weight += w->own[e];
    r->subtree += w->own[e];
    size_t at = strlen(r->names);
    const char *name = name_of(pr);
    if (!strstr(r->names, name) && at + strlen(name) + 3 < sizeof r->names)
        snprintf(r->names + at, sizeof r->names - at, "%s%s", at ? ", " : "", name);
    /* its descendants are folded with it */
    for (size_t j = 0; j < w->n; j++)
        if (w->procs[j].ok && w->end[j] == j && child_of(w, j, e))
            fold_into(w, r, j);
    return 0;
}

static int emit(work_t *w, size_t e, size_t parent_row, unsigned depth)
{
    proctable_row_t *r = new_row(w);
    if (!r)
        return -1;
    size_t me = w->pt->n - 1;
    r->proc = e;
    r->parent_row = parent_row;
    r->depth = depth;
    r->weight = w->own[e];
    r->subtree = w->sub[e];
    size_t s = chain_start(w, e);
    r->how = w->t->via[s] && !is_exec(w->t, s) ? w->t->via[s] : NULL;
    /* the chain before e, outermost first */
    for (size_t k = s, guard = 0; k != e && guard < w->n; guard++) {
        size_t at = strlen(r->via);
        const char *name = name_of(&w->procs[k]);
        if (at + strlen(name) + 2 < sizeof r->via)
            snprintf(r->via + at, sizeof r->via - at, "%s%s", at ? " " : "", name);
        size_t next = SIZE_MAX;
        for (size_t j = 0; j < w->n; j++)
            if (w->t->parent[j] == k && is_exec(w->t, j) && w->end[j] == e)
                next = j;
        if (next == SIZE_MAX)
            break;
        k = next;
    }
    /* children, heaviest subtree first; the small ones folded last */
    size_t nkids = 0;
    size_t *kids = malloc((w->n ? w->n : 1) * sizeof *kids);
    if (!kids)
        return -1;
    for (size_t j = 0; j < w->n; j++)
        if (w->procs[j].ok && w->end[j] == j && child_of(w, j, e))
            kids[nkids++] = j;
    for (size_t i = 1; i < nkids; i++)
        for (size_t k = i; k > 0 && (w->sub[kids[k]] > w->sub[kids[k - 1]] ||
                                     (w->sub[kids[k]] == w->sub[kids[k - 1]] && kids[k] < kids[k - 1]));
             k--) {
            size_t x = kids[k];
            kids[k] = kids[k - 1];
            kids[k - 1] = x;
        }
    size_t fold = SIZE_MAX;
    int rc = 0;
    for (size_t i = 0; i < nkids && !rc; i++) {
        size_t j = kids[i];
        bool small = (double)w->sub[j] < PROCTABLE_FOLD * (double)w->total && !has_findings(w, j);
        if (!small || nkids == 1) {
            rc = emit(w, j, me, depth + 1);
            continue;
        }
        if (fold == SIZE_MAX) {
            proctable_row_t *f = new_row(w);
            if (!f) {
                rc = -1;
                break;
            }
            fold = w->pt->n - 1;
            f->parent_row = me;
            f->depth = depth + 1;
        }
        fold_into(w, &w->pt->v[fold], j);
    }
    free(kids);
    return rc;
}

int proctable_build(proctable_t *pt, const process_t *procs, size_t n, const ptree_t *t)
{
    *pt = (proctable_t){.main_proc = SIZE_MAX, .main_row = SIZE_MAX};
    work_t w = {.procs = procs, .t = t, .n = n, .pt = pt};
    w.end = malloc((n ? n : 1) * sizeof *w.end);
    w.own = calloc(n ? n : 1, sizeof *w.own);
    w.sub = malloc((n ? n : 1) * sizeof *w.sub);
    int rc = w.end && w.own && w.sub ? 0 : -1;
    for (size_t i = 0; !rc && i < n; i++) {
        w.end[i] = procs[i].ok ? chain_end(&w, i) : i;
        w.sub[i] = UINT64_MAX;
    }
    for (size_t i = 0; !rc && i < n; i++)
        if (procs[i].ok) {
            w.own[w.end[i]] += report_weight(&procs[i]);
            w.total += report_weight(&procs[i]);
        }
    for (size_t i = 0; !rc && i < n; i++)
        if (procs[i].ok && w.end[i] == i)
            subtree(&w, i, 0);
    /* roots in the tree's order (the first root started first) */
    for (size_t k = 0; !rc && k < t->n; k++) {
        size_t i = t->order[k];
        if (!procs[i].ok || t->parent[i] != PTREE_NONE)
            continue;
        size_t e = w.end[i];
        if (pt->main_proc == SIZE_MAX) {
            pt->main_proc = e;
            pt->main_row = pt->n;
        }
        rc = emit(&w, e, SIZE_MAX, 0);
    }
    free(w.end);
    free(w.own);
    free(w.sub);
    if (rc)
        proctable_free(pt);
    return rc;
}

void proctable_free(proctable_t *pt)
{
    free(pt->v);
    *pt = (proctable_t){.main_proc = SIZE_MAX, .main_row = SIZE_MAX};
}
