/*
 * lean_caching: the caching pool (sim/strategy_caching.c) for one
 * stream, as its free runs and its segments only: the lean form of
 * sim/lean.h for "caching".
 *
 * Within a segment every free block merges with its free neighbours
 * (one stream), so the free blocks are the maximal free runs of each
 * segment, and the segment's ends are the only barriers; the pool's
 * best fit by (size, address) depends on nothing else.  Here a run
 * ("extent", 40 bytes) sits in its pool's index, as the device's: below
 * 256 KiB a size bin (a pairing heap by address: the lowest at its
 * root; a bitmap of the sizes that have runs), above a treap by (size,
 * address); its two ends in a hash (a start and an end are distinct
 * keys, so runs of two segments that touch stay apart).  Segments (2 MiB aligned) are slots found from an address by
 * a table of 2 MiB frames, and a list by address, which the placement
 * of a new segment, the trim and the seed fragmentation walk as the
 * device walks its tree of segments.
 *
 * A handle names a block without a struct: a small-pool block (whose
 * size follows from its request: the small pool splits off every
 * remainder) is its offset from the base in 512-byte units, below 2^31;
 * any other block (a large-pool one may keep up to 1 MiB more than it
 * asked for; or an address beyond 1 TiB of the base) has a 16-byte
 * slot of its address and size, and its handle is 2^31 + the slot.
 *
 * Placement, splitting, merging, segments, trimming and every figure
 * are the device's, proved block by block by tests/unit/test_lean.c.
 * Bounds: an allocation or a free O(log e) expected (a bin's heap:
 * amortized), e the free runs, and O(1) expected in the hash; a new segment O(segments), as the
 * device; memory 40 bytes a run, 32-64 in the hash (two 12-byte keys,
 * at most 3/4 full, never shrunk), 4 bytes per 2 MiB
 * of the address span the segments reach.
 */
#ifndef MEMSIM_SIM_LEAN_CACHING_H
#define MEMSIM_SIM_LEAN_CACHING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/device.h"

typedef struct lean_caching_s lean_caching_t;

/* A lean caching device of `total` bytes (the bound on its reserved
 * bytes) with the default base.  NULL without memory or for a size the
 * device refuses (below 512 bytes); *err says which. */
lean_caching_t *lean_caching_create(uint64_t total, const char **err);
void lean_caching_destroy(lean_caching_t *c);

int lean_caching_alloc(lean_caching_t *c, uint64_t size, uint64_t align, uint32_t *h);
int lean_caching_free(lean_caching_t *c, uint32_t h, uint64_t size);
void lean_caching_prefetch_free(const lean_caching_t *c, uint32_t h, uint64_t size);
void lean_caching_metrics(const lean_caching_t *c, device_metrics_t *m);
uint64_t lean_caching_reserved(const lean_caching_t *c);
uint64_t lean_caching_addr(const lean_caching_t *c, uint32_t h);
uint64_t lean_caching_free_runs(const lean_caching_t *c);
int lean_caching_check(const lean_caching_t *c, const char **why);

#endif
