/*
 * lean: the fit strategies of the simulated device for a replay — one
 * stream, blocks freed by handle — with what only that needs: the same
 * placements, statistics and peaks as a device (sim/device.h) of the
 * same strategy, size and default base and granule, in a fraction of
 * its memory and time.
 *
 * A device keeps a struct for every block, allocated or free, and a
 * node in its strategy's index for every free one.  With one stream
 * every free block merges with its free neighbours (pristine memory is
 * a stream any request may take, and merges with any), so the free
 * blocks are exactly the maximal free runs, and what a fit strategy
 * chooses depends only on them.  A lean device keeps nothing but those
 * runs ("extents"): an allocated block is its handle (its offset from
 * the base in granules, 32 bits), the caller's to keep with its own
 * record, and its size follows from the request (rounded up to the
 * granule: a fit carve always splits off what the block does not
 * need).  Freeing finds the free neighbours by a hash of the extents'
 * first and last addresses, so no allocated block has a struct.  A
 * million live blocks take 4 MB of handles here, against 64 MB of
 * block structs in a device.
 *
 * The extents' index, by strategy (the device's choice, restated for
 * one stream; each proved equal by tests/unit/test_lean.c, block by
 * block, against the device):
 *   first fit   the lowest-addressed extent that fits: a treap by
 *               address whose nodes know the largest extent below them
 *   next fit    the same treap: the lowest extent that fits at or
 *               above the end of the last allocation (first, through
 *               the hash, the one that starts there), else the lowest
 *               that fits
 *   best fit    the smallest extent that fits, lowest address among
 *               equals: a treap by (size, address) for extents of 512
 *               granules and more, and one treap by address per size
 *               below that (size bins, a bitmap of those that have
 *               extents: a bit scan and a small treap's leftmost node
 *               in place of a descent through all the extents)
 *   worst fit   the largest extent, lowest address among equals, when
 *               it fits: a pairing heap in that order, as the device's
 *               (the choice is its root; a carved root goes back in as
 *               the meld of its children with it alone, an extent a
 *               free grew is cut out with its subtree and melded with
 *               the root)
 * The top (the pristine end of the device, which only first touches
 * make smaller) stays out of the treap, as the device keeps it out of
 * its index: first, next and worst fit take it only when no indexed
 * extent fits, best fit when it is strictly the smallest that fits.
 *
 * Treap priorities are a hash of the node's slot, so a lean device is
 * deterministic.  Bounds: every operation O(log e) expected (worst
 * fit's heap: amortized), e the extents; memory 40 bytes an extent and 8 per hash slot: two keys an
 * extent, the hash at most 3/4 full and doubled as it grows (21 to 43
 * bytes an extent; at most half full it held a third more on perl's
 * recording, for no faster a replay).
 *
 * The lean form exists for a device of at most 2^32 - 2 granules
 * (64 GiB at 16 bytes); lean_create refuses a larger one (the caller
 * then uses a device).  Not thread-safe: one thread at a time.
 *
 * Buddy has a lean form too, behind the same functions: its free
 * blocks are not maximal runs (only buddies merge), so it keeps them as
 * the device does, without the allocated ones (sim/lean_buddy.h; below
 * 128 GiB).  So has the caching pool: its free blocks are the maximal
 * runs of each segment, kept per segment with the segments' ends as
 * barriers, in an index per pool as the device's (sim/lean_caching.h).
 */
#ifndef MEMSIM_SIM_LEAN_H
#define MEMSIM_SIM_LEAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/device.h"

#define LEAN_NONE UINT32_MAX /* no block: a handle that names nothing */

typedef struct lean_s lean_t;

/* Whether a strategy has a lean form ("first-fit", "next-fit",
 * "best-fit", "worst-fit", "buddy", "caching"). */
bool lean_supports(const char *strategy);

/* A lean device of `total` bytes under strategy, with the default base
 * and granule of device_create.  0, or -1 (an unsupported strategy or
 * size, or no memory) with a message in err. */
int lean_create(const char *strategy, uint64_t total, lean_t **out, char *err, size_t errlen);
void lean_destroy(lean_t *l);

/* Place a request of size bytes (>= 1) aligned to align (a power of
 * two) as the device would: 0 and its block's handle in *h, or the
 * device's POOL_E* code (nothing changed, the request counted as
 * failed). */
int lean_alloc(lean_t *l, uint64_t size, uint64_t align, uint32_t *h);
/* Free the block of handle h, allocated for size bytes (the same size
 * lean_alloc was given).  0, or -1 when the host has no memory for the
 * free run it makes (nothing changed: the block stays allocated). */
int lean_free(lean_t *l, uint32_t h, uint64_t size);

/* Start loading what freeing h (size bytes) will read first: the hash
 * slots of its neighbours.  For a caller that knows its frees a few
 * operations ahead; no effect on the figures. */
void lean_prefetch_free(const lean_t *l, uint32_t h, uint64_t size);

/* The device's figures (device_metrics), its footprint now, the first
 * address of a handle's block. */
void lean_metrics(const lean_t *l, device_metrics_t *m);
uint64_t lean_reserved(const lean_t *l);
uint64_t lean_addr(const lean_t *l, uint32_t h);
const strategy_ops_t *lean_strategy(const lean_t *l);
/* Extents (free runs; buddy: free blocks), for a prefetching caller's
 * threshold. */
uint64_t lean_extents(const lean_t *l);

/* Every invariant: the treap's order, priorities, parents and maxima;
 * the hash holds each extent's two ends and nothing else; no two
 * extents touch; the top; the byte and block totals.  0, or -1 with
 * *why.  O(extents). */
int lean_check(const lean_t *l, const char **why);

#endif
