/*
 * pool: the simulated address space of a device — segments tiled by
 * blocks — and the primitives every strategy is built from.
 *
 * Glossary
 *   segment  a contiguous range [addr, addr + size) taken from the device
 *            (the device's whole memory for the fit and buddy strategies,
 *            one cudaMalloc-like reservation for the caching strategy).
 *   block    a piece of a segment.  The blocks of a segment tile it
 *            exactly, in address order:  first->addr == seg->addr,
 *            b->addr + b->size == b->next->addr,  sum(size) == seg->size.
 *   stream   the owner of a block.  A free block is reused only by a
 *            request on its stream; POOL_STREAM_ANY marks pristine memory
 *            (never allocated since its segment was created), which any
 *            stream may take.  A freed block that merges with pristine
 *            memory becomes pristine again, as memory at a heap's top
 *            goes back to the system: otherwise the first stream to free
 *            next to the untouched rest of a device would own all of it.
 *
 * Block states (the Python simulator's lifecycle):
 *   FREE            pristine: never allocated, or merged back into pristine
 *   ALLOC           in use
 *   FREE_REQUESTED  freed by the program but the free has not completed
 *                   (stream-ordered devices): still unavailable
 *   FREE_COMPLETED  free again after use; reusable by its stream
 *
 * The pool keeps byte totals incrementally, so every metric is O(1) or
 * O(log n).  It never decides where a request goes: that is the
 * strategy's job (sim/strategy.h), done with the primitives below.
 * The pool holds no global state; every function takes the pool.
 */
#ifndef MEMSIM_SIM_POOL_H
#define MEMSIM_SIM_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/addrmap.h"
#include "sim/tree.h"

#define POOL_STREAM_ANY INT64_MIN

/* Error codes: functions return 0 or one of these. */
typedef enum pool_err_e {
    POOL_OK = 0,
    POOL_EINVAL = -1,   /* zero size, alignment not a power of two, bad argument */
    POOL_ENOMEM = -2,   /* no free block (or device capacity) can serve it */
    POOL_ETOOBIG = -3,  /* larger than the whole device */
    POOL_ENOENT = -4,   /* not the address of an allocated block */
    POOL_EDOUBLE = -5,  /* the block is already free, or its free was requested */
    POOL_EBUSY = -6,    /* segment still holds allocated blocks; device not empty */
    POOL_EOVERLAP = -7, /* segment would overlap another */
    POOL_EHOST = -8,    /* the host's own allocator failed */
    POOL_ESTATE = -9,   /* operation does not fit the block's state */
} pool_err_t;

/* A short name for an error code: "out of memory", ... */
const char *pool_strerror(int err);

typedef enum block_state_e {
    BLOCK_FREE = 0,
    BLOCK_ALLOC,
    BLOCK_FREE_REQUESTED,
    BLOCK_FREE_COMPLETED,
} block_state_t;

const char *block_state_name(block_state_t s);

struct segment_s;

struct ixnode_s;

/* A block is one cache line, 64-byte aligned: all that coalescing and
 * freeing read (neighbours, state, stream) and the request.  A free
 * block's place in its strategy's free index is a node of its own
 * (ixnode_t below), in the pool's node storage, which shares memory with
 * requested: a block is either allocated (requested) or free (ix),
 * never both.  A pool of a million live blocks, most allocated, so
 * keeps 64 MiB of structs instead of 128, and its index's nodes, one
 * per free block, lie close together. */
typedef struct block_s {
    _Alignas(64) uint64_t addr; /* first byte */
    uint64_t size;             /* bytes spanned; > 0 */
    struct block_s *prev;      /* address-order neighbour in the segment, or NULL */
    struct block_s *next;      /* likewise */
    struct segment_s *seg;     /* owning segment */
    int64_t stream;            /* owner stream, POOL_STREAM_ANY when pristine */
    block_state_t state;
    uint32_t idx_tag;          /* the strategy's free index may note here where a free
                                  block is (fit: its tag) */
    union {
        uint64_t requested;    /* bytes asked for: ALLOC and FREE_REQUESTED blocks only */
        struct ixnode_s *ix;   /* a free block's index node, or NULL (not indexed) */
    };
} block_t;

/* A free block's node in its strategy's free index.  The pool keeps one
 * in reserve for every block struct it has room for, so taking one
 * never fails (pool_node_take). */
typedef struct ixnode_s {
    block_t *block;            /* the free block it indexes */
    union {
        tree_node_t node;      /* in a tree (sim/fit.c) */
        struct {               /* in a doubly linked list (sim/strategy_buddy.c) */
            struct ixnode_s *prev, *next;
        } list;
        struct {               /* in a pairing heap (sim/fit.c's size bins) */
            struct ixnode_s *child; /* first child */
            struct ixnode_s *next;  /* next sibling */
            struct ixnode_s *prev;  /* previous sibling, or the parent of a first child */
            uint64_t addr, size;    /* the block's, for the heap order without reading it */
        } heap;
        struct ixnode_s *spare;     /* not in use: the next spare node */
    };
} ixnode_t;

_Static_assert(sizeof(block_t) == 64, "a block is one cache line");

static inline bool block_is_free(const block_t *b)
{
    return b->state == BLOCK_FREE || b->state == BLOCK_FREE_COMPLETED;
}

static inline uint64_t block_end(const block_t *b) { return b->addr + b->size; }

typedef struct segment_s {
    uint64_t id;           /* unique within the pool, never reused */
    uint64_t addr;         /* first byte */
    uint64_t size;         /* bytes; == sum of its blocks' sizes */
    int64_t stream;        /* stream it was created for (POOL_STREAM_ANY: shared) */
    int kind;              /* strategy's tag (caching: small or large pool) */
    block_t *first, *last; /* blocks in address order */
    uint64_t nblocks;      /* blocks in the segment */
    uint64_t alloc_bytes;  /* bytes of blocks in ALLOC or FREE_REQUESTED */
    uint64_t extent;       /* end of the highest non-free block - addr; 0 if none */
    tree_node_t node;      /* in pool->segments, keyed by addr */
} segment_t;

/* How a proposed range overlaps existing segments. */
typedef enum pool_overlap_e {
    POOL_OVERLAP_NONE = 0,
    POOL_OVERLAP_PARTIAL,   /* crosses one segment's boundary */
    POOL_OVERLAP_CONTAINS,  /* wholly contains one segment */
    POOL_OVERLAP_CONTAINED, /* lies wholly inside one segment */
    POOL_OVERLAP_EXACT,     /* the same range as one segment */
    POOL_OVERLAP_SEVERAL,   /* overlaps more than one segment */
} pool_overlap_t;

const char *pool_overlap_name(pool_overlap_t o);

typedef struct pool_overlap_info_s {
    pool_overlap_t type;
    size_t count;          /* segments overlapped */
    uint64_t first_id;     /* lowest-addressed overlapped segment */
    uint64_t overlap_bytes;/* bytes of the range that lie in segments */
} pool_overlap_info_t;

typedef struct block_chunk_s block_chunk_t;

typedef struct pool_s {
    tree_t segments;          /* segment_t by addr */
    addrmap_t blocks;         /* every block by its start address (unless handles_only) */
    bool handles_only;        /* no address map: blocks are reached through their handles */
    block_chunk_t *chunks;    /* storage for block_t, freed at pool_fini */
    size_t nchunks;
    block_t *spare;           /* recycled block_t structs, linked through next */
    block_t *fresh, *fresh_end; /* the newest chunk's structs never used yet: taken
                                  from fresh when spare is empty */
    ixnode_t *node_spare;     /* given-back index nodes, linked through spare */
    block_chunk_t *node_chunk; /* the oldest chunk whose nodes are not all used yet */
    ixnode_t *node_fresh;     /* its next node never used (node_chunk's) */
    uint64_t nodes_used;      /* nodes taken and not given back */
    uint64_t next_segment_id;
    /* Totals, kept exact after every operation (pool_check verifies): */
    uint64_t segment_bytes;   /* sum of segment sizes */
    uint64_t extent_bytes;    /* sum of segment extents */
    uint64_t alloc_bytes;     /* block bytes in ALLOC or FREE_REQUESTED */
    uint64_t requested_bytes; /* bytes requested by those blocks */
    uint64_t live_blocks;     /* blocks in ALLOC or FREE_REQUESTED */
    uint64_t nblocks;         /* all blocks */
} pool_t;

int pool_init(pool_t *p);
/* A pool without the address map, for callers that keep every block's
 * handle (a replay, a shadow device freed by handle): splitting and
 * merging then touch no hash table, and pool_block_at finds nothing. */
int pool_init_handles_only(pool_t *p);
void pool_fini(pool_t *p);

/* ---- segments ---------------------------------------------------------- */

/* Describe how [addr, addr+size) overlaps existing segments. */
void pool_segment_overlap(const pool_t *p, uint64_t addr, uint64_t size,
                          pool_overlap_info_t *out);

/* Create a segment covering [addr, addr+size) as one free block tagged
 * with stream.  POOL_EINVAL for size 0 or address overflow,
 * POOL_EOVERLAP when it overlaps (see pool_segment_overlap). */
int pool_segment_create(pool_t *p, uint64_t addr, uint64_t size, int64_t stream,
                        int kind, segment_t **out);

/* Lowest address in [lo, hi) where size bytes aligned to align (a power
 * of two) fit without touching a segment.  O(segments). */
int pool_segment_find_range(const pool_t *p, uint64_t size, uint64_t align,
                            uint64_t lo, uint64_t hi, uint64_t *addr);

/* Remove seg and its blocks.  Refused with POOL_EBUSY while any block is
 * allocated or free-requested, unless force. */
int pool_segment_remove(pool_t *p, segment_t *seg, bool force);

/* The segment holding addr, or NULL.  O(log segments). */
segment_t *pool_segment_at(const pool_t *p, uint64_t addr);

segment_t *pool_segment_first(const pool_t *p);
segment_t *pool_segment_next(const segment_t *s);

static inline size_t pool_segment_count(const pool_t *p) { return p->segments.count; }

/* ---- blocks ------------------------------------------------------------ */

/* The block starting exactly at addr, or NULL (always, in a pool that
 * is handles_only).  O(1). */
static inline block_t *pool_block_at(const pool_t *p, uint64_t addr)
{
    return p->handles_only ? NULL : addrmap_get(&p->blocks, addr);
}

/* Whether b is one of the pool's blocks, linked into its segment (the
 * address map agrees, when there is one).  O(1); for the walkers. */
bool pool_block_listed(const pool_t *p, const block_t *b);

/* Split free block b at n (0 < n < b->size): b keeps [addr, addr+n), the
 * new free block *rest gets the remainder, same state and stream.  The
 * caller must have taken b out of any free index. */
int pool_block_split(pool_t *p, block_t *b, uint64_t n, block_t **rest);

/* Split free block b at n (0 < n < b->size) the other way round: the
 * new block *front gets [addr, addr+n), b keeps the remainder, with its
 * index links untouched.  For a caller that carves the front off an
 * indexed block whose remainder stays where b was in the index: b's
 * node needs no handing over then.  The caller must not have b in an
 * index whose key or place the new address or size upsets without
 * fixing it. */
int pool_block_split_front(pool_t *p, block_t *b, uint64_t n, block_t **front);

/* True when a and b are address neighbours in one segment, both free,
 * and their streams agree (or one is pristine). */
static inline bool pool_blocks_mergeable(const block_t *a, const block_t *b)
{
    return a && b && a->next == b && block_is_free(a) && block_is_free(b) &&
           (a->stream == b->stream || a->stream == POOL_STREAM_ANY ||
            b->stream == POOL_STREAM_ANY);
}

/* Merge b, the next neighbour of a, into a (pool_blocks_mergeable holds,
 * neither is in a free index).  b's struct is recycled. */
void pool_block_merge(pool_t *p, block_t *a, block_t *b);

/* Mark free block b allocated for requested bytes on stream. */
void pool_block_mark_alloc(pool_t *p, block_t *b, uint64_t requested, int64_t stream);

/* ALLOC -> FREE_REQUESTED.  POOL_ESTATE otherwise. */
int pool_block_mark_free_requested(pool_t *p, block_t *b);

/* ALLOC or FREE_REQUESTED -> FREE_COMPLETED, keeping its stream.  The
 * strategy then coalesces and indexes it. */
void pool_block_mark_freed(pool_t *p, block_t *b);

/* ---- index nodes ---------------------------------------------------------- */

/* The next node never used, from the chunks' reserve (out of line). */
ixnode_t *pool_node_fresh(pool_t *p);

/* A node for free block b, which becomes b->ix (its links are the
 * caller's to set).  Never fails: the pool keeps a node for each block
 * struct it has room for, and only a block without one takes one. */
static inline ixnode_t *pool_node_take(pool_t *p, block_t *b)
{
    ixnode_t *n = p->node_spare;
    if (n)
        p->node_spare = n->spare;
    else
        n = pool_node_fresh(p);
    n->block = b;
    b->ix = n;
    p->nodes_used++;
    return n;
}

/* Give b's node back (b leaves its index, or is taken from it). */
static inline void pool_node_give(pool_t *p, block_t *b)
{
    ixnode_t *n = b->ix;
    n->spare = p->node_spare;
    p->node_spare = n;
    b->ix = NULL;
    p->nodes_used--;
}

/* ---- metrics and checks ------------------------------------------------- */

/* Fragmentation as the Python simulator computes it: mean over segments of
 * 1 - 1/blocks (0 for a segment of one block). */
double pool_seed_fragmentation(const pool_t *p);

/* Verify tiling, links, states, the address map, every total, and
 * that each free block's node (if any) is its own and counted.
 * 0, or -1 with *why set.  O(blocks). */
int pool_check(const pool_t *p, const char **why);

/* Verify that no two address neighbours are mergeable (what coalescing
 * strategies guarantee; buddy merges only buddies).  O(blocks). */
int pool_check_coalesced(const pool_t *p, const char **why);

#endif
