/*
 * lean_ext: the insides of a lean device (sim/lean.h), shared by
 * sim/lean.c (the device: extents, placement, the hash of run ends of
 * sim/lean_ends.h), sim/lean_treap.c (the treaps of extents) and
 * sim/lean_check.c (its invariants).
 */
#ifndef MEMSIM_CORE_LEAN_EXT_H
#define MEMSIM_CORE_LEAN_EXT_H

#include "sim/lean.h"
#include "sim/lean_buddy.h"
#include "sim/lean_caching.h"
#include "sim/lean_index.h"

#define NIL LEAN_NONE
#define G DEVICE_DEFAULT_GRANULE
#define GSHIFT 4
_Static_assert(G == 1u << GSHIFT, "the granule is 16 bytes");

typedef enum pick_e { PICK_FIRST, PICK_NEXT, PICK_BEST, PICK_WORST } pick_t;

enum { EXT_PRISTINE = 1, EXT_USED = 2 };

/* Best fit's size bins: a run of fewer than LEAN_BINS granules sits in
 * a treap of its own size (by address), the rest in the main treap, as
 * the device keeps its small free blocks in bins by exact size.  The
 * smallest run that fits is then a bit scan and the leftmost node of a
 * small treap, not a descent through all the runs.  An indexed run
 * notes its bin in its flags (BIN_SHIFT up; 0: the main treap). */
#define LEAN_BINS 512
#define BIN_SHIFT 8

/* A free run of the device. */
typedef struct ext_s {
    uint64_t addr, size;
    uint64_t max;     /* by address: the largest size in this subtree */
    uint32_t l, r, p; /* treap links (NIL: none); a spare slot links through l */
    uint32_t flags;   /* EXT_PRISTINE: never allocated, as the device's stream ANY */
} ext_t;

/* A hash slot: a run boundary, in granules from the base: an extent's
 * start or its end.  A start and an end never share a boundary (runs
 * that touch are merged), so one key names one extent. */
typedef struct slot_s {
    uint32_t key;
    uint32_t x; /* the extent; NIL: an empty slot */
} slot_t;

struct lean_s {
    const strategy_ops_t *ops;
    lean_buddy_t *buddy;  /* buddy's form (sim/lean_buddy.h), or NULL: */
    lean_caching_t *caching; /* caching's (sim/lean_caching.h), or NULL: a fit's */
    pick_t pick;
    bool by_addr;       /* the treap's order: address (first, next), or (size, address) */
    uint64_t total;     /* the device's capacity */
    uint64_t base, end; /* the one segment: [base, end) */
    ext_t *e;           /* extents, by slot */
    uint32_t ne, cap;   /* slots made, room */
    uint32_t spare;     /* recycled slots, linked through l */
    uint64_t nexts;     /* extents in use */
    uint32_t root, top;
    uint32_t *bin_root; /* best fit: bin_root[g], the treap of runs of g granules
                           (1 <= g < LEAN_BINS); NULL for the others */
    uint64_t nonempty[LEAN_BINS / 64]; /* bit g: bin_root[g] != NIL */
    slot_t *hash;
    uint64_t hcap, hcount;
    unsigned hshift;    /* 64 - log2(hcap) */
    uint64_t rover;     /* next fit: where the last allocation ended */
    uint64_t alloc_bytes, requested, live_blocks;
    uint64_t peak_footprint, peak_live, internal_at_peak, live_at_peak, free_at_peak;
    double external_at_peak;
};

/* ---- the hash of extents' ends (sim/lean_ends.h) ------------------------------ */

#define ENDS_CTX lean_t
#define ENDS_SLOT slot_t
#define ENDS_KEY uint32_t
#include "sim/lean_ends.h"

/* The key of a run boundary at addr (base <= addr <= end). */
static inline uint32_t bkey(const lean_t *l, uint64_t addr)
{
    return (uint32_t)((addr - l->base) >> GSHIFT);
}

/* ---- the treaps (sim/lean_treap.c; priorities: sim/lean_index.h) ------------- */

/* The bin a run of size bytes goes in: 0 (the main treap), or its
 * granules when best fit bins it. */
static inline uint32_t bin_of(const lean_t *l, uint64_t size)
{
    return l->bin_root && size < ((uint64_t)LEAN_BINS << GSHIFT) ? (uint32_t)(size >> GSHIFT) : 0;
}

/* Whether a sorts before b. */
static inline bool before(const lean_t *l, uint32_t a, uint32_t b)
{
    const ext_t *x = &l->e[a], *y = &l->e[b];
    if (l->by_addr || x->size == y->size)
        return x->addr < y->addr;
    return x->size < y->size;
}

/* Worst fit's heap order: whether a comes out before b (the larger,
 * then the lower address). */
static inline bool heap_before(const lean_t *l, uint32_t a, uint32_t b)
{
    const ext_t *x = &l->e[a], *y = &l->e[b];
    return x->size != y->size ? x->size > y->size : x->addr < y->addr;
}

static inline uint64_t max3(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t m = a > b ? a : b;
    return m > c ? m : c;
}

/* Whether extent x is the top: it ends the device and is pristine. */
static inline bool is_top(const lean_t *l, uint32_t x)
{
    const ext_t *e = &l->e[x];
    return e->addr + e->size == l->end && (e->flags & EXT_PRISTINE);
}

/* Extent x into its treap (by its key; best fit: its size's bin; worst
 * fit: the heap), or out of it. */
void lean_treap_insert(lean_t *l, uint32_t x);
void lean_treap_remove(lean_t *l, uint32_t x);
/* Extent x's address or size changed (its place among the others by
 * address did not): put it where it belongs now; grew: it only grew (a
 * free merged into it), else it only shrank (carved).  By size, a node
 * whose new key still sorts between its neighbours stays where it is
 * (a priority does not depend on the key).  In worst fit's heap, a
 * carved root goes back in as the meld of its children with it alone;
 * a grown node leaves its parent with its subtree, melded with the
 * root. */
void lean_changed(lean_t *l, uint32_t x, bool grew);

#endif
