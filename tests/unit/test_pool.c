/* pool: segments, overlap checks, blocks and their primitives. */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "lib/lines.h"
#include "sim/pool.h"
#include "tests/unit/failmalloc.h"
#include "tests/unit/suites.h"

static pool_t pool;

static void setup(void) { ck_assert_int_eq(pool_init(&pool), POOL_OK); }
static void teardown(void) { pool_fini(&pool); }

#define ck_assert_pool_ok(p)                                                  \
    do {                                                                      \
        const char *why_ = NULL;                                              \
        ck_assert_msg(pool_check((p), &why_) == 0, "pool_check: %s", why_);   \
    } while (0)

static segment_t *make(uint64_t addr, uint64_t size)
{
    segment_t *s = NULL;
    ck_assert_int_eq(pool_segment_create(&pool, addr, size, POOL_STREAM_ANY, 0, &s), POOL_OK);
    return s;
}

START_TEST(segment_create_makes_one_free_block)
{
    segment_t *s = make(0x1000, 4096);
    ck_assert_uint_eq(s->nblocks, 1);
    ck_assert_ptr_eq(s->first, s->last);
    ck_assert_uint_eq(s->first->addr, 0x1000);
    ck_assert_uint_eq(s->first->size, 4096);
    ck_assert_int_eq(s->first->state, BLOCK_FREE);
    ck_assert_ptr_eq(pool_block_at(&pool, 0x1000), s->first);
    ck_assert_uint_eq(pool.segment_bytes, 4096);
    ck_assert_uint_eq(pool.nblocks, 1);
    ck_assert_uint_eq(pool.alloc_bytes, 0);
    ck_assert_uint_eq(pool_segment_count(&pool), 1);
    ck_assert_pool_ok(&pool);
}
END_TEST

START_TEST(segment_create_rejects_bad_ranges)
{
    ck_assert_int_eq(pool_segment_create(&pool, 0x1000, 0, 0, 0, NULL), POOL_EINVAL);
    ck_assert_int_eq(pool_segment_create(&pool, UINT64_MAX - 10, 100, 0, 0, NULL), POOL_EINVAL);
    make(0x1000, 0x1000);
    ck_assert_int_eq(pool_segment_create(&pool, 0x1800, 0x1000, 0, 0, NULL), POOL_EOVERLAP);
    ck_assert_uint_eq(pool_segment_count(&pool), 1);
    ck_assert_pool_ok(&pool);
}
END_TEST

START_TEST(overlap_kinds)
{
    make(0x1000, 0x1000); /* [0x1000, 0x2000) id 0 */
    make(0x3000, 0x1000); /* [0x3000, 0x4000) id 1 */
    pool_overlap_info_t o;

    pool_segment_overlap(&pool, 0x2000, 0x1000, &o); /* exactly the gap */
    ck_assert_int_eq(o.type, POOL_OVERLAP_NONE);
    ck_assert_uint_eq(o.count, 0);

    pool_segment_overlap(&pool, 0x800, 0x1000, &o); /* crosses the start of id 0 */
    ck_assert_int_eq(o.type, POOL_OVERLAP_PARTIAL);
    ck_assert_uint_eq(o.count, 1);
    ck_assert_uint_eq(o.first_id, 0);
    ck_assert_uint_eq(o.overlap_bytes, 0x800);

    pool_segment_overlap(&pool, 0x3800, 0x1000, &o); /* crosses the end of id 1 */
    ck_assert_int_eq(o.type, POOL_OVERLAP_PARTIAL);
    ck_assert_uint_eq(o.first_id, 1);
    ck_assert_uint_eq(o.overlap_bytes, 0x800);

    pool_segment_overlap(&pool, 0x1100, 0x100, &o);
    ck_assert_int_eq(o.type, POOL_OVERLAP_CONTAINED);
    ck_assert_uint_eq(o.overlap_bytes, 0x100);

    pool_segment_overlap(&pool, 0x2f00, 0x1200, &o);
    ck_assert_int_eq(o.type, POOL_OVERLAP_CONTAINS);
    ck_assert_uint_eq(o.first_id, 1);
    ck_assert_uint_eq(o.overlap_bytes, 0x1000);

    pool_segment_overlap(&pool, 0x1000, 0x1000, &o);
    ck_assert_int_eq(o.type, POOL_OVERLAP_EXACT);

    pool_segment_overlap(&pool, 0x1800, 0x2000, &o);
    ck_assert_int_eq(o.type, POOL_OVERLAP_SEVERAL);
    ck_assert_uint_eq(o.count, 2);
    ck_assert_uint_eq(o.first_id, 0);
    ck_assert_uint_eq(o.overlap_bytes, 0x800 + 0x800);

    ck_assert_str_eq(pool_overlap_name(POOL_OVERLAP_SEVERAL), "several");
    ck_assert_str_eq(pool_overlap_name(POOL_OVERLAP_CONTAINED), "contained");
}
END_TEST

START_TEST(find_range_uses_gaps_and_alignment)
{
    uint64_t a;
    ck_assert_int_eq(pool_segment_find_range(&pool, 100, 64, 0x1001, 0x10000, &a), POOL_OK);
    ck_assert_uint_eq(a, 0x1040); /* empty pool: lo rounded up */
    make(0x1000, 0x1000);         /* [0x1000, 0x2000) */
    make(0x2800, 0x100);          /* [0x2800, 0x2900) */
    /* The gap [0x2000, 0x2800) takes 0x800 bytes but not 0x801. */
    ck_assert_int_eq(pool_segment_find_range(&pool, 0x800, 1, 0x1000, 0x10000, &a), POOL_OK);
    ck_assert_uint_eq(a, 0x2000);
    ck_assert_int_eq(pool_segment_find_range(&pool, 0x801, 1, 0x1000, 0x10000, &a), POOL_OK);
    ck_assert_uint_eq(a, 0x2900);
    /* Alignment: the unaligned start of the last gap is rounded up. */
    ck_assert_int_eq(pool_segment_find_range(&pool, 0x900, 0x800, 0x1000, 0x10000, &a),
                     POOL_OK);
    ck_assert_uint_eq(a, 0x3000);
    ck_assert_int_eq(pool_segment_find_range(&pool, 0x100, 0x4000, 0x1000, 0x10000, &a),
                     POOL_OK);
    ck_assert_uint_eq(a, 0x4000);
    /* A start inside a segment moves past it. */
    ck_assert_int_eq(pool_segment_find_range(&pool, 0x10, 1, 0x1800, 0x10000, &a), POOL_OK);
    ck_assert_uint_eq(a, 0x2000);
    /* No room below hi. */
    ck_assert_int_eq(pool_segment_find_range(&pool, 0x1000, 1, 0x1000, 0x3800, &a), POOL_ENOMEM);
    ck_assert_int_eq(pool_segment_find_range(&pool, 0, 1, 0, 10, &a), POOL_EINVAL);
    ck_assert_int_eq(pool_segment_find_range(&pool, 1, 3, 0, 10, &a), POOL_EINVAL);
}
END_TEST

START_TEST(segment_at_finds_the_holder)
{
    segment_t *a = make(0x1000, 0x1000), *b = make(0x4000, 0x10);
    ck_assert_ptr_eq(pool_segment_at(&pool, 0x1000), a);
    ck_assert_ptr_eq(pool_segment_at(&pool, 0x1fff), a);
    ck_assert_ptr_null(pool_segment_at(&pool, 0x2000));
    ck_assert_ptr_null(pool_segment_at(&pool, 0xfff));
    ck_assert_ptr_eq(pool_segment_at(&pool, 0x400f), b);
    ck_assert_ptr_null(pool_segment_at(&pool, 0x4010));
    /* Listing goes in address order. */
    ck_assert_ptr_eq(pool_segment_first(&pool), a);
    ck_assert_ptr_eq(pool_segment_next(a), b);
    ck_assert_ptr_null(pool_segment_next(b));
}
END_TEST

START_TEST(split_merge_and_totals)
{
    segment_t *s = make(0x1000, 1000);
    block_t *b = s->first, *rest;
    ck_assert_int_eq(pool_block_split(&pool, b, 100, &rest), POOL_OK);
    ck_assert_uint_eq(b->size, 100);
    ck_assert_uint_eq(rest->addr, 0x1000 + 100);
    ck_assert_uint_eq(rest->size, 900);
    ck_assert_ptr_eq(b->next, rest);
    ck_assert_ptr_eq(rest->prev, b);
    ck_assert_ptr_eq(s->last, rest);
    ck_assert_uint_eq(s->nblocks, 2);
    ck_assert_pool_ok(&pool);

    pool_block_mark_alloc(&pool, b, 90, 7);
    ck_assert_int_eq(b->state, BLOCK_ALLOC);
    ck_assert_uint_eq(pool.alloc_bytes, 100);
    ck_assert_uint_eq(pool.requested_bytes, 90);
    ck_assert_uint_eq(pool.live_blocks, 1);
    ck_assert_uint_eq(s->extent, 100);
    ck_assert_uint_eq(pool.extent_bytes, 100);
    ck_assert(!pool_blocks_mergeable(b, rest));
    ck_assert_pool_ok(&pool);

    ck_assert_int_eq(pool_block_mark_free_requested(&pool, b), POOL_OK);
    ck_assert_int_eq(b->state, BLOCK_FREE_REQUESTED);
    ck_assert_int_eq(pool_block_mark_free_requested(&pool, b), POOL_ESTATE);
    ck_assert_uint_eq(pool.alloc_bytes, 100); /* still unavailable */
    pool_block_mark_freed(&pool, b);
    ck_assert_int_eq(b->state, BLOCK_FREE_COMPLETED);
    ck_assert_int_eq(b->stream, 7);
    ck_assert_uint_eq(pool.alloc_bytes, 0);
    ck_assert_uint_eq(pool.requested_bytes, 0);
    ck_assert_uint_eq(s->extent, 0);
    ck_assert_pool_ok(&pool);

    /* Freed (stream 7) next to pristine: mergeable, and the result is pristine. */
    ck_assert(pool_blocks_mergeable(b, rest));
    pool_block_merge(&pool, b, rest);
    ck_assert_uint_eq(b->size, 1000);
    ck_assert_int_eq(b->stream, POOL_STREAM_ANY);
    ck_assert_int_eq(b->state, BLOCK_FREE);
    ck_assert_ptr_null(b->next);
    ck_assert_ptr_eq(s->last, b);
    ck_assert_uint_eq(s->nblocks, 1);
    ck_assert_ptr_null(pool_block_at(&pool, 0x1000 + 100));
    ck_assert_pool_ok(&pool);
}
END_TEST

/* The front goes to a new block and the old one keeps the rest: links,
 * the address map, counts; the old block keeps its index node, and the
 * front has none (a fit index's node moves with nothing). */
START_TEST(split_front_keeps_the_remainder_in_place)
{
    segment_t *s = make(0x1000, 1000);
    block_t *b = s->first, *front, *mid, *tail;
    ixnode_t *node = pool_node_take(&pool, b);
    node->node.k1 = 0xabc; /* stands for the index's links */
    ck_assert_int_eq(pool_block_split_front(&pool, b, 100, &front), POOL_OK);
    ck_assert_ptr_ne(front, b);
    ck_assert_uint_eq(front->addr, 0x1000);
    ck_assert_uint_eq(front->size, 100);
    ck_assert_uint_eq(b->addr, 0x1000 + 100);
    ck_assert_uint_eq(b->size, 900);
    ck_assert_ptr_eq(b->ix, node);
    ck_assert_ptr_eq(node->block, b);
    ck_assert_uint_eq(node->node.k1, 0xabc);
    ck_assert_ptr_null(front->ix);
    ck_assert_int_eq(front->state, b->state);
    ck_assert_int_eq(front->stream, b->stream);
    ck_assert_ptr_eq(s->first, front);
    ck_assert_ptr_eq(s->last, b);
    ck_assert_ptr_eq(front->next, b);
    ck_assert_ptr_eq(b->prev, front);
    ck_assert_ptr_eq(pool_block_at(&pool, 0x1000), front);
    ck_assert_ptr_eq(pool_block_at(&pool, 0x1000 + 100), b);
    ck_assert_uint_eq(s->nblocks, 2);
    ck_assert_uint_eq(pool.nblocks, 2);
    ck_assert_pool_ok(&pool);
    /* In the middle of a segment: both neighbours relinked. */
    ck_assert_int_eq(pool_block_split(&pool, b, 500, &tail), POOL_OK);
    ck_assert_int_eq(pool_block_split_front(&pool, b, 200, &mid), POOL_OK);
    ck_assert_ptr_eq(front->next, mid);
    ck_assert_ptr_eq(mid->prev, front);
    ck_assert_ptr_eq(mid->next, b);
    ck_assert_ptr_eq(b->next, tail);
    ck_assert_uint_eq(mid->addr, 0x1000 + 100);
    ck_assert_uint_eq(b->addr, 0x1000 + 300);
    ck_assert_uint_eq(b->size, 300);
    ck_assert_pool_ok(&pool);
    /* Out of host memory (a chunk of block structs, or the address map
     * growing): the pool stays whole. */
    block_t *big = make(0x100000, 4 << 20)->first;
    for (long n = 1; n <= 3; n++) {
        failmalloc_arm(n);
        int err = POOL_OK;
        block_t *f = NULL;
        for (int i = 0; i < 20000 && err == POOL_OK; i++)
            err = pool_block_split_front(&pool, big, 16, &f);
        bool failed = failmalloc_disarm();
        ck_assert(failed);
        ck_assert_int_eq(err, POOL_EHOST);
        ck_assert_pool_ok(&pool);
    }
}
END_TEST

START_TEST(split_front_without_the_address_map)
{
    pool_t h;
    ck_assert_int_eq(pool_init_handles_only(&h), POOL_OK);
    segment_t *s;
    ck_assert_int_eq(pool_segment_create(&h, 0x2000, 4096, POOL_STREAM_ANY, 0, &s), POOL_OK);
    block_t *b = s->first, *front;
    ck_assert_int_eq(pool_block_split_front(&h, b, 0x100, &front), POOL_OK);
    ck_assert_ptr_eq(s->first, front);
    ck_assert_uint_eq(b->addr, 0x2100);
    ck_assert_ptr_null(pool_block_at(&h, 0x2000));
    ck_assert_int_eq(pool_check(&h, NULL), 0);
    pool_fini(&h);
}
END_TEST

START_TEST(streams_limit_merging)
{
    segment_t *s = make(0, 300);
    block_t *a = s->first, *b, *c;
    ck_assert_int_eq(pool_block_split(&pool, a, 100, &b), POOL_OK);
    ck_assert_int_eq(pool_block_split(&pool, b, 100, &c), POOL_OK);
    pool_block_mark_alloc(&pool, a, 100, 1);
    pool_block_mark_alloc(&pool, b, 100, 2);
    pool_block_mark_freed(&pool, a);
    pool_block_mark_freed(&pool, b);
    ck_assert(!pool_blocks_mergeable(a, b)); /* streams 1 and 2 */
    ck_assert(pool_blocks_mergeable(b, c));  /* stream 2 and pristine */
    ck_assert(!pool_blocks_mergeable(a, c)); /* not neighbours */
    ck_assert(!pool_blocks_mergeable(NULL, a));
    const char *why = NULL;
    ck_assert_int_eq(pool_check_coalesced(&pool, &why), -1);
    pool_block_merge(&pool, b, c); /* b is pristine now, so a may merge with it */
    ck_assert_int_eq(b->stream, POOL_STREAM_ANY);
    ck_assert(pool_blocks_mergeable(a, b));
    pool_block_merge(&pool, a, b);
    ck_assert_int_eq(pool_check_coalesced(&pool, &why), 0);
    ck_assert_uint_eq(a->size, 300);
    ck_assert_pool_ok(&pool);
}
END_TEST

START_TEST(extent_walks_back_over_free_blocks)
{
    segment_t *s = make(0, 400);
    block_t *a = s->first, *b, *c, *d;
    ck_assert_int_eq(pool_block_split(&pool, a, 100, &b), POOL_OK);
    ck_assert_int_eq(pool_block_split(&pool, b, 100, &c), POOL_OK);
    ck_assert_int_eq(pool_block_split(&pool, c, 100, &d), POOL_OK);
    pool_block_mark_alloc(&pool, a, 1, 0);
    pool_block_mark_alloc(&pool, c, 1, 0);
    ck_assert_uint_eq(s->extent, 300);
    pool_block_mark_alloc(&pool, b, 1, 0);
    ck_assert_uint_eq(s->extent, 300);
    pool_block_mark_freed(&pool, b); /* not the top: extent stays */
    ck_assert_uint_eq(s->extent, 300);
    pool_block_mark_freed(&pool, c); /* top: drops past free b to a's end */
    ck_assert_uint_eq(s->extent, 100);
    ck_assert_uint_eq(pool.extent_bytes, 100);
    ck_assert_pool_ok(&pool);
}
END_TEST

START_TEST(remove_refuses_live_segments_unless_forced)
{
    segment_t *s = make(0x1000, 0x1000);
    block_t *rest;
    ck_assert_int_eq(pool_block_split(&pool, s->first, 0x100, &rest), POOL_OK);
    pool_block_mark_alloc(&pool, s->first, 0x80, 0);
    ck_assert_int_eq(pool_segment_remove(&pool, s, false), POOL_EBUSY);
    ck_assert_uint_eq(pool_segment_count(&pool), 1);
    ck_assert_int_eq(pool_segment_remove(&pool, s, true), POOL_OK);
    ck_assert_uint_eq(pool_segment_count(&pool), 0);
    ck_assert_uint_eq(pool.segment_bytes, 0);
    ck_assert_uint_eq(pool.alloc_bytes, 0);
    ck_assert_uint_eq(pool.requested_bytes, 0);
    ck_assert_uint_eq(pool.live_blocks, 0);
    ck_assert_uint_eq(pool.nblocks, 0);
    ck_assert_uint_eq(pool.extent_bytes, 0);
    ck_assert_ptr_null(pool_block_at(&pool, 0x1000));
    ck_assert_pool_ok(&pool);
    /* The range is free again. */
    make(0x1000, 0x1000);
}
END_TEST

START_TEST(check_detects_corruption)
{
    segment_t *s = make(0, 1000);
    block_t *rest;
    ck_assert_int_eq(pool_block_split(&pool, s->first, 100, &rest), POOL_OK);
    const char *why = NULL;
    rest->size += 1; /* tiles past the segment */
    ck_assert_int_eq(pool_check(&pool, &why), -1);
    ck_assert_ptr_nonnull(why);
    rest->size -= 1;
    pool.alloc_bytes = 5;
    ck_assert_int_eq(pool_check(&pool, &why), -1);
    ck_assert_str_eq(why, "pool allocated bytes are wrong");
    pool.alloc_bytes = 0;
    ck_assert_pool_ok(&pool);
    /* An index node that names another block, or one not counted. */
    ixnode_t *n = pool_node_take(&pool, rest);
    n->block = s->first;
    ck_assert_int_eq(pool_check(&pool, &why), -1);
    ck_assert_str_eq(why, "free block's index node is another block's");
    n->block = rest;
    pool.nodes_used++;
    ck_assert_int_eq(pool_check(&pool, &why), -1);
    ck_assert_str_eq(why, "pool index node count is wrong");
    pool.nodes_used--;
    ck_assert_pool_ok(&pool);
}
END_TEST

START_TEST(seed_fragmentation_is_one_minus_one_over_blocks)
{
    segment_t *s = make(0, 1000);
    make(0x10000, 1000); /* one block: 0 */
    block_t *b = s->first, *r;
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(pool_block_split(&pool, b, 100, &r), POOL_OK);
        b = r;
    }
    /* 4 blocks -> 0.75, and 0 for the other: mean 0.375. */
    ck_assert_double_eq_tol(pool_seed_fragmentation(&pool), 0.375, 1e-12);
}
END_TEST

START_TEST(strerror_names)
{
    ck_assert_str_eq(pool_strerror(POOL_ENOMEM), "out of memory");
    ck_assert_str_eq(pool_strerror(POOL_EDOUBLE), "double free");
    ck_assert_str_eq(pool_strerror(12345), "unknown error");
    ck_assert_str_eq(block_state_name(BLOCK_FREE_REQUESTED), "free_requested");
}
END_TEST

/* lib/lines.h: memory on cache lines of its own, zeroed; segments
 * (written at every operation) are made there. */
START_TEST(lines_of_their_own)
{
    for (size_t size = 1; size <= 300; size += 37) {
        unsigned char *a = lines_calloc(size), *b = lines_calloc(size);
        ck_assert_ptr_nonnull(a);
        ck_assert_ptr_nonnull(b);
        ck_assert_uint_eq((uintptr_t)a % LINES_SIZE, 0);
        ck_assert_uint_eq((uintptr_t)b % LINES_SIZE, 0);
        for (size_t i = 0; i < size; i++)
            ck_assert_uint_eq(a[i] | b[i], 0);
        /* no line holds bytes of both */
        uintptr_t a_last = ((uintptr_t)a + size - 1) / LINES_SIZE;
        uintptr_t b_last = ((uintptr_t)b + size - 1) / LINES_SIZE;
        ck_assert((uintptr_t)a / LINES_SIZE > b_last || (uintptr_t)b / LINES_SIZE > a_last);
        memset(a, 0xff, (size + LINES_SIZE - 1) / LINES_SIZE * LINES_SIZE); /* whole lines: ours */
        lines_free(a);
        lines_free(b);
    }
    lines_free(NULL);
    ck_assert_ptr_null(lines_calloc(SIZE_MAX - 10));
    pool_t p;
    ck_assert_int_eq(pool_init_handles_only(&p), POOL_OK);
    segment_t *s;
    ck_assert_int_eq(pool_segment_create(&p, 0x10000, 4096, 0, 0, &s), POOL_OK);
    ck_assert_uint_eq((uintptr_t)s % LINES_SIZE, 0);
    pool_fini(&p);
}
END_TEST

/* Block structs past a pool's first chunks come in huge-page chunks:
 * each struct its own, aligned, all of them freed by pool_fini.  And
 * there is an index node for every block, over all the chunks: each its
 * own, given back and taken again, counted. */
START_TEST(many_blocks_huge_chunks)
{
    pool_t p;
    ck_assert_int_eq(pool_init(&p), POOL_OK);
    enum { N = 50000 }; /* 3 chunks of 4096, then 2 MiB ones of 32767 */
    static segment_t *seg[N];
    static ixnode_t *node[N];
    for (uint64_t i = 0; i < N; i++)
        ck_assert_int_eq(pool_segment_create(&p, 0x100000 + i * 64, 64, 0, 0, &seg[i]), POOL_OK);
    ck_assert_uint_eq(p.nchunks, 5);
    for (uint64_t i = 0; i < N; i++) {
        ck_assert_uint_eq((uintptr_t)seg[i]->first % 64, 0);
        ck_assert_ptr_eq(pool_block_at(&p, 0x100000 + i * 64), seg[i]->first);
        if (i)
            ck_assert_ptr_ne(seg[i]->first, seg[i - 1]->first);
    }
    for (uint64_t i = 0; i < N; i++) {
        node[i] = pool_node_take(&p, seg[i]->first);
        ck_assert_ptr_eq(seg[i]->first->ix, node[i]);
        ck_assert_ptr_eq(node[i]->block, seg[i]->first);
    }
    ck_assert_uint_eq(p.nodes_used, N);
    ck_assert_pool_ok(&p);
    for (uint64_t i = 0; i < N; i++) /* all distinct: each still names its block */
        ck_assert_ptr_eq(node[i]->block, seg[i]->first);
    for (uint64_t i = 0; i < N; i += 2)
        pool_node_give(&p, seg[i]->first);
    ck_assert_uint_eq(p.nodes_used, N / 2);
    ck_assert_ptr_null(seg[0]->first->ix);
    ck_assert_pool_ok(&p);
    for (uint64_t i = 0; i < N; i += 2) /* the given-back ones, again */
        pool_node_take(&p, seg[i]->first);
    ck_assert_uint_eq(p.nodes_used, N);
    ck_assert_pool_ok(&p);
    pool_fini(&p);
}
END_TEST

Suite *pool_suite(void)
{
    Suite *s = suite_create("pool");
    TCase *tc = tcase_create("pool");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, lines_of_their_own);
    tcase_add_test(tc, many_blocks_huge_chunks);
    tcase_add_test(tc, segment_create_makes_one_free_block);
    tcase_add_test(tc, segment_create_rejects_bad_ranges);
    tcase_add_test(tc, overlap_kinds);
    tcase_add_test(tc, find_range_uses_gaps_and_alignment);
    tcase_add_test(tc, segment_at_finds_the_holder);
    tcase_add_test(tc, split_merge_and_totals);
    tcase_add_test(tc, split_front_keeps_the_remainder_in_place);
    tcase_add_test(tc, split_front_without_the_address_map);
    tcase_add_test(tc, streams_limit_merging);
    tcase_add_test(tc, extent_walks_back_over_free_blocks);
    tcase_add_test(tc, remove_refuses_live_segments_unless_forced);
    tcase_add_test(tc, check_detects_corruption);
    tcase_add_test(tc, seed_fragmentation_is_one_minus_one_over_blocks);
    tcase_add_test(tc, strerror_names);
    suite_add_tcase(s, tc);
    return s;
}
