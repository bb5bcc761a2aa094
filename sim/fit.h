/*
 * fit: the free-block index and carving shared by the fit strategies
 * (first, best, worst, next) and the caching pool.
 *
 * A fit index keeps its free blocks in trees (sim/tree.h) keyed either
 * by (stream, size, address) — best and worst fit, the caching pool — or
 * by (stream, address) — first and next fit: one tree of its own for
 * each of the first FIT_TAGS stream tags it sees (pristine memory is
 * one), and one shared by any further streams, where the stream key
 * keeps them apart.  Every node's weight is its block's size, so a root
 * knows the largest free block below it and first fit can skip subtrees
 * that hold nothing big enough; next fit searches up and on from the
 * node of the free block at its rover when it knows it (a finger search,
 * fit_first_of_either_at), not down from the root.
 *
 * Size bins (best fit, the caching pool): an index may also keep, for the first
 * FIT_BIN_STREAMS tags, one bin per exact size below FIT_BINS granules
 * and a bitmap of the sizes that have blocks (with a summary word of the
 * bitmap's non-zero words).  A bin is a pairing heap of its blocks by
 * address (insertion O(1), removal O(log n) amortized, no rebalancing:
 * bins are small and change at every operation).  Best fit then finds
 * the smallest size that fits with a bit scan and the lowest address of
 * that size at the bin's root: the same block as the lower-bound search
 * over one tree.  Larger blocks, and other tags, stay in the trees.
 *
 * Largest first (worst fit): each tag keeps all its free blocks in one
 * pairing heap, largest first and lowest address among equals, so the
 * choice is the root; only the shared tree stays a tree, by size.  A
 * free block notes its tag (idx_tag) so that taking it out needs no
 * search for the tag.
 *
 * The top (the four fit strategies): the pristine end of the device,
 * where a heap grows, is carved by most allocations and grown by many
 * frees.  In a tree it is the largest node, so every carve would walk
 * the whole path to the root to lower its subtree maxima (by address)
 * or move it (in a heap, by size).  It stays out instead, in ix->top,
 * and every search weighs it against what the trees and heaps give: it
 * is the highest address of its segment, so it wins only on size (best
 * or worst fit) or when nothing indexed fits (first and next fit).
 *
 * Each indexed block has a node of its own (ixnode_t, sim/pool.h),
 * from the pool: the trees and heaps link nodes, which hold the keys
 * (a heap node copies its block's address and size), so a search reads
 * only nodes, which lie close together, and the block it returns.
 * Carving a block and coalescing a freed one hand a node over to the
 * block that takes its place and move it only when its key no longer
 * sorts between the same neighbours: a remainder or a merged block
 * usually stays where it was.  Which node or heap shape
 * holds a block never changes which block a search returns (keys are
 * unique), only what it costs.
 *
 * Alignment: all block addresses and sizes are multiples of the
 * granule, so alignments up to the granule need no padding.  A larger
 * alignment searches for size + align - granule, which is guaranteed to
 * fit once the front is padded (the padding stays a free block), as
 * glibc's memalign does; a block that would fit only by luck of its
 * address is not considered.
 */
#ifndef MEMSIM_SIM_FIT_H
#define MEMSIM_SIM_FIT_H

#include "sim/pool.h"
#include "sim/strategy.h"
#include "sim/tree.h"

typedef enum fit_order_e {
    FIT_BY_SIZE,       /* (stream, size, addr) */
    FIT_BY_ADDR,       /* (stream, addr) */
    FIT_LARGEST_FIRST, /* per tag a heap, largest first (then lowest address);
                          the shared tree as FIT_BY_SIZE */
} fit_order_t;

#define FIT_BINS 512        /* binned sizes: 1..FIT_BINS-1 granules */
#define FIT_BIN_STREAMS 4  /* tags with bins of their own: the first ones */
#define FIT_TAGS 8         /* tags with a tree of their own */
#define FIT_SMALL_STREAMS 16 /* streams 0..15 find their tag without a search */

/* A pairing heap of free blocks' nodes: of one size, lowest address at
 * the root (a size bin), or largest first. */
typedef struct fit_bin_s {
    ixnode_t *root;
    size_t count;
} fit_bin_t;

typedef struct fit_binset_s {
    uint64_t summary;                 /* bit w: nonempty[w] != 0 */
    uint64_t nonempty[FIT_BINS / 64]; /* bit k: bin[k] has blocks */
    fit_bin_t bin[FIT_BINS];          /* blocks of k granules */
} fit_binset_t;

typedef struct fit_bins_s {
    fit_binset_t set[FIT_BIN_STREAMS]; /* set[i]: tag i's */
} fit_bins_t;

/* A stream tag with a tree of its own, or the shared tree. */
typedef struct fit_tag_s {
    int64_t stream;       /* the tag: a stream, or POOL_STREAM_ANY (shared: unused) */
    tree_t tree;          /* its free blocks that are not in a size bin, except: */
    fit_bin_t largest;    /* FIT_LARGEST_FIRST: all its free blocks, a pairing heap */
    fit_binset_t *bins;   /* its size bins, or NULL */
} fit_tag_t;

typedef struct fit_index_s {
    bool keep_top;               /* the top (below) stays out of the trees and heaps */
    block_t *top;                /* keep_top: the last block of its segment when it is free
                                    and pristine, else NULL */
    unsigned ntags;              /* tags claimed, in order; never given back */
    int8_t any_tag;              /* pristine memory's tag, or -1 */
    int8_t small_tag[FIT_SMALL_STREAMS]; /* stream i's tag, or -1 */
    fit_tag_t tag[FIT_TAGS + 1]; /* tag[FIT_TAGS]: the tree shared by every further tag */
    fit_order_t order;
    uint64_t granule;         /* sizes and addresses are multiples of this */
    unsigned granule_shift;   /* log2(granule) */
    fit_bins_t *bins;         /* size bins (FIT_BY_SIZE only), or NULL */
} fit_index_t;

void fit_index_init(fit_index_t *ix, fit_order_t order, uint64_t granule);
/* Index free block b of p (which gives it a node), or take it out (the
 * node goes back). */
void fit_index_insert(fit_index_t *ix, pool_t *p, block_t *b);
void fit_index_remove(fit_index_t *ix, pool_t *p, block_t *b);
/* The largest free block in the index (trees and bins), 0 when empty. */
uint64_t fit_index_largest(const fit_index_t *ix);

/* The block whose index node holds tree node n (or NULL). */
static inline block_t *fit_block(const tree_node_t *n)
{
    return n ? ((const ixnode_t *)((const char *)n - offsetof(ixnode_t, node)))->block : NULL;
}

/* Bytes a block must span to serve req: size rounded to the granule.
 * 0 when that overflows. */
static inline uint64_t fit_block_bytes(uint64_t granule, const strategy_request_t *req)
{
    uint64_t bytes = (req->size + granule - 1) & ~(granule - 1);
    return bytes < req->size ? 0 : bytes;
}

/* Bytes a candidate must have so that req fits after padding. */
static inline uint64_t fit_search_bytes(uint64_t granule, const strategy_request_t *req)
{
    uint64_t bytes = fit_block_bytes(granule, req);
    if (!bytes || req->align <= granule)
        return bytes;
    uint64_t need = bytes + (req->align - granule);
    return need < bytes ? 0 : need;
}

/* The best or first candidate of one stream tag (exact tag), the top
 * (ix->top) included; the worst indexed one, the top excluded. */
block_t *fit_best_of(const fit_index_t *ix, int64_t tag, uint64_t need);
block_t *fit_worst_of(const fit_index_t *ix, int64_t tag, uint64_t need);
block_t *fit_first_of(const fit_index_t *ix, int64_t tag, uint64_t from, uint64_t need);
/* fit_lower(fit_first_of(ix, stream, ...), fit_first_of(ix, POOL_STREAM_ANY,
 * ...)) for a stream that is not POOL_STREAM_ANY, with one call. */
block_t *fit_first_of_either(const fit_index_t *ix, int64_t stream, uint64_t from, uint64_t need);
/* fit_first_of_either(ix, stream, at->addr, need) for an indexed free
 * block `at` of stream or of pristine memory (not the top) in an index
 * by address: a finger search from at's node, which costs little when
 * the answer is at or near it. */
block_t *fit_first_of_either_at(const fit_index_t *ix, int64_t stream, const block_t *at,
                                uint64_t need);
/* The top, when tag is pristine memory's and it has need bytes; NULL
 * otherwise. */
block_t *fit_top_for(const fit_index_t *ix, int64_t tag, uint64_t need);

/* Whether free block b is the top of the device (ix->top: the last
 * block of its segment, pristine: the memory above the extent that no
 * allocation reached yet, or came back to).  Taking from it grows the
 * footprint, as a heap grows by sbrk: a real allocator does that only
 * when no free block fits, and so do worst and next fit (first and best
 * fit reach it last by their own rule on a device larger than the
 * heap). */
static inline bool fit_is_top(const fit_index_t *ix, const block_t *b)
{
    return b && b == ix->top;
}

/* Carve req out of free block b (which is in ix): pad the front to the
 * alignment, keep a remainder of at least min_split bytes as a free
 * block, and mark the rest allocated.  *out is the allocated block. */
int fit_carve(fit_index_t *ix, pool_t *p, block_t *b, const strategy_request_t *req,
              uint64_t block_bytes, uint64_t min_split, block_t **out);

/* Coalesce freed block b with mergeable neighbours (which are in ix)
 * and index the result, which is returned. */
block_t *fit_release(fit_index_t *ix, pool_t *p, block_t *b);

/* The index holds exactly the free blocks of the pool's segments for
 * which belongs(seg) is true (NULL: all), with correct keys. */
int fit_index_check(const fit_index_t *ix, const pool_t *p,
                    bool (*belongs)(const fit_index_t *, const segment_t *),
                    const char **why);

/* ---- the common shape of the four fit strategies ------------------------- */

struct fit_state_s;

/* A fit strategy's choice among the free blocks, given the bytes a
 * candidate needs; NULL when none fits.  Must not change anything. */
typedef block_t *(*fit_select_fn)(const struct fit_state_s *st,
                                  const strategy_request_t *req, uint64_t need);

/* State of a fit strategy.  What the four differ in is the index order
 * and select; the rest of their method tables is the fit_*_op below. */
typedef struct fit_state_s {
    fit_index_t ix;
    fit_select_fn select;
    uint64_t rover; /* where the last allocation ended (next fit's start) */
} fit_state_t;

/* Set up the index with order and select (and size bins when bins is
 * not NULL: zeroed storage the strategy owns), and create the device
 * segment. */
int fit_init(fit_state_t *st, fit_order_t order, fit_select_fn select, pool_t *p,
             const strategy_env_t *env);
int fit_init_binned(fit_state_t *st, fit_bins_t *bins, fit_select_fn select, pool_t *p,
                    const strategy_env_t *env);
int fit_place_op(void *st, pool_t *p, const strategy_request_t *req, block_t **out);
bool fit_can_place_op(const void *st, const pool_t *p, const strategy_request_t *req);
void fit_release_op(void *st, pool_t *p, block_t *b);
uint64_t fit_largest_free_op(const void *st, const pool_t *p);
int fit_check_op(const void *st, const pool_t *p, const char **why);

/* Of two candidates, the one with the lower address (either may be NULL). */
static inline block_t *fit_lower(block_t *a, block_t *b)
{
    if (!a)
        return b;
    if (!b)
        return a;
    return a->addr <= b->addr ? a : b;
}

#endif
