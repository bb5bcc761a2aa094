/*
 * lean_caching_ext: the insides of the lean caching pool
 * (sim/lean_caching.h), shared by sim/lean_caching.c (runs, segments,
 * placement, the map of run ends of sim/lean_ends.h),
 * sim/lean_caching_index.c (each pool's index of runs) and
 * sim/lean_caching_check.c (its invariants).
 */
#ifndef MEMSIM_SIM_LEAN_CACHING_EXT_H
#define MEMSIM_SIM_LEAN_CACHING_EXT_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/caching_policy.h"
#include "sim/lean_caching.h"
#include "sim/lean_index.h"

#define MB CACHING_MB
#define U CACHING_ROUND          /* the pool's rounding (kMinBlockSize) */
#define USHIFT 9
#define SMALL_SIZE CACHING_SMALL_SIZE
#define ROUND_LARGE CACHING_ROUND_LARGE
#define FRAME_SHIFT 21           /* a frame: 2 MiB, ROUND_LARGE */
#define VIRTUAL_SPAN CACHING_VIRTUAL_SPAN
#define BINS 512                 /* runs of 1..BINS-1 units: a heap per size */
#define NIL UINT32_MAX
#define FAR (1u << 31)           /* handles from here: a slot of far[] */

_Static_assert(U == 1ull << USHIFT && ROUND_LARGE == 1ull << FRAME_SHIFT, "units");

enum { KIND_SMALL, KIND_LARGE, KINDS };

/* A free run of a segment. */
typedef struct cext_s {
    uint64_t addr, size;
    uint32_t l, r, p; /* treap links, or a heap's: first child, next sibling, previous
                         sibling or parent (NIL: none); a spare slot links through l */
    uint32_t seg;     /* its segment's slot; NIL: a spare slot */
    uint32_t bin;     /* its index: the heap bin_root[bin] of its pool, 0: the treap */
    uint32_t kind;    /* its pool */
} cext_t;

/* A segment: [addr, addr + size), tiled by its blocks. */
typedef struct cseg_s {
    uint64_t addr, size;
    uint64_t nblocks; /* blocks tiling it, free or allocated; 0: a spare slot */
    uint32_t prev, next; /* by address (NIL: none); a spare links through next */
    uint32_t kind;
} cseg_t;

/* A slot of the map of run ends: a start's or an end's key, and its run. */
typedef struct __attribute__((packed)) cslot_s {
    uint64_t key;
    uint32_t x; /* the run; NIL: an empty slot */
} cslot_t;

/* A block a direct handle cannot name. */
typedef struct far_s {
    uint64_t addr, size; /* a spare slot: size is the next spare */
} far_t;

typedef struct pool_ix_s {
    uint32_t root;            /* runs of BINS units and more, by (size, address) */
    uint32_t bin_root[BINS];  /* runs of b units, by address */
    uint64_t nonempty[BINS / 64];
} pool_ix_t;

struct lean_caching_s {
    uint64_t total, base;     /* capacity in reserved bytes; where segments go */
    cext_t *e;                /* runs, by slot */
    uint32_t ne, cap, spare;  /* slots made, room, recycled (through l) */
    uint64_t nexts;           /* runs in use */
    pool_ix_t pool[KINDS];
    cslot_t *hash;            /* the map of run ends: start_key and end_key -> run */
    uint64_t hcap, hcount;    /* slots (a power of two), in use (at most 3/4) */
    unsigned hshift;          /* 64 - log2(hcap) */
    uint32_t nspare;          /* runs' slots on the spare list */
    cseg_t *s;                /* segments, by slot */
    uint32_t ns, scap, sspare, sfirst; /* made, room, recycled, lowest addressed */
    uint64_t nsegs;
    uint32_t *frame;          /* (addr - base) >> FRAME_SHIFT -> segment slot, or NIL */
    uint64_t nframes;
    far_t *far;
    uint32_t nfar, farcap, farspare;
    uint64_t seg_bytes, alloc_bytes, requested, live_blocks, nblocks;
    uint64_t peak_footprint, peak_live, internal_at_peak, live_at_peak, free_at_peak;
    double external_at_peak;
};

/* ---- keys and handles ------------------------------------------------------------- */

/* A run boundary's keys: a start and an end at one address differ (two
 * segments may touch). */
static inline uint64_t start_key(const lean_caching_t *c, uint64_t addr)
{
    return ((addr - c->base) >> USHIFT) << 1;
}

static inline uint64_t end_key(const lean_caching_t *c, uint64_t addr)
{
    return start_key(c, addr) | 1;
}

/* The map (sim/lean_ends.h). */
#define ENDS_CTX lean_caching_t
#define ENDS_SLOT cslot_t
#define ENDS_KEY uint64_t
#include "sim/lean_ends.h"

/* ---- the index (sim/lean_caching_index.c; priorities: sim/lean_index.h) ---------- */

/* The bin of a run of size bytes, 0: the treap. */
static inline uint32_t bin_of(uint64_t size)
{
    uint64_t u = size >> USHIFT;
    return u < BINS ? (uint32_t)u : 0;
}

/* The treap's order: whether run a sorts before run b. */
static inline bool before(const lean_caching_t *c, uint32_t a, uint32_t b)
{
    const cext_t *x = &c->e[a], *y = &c->e[b];
    return x->size != y->size ? x->size < y->size : x->addr < y->addr;
}

/* Run x into its pool's index (the bin of its size, or the treap), or
 * out of it. */
void lean_caching_index_insert(lean_caching_t *c, uint32_t x);
void lean_caching_index_remove(lean_caching_t *c, uint32_t x);
/* Run x's size (and maybe address) changed: where it belongs now. */
void lean_caching_rekey(lean_caching_t *c, uint32_t x);
/* The pool's least (size, address) with size >= need (a multiple of
 * 512), or NIL: the device's fit_best_of. */
uint32_t lean_caching_smallest_fit(const lean_caching_t *c, int kind, uint64_t need);
/* The largest free run of either pool, 0 when none. */
uint64_t lean_caching_largest_free(const lean_caching_t *c);

#endif
