/*
 * buddy: the binary buddy system (Knowlton 1965; Knuth TAOCP 2.5).
 *
 * Block sizes are powers of two from 64 bytes up.  The device is cut
 * into power-of-two chunks, largest first (a device that is not a power
 * of two gets several), each a segment of its own; a block of size 2^k
 * at offset o from its chunk's start has its buddy at o XOR 2^k, and
 * only buddies merge.  Requests
 * round up to the next power of two (at least the alignment), which is
 * where buddy's internal fragmentation comes from.
 *
 * Free blocks sit on one doubly linked list per order and stream tag,
 * with a bit mask of non-empty orders, so finding the smallest order
 * that can serve a request is one bit scan; a split or a merge is O(1),
 * and an allocation or free does at most log2(device / 64) of them:
 * O(log size).  Buddies are address neighbours, so merging needs no
 * lookup.  Addresses are aligned to their size relative to the base;
 * alignments beyond the base's own alignment are refused.
 */
#include <stdlib.h>

#include "lib/check.h"
#include "sim/strategy.h"

#define BUDDY_MIN_ORDER 6 /* 64 bytes */
#define BUDDY_ORDERS 64

typedef struct buddy_lists_s {
    int64_t stream;               /* tag these lists hold */
    ixnode_t *head[BUDDY_ORDERS]; /* free blocks of size 2^order (their nodes) */
    uint64_t nonempty;            /* bit k set <=> head[k] != NULL */
} buddy_lists_t;

typedef struct buddy_state_s {
    buddy_lists_t *tags; /* one set of lists per stream tag seen */
    size_t ntags, cap;
    uint64_t base_align; /* largest power of two dividing the base */
} buddy_state_t;

static inline int order_of(uint64_t size) { return 63 - __builtin_clzll(size); }

/* A buddy block: a power of two of at least 64 bytes, aligned to its
 * size from its chunk's (segment's) start. */
static inline bool is_buddy_block(const block_t *b)
{
    uint64_t off = b->addr - b->seg->addr;
    return b->size >= (1ull << BUDDY_MIN_ORDER) && (b->size & (b->size - 1)) == 0 &&
           (off & (b->size - 1)) == 0;
}

static buddy_lists_t *lists_of(const buddy_state_t *st, int64_t stream)
{
    for (size_t i = 0; i < st->ntags; i++)
        if (st->tags[i].stream == stream)
            return &st->tags[i];
    return NULL;
}

static buddy_lists_t *lists_get(buddy_state_t *st, int64_t stream)
{
    buddy_lists_t *l = lists_of(st, stream);
    if (l)
        return l;
    if (st->ntags == st->cap) {
        size_t cap = st->cap ? st->cap * 2 : 4;
        buddy_lists_t *t = realloc(st->tags, cap * sizeof *t);
        if (!t)
            return NULL;
        st->tags = t;
        st->cap = cap;
    }
    l = &st->tags[st->ntags++];
    *l = (buddy_lists_t){.stream = stream};
    return l;
}

/* Free block b onto its order's list, with a node from p. */
static void list_push(pool_t *p, buddy_lists_t *l, block_t *b)
{
    int k = order_of(b->size);
    ixnode_t *n = pool_node_take(p, b);
    n->list.prev = NULL;
    n->list.next = l->head[k];
    if (l->head[k])
        l->head[k]->list.prev = n;
    l->head[k] = n;
    l->nonempty |= 1ull << k;
}

/* b off its list, its node given back. */
static void list_unlink(pool_t *p, buddy_lists_t *l, block_t *b)
{
    int k = order_of(b->size);
    ixnode_t *n = b->ix;
    if (n->list.prev)
        n->list.prev->list.next = n->list.next;
    else
        l->head[k] = n->list.next;
    if (n->list.next)
        n->list.next->list.prev = n->list.prev;
    if (!l->head[k])
        l->nonempty &= ~(1ull << k);
    pool_node_give(p, b);
}

/* Index a free block.  Its tag's lists exist: pristine's from init, a
 * stream's from its first allocation (place makes them first), so this
 * does not fail once the device is running. */
static int push_free(buddy_state_t *st, pool_t *p, block_t *b)
{
    buddy_lists_t *l = lists_get(st, b->stream);
    if (!l)
        return POOL_EHOST;
    list_push(p, l, b);
    return POOL_OK;
}

static int init(void *vst, pool_t *p, const strategy_env_t *env)
{
    buddy_state_t *st = vst;
    uint64_t size = env->total & ~((1ull << BUDDY_MIN_ORDER) - 1);
    if (!size)
        return POOL_EINVAL;
    st->base_align = env->base ? env->base & -env->base : 1ull << 63;
    /* One segment per power-of-two chunk, largest first: each is a buddy
     * system of its own (buddies never cross chunks), and its footprint
     * is its own extent — a program using the small last chunk of a
     * device that is not a power of two does not appear to use all the
     * chunks before it. */
    uint64_t at = env->base;
    while (size) {
        uint64_t chunk = 1ull << order_of(size);
        segment_t *s;
        int err = pool_segment_create(p, at, chunk, POOL_STREAM_ANY, 0, &s);
        if (err || (err = push_free(st, p, s->first)))
            return err;
        at += chunk;
        size -= chunk;
    }
    return POOL_OK;
}

static void fini(void *vst)
{
    buddy_state_t *st = vst;
    free(st->tags);
    st->tags = NULL;
    st->ntags = st->cap = 0;
}

/* Order a request needs, or -1 when it cannot be served at all. */
static int request_order(const buddy_state_t *st, const strategy_request_t *req)
{
    uint64_t want = req->size > req->align ? req->size : req->align;
    if (req->align > st->base_align || want > (1ull << 62))
        return -1;
    int k = want <= 1 ? 0 : 64 - __builtin_clzll(want - 1);
    return k < BUDDY_MIN_ORDER ? BUDDY_MIN_ORDER : k;
}

/* Smallest order >= k available in l, or -1. */
static int smallest_order(const buddy_lists_t *l, int k)
{
    uint64_t m = l ? l->nonempty & ~((1ull << k) - 1) : 0;
    return m ? __builtin_ctzll(m) : -1;
}

/* The lists to take from: the request's own stream, else pristine
 * memory, whichever has the smaller block (own stream on a tie). */
static buddy_lists_t *choose(const buddy_state_t *st, int64_t stream, int k, int *order)
{
    buddy_lists_t *own = lists_of(st, stream), *any = lists_of(st, POOL_STREAM_ANY);
    int jo = smallest_order(own, k), ja = smallest_order(any, k);
    if (jo >= 0 && (ja < 0 || jo <= ja)) {
        *order = jo;
        return own;
    }
    *order = ja;
    return ja >= 0 ? any : NULL;
}

static int place(void *vst, pool_t *p, const strategy_request_t *req, block_t **out)
{
    buddy_state_t *st = vst;
    int k = request_order(st, req);
    if (k < 0)
        return req->align > st->base_align ? POOL_EINVAL : POOL_ENOMEM;
    /* The stream's lists must exist before its block can come back. */
    if (!lists_get(st, req->stream))
        return POOL_EHOST;
    int j;
    buddy_lists_t *l = choose(st, req->stream, k, &j);
    if (!l)
        return POOL_ENOMEM;
    block_t *b = l->head[j]->block;
    list_unlink(p, l, b);
    while (j > k) {
        block_t *upper;
        CHECK(b->size == 1ull << j && is_buddy_block(b));
        int err = pool_block_split(p, b, b->size / 2, &upper);
        if (err) {
            list_push(p, l, b); /* b is still a whole, free block */
            return err;
        }
        /* Two buddies of the order below: each the other's. */
        CHECK(is_buddy_block(b) && is_buddy_block(upper) && upper->size == b->size &&
              ((b->addr - b->seg->addr) ^ b->size) == upper->addr - b->seg->addr);
        list_push(p, l, upper); /* same tag as b */
        j--;
    }
    pool_block_mark_alloc(p, b, req->size, req->stream);
    *out = b;
    return POOL_OK;
}

static bool can_place(const void *vst, const pool_t *p, const strategy_request_t *req)
{
    (void)p;
    const buddy_state_t *st = vst;
    int k = request_order(st, req), j;
    return k >= 0 && choose(st, req->stream, k, &j);
}

static bool tags_compatible(int64_t a, int64_t b)
{
    return a == b || a == POOL_STREAM_ANY || b == POOL_STREAM_ANY;
}

/* The free buddy of b that may merge with it, or NULL. */
static block_t *free_buddy(const block_t *b)
{
    uint64_t off = b->addr - b->seg->addr;
    block_t *c = (off ^ b->size) > off ? b->next : b->prev;
    if (!c || c->size != b->size || !block_is_free(c) ||
        c->addr - b->seg->addr != (off ^ b->size) || !tags_compatible(b->stream, c->stream))
        return NULL;
    return c;
}

static void release(void *vst, pool_t *p, block_t *b)
{
    buddy_state_t *st = vst;
    block_t *c;
    while ((c = free_buddy(b))) {
        CHECK(is_buddy_block(b) && is_buddy_block(c) && c->size == b->size);
        list_unlink(p, lists_of(st, c->stream), c);
        if (c->addr < b->addr) {
            pool_block_merge(p, c, b);
            b = c;
        } else {
            pool_block_merge(p, b, c);
        }
        CHECK(is_buddy_block(b)); /* the two made the block of the order above */
    }
    push_free(st, p, b);
}

static uint64_t largest_free(const void *vst, const pool_t *p)
{
    (void)p;
    const buddy_state_t *st = vst;
    uint64_t m = 0;
    for (size_t i = 0; i < st->ntags; i++)
        m |= st->tags[i].nonempty;
    return m ? 1ull << (63 - __builtin_clzll(m)) : 0;
}

static int check(const void *vst, const pool_t *p, const char **why)
{
    const buddy_state_t *st = vst;
    size_t free_blocks = 0, listed = 0;
    for (const segment_t *s = pool_segment_first(p); s; s = pool_segment_next(s)) {
        for (const block_t *b = s->first; b; b = b->next) {
            uint64_t off = b->addr - s->addr;
            if (b->size & (b->size - 1) || b->size < (1ull << BUDDY_MIN_ORDER)) {
                *why = "buddy block size is not a power of two >= 64";
                return -1;
            }
            if (off & (b->size - 1)) {
                *why = "buddy block not aligned to its size";
                return -1;
            }
            if (block_is_free(b)) {
                free_blocks++;
                if (free_buddy(b)) {
                    *why = "two free buddies were not merged";
                    return -1;
                }
            }
        }
    }
    for (size_t i = 0; i < st->ntags; i++) {
        const buddy_lists_t *l = &st->tags[i];
        for (int k = 0; k < BUDDY_ORDERS; k++) {
            if (!!l->head[k] != !!(l->nonempty & (1ull << k))) {
                *why = "buddy non-empty mask disagrees with its lists";
                return -1;
            }
            const ixnode_t *prev = NULL;
            for (const ixnode_t *n = l->head[k]; n; n = n->list.next) {
                const block_t *b = n->block;
                if (!pool_block_listed(p, b) || b->ix != n || !block_is_free(b) ||
                    b->stream != l->stream || order_of(b->size) != k || n->list.prev != prev) {
                    *why = "buddy free list holds a wrong block";
                    return -1;
                }
                prev = n;
                listed++;
            }
        }
    }
    if (listed != free_blocks) {
        *why = "buddy free lists miss free blocks";
        return -1;
    }
    return 0;
}

static const strategy_ops_t ops = {
    .name = "buddy",
    .summary = "binary buddy: power-of-two blocks from 64 B, only buddies merge",
    .state_size = sizeof(buddy_state_t),
    .footprint = STRATEGY_FOOTPRINT_EXTENT,
    .init = init,
    .fini = fini,
    .place = place,
    .can_place = can_place,
    .release = release,
    .largest_free = largest_free,
    .check = check,
};

const strategy_ops_t *strategy_buddy(void) { return &ops; }
