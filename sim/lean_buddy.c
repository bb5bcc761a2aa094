/*
 * lean_buddy: the buddy strategy for one stream, as free blocks only.
 * See lean_buddy.h; the device's form is sim/strategy_buddy.c.
 *
 * Invariants (lean_buddy_check):
 *   every node in use is on the list of its tag and order, once, and
 *   in the map under its start; the map holds nothing else;
 *   nonempty[t] bit k <=> head[t][k] != NIL;
 *   a free block lies in one chunk, aligned to its size from the
 *   chunk's start, and its buddy is not a free block of its order;
 *   alloc_bytes + the free blocks' bytes == seg_bytes;
 *   the chunks' block counts sum to nblocks, their extents to
 *   extent_bytes.
 */
#include "sim/lean_buddy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/check.h"
#include "lib/slotmap.h"
#include "sim/lean.h"

#define MIN_ORDER 6 /* 64 bytes, as the device's BUDDY_MIN_ORDER */
#define ORDERS 64
#define NIL UINT32_MAX
#define UNIT_SHIFT 6 /* a node's start, in 64-byte units */

enum { TAG_ANY, TAG_OWN, TAGS }; /* pristine memory; the stream's own */

/* A free block. */
typedef struct bnode_s {
    uint32_t at;         /* its start from the base, in 64-byte units */
    uint32_t prev, next; /* on its list (NIL: none); a spare links through next */
    uint8_t order, tag;
} bnode_t;

/* A power-of-two piece of the device: a segment of the device's pool. */
typedef struct chunk_s {
    uint64_t off, size; /* from the base */
    uint64_t extent;    /* the end of its highest block in use, from off; 0: none */
    uint64_t nblocks;   /* blocks tiling it, free or not */
    int order;          /* size == 1 << order */
} chunk_t;

struct lean_buddy_s {
    uint64_t total, base, seg_bytes;
    uint64_t base_align;           /* largest power of two dividing the base */
    chunk_t chunk[ORDERS];         /* by address: largest first */
    unsigned nchunks;
    bnode_t *n;                    /* nodes, by index */
    uint32_t nn, cap, spare;       /* made, room, recycled (through next) */
    uint64_t nfree;                /* nodes in use: the free blocks */
    uint32_t head[TAGS][ORDERS];   /* the lists: head[tag][order] */
    uint64_t nonempty[TAGS];       /* bit k: head[tag][k] != NIL */
    slotmap_t byat;                /* a free block's at -> its node + 1 */
    uint64_t alloc_bytes, requested, live_blocks, nblocks, extent_bytes;
    uint64_t peak_footprint, peak_live, internal_at_peak, live_at_peak, free_at_peak;
    double external_at_peak;
};

/* ---- handles ------------------------------------------------------------------ */

/* The handle of the block of 2^k bytes at off (from the base). */
static inline uint32_t handle_of(uint64_t off, int k)
{
    return (uint32_t)(off >> 5) | ((1u << (k - MIN_ORDER)) - 1);
}

static inline int handle_order(uint32_t h) { return MIN_ORDER + __builtin_ctz(~h); }

static inline uint64_t handle_off(uint32_t h)
{
    int t = __builtin_ctz(~h);
    return (uint64_t)(h >> t << t) << 5;
}

/* ---- nodes and lists -------------------------------------------------------------- */

static unsigned chunk_of(const lean_buddy_t *b, uint64_t off)
{
    unsigned i = 0;
    while (off >= b->chunk[i].off + b->chunk[i].size)
        i++;
    return i;
}

/* The free block starting at off, or NIL. */
static inline uint32_t node_at(const lean_buddy_t *b, uint64_t off)
{
    return slotmap_get(&b->byat, off >> UNIT_SHIFT) - 1; /* 0 - 1: NIL */
}

/* Room for one more node without failing.  0 or -1. */
static int node_room(lean_buddy_t *b)
{
    if (b->spare != NIL || b->nn < b->cap)
        return 0;
    uint32_t cap = b->cap ? b->cap * 2 : 1024;
    if (cap <= b->cap || cap >= NIL)
        return -1;
    bnode_t *n = realloc(b->n, (size_t)cap * sizeof *n);
    if (!n)
        return -1;
    b->n = n;
    b->cap = cap;
    return 0;
}

/* A free block at off of order k with tag, at the head of its list.
 * NIL without memory (nothing changed). */
static uint32_t node_new(lean_buddy_t *b, uint64_t off, int k, int tag)
{
    uint32_t old;
    if (node_room(b) || slotmap_reserve(&b->byat, 1))
        return NIL;
    uint32_t x = b->spare;
    if (x != NIL)
        b->spare = b->n[x].next;
    else
        x = b->nn++;
    slotmap_exchange(&b->byat, off >> UNIT_SHIFT, x + 1, &old); /* room reserved */
    uint32_t h = b->head[tag][k];
    b->n[x] = (bnode_t){.at = (uint32_t)(off >> UNIT_SHIFT), .prev = NIL, .next = h,
                        .order = (uint8_t)k, .tag = (uint8_t)tag};
    if (h != NIL)
        b->n[h].prev = x;
    b->head[tag][k] = x;
    b->nonempty[tag] |= 1ull << k;
    b->nfree++;
    return x;
}

/* Node x off its list and out of the map, recycled. */
static void node_drop(lean_buddy_t *b, uint32_t x)
{
    bnode_t *e = &b->n[x];
    if (e->prev != NIL)
        b->n[e->prev].next = e->next;
    else
        b->head[e->tag][e->order] = e->next;
    if (e->next != NIL)
        b->n[e->next].prev = e->prev;
    if (b->head[e->tag][e->order] == NIL)
        b->nonempty[e->tag] &= ~(1ull << e->order);
    slotmap_remove(&b->byat, e->at);
    e->next = b->spare;
    b->spare = x;
    b->nfree--;
}

/* Every invariant after an operation, in a checked build (lib/check.h). */
static void checked(const lean_buddy_t *b, const char *after)
{
    CHECK_EXPENSIVE({
        const char *why;
        if (lean_buddy_check(b, &why)) {
            fprintf(stderr, "memsim: lean buddy check failed after %s: %s\n", after, why);
            abort();
        }
    });
    (void)b;
    (void)after;
}

/* ---- the device ----------------------------------------------------------------- */

lean_buddy_t *lean_buddy_create(uint64_t total, const char **err)
{
    uint64_t size = total & ~((1ull << MIN_ORDER) - 1), base = DEVICE_DEFAULT_BASE;
    if (!size || (total >> 5) >= NIL || base + total < base) {
        *err = "no lean device of that size for strategy \"buddy\"";
        return NULL;
    }
    lean_buddy_t *b = calloc(1, sizeof *b);
    if (!b || slotmap_init(&b->byat)) {
        free(b);
        *err = "out of host memory";
        return NULL;
    }
    b->total = total;
    b->base = base;
    b->base_align = base & -base;
    b->seg_bytes = size;
    b->spare = NIL;
    memset(b->head, 0xff, sizeof b->head); /* NIL */
    /* The device's segments: one per power of two, largest first, each
     * one free pristine block. */
    for (uint64_t at = 0; size;) {
        int k = 63 - __builtin_clzll(size);
        b->chunk[b->nchunks++] = (chunk_t){.off = at, .size = 1ull << k, .nblocks = 1, .order = k};
        b->nblocks++;
        if (node_new(b, at, k, TAG_ANY) == NIL) {
            lean_buddy_destroy(b);
            *err = "out of host memory";
            return NULL;
        }
        at += 1ull << k;
        size -= 1ull << k;
    }
    return b;
}

void lean_buddy_destroy(lean_buddy_t *b)
{
    if (!b)
        return;
    slotmap_fini(&b->byat);
    free(b->n);
    free(b);
}

uint64_t lean_buddy_addr(const lean_buddy_t *b, uint32_t h) { return b->base + handle_off(h); }
uint64_t lean_buddy_reserved(const lean_buddy_t *b) { return b->extent_bytes; }
uint64_t lean_buddy_free_blocks(const lean_buddy_t *b) { return b->nfree; }

static uint64_t largest_free(const lean_buddy_t *b)
{
    uint64_t m = b->nonempty[TAG_ANY] | b->nonempty[TAG_OWN];
    return m ? 1ull << (63 - __builtin_clzll(m)) : 0;
}

/* Smallest order >= k on tag's lists, or -1. */
static inline int smallest_order(const lean_buddy_t *b, int tag, int k)
{
    uint64_t m = b->nonempty[tag] & ~((1ull << k) - 1);
    return m ? __builtin_ctzll(m) : -1;
}

__attribute__((noinline))
static void new_peak(lean_buddy_t *b, uint64_t res)
{
    uint64_t free_bytes = b->seg_bytes - b->alloc_bytes;
    b->peak_footprint = res;
    b->internal_at_peak = b->alloc_bytes - b->requested;
    b->live_at_peak = b->requested;
    b->free_at_peak = res - b->alloc_bytes;
    b->external_at_peak =
        free_bytes ? 1.0 - (double)largest_free(b) / (double)free_bytes : 0.0;
}

int lean_buddy_alloc(lean_buddy_t *b, uint64_t size, uint64_t align, uint32_t *h)
{
    if (size - 1 >= b->total || !align || (align & (align - 1)))
        return POOL_EINVAL;
    uint64_t want = size > align ? size : align;
    if (align > b->base_align)
        return POOL_EINVAL;
    if (want > (1ull << 62))
        return POOL_ENOMEM;
    int k = want <= 1 ? 0 : 64 - __builtin_clzll(want - 1);
    if (k < MIN_ORDER)
        k = MIN_ORDER;
    /* The stream's own free blocks, else pristine memory, whichever has
     * the smaller block (its own on a tie). */
    int jo = smallest_order(b, TAG_OWN, k), ja = smallest_order(b, TAG_ANY, k), tag, j;
    if (jo >= 0 && (ja < 0 || jo <= ja)) {
        tag = TAG_OWN;
        j = jo;
    } else if (ja >= 0) {
        tag = TAG_ANY;
        j = ja;
    } else {
        return POOL_ENOMEM;
    }
    uint32_t x = b->head[tag][j];
    uint64_t off = (uint64_t)b->n[x].at << UNIT_SHIFT;
    chunk_t *c = &b->chunk[chunk_of(b, off)];
    /* Split down to order k, the upper half of each split onto its list
     * (the head), as the device does; without memory for a half, the
     * block stays free as it is then (the device's failure too). */
    while (j > k) {
        if (node_new(b, off + (1ull << (j - 1)), j - 1, tag) == NIL) {
            node_drop(b, x);
            node_new(b, off, j, tag); /* (a node just given back: room) */
            return POOL_EHOST;
        }
        j--;
        c->nblocks++;
        b->nblocks++;
    }
    node_drop(b, x);
    uint64_t bytes = 1ull << k;
    b->alloc_bytes += bytes;
    b->requested += size;
    b->live_blocks++;
    uint64_t end = off + bytes - c->off;
    if (end > c->extent) {
        b->extent_bytes += end - c->extent;
        c->extent = end;
    }
    if (b->extent_bytes > b->peak_footprint)
        new_peak(b, b->extent_bytes);
    if (b->requested > b->peak_live)
        b->peak_live = b->requested;
    *h = handle_of(off, k);
    checked(b, "an alloc");
    return POOL_OK;
}

/* The end of the highest block in use below rel (a block boundary,
 * from chunk c's start): down through the free blocks ending there. */
static uint64_t used_below(const lean_buddy_t *b, const chunk_t *c, uint64_t rel)
{
    while (rel) {
        /* The block ending at rel is 2^k bytes with 2^k dividing rel. */
        int top = __builtin_ctzll(rel), k;
        for (k = MIN_ORDER; k <= top && k <= c->order; k++) {
            uint32_t y = node_at(b, c->off + rel - (1ull << k));
            if (y != NIL && b->n[y].order == k)
                break;
        }
        if (k > top || k > c->order)
            return rel; /* not free: in use */
        rel -= 1ull << k;
    }
    return 0;
}

int lean_buddy_free(lean_buddy_t *b, uint32_t h, uint64_t size)
{
    int k = handle_order(h);
    uint64_t off = handle_off(h), bytes = 1ull << k;
    /* Room for the node it ends as: merging only gives nodes back. */
    if (node_room(b) || slotmap_reserve(&b->byat, 1))
        return -1;
    chunk_t *c = &b->chunk[chunk_of(b, off)];
    b->alloc_bytes -= bytes;
    b->requested -= size;
    b->live_blocks--;
    if (off + bytes - c->off == c->extent) {
        uint64_t end = used_below(b, c, off - c->off);
        b->extent_bytes -= c->extent - end;
        c->extent = end;
    }
    /* Merge with the buddy while it is a free block of the same order
     * (its tag always compatible: one stream): pristine when either
     * was. */
    int tag = TAG_OWN;
    while (k < c->order) {
        uint64_t boff = c->off + ((off - c->off) ^ (1ull << k));
        uint32_t y = node_at(b, boff);
        if (y == NIL || b->n[y].order != k)
            break;
        if (b->n[y].tag == TAG_ANY)
            tag = TAG_ANY;
        node_drop(b, y);
        if (boff < off)
            off = boff;
        k++;
        c->nblocks--;
        b->nblocks--;
    }
    node_new(b, off, k, tag); /* room made above, or given back by a merge */
    checked(b, "a free");
    return 0;
}

void lean_buddy_prefetch_free(const lean_buddy_t *b, uint32_t h)
{
    int k = handle_order(h);
    uint64_t off = handle_off(h);
    const chunk_t *c = &b->chunk[chunk_of(b, off)];
    if (k < c->order)
        slotmap_prefetch(&b->byat, (c->off + ((off - c->off) ^ (1ull << k))) >> UNIT_SHIFT);
}

void lean_buddy_metrics(const lean_buddy_t *b, device_metrics_t *m)
{
    memset(m, 0, sizeof *m);
    m->total = b->total;
    m->segments = b->nchunks;
    m->blocks = b->nblocks;
    m->live_blocks = b->live_blocks;
    m->live_requested = b->requested;
    m->live_allocated = b->alloc_bytes;
    m->segment_bytes = b->seg_bytes;
    m->reserved = b->extent_bytes;
    m->peak_footprint = b->peak_footprint;
    m->peak_live_requested = b->peak_live;
    m->largest_free = largest_free(b);
    m->internal_fragmentation = b->alloc_bytes - b->requested;
    m->free_bytes = b->seg_bytes - b->alloc_bytes;
    m->free_blocks = b->nblocks - b->live_blocks;
    m->external_fragmentation =
        m->free_bytes ? 1.0 - (double)m->largest_free / (double)m->free_bytes : 0.0;
    double sum = 0; /* pool_seed_fragmentation: the chunks by address */
    for (unsigned i = 0; i < b->nchunks; i++)
        if (b->chunk[i].nblocks > 1)
            sum += 1.0 - 1.0 / (double)b->chunk[i].nblocks;
    m->seed_fragmentation = b->nchunks ? sum / (double)b->nchunks : 0.0;
    m->utilization = b->seg_bytes ? (double)b->alloc_bytes / (double)b->seg_bytes : 0.0;
    m->jw_fragmentation =
        b->peak_live ? (double)b->peak_footprint / (double)b->peak_live - 1.0 : 0.0;
    m->internal_at_peak = b->internal_at_peak;
    m->external_at_peak = b->external_at_peak;
    m->live_at_peak = b->live_at_peak;
    m->free_at_peak = b->free_at_peak;
}

int lean_buddy_check(const lean_buddy_t *b, const char **why)
{
#define FAIL(msg)      \
    do {               \
        *why = (msg);  \
        return -1;     \
    } while (0)
    const char *mwhy;
    if (slotmap_check(&b->byat, &mwhy))
        FAIL(mwhy);
    uint64_t listed = 0, free_bytes = 0;
    for (int t = 0; t < TAGS; t++)
        for (int k = 0; k < ORDERS; k++) {
            if ((b->head[t][k] != NIL) != !!(b->nonempty[t] & (1ull << k)))
                FAIL("a non-empty mask disagrees with its list");
            uint32_t prev = NIL;
            for (uint32_t x = b->head[t][k]; x != NIL; prev = x, x = b->n[x].next) {
                const bnode_t *e = &b->n[x];
                if (++listed > b->nfree)
                    FAIL("the lists hold more nodes than are in use (a cycle?)");
                if (e->prev != prev || e->tag != t || e->order != k)
                    FAIL("a list holds a wrong node");
                uint64_t off = (uint64_t)e->at << UNIT_SHIFT, size = 1ull << k;
                if (node_at(b, off) != x)
                    FAIL("a free block is not in the map under its start");
                if (off >= b->seg_bytes)
                    FAIL("a free block beyond the chunks");
                const chunk_t *c = &b->chunk[chunk_of(b, off)];
                if (off + size > c->off + c->size || ((off - c->off) & (size - 1)))
                    FAIL("a free block is not a buddy block of its chunk");
                if (k < c->order) {
                    uint32_t y = node_at(b, c->off + ((off - c->off) ^ size));
                    if (y != NIL && b->n[y].order == k)
                        FAIL("two free buddies were not merged");
                }
                free_bytes += size;
            }
        }
    if (listed != b->nfree || b->byat.count != b->nfree)
        FAIL("the free blocks, the lists and the map disagree");
    if (b->alloc_bytes + free_bytes != b->seg_bytes)
        FAIL("the free and allocated bytes do not tile the chunks");
    uint64_t nblocks = 0, extent = 0;
    for (unsigned i = 0; i < b->nchunks; i++) {
        nblocks += b->chunk[i].nblocks;
        extent += b->chunk[i].extent;
        if (b->chunk[i].extent > b->chunk[i].size)
            FAIL("a chunk's extent beyond its end");
    }
    if (nblocks != b->nblocks || extent != b->extent_bytes)
        FAIL("the chunks' blocks or extents do not sum to the totals");
    if (b->nblocks < b->live_blocks + b->nfree || b->nblocks != b->live_blocks + b->nfree)
        FAIL("blocks are not the live ones and the free ones");
    return 0;
#undef FAIL
}
