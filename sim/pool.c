/*
 * pool: segments, blocks and their primitives.  See pool.h.
 */
#include "sim/pool.h"
#include "lib/check.h"
#include "lib/lines.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Block structs come in chunks: the first few of a pool small, later
 * ones of a huge page each (2 MiB, madvise'd: the kernel's transparent
 * huge pages are on madvise here by default), for the pools of traces
 * with many live blocks, whose structs are reached at random: one page
 * fault and one TLB entry for 32k structs instead of 512 of each.
 *
 * Each chunk comes with as many index nodes (pool_node_take), in memory
 * of their own, which the host maps only as they are first used: a
 * node is taken for a free block only, and the nodes of all chunks are
 * used in order, oldest chunk first, after the given-back ones.  So
 * there is always a node for a block, and the memory nodes take is that
 * of the most free blocks indexed at once. */
#define BLOCKS_PER_CHUNK 4096
#define SMALL_CHUNKS 3            /* a pool's first chunks, of BLOCKS_PER_CHUNK */
#define HUGE_CHUNK (2u << 20)     /* the later ones' bytes, and their alignment */

struct block_chunk_s {
    block_chunk_t *next;      /* the chunk made before this one */
    block_chunk_t *newer;     /* the one made after it, or NULL */
    void *raw;                /* what malloc returned: the chunk is aligned up from it */
    ixnode_t *nodes, *nodes_end; /* its nodes (their own malloc) */
    block_t blocks[];
};

#define container_of(ptr, type, member) \
    ((type *)((char *)(ptr) - offsetof(type, member)))

const char *pool_strerror(int err)
{
    switch (err) {
    case POOL_OK: return "success";
    case POOL_EINVAL: return "invalid argument";
    case POOL_ENOMEM: return "out of memory";
    case POOL_ETOOBIG: return "larger than the device";
    case POOL_ENOENT: return "unknown address";
    case POOL_EDOUBLE: return "double free";
    case POOL_EBUSY: return "still in use";
    case POOL_EOVERLAP: return "overlaps a segment";
    case POOL_EHOST: return "host allocation failed";
    case POOL_ESTATE: return "wrong block state";
    default: return "unknown error";
    }
}

const char *block_state_name(block_state_t s)
{
    switch (s) {
    case BLOCK_FREE: return "free";
    case BLOCK_ALLOC: return "alloc";
    case BLOCK_FREE_REQUESTED: return "free_requested";
    case BLOCK_FREE_COMPLETED: return "free_completed";
    }
    return "?";
}

const char *pool_overlap_name(pool_overlap_t o)
{
    switch (o) {
    case POOL_OVERLAP_NONE: return "none";
    case POOL_OVERLAP_PARTIAL: return "partial";
    case POOL_OVERLAP_CONTAINS: return "contains";
    case POOL_OVERLAP_CONTAINED: return "contained";
    case POOL_OVERLAP_EXACT: return "exact";
    case POOL_OVERLAP_SEVERAL: return "several";
    }
    return "?";
}

/* ---- block storage ------------------------------------------------------ */

/* A new chunk of structs, fresh, and its nodes.  0, or -1 when the host
 * has no memory. */
static int chunk_new(pool_t *p)
{
    bool huge = p->nchunks >= SMALL_CHUNKS;
    size_t bytes = huge ? HUGE_CHUNK : sizeof(block_chunk_t) + BLOCKS_PER_CHUNK * sizeof(block_t);
    size_t align = huge ? HUGE_CHUNK : _Alignof(block_chunk_t);
    size_t nblocks = (bytes - sizeof(block_chunk_t)) / sizeof(block_t);
    /* malloc, not aligned_alloc: the unit tests make malloc fail on
     * purpose, and this must be one of the places it can.  (Aligned up
     * from it: a huge chunk's slack is address space, never touched.) */
    void *raw = malloc(bytes + align - 1);
    ixnode_t *nodes = raw ? malloc(nblocks * sizeof *nodes) : NULL;
    if (!nodes) {
        free(raw);
        return -1;
    }
    block_chunk_t *c = (block_chunk_t *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
    if (huge)
        madvise(c, bytes, MADV_HUGEPAGE); /* only advice: no huge page, no harm */
    c->raw = raw;
    c->nodes = nodes;
    c->nodes_end = nodes + nblocks;
    c->next = p->chunks;
    c->newer = NULL;
    if (p->chunks)
        p->chunks->newer = c;
    p->chunks = c;
    p->nchunks++;
    if (!p->node_chunk) {
        p->node_chunk = c;
        p->node_fresh = c->nodes;
    }
    /* Taken in order as needed: a page is touched when its first struct
     * is used, not all at once. */
    p->fresh = c->blocks;
    p->fresh_end = c->blocks + nblocks;
    return 0;
}

ixnode_t *pool_node_fresh(pool_t *p)
{
    block_chunk_t *c = p->node_chunk;
    while (c && p->node_fresh == c->nodes_end) {
        c = p->node_chunk = c->newer;
        p->node_fresh = c ? c->nodes : NULL;
    }
    if (!c) { /* more free blocks indexed than blocks: a strategy lost nodes */
        fputs("memsim: internal error: a pool ran out of index nodes\n", stderr);
        abort();
    }
    return p->node_fresh++;
}

static block_t *block_new(pool_t *p)
{
    block_t *b = p->spare;
    if (b) {
        p->spare = b->next;
        /* Recycled structs lie anywhere, most out of cache: bring the next
         * one's line in while the caller works, not at the next call. */
        if (p->spare)
            __builtin_prefetch(p->spare, 1);
    } else {
        if (p->fresh == p->fresh_end && chunk_new(p))
            return NULL;
        b = p->fresh++;
    }
    /* The caller sets addr, size, seg, stream and state.  requested = 0
     * is also ix = NULL: no index node until a free index gives it one. */
    b->requested = 0;
    b->prev = b->next = NULL;
    return b;
}

static void block_recycle(pool_t *p, block_t *b)
{
    b->next = p->spare;
    p->spare = b;
}

static segment_t *seg_of(tree_node_t *n);

int pool_init(pool_t *p)
{
    memset(p, 0, sizeof *p);
    tree_init(&p->segments);
    return addrmap_init(&p->blocks, 1024) ? POOL_EHOST : POOL_OK;
}

int pool_init_handles_only(pool_t *p)
{
    memset(p, 0, sizeof *p);
    tree_init(&p->segments);
    p->handles_only = true;
    return POOL_OK;
}

void pool_fini(pool_t *p)
{
    while (p->chunks) {
        block_chunk_t *c = p->chunks;
        p->chunks = c->next;
        free(c->nodes);
        free(c->raw);
    }
    while (p->segments.root) {
        segment_t *s = seg_of(p->segments.root);
        tree_remove(&p->segments, &s->node);
        lines_free(s);
    }
    if (!p->handles_only)
        addrmap_fini(&p->blocks);
    memset(p, 0, sizeof *p);
}

/* ---- segments ----------------------------------------------------------- */

static segment_t *seg_of(tree_node_t *n)
{
    return n ? container_of(n, segment_t, node) : NULL;
}

segment_t *pool_segment_first(const pool_t *p) { return seg_of(tree_first(&p->segments)); }

segment_t *pool_segment_next(const segment_t *s)
{
    return seg_of(tree_next(&s->node));
}

segment_t *pool_segment_at(const pool_t *p, uint64_t addr)
{
    /* The last segment starting at or before addr. */
    tree_node_t *n = tree_lower_bound(&p->segments, 0, addr + 1, 0);
    n = n ? tree_prev(n) : tree_last(&p->segments);
    segment_t *s = seg_of(n);
    return s && addr - s->addr < s->size ? s : NULL;
}

void pool_segment_overlap(const pool_t *p, uint64_t addr, uint64_t size,
                          pool_overlap_info_t *out)
{
    memset(out, 0, sizeof *out);
    if (size == 0)
        return;
    uint64_t end = addr + size;
    if (end < addr)
        end = UINT64_MAX;
    /* Start from the last segment beginning at or before addr: only it
     * can overlap from the left. */
    tree_node_t *n = tree_lower_bound(&p->segments, 0, addr, 0);
    tree_node_t *before = n ? tree_prev(n) : tree_last(&p->segments);
    if (before)
        n = before;
    pool_overlap_t one = POOL_OVERLAP_NONE;
    for (; n; n = tree_next(n)) {
        segment_t *s = seg_of(n);
        uint64_t s_end = s->addr + s->size;
        if (s->addr >= end)
            break;
        if (s_end <= addr)
            continue;
        if (out->count == 0)
            out->first_id = s->id;
        out->count++;
        uint64_t lo = s->addr > addr ? s->addr : addr;
        uint64_t hi = s_end < end ? s_end : end;
        out->overlap_bytes += hi - lo;
        if (s->addr == addr && s_end == end)
            one = POOL_OVERLAP_EXACT;
        else if (addr <= s->addr && s_end <= end)
            one = POOL_OVERLAP_CONTAINS;
        else if (s->addr <= addr && end <= s_end)
            one = POOL_OVERLAP_CONTAINED;
        else
            one = POOL_OVERLAP_PARTIAL;
    }
    out->type = out->count > 1 ? POOL_OVERLAP_SEVERAL : one;
}

int pool_segment_create(pool_t *p, uint64_t addr, uint64_t size, int64_t stream,
                        int kind, segment_t **out)
{
    if (size == 0 || addr + size < addr)
        return POOL_EINVAL;
    pool_overlap_info_t ov;
    pool_segment_overlap(p, addr, size, &ov);
    if (ov.count)
        return POOL_EOVERLAP;
    segment_t *s = lines_calloc(sizeof *s); /* written at every operation: see lib/lines.h */
    block_t *b = block_new(p);
    if (!s || !b || (!p->handles_only && addrmap_put(&p->blocks, addr, b))) {
        lines_free(s);
        if (b)
            block_recycle(p, b);
        return POOL_EHOST;
    }
    s->id = p->next_segment_id++;
    s->addr = addr;
    s->size = size;
    s->stream = stream;
    s->kind = kind;
    s->first = s->last = b;
    s->nblocks = 1;
    s->node.k1 = addr;
    tree_insert(&p->segments, &s->node);

    b->addr = addr;
    b->size = size;
    b->seg = s;
    b->stream = stream;
    b->state = BLOCK_FREE;

    p->segment_bytes += size;
    p->nblocks++;
    if (out)
        *out = s;
    return POOL_OK;
}

int pool_segment_find_range(const pool_t *p, uint64_t size, uint64_t align,
                            uint64_t lo, uint64_t hi, uint64_t *addr)
{
    if (size == 0 || align == 0 || (align & (align - 1)))
        return POOL_EINVAL;
    uint64_t cur = (lo + align - 1) & ~(align - 1);
    if (cur < lo)
        return POOL_ENOMEM;
    for (const segment_t *s = pool_segment_first(p); s; s = pool_segment_next(s)) {
        uint64_t s_end = s->addr + s->size;
        if (s_end <= cur)
            continue;
        if (cur + size >= cur && cur + size <= s->addr && cur + size <= hi) {
            *addr = cur;
            return POOL_OK;
        }
        if (s_end > cur) {
            cur = (s_end + align - 1) & ~(align - 1);
            if (cur < s_end)
                return POOL_ENOMEM;
        }
        if (cur >= hi)
            return POOL_ENOMEM;
    }
    if (cur + size >= cur && cur + size <= hi) {
        *addr = cur;
        return POOL_OK;
    }
    return POOL_ENOMEM;
}

int pool_segment_remove(pool_t *p, segment_t *s, bool force)
{
    if (s->alloc_bytes && !force)
        return POOL_EBUSY;
    for (block_t *b = s->first; b;) {
        block_t *next = b->next;
        if (!block_is_free(b)) {
            p->alloc_bytes -= b->size;
            p->requested_bytes -= b->requested;
            p->live_blocks--;
        } else if (b->ix) { /* (forced: the caller's index is left to it) */
            pool_node_give(p, b);
        }
        if (!p->handles_only)
            addrmap_remove(&p->blocks, b->addr);
        p->nblocks--;
        block_recycle(p, b);
        b = next;
    }
    p->segment_bytes -= s->size;
    p->extent_bytes -= s->extent;
    tree_remove(&p->segments, &s->node);
    lines_free(s);
    return POOL_OK;
}

/* ---- blocks ------------------------------------------------------------- */

int pool_block_split(pool_t *p, block_t *b, uint64_t n, block_t **rest)
{
    CHECK(block_is_free(b) && n > 0 && n < b->size);
    block_t *r = block_new(p);
    if (!r)
        return POOL_EHOST;
    r->addr = b->addr + n;
    if (!p->handles_only && addrmap_put(&p->blocks, r->addr, r)) {
        block_recycle(p, r);
        return POOL_EHOST;
    }
    r->size = b->size - n;
    r->seg = b->seg;
    r->stream = b->stream;
    r->state = b->state;
    r->prev = b;
    r->next = b->next;
    if (b->next)
        b->next->prev = r;
    else
        b->seg->last = r;
    b->next = r;
    b->size = n;
    b->seg->nblocks++;
    p->nblocks++;
    *rest = r;
    /* The two tile what b was: b's start and r's end did not move. */
    CHECK(b->addr + b->size == r->addr && r->size > 0 && r->prev == b &&
          (r->next ? r->next->prev == r && r->addr + r->size == r->next->addr
                   : b->seg->last == r));
    return POOL_OK;
}

int pool_block_split_front(pool_t *p, block_t *b, uint64_t n, block_t **front)
{
    CHECK(block_is_free(b) && n > 0 && n < b->size);
    block_t *f = block_new(p);
    if (!f)
        return POOL_EHOST;
    /* The remainder's entry first: it is the one that can fail (the
     * table grows); b's own address then only changes its value. */
    if (!p->handles_only &&
        (addrmap_put(&p->blocks, b->addr + n, b) || addrmap_put(&p->blocks, b->addr, f))) {
        block_recycle(p, f);
        return POOL_EHOST;
    }
    f->addr = b->addr;
    f->size = n;
    f->seg = b->seg;
    f->stream = b->stream;
    f->state = b->state;
    f->prev = b->prev;
    f->next = b;
    if (b->prev)
        b->prev->next = f;
    else
        b->seg->first = f;
    b->prev = f;
    b->addr += n;
    b->size -= n;
    b->seg->nblocks++;
    p->nblocks++;
    *front = f;
    CHECK(f->addr + f->size == b->addr && b->size > 0 && f->next == b && b->prev == f &&
          (f->prev ? f->prev->next == f && f->prev->addr + f->prev->size == f->addr
                   : b->seg->first == f));
    return POOL_OK;
}

void pool_block_merge(pool_t *p, block_t *a, block_t *b)
{
    /* Free address neighbours of one segment, b right after a. */
    CHECK(pool_blocks_mergeable(a, b) && b->prev == a && a->seg == b->seg &&
          a->addr + a->size == b->addr);
    a->size += b->size;
    if (a->stream == POOL_STREAM_ANY || b->stream == POOL_STREAM_ANY) {
        a->stream = POOL_STREAM_ANY; /* back to pristine memory */
        a->state = BLOCK_FREE;
    } else if (b->state == BLOCK_FREE_COMPLETED) {
        a->state = BLOCK_FREE_COMPLETED;
    }
    a->next = b->next;
    if (b->next)
        b->next->prev = a;
    else
        a->seg->last = a;
    a->seg->nblocks--;
    p->nblocks--;
    CHECK(a->next ? a->next->prev == a && a->addr + a->size == a->next->addr
                  : a->seg->last == a);
    if (!p->handles_only)
        addrmap_remove(&p->blocks, b->addr);
    block_recycle(p, b);
}

void pool_block_mark_alloc(pool_t *p, block_t *b, uint64_t requested, int64_t stream)
{
    segment_t *s = b->seg;
    b->state = BLOCK_ALLOC;
    b->requested = requested;
    b->stream = stream;
    s->alloc_bytes += b->size;
    p->alloc_bytes += b->size;
    p->requested_bytes += requested;
    p->live_blocks++;
    uint64_t end = block_end(b) - s->addr;
    if (end > s->extent) {
        p->extent_bytes += end - s->extent;
        s->extent = end;
    }
}

int pool_block_mark_free_requested(pool_t *p, block_t *b)
{
    (void)p;
    if (b->state != BLOCK_ALLOC)
        return POOL_ESTATE;
    b->state = BLOCK_FREE_REQUESTED;
    return POOL_OK;
}

void pool_block_mark_freed(pool_t *p, block_t *b)
{
    segment_t *s = b->seg;
    b->state = BLOCK_FREE_COMPLETED;
    s->alloc_bytes -= b->size;
    p->alloc_bytes -= b->size;
    p->requested_bytes -= b->requested;
    p->live_blocks--;
    b->requested = 0;
    if (block_end(b) - s->addr == s->extent) {
        /* b was the highest used block: the extent drops to the end of
         * the highest block still in use below it. */
        const block_t *u = b->prev;
        while (u && block_is_free(u))
            u = u->prev;
        uint64_t end = u ? block_end(u) - s->addr : 0;
        p->extent_bytes -= s->extent - end;
        s->extent = end;
    }
}

/* ---- metrics and checks --------------------------------------------------- */

bool pool_block_listed(const pool_t *p, const block_t *b)
{
    const segment_t *s = b->seg;
    if (!s || (b->prev ? b->prev->next != b : s->first != b) ||
        (b->next ? b->next->prev != b : s->last != b))
        return false;
    return p->handles_only || pool_block_at(p, b->addr) == b;
}

double pool_seed_fragmentation(const pool_t *p)
{
    size_t n = 0;
    double sum = 0;
    for (const segment_t *s = pool_segment_first(p); s; s = pool_segment_next(s)) {
        n++;
        if (s->nblocks > 1)
            sum += 1.0 - 1.0 / (double)s->nblocks;
    }
    return n ? sum / (double)n : 0.0;
}

#define FAIL(msg)        \
    do {                 \
        *why = (msg);    \
        return -1;       \
    } while (0)

int pool_check(const pool_t *p, const char **why)
{
    const char *dummy;
    if (!why)
        why = &dummy;
    if (tree_check(&p->segments, why))
        return -1;
    uint64_t seg_bytes = 0, extent = 0, alloc = 0, req = 0, live = 0, nblocks = 0, nodes = 0;
    uint64_t prev_end = 0;
    bool first_seg = true;
    for (const segment_t *s = pool_segment_first(p); s; s = pool_segment_next(s)) {
        if (!first_seg && s->addr < prev_end)
            FAIL("segments overlap");
        first_seg = false;
        prev_end = s->addr + s->size;
        if (s->node.k1 != s->addr)
            FAIL("segment key disagrees with its address");
        if (!s->first || s->first->addr != s->addr || s->first->prev)
            FAIL("segment's first block does not start it");
        uint64_t at = s->addr, n = 0, sa = 0, hi = 0;
        const block_t *last = NULL;
        for (const block_t *b = s->first; b; b = b->next) {
            if (b->seg != s)
                FAIL("block points to another segment");
            if (b->addr != at)
                FAIL("blocks do not tile the segment (gap or overlap)");
            if (b->size == 0)
                FAIL("empty block");
            if (b->prev != last)
                FAIL("block prev link broken");
            if (!p->handles_only && pool_block_at(p, b->addr) != b)
                FAIL("address map disagrees with the block list");
            if (block_is_free(b) && b->ix) {
                if (b->ix->block != b)
                    FAIL("free block's index node is another block's");
                nodes++;
            }
            if (!block_is_free(b)) { /* a free block's requested is its ix */
                if (b->requested > b->size)
                    FAIL("block smaller than its request");
                sa += b->size;
                req += b->requested;
                live++;
                hi = block_end(b) - s->addr;
            }
            at += b->size;
            n++;
            last = b;
        }
        if (last != s->last)
            FAIL("segment's last block is wrong");
        if (at != s->addr + s->size)
            FAIL("blocks do not cover the segment");
        if (n != s->nblocks)
            FAIL("segment block count is wrong");
        if (sa != s->alloc_bytes)
            FAIL("segment allocated bytes are wrong");
        if (hi != s->extent)
            FAIL("segment extent is wrong");
        seg_bytes += s->size;
        extent += s->extent;
        alloc += sa;
        nblocks += n;
    }
    if (seg_bytes != p->segment_bytes)
        FAIL("pool segment bytes are wrong");
    if (extent != p->extent_bytes)
        FAIL("pool extent bytes are wrong");
    if (alloc != p->alloc_bytes)
        FAIL("pool allocated bytes are wrong");
    if (req != p->requested_bytes)
        FAIL("pool requested bytes are wrong");
    if (live != p->live_blocks)
        FAIL("pool live block count is wrong");
    if (nblocks != p->nblocks || (!p->handles_only && nblocks != p->blocks.count))
        FAIL("pool block count is wrong");
    if (nodes != p->nodes_used)
        FAIL("pool index node count is wrong");
    return 0;
}

int pool_check_coalesced(const pool_t *p, const char **why)
{
    const char *dummy;
    if (!why)
        why = &dummy;
    for (const segment_t *s = pool_segment_first(p); s; s = pool_segment_next(s))
        for (const block_t *b = s->first; b && b->next; b = b->next)
            if (pool_blocks_mergeable(b, b->next))
                FAIL("two mergeable free blocks are adjacent");
    return 0;
}
