/*
 * groups: sites by allocating function.  See groups.h.
 */
#include "analyzer/groups.h"

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

/* The allocating function of a stack, in words. */
static void name_of(const sites_t *sites, symbols_t *store, uint64_t id, frames_t *fr, char *buf,
                    size_t len)
{
    size_t n = frames_of(store, sites_get(sites, id), fr);
    if (!n) {
        snprintf(buf, len, "%s", id ? "(a stack without frames)" : "(no stack recorded)");
        return;
    }
    size_t k = 0;
    while (k + 1 < n && groups_is_allocator(fr->v[k].function))
        k++;
    const symbols_frame_t *f = &fr->v[k];
    char label[64];
    if (f->function && f->file)
        snprintf(buf, len, "%s (%s)", f->function, frames_base_name(f->file));
    else if (f->function && f->name)
        snprintf(buf, len, "%s in %s", f->function, f->name);
    else
        snprintf(buf, len, "%s", symbols_label(f, label, sizeof label));
}

static int by_key(const void *a, const void *b)
{
    const group_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? 1 : -1;
    return strcmp(x->name, y->name);
}

int groups_build(groups_t *g, const sites_t *sites, symbols_t *store, sites_key_t key, frames_t *fr)
{
    *g = (groups_t){0};
    uint64_t *ids;
    size_t n = sites_top(sites, key, GROUPS_STACKS, &ids);
    if (!n)
        return 0;
    g->v = calloc(n, sizeof *g->v);
    if (!g->v) {
        free(ids);
        return -1;
    }
    char name[256];
    for (size_t i = 0; i < n; i++) {
        name_of(sites, store, ids[i], fr, name, sizeof name);
        group_t *gr = NULL;
        for (size_t k = 0; k < g->n && !gr; k++)
            if (!strcmp(g->v[k].name, name))
                gr = &g->v[k];
        if (!gr) {
            gr = &g->v[g->n++];
            snprintf(gr->name, sizeof gr->name, "%s", name);
            if (!(gr->ids = malloc(n * sizeof *gr->ids))) {
                g->n--;
                continue;
            }
        }
        const site_t *st = sites_get(sites, ids[i]);
        gr->ids[gr->nids++] = ids[i];
        gr->key += sites_key(sites, ids[i], key);
        gr->calls += st->calls;
        gr->allocated += st->allocated;
        gr->peak += sites_peak_bytes(sites, ids[i]);
        gr->leaked += st->live;
        gr->leaked_blocks += st->live_blocks;
        gr->var_allocated += st->var_allocated;
        gr->var_peak += sites_key_var(sites, ids[i], SITES_BY_PEAK);
        gr->var_leaked += st->var_live;
    }
    free(ids);
    qsort(g->v, g->n, sizeof *g->v, by_key);
    return 0;
}

void groups_free(groups_t *g)
{
    for (size_t i = 0; i < g->n; i++)
        free(g->v[i].ids);
    free(g->v);
    *g = (groups_t){0};
}
