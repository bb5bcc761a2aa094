/*
 * mappings: the program's own memory mappings (mmap, munmap and mremap
 * records), tracked in one streaming pass as the heap is by
 * analyzer/consume/summary.h.
 *
 * The live mappings are disjoint address ranges, rounded out to pages
 * as the kernel does, each with the stack that made it and whether it
 * maps a file.  An mmap first unmaps what it overlaps (MAP_FIXED
 * replaces), a munmap may cut a mapping anywhere (the head, the tail,
 * a hole in the middle), and an mremap moves its old range's remainder
 * to the new address and size, keeping the site and kind of the
 * mapping it came from.  Figures:
 *   calls        successful mmap records (mremap and munmap counted apart)
 *   live         bytes mapped now; at the end, what was never unmapped
 *   peak         the most bytes mapped at once, and when (the first time)
 * and per site (the stack id; 0: no stack), as analyzer/consume/sites.h: calls,
 * bytes mapped, live bytes, and live bytes at the global peak (the lazy
 * epoch snapshot), so the sites' peaks add up to the peak.
 *
 * Memory grows with the live mappings and the distinct stacks.
 */
#ifndef MEMSIM_ANALYZER_MAPPINGS_H
#define MEMSIM_ANALYZER_MAPPINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzer/read/reader.h"

#define MAPPINGS_PAGE 4096u

typedef struct mapping_s {
    uint64_t start, end; /* [start, end), page-aligned */
    uint64_t site;       /* the stack id of the mmap that made it */
    bool file;           /* maps a file (not MAP_ANONYMOUS, fd >= 0) */
} mapping_t;

typedef struct mapping_site_s {
    uint64_t calls;       /* mmap records with this stack */
    uint64_t mapped;      /* bytes they mapped */
    uint64_t live;        /* bytes live now */
    uint64_t live_file;   /* of them, file-backed */
    uint64_t snap, snap_file, snap_epoch; /* live at peak number snap_epoch */
    bool file;            /* its latest mapping maps a file */
} mapping_site_t;

typedef struct mappings_s {
    mapping_t *v;             /* live mappings, sorted by start, disjoint */
    size_t n, cap;
    mapping_site_t *sites;    /* index = stack id */
    size_t nsites;            /* entries of sites */
    uint64_t calls, unmaps, remaps;
    uint64_t live, live_file;
    uint64_t peak, peak_file, peak_t;
    uint64_t peak_epoch;
    uint64_t since_max, since_max_file; /* the most live since the last sample (consumers.c) */
    bool nomem;               /* the host ran out of memory: figures are low */
} mappings_t;

int mappings_init(mappings_t *m);
void mappings_fini(mappings_t *m);

/* One event (mmap, munmap, mremap; others are ignored). */
void mappings_add(mappings_t *m, const event_t *e);

/* A site's live bytes at the global peak (and of them, file-backed). */
uint64_t mappings_site_peak(const mappings_t *m, uint64_t id, uint64_t *file);

typedef enum mappings_key_e {
    MAPPINGS_BY_PEAK,
    MAPPINGS_BY_END,
} mappings_key_t;

/* The ids of the (at most) max sites with the largest key > 0, largest
 * first, ties by id; their number.  *ids is malloc'd (NULL when 0). */
size_t mappings_top(const mappings_t *m, mappings_key_t key, size_t max, uint64_t **ids);

#endif
