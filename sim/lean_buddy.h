/*
 * lean_buddy: the buddy strategy (sim/strategy_buddy.c) for one stream,
 * as its free blocks only: the lean form of sim/lean.h for "buddy".
 *
 * A device keeps a 64-byte struct for every block, allocated or free.
 * Here an allocated block is its handle alone, which says both where it
 * is and its order: its offset from the base in 32-byte units, whose
 * low k - 5 bits are zero for a block of 2^k bytes (aligned to its
 * size), with the low k - 6 of them set to one; so order = 6 + the
 * trailing ones, and a handle is never LEAN_NONE below 128 GiB.  Free
 * blocks are nodes of 16 bytes on one doubly linked list per order and
 * tag (pristine, or the stream's), in the device's order (a block is
 * pushed at the head, the head taken), found by their start through a
 * lib/slotmap (12-16 bytes each).  Each chunk (the device's segments:
 * power-of-two pieces, largest first) keeps its block count and extent
 * (the end of its highest block in use), which the footprint, the seed
 * fragmentation and the peaks read; a free of a chunk's highest block
 * walks down the free blocks below it, as the device walks its list.
 *
 * Placement, splitting, merging and every figure are the device's,
 * proved block by block by tests/unit/test_lean.c.  Bounds: an
 * allocation or a free does at most log2(device / 64) splits or merges,
 * each O(1) expected; a free of a chunk's highest block also looks up
 * each free block below it (up to 32 orders each).
 */
#ifndef MEMSIM_SIM_LEAN_BUDDY_H
#define MEMSIM_SIM_LEAN_BUDDY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/device.h"

typedef struct lean_buddy_s lean_buddy_t;

/* A lean buddy device of `total` bytes with the default base.  NULL
 * without memory, or for a size it cannot name in 32-bit handles (128
 * GiB and more) or that holds no 64-byte block; *err says which. */
lean_buddy_t *lean_buddy_create(uint64_t total, const char **err);
void lean_buddy_destroy(lean_buddy_t *b);

int lean_buddy_alloc(lean_buddy_t *b, uint64_t size, uint64_t align, uint32_t *h);
int lean_buddy_free(lean_buddy_t *b, uint32_t h, uint64_t size);
void lean_buddy_prefetch_free(const lean_buddy_t *b, uint32_t h);
void lean_buddy_metrics(const lean_buddy_t *b, device_metrics_t *m);
uint64_t lean_buddy_reserved(const lean_buddy_t *b);
uint64_t lean_buddy_addr(const lean_buddy_t *b, uint32_t h);
uint64_t lean_buddy_free_blocks(const lean_buddy_t *b);
int lean_buddy_check(const lean_buddy_t *b, const char **why);

#endif
