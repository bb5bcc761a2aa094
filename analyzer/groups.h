/*
 * groups: allocation sites as people read them, grouped by allocating
 * function (heaptrack's merged view): the first frame of a stack that is
 * not the allocator or one of its wrappers (operator new, xmalloc,
 * g_malloc, PyMem_Malloc, stdio's buffer allocation: a function whose
 * name starts with "operator new" or ends in malloc, calloc, realloc,
 * alloc or doallocate, any case), named by its function and source file.
 *
 * Grouping needs each stack's frames symbolized, so it looks at the
 * GROUPS_STACKS heaviest stacks by the key asked (the rest weigh less
 * than any of them); the groups' figures are the sums over their stacks.
 */
#ifndef MEMSIM_ANALYZER_GROUPS_H
#define MEMSIM_ANALYZER_GROUPS_H

#include <stddef.h>
#include <stdint.h>

#include "analyzer/frames.h"
#include "analyzer/sites.h"

#define GROUPS_STACKS 256

typedef struct group_s {
    char name[256];     /* "main (prog.c)", "f in libx.so", an address */
    uint64_t key;       /* the sum of the stacks' key */
    uint64_t calls, allocated, peak, leaked, leaked_blocks;
    double var_allocated, var_peak, var_leaked; /* a sampled trace's (sites.h) */
    uint64_t *ids;      /* its stacks, heaviest first */
    size_t nids;
} group_t;

typedef struct groups_s {
    group_t *v;
    size_t n;
} groups_t;

/* The groups of the heaviest stacks by key, heaviest group first; 0, or
 * -1 when out of memory. */
int groups_build(groups_t *g, const sites_t *sites, symbols_t *store, sites_key_t key, frames_t *fr);
void groups_free(groups_t *g);

/* Whether a function name is the allocator's or a wrapper's. */
bool groups_is_allocator(const char *function);

#endif
