/*
 * groups: allocation sites as people read them, grouped by allocating
 * function (heaptrack's merged view): the first frame of a stack that is
 * not the allocator or one of its wrappers (operator new, xmalloc,
 * g_malloc, PyMem_Malloc, stdio's buffer allocation: a function whose
 * name starts with "operator new" or ends in malloc, calloc, realloc,
 * alloc or doallocate, any case), named by its function and source file.
 *
 * Every stack that allocated is grouped: a group's figures are the sums
 * over all its stacks, so one function has the same totals whichever
 * figure ranks it (peak, calls, leaked bytes, temporaries).  Only the
 * frames up to the allocating one are symbolized (cached by address in
 * the store).
 */
#ifndef MEMSIM_ANALYZER_GROUPS_H
#define MEMSIM_ANALYZER_GROUPS_H

#include <stddef.h>
#include <stdint.h>

#include "analyzer/read/frames.h"
#include "analyzer/consume/sites.h"

typedef struct group_s {
    char name[256];     /* "main (prog.c)", "f in libx.so", an address */
    char function[192]; /* the allocating frame's function (or label) alone */
    char file[192];     /* its source file's last part, "" when unknown */
    unsigned line;      /* its line in the heaviest stack, 0 when unknown */
    uint64_t key;       /* the sum of the stacks' key */
    uint64_t calls, allocated, peak, peak_blocks, leaked, leaked_blocks, temporaries;
    double var_allocated, var_peak, var_leaked; /* a sampled trace's (sites.h) */
    uint64_t *ids;      /* all its stacks, heaviest by key first */
    size_t nids;
} group_t;

typedef struct groups_s {
    group_t *v;
    size_t n;
    sites_key_t key;    /* what v is sorted by */
} groups_t;

/* Every stack with an allocation, grouped, heaviest group by key first;
 * groups whose key is 0 come last (groups_ranked counts the others).  0,
 * or -1 when out of memory. */
int groups_build(groups_t *g, const sites_t *sites, symbols_t *store, sites_key_t key, frames_t *fr);
/* Sort again by another key (the stacks of each group too). */
void groups_sort(groups_t *g, const sites_t *sites, sites_key_t key);
/* The groups whose key is not 0 (the first ones). */
size_t groups_ranked(const groups_t *g);
void groups_free(groups_t *g);

/* The figure of a group for key. */
uint64_t groups_key(const group_t *gr, sites_key_t key);

/* The index of a stack's allocating frame among fr (frames_of's), past
 * the allocator's wrappers; 0 when there are none. */
size_t groups_alloc_frame(const frames_t *fr, size_t n);

/* Whether a function name is the allocator's or a wrapper's. */
bool groups_is_allocator(const char *function);

#endif
