/*
 * groups: sites by allocating function.  See groups.h.
 */
#include "analyzer/report/groups.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool ends_with_nocase(const char *s, size_t n, const char *tail)
{
    size_t t = strlen(tail);
    if (n < t)
        return false;
    for (size_t i = 0; i < t; i++)
        if (tolower((unsigned char)s[n - t + i]) != tail[i])
            return false;
    return true;
}

bool groups_is_allocator(const char *function)
{
    if (!function)
        return false;
    if (!strncmp(function, "operator new", 12))
        return true;
    size_t n = strcspn(function, "("); /* a demangled name's parameters */
    static const char *const tails[] = {"malloc", "calloc", "realloc", "alloc", "doallocate",
                                        "memalign"};
    for (size_t i = 0; i < sizeof tails / sizeof tails[0]; i++)
        if (ends_with_nocase(function, n, tails[i]))
            return true;
    return false;
}

size_t groups_alloc_frame(const frames_t *fr, size_t n)
{
    size_t k = 0;
    while (k + 1 < n && groups_is_allocator(fr->v[k].function))
        k++;
    return k;
}

/* The allocating frame of a stack, resolved up to it only (fr->v[0] is
 * it), or NULL when the stack has no frames. */
static const symbols_frame_t *alloc_frame(const sites_t *sites, symbols_t *store, uint64_t id,
                                          frames_t *fr)
{
    const site_t *st = sites_get(sites, id);
    if (!st || !st->nframes)
        return NULL;
    const symbols_frame_t *last = NULL;
    for (uint32_t i = 0; i < st->nframes; i++) {
        const symbols_frame_t *f;
        size_t n = symbols_resolve(store, st->modules ? st->modules[i] : SYMBOLS_NO_MODULE,
                                   st->frames[i], &f);
        for (size_t k = 0; k < n; k++) {
            last = &f[k];
            if (!groups_is_allocator(f[k].function))
                return last;
        }
    }
    (void)fr;
    return last; /* every frame an allocator's: the outermost */
}

/* The allocating function of a stack, in words, and its parts. */
static void name_of(const sites_t *sites, symbols_t *store, uint64_t id, frames_t *fr,
                    group_t *gr)
{
    const symbols_frame_t *f = alloc_frame(sites, store, id, fr);
    gr->file[0] = '\0';
    gr->line = 0;
    if (!f) {
        snprintf(gr->name, sizeof gr->name, "%s", id ? "(a stack without frames)" : "(no stack recorded)");
        snprintf(gr->function, sizeof gr->function, "%.*s", (int)sizeof gr->function - 1, gr->name);
        return;
    }
    char label[64];
    snprintf(gr->function, sizeof gr->function, "%s",
             f->function ? f->function : symbols_label(f, label, sizeof label));
    if (f->file) {
        snprintf(gr->file, sizeof gr->file, "%s", frames_base_name(f->file));
        gr->line = f->line;
    }
    if (f->function && f->file)
        snprintf(gr->name, sizeof gr->name, "%s (%s)", f->function, frames_base_name(f->file));
    else if (f->function && f->name)
        snprintf(gr->name, sizeof gr->name, "%s in %s", f->function, f->name);
    else
        snprintf(gr->name, sizeof gr->name, "%s", symbols_label(f, label, sizeof label));
}

uint64_t groups_key(const group_t *gr, sites_key_t key)
{
    switch (key) {
    case SITES_BY_PEAK: return gr->peak;
    case SITES_BY_CALLS: return gr->calls;
    case SITES_BY_LEAKED: return gr->leaked;
    case SITES_BY_TEMPORARIES: return gr->temporaries;
    case SITES_BY_ALLOCATED: return gr->allocated;
    }
    return 0;
}

static sites_key_t sort_key;            /* for qsort */
static const sites_t *sort_sites;

static int by_key(const void *a, const void *b)
{
    const group_t *x = a, *y = b;
    uint64_t kx = groups_key(x, sort_key), ky = groups_key(y, sort_key);
    if (kx != ky)
        return kx < ky ? 1 : -1;
    return strcmp(x->name, y->name);
}

static int ids_by_key(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    uint64_t kx = sites_key(sort_sites, x, sort_key), ky = sites_key(sort_sites, y, sort_key);
    if (kx != ky)
        return kx < ky ? 1 : -1;
    return x < y ? -1 : x > y;
}

void groups_sort(groups_t *g, const sites_t *sites, sites_key_t key)
{
    sort_key = key;
    sort_sites = sites;
    g->key = key;
    for (size_t i = 0; i < g->n; i++) {
        g->v[i].key = groups_key(&g->v[i], key);
        qsort(g->v[i].ids, g->v[i].nids, sizeof *g->v[i].ids, ids_by_key);
    }
    qsort(g->v, g->n, sizeof *g->v, by_key);
}

size_t groups_ranked(const groups_t *g)
{
    size_t n = 0;
    while (n < g->n && g->v[n].key)
        n++;
    return n;
}

typedef struct named_s {
    char *name;
    uint64_t id;
    size_t group;
} named_t;

static int by_name(const void *a, const void *b)
{
    const named_t *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->id < y->id ? -1 : x->id > y->id);
}

int groups_build(groups_t *g, const sites_t *sites, symbols_t *store, sites_key_t key, frames_t *fr)
{
    *g = (groups_t){.key = key};
    size_t count = sites_count(sites), n = 0;
    named_t *all = malloc((count ? count : 1) * sizeof *all);
    group_t *tmp = malloc(sizeof *tmp);
    if (!all || !tmp) {
        free(all);
        free(tmp);
        return -1;
    }
    int rc = 0;
    for (uint64_t id = 0; id < count; id++) {
        const site_t *st = sites_get(sites, id);
        if (!st || !st->calls)
            continue;
        name_of(sites, store, id, fr, tmp);
        if (!(all[n].name = strdup(tmp->name))) {
            rc = -1;
            break;
        }
        all[n++].id = id;
    }
    qsort(all, n, sizeof *all, by_name);
    size_t ngroups = 0;
    for (size_t i = 0; i < n; i++)
        ngroups += !i || strcmp(all[i].name, all[i - 1].name);
    g->v = rc ? NULL : calloc(ngroups ? ngroups : 1, sizeof *g->v);
    if (!g->v)
        rc = -1;
    for (size_t i = 0, k = SIZE_MAX; !rc && i < n; i++) {
        if (!i || strcmp(all[i].name, all[i - 1].name)) {
            size_t j = i;
            while (j < n && !strcmp(all[j].name, all[i].name))
                j++;
            group_t *gr = &g->v[++k];
            if (!(gr->ids = malloc((j - i) * sizeof *gr->ids))) {
                rc = -1;
                break;
            }
            g->n = k + 1;
            name_of(sites, store, all[i].id, fr, gr);
        }
        group_t *gr = &g->v[k];
        uint64_t id = all[i].id;
        const site_t *st = sites_get(sites, id);
        gr->ids[gr->nids++] = id;
        gr->calls += sites_calls(st);
        gr->allocated += st->allocated;
        gr->peak += sites_peak_bytes(sites, id);
        gr->peak_blocks += sites_peak_blocks(sites, id);
        gr->var_allocated += st->var_allocated;
        gr->var_peak += sites_key_var(sites, id, SITES_BY_PEAK);
        if (!st->suppressed) {
            gr->leaked += st->live;
            gr->leaked_blocks += st->live_blocks;
            gr->var_leaked += st->var_live;
        }
        gr->temporaries += st->temporaries;
    }
    for (size_t i = 0; i < n; i++)
        free(all[i].name);
    free(all);
    free(tmp);
    if (rc) {
        groups_free(g);
        return -1;
    }
    groups_sort(g, sites, key);
    /* the group's source line: its heaviest stack's */
    for (size_t i = 0; i < g->n; i++) {
        group_t *gr = &g->v[i];
        char keep[256];
        snprintf(keep, sizeof keep, "%s", gr->name);
        name_of(sites, store, gr->ids[0], fr, gr);
        snprintf(gr->name, sizeof gr->name, "%s", keep);
    }
    return 0;
}

void groups_free(groups_t *g)
{
    for (size_t i = 0; i < g->n; i++)
        free(g->v[i].ids);
    free(g->v);
    *g = (groups_t){0};
}
