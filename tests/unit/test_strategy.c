/*
 * The contract every strategy keeps: the same tests, one loop over the
 * strategy table (a new strategy is tested by being listed).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "sim/fit.h"
#include "lib/rng.h"
#include "sim/strategy.h"
#include "tests/unit/helpers.h"
#include "tests/unit/suites.h"

static const char *name_of(int i) { return strategy_at((size_t)i)->name; }

static bool is(int i, const char *name) { return strcmp(name_of(i), name) == 0; }

/* Best fit by brute force over every block: the smallest free block of
 * the stream (or pristine) that can hold the request once aligned, the
 * lowest address among equals; where the allocation then starts.
 * UINT64_MAX when none fits.  (The strategy's size bins must agree.) */
/* Which fit fit_by_hand searches for. */
typedef enum by_hand_e { BY_HAND_BEST, BY_HAND_WORST, BY_HAND_FIRST } by_hand_t;

/* Whether free block b is a better candidate than c (or NULL) for how. */
static bool by_hand_better(by_hand_t how, const block_t *b, const block_t *c)
{
    if (!c)
        return true;
    if (how != BY_HAND_FIRST && b->size != c->size)
        return how == BY_HAND_WORST ? b->size > c->size : b->size < c->size;
    return b->addr < c->addr;
}

/* What a search by hand does with the top (the pristine last block of
 * a segment): weigh it as any block, take it only when nothing else
 * fits, or leave it out. */
typedef enum top_rule_e { TOP_AS_ANY, TOP_LAST, TOP_NEVER } top_rule_t;

/* Where a fit strategy must place a request, by brute force over the
 * blocks: among the free blocks of the stream or pristine that fit and
 * start at from or later, the smallest (best), the largest (worst) or
 * any (first), the lowest address among equals, the top as rule says.
 * UINT64_MAX: none. */
static uint64_t fit_by_hand(const device_t *d, uint64_t size, uint64_t align, int64_t stream,
                            by_hand_t how, uint64_t from, top_rule_t rule)
{
    strategy_request_t req = {.size = size, .align = align, .stream = stream};
    uint64_t need = fit_search_bytes(DEVICE_DEFAULT_GRANULE, &req);
    const block_t *best = NULL, *top = NULL;
    const pool_t *p = device_pool(d);
    for (segment_t *sg = pool_segment_first(p); sg; sg = pool_segment_next(sg))
        for (const block_t *b = sg->first; b; b = b->next) {
            if (!block_is_free(b) || (b->stream != stream && b->stream != POOL_STREAM_ANY) ||
                b->size < need || b->addr < from)
                continue;
            if (rule != TOP_AS_ANY && !b->next && b->stream == POOL_STREAM_ANY) {
                top = b; /* the top: pristine, last of its segment */
                continue;
            }
            if (by_hand_better(how, b, best))
                best = b;
        }
    if (!best && rule == TOP_LAST)
        best = top;
    return best && need ? (best->addr + align - 1) & ~(align - 1) : UINT64_MAX;
}

/* Where strategy i must place a request (next fit: from the rover, then
 * from the start), or 0 for the strategies not checked by hand. */
static uint64_t placed_by_hand(int i, const device_t *d, uint64_t size, uint64_t align,
                               int64_t stream, uint64_t rover)
{
    if (is(i, "best-fit"))
        return fit_by_hand(d, size, align, stream, BY_HAND_BEST, 0, TOP_AS_ANY);
    if (is(i, "worst-fit"))
        return fit_by_hand(d, size, align, stream, BY_HAND_WORST, 0, TOP_LAST);
    if (is(i, "first-fit"))
        return fit_by_hand(d, size, align, stream, BY_HAND_FIRST, 0, TOP_AS_ANY);
    /* next fit: from the rover but the top, then from the start, then the top */
    uint64_t at = fit_by_hand(d, size, align, stream, BY_HAND_FIRST, rover, TOP_NEVER);
    return at != UINT64_MAX ? at : fit_by_hand(d, size, align, stream, BY_HAND_FIRST, 0, TOP_LAST);
}

/* device_alloc, whose choice must be placed_by_hand's (op names the
 * step in a failure); a placed block moves the rover to its end.  The
 * device's result code, *r when POOL_OK. */
static int alloc_as_by_hand(int i, device_t *d, uint64_t size, uint64_t align, int64_t stream,
                            uint64_t *rover, int op, device_result_t *r)
{
    uint64_t want = placed_by_hand(i, d, size, align, stream, *rover);
    int rc = device_alloc(d, size, align, stream, r);
    REQUIRE((rc == POOL_OK ? r->addr : UINT64_MAX) == want,
            "op %d: %s put %llu bytes of stream %lld at 0x%llx, by hand 0x%llx", op, name_of(i),
            (unsigned long long)size, (long long)stream,
            rc == POOL_OK ? (unsigned long long)r->addr : 0ull, (unsigned long long)want);
    if (rc == POOL_OK)
        *rover = r->addr + r->size;
    return rc;
}

START_TEST(table_lists_six_by_name)
{
    static const char *const names[] = {"first-fit", "best-fit", "worst-fit",
                                        "next-fit",  "buddy",    "caching"};
    ck_assert_uint_eq(strategy_count(), 6);
    for (size_t i = 0; i < 6; i++) {
        ck_assert_str_eq(strategy_at(i)->name, names[i]);
        ck_assert_ptr_eq(strategy_find(names[i]), strategy_at(i));
        ck_assert_int_eq(strategy_index(strategy_at(i)), (int)i);
    }
    ck_assert_ptr_null(strategy_find("fastest-fit"));
    ck_assert_ptr_null(strategy_find(NULL));
    ck_assert_ptr_null(strategy_at(6));
    char buf[128];
    ck_assert_str_eq(strategy_names(buf, sizeof buf),
                     "first-fit, best-fit, worst-fit, next-fit, buddy, caching");
}
END_TEST

START_TEST(alloc_then_free_restores_the_pool)
{
    device_t *d = test_device(name_of(_i), 256 * MiB);
    device_result_t r;
    ck_assert_int_eq(device_alloc(d, 100, 16, 0, &r), POOL_OK);
    ck_assert(r.ok);
    ck_assert_str_eq(r.error, "");
    ck_assert_uint_ge(r.size, 100);
    ck_assert_uint_eq(r.addr % 16, 0);
    ck_assert_uint_ge(r.addr, DEVICE_DEFAULT_BASE);
    uint64_t addr = r.addr, size = r.size;
    device_metrics_t m;
    device_metrics(d, &m);
    ck_assert_uint_eq(m.live_requested, 100);
    ck_assert_uint_eq(m.live_allocated, size);
    ck_assert_uint_eq(m.live_blocks, 1);
    ck_assert_uint_eq(m.internal_fragmentation, size - 100);
    ck_assert_uint_eq(m.peak_live_requested, 100);
    ck_assert_uint_ge(m.peak_footprint, size);
    ck_assert_device_ok(d);

    ck_assert_int_eq(device_free(d, addr, &r), POOL_OK);
    ck_assert_uint_eq(r.addr, addr);
    ck_assert_uint_eq(r.size, size);
    device_metrics(d, &m);
    ck_assert_uint_eq(m.live_requested, 0);
    ck_assert_uint_eq(m.live_allocated, 0);
    ck_assert_uint_eq(m.live_blocks, 0);
    ck_assert_uint_eq(m.peak_live_requested, 100);
    ck_assert_device_ok(d);

    const device_stats_t *st = device_stats(d, (size_t)_i);
    ck_assert_uint_eq(st->allocations, 1);
    ck_assert_uint_eq(st->frees, 1);
    ck_assert_uint_eq(st->bytes_allocated, 100);
    ck_assert_uint_eq(st->bytes_freed, 100);
    ck_assert_uint_eq(st->current_bytes, 0);
    ck_assert_uint_eq(st->active_blocks, 0);
    device_destroy(d);
}
END_TEST

static void expect_failure(device_t *d, int rc, const device_result_t *r, int err,
                           const char *needle)
{
    ck_assert_int_eq(rc, err);
    ck_assert(!r->ok);
    ck_assert_int_eq(r->err, err);
    ck_assert_msg(strstr(r->error, needle), "\"%s\" lacks \"%s\"", r->error, needle);
    ck_assert_device_ok(d);
}

START_TEST(every_error_is_a_result)
{
    device_t *d = test_device(name_of(_i), 64 * MiB);
    device_result_t r;
    expect_failure(d, device_alloc(d, 0, 16, 0, &r), &r, POOL_EINVAL, "size is zero");
    expect_failure(d, device_alloc(d, 8, 3, 0, &r), &r, POOL_EINVAL, "not a power of two");
    expect_failure(d, device_alloc(d, 8, 0, 0, &r), &r, POOL_EINVAL, "not a power of two");
    expect_failure(d, device_alloc(d, 8, 16, POOL_STREAM_ANY, &r), &r, POOL_EINVAL, "reserved");
    expect_failure(d, device_alloc(d, 64 * MiB + 1, 16, 0, &r), &r, POOL_ETOOBIG,
                   "exceeds the device");
    expect_failure(d, device_free(d, 0x5, &r), &r, POOL_ENOENT, "unknown address 0x5");

    uint64_t a = test_alloc(d, 256, 16, 0);
    test_alloc(d, 256, 16, 0); /* keeps a from merging forward */
    expect_failure(d, device_free(d, a + 16, &r), &r, POOL_ENOENT, "not the start");
    test_free(d, a);
    expect_failure(d, device_free(d, a, &r), &r, POOL_EDOUBLE, "double free");
    expect_failure(d, device_free_complete(d, a, &r), &r, POOL_EDOUBLE, "already free");

    const device_stats_t *st = device_stats(d, (size_t)_i);
    ck_assert_uint_eq(st->failed_allocations, 5);
    ck_assert_uint_eq(st->failed_frees, 4);
    ck_assert_uint_eq(st->allocations, 2);
    ck_assert_uint_eq(st->frees, 1);
    device_destroy(d);
}
END_TEST

START_TEST(out_of_memory_then_recovery)
{
    const uint64_t total = 8 * MiB, size = 64 * KiB;
    device_t *d = test_device(name_of(_i), total);
    uint64_t *addrs = calloc(total / size + 1, sizeof *addrs);
    size_t n = 0;
    device_result_t r;
    while (device_alloc(d, size, 16, 0, &r) == POOL_OK) {
        ck_assert_uint_lt(n, total / size + 1);
        addrs[n++] = r.addr;
    }
    ck_assert_int_eq(r.err, POOL_ENOMEM);
    ck_assert_msg(strstr(r.error, "out of memory"), "%s", r.error);
    ck_assert(!device_can_alloc(d, size, 16, 0));
    ck_assert_uint_gt(n, total / size / 2); /* no strategy wastes half a device here */
    ck_assert_device_ok(d);
    for (size_t i = 0; i < n; i++)
        test_free(d, addrs[i]);
    device_metrics_t m;
    device_metrics(d, &m);
    ck_assert_uint_eq(m.live_blocks, 0);
    ck_assert(device_can_alloc(d, size, 16, 0));
    /* Everything freed: the same number fits again. */
    for (size_t i = 0; i < n; i++)
        addrs[i] = test_alloc(d, size, 16, 0);
    ck_assert_device_ok(d);
    free(addrs);
    device_destroy(d);
}
END_TEST

START_TEST(alignment_is_honoured)
{
    device_t *d = test_device(name_of(_i), 64 * MiB);
    static const uint64_t aligns[] = {1, 2, 8, 16, 64, 512, 4096, 65536};
    for (int round = 0; round < 3; round++)
        for (size_t i = 0; i < sizeof aligns / sizeof aligns[0]; i++) {
            uint64_t a = test_alloc(d, 100 + 37 * i, aligns[i], 0);
            ck_assert_msg(a % aligns[i] == 0, "0x%llx not aligned to %llu",
                          (unsigned long long)a, (unsigned long long)aligns[i]);
            ck_assert_device_ok(d);
        }
    device_destroy(d);
}
END_TEST

START_TEST(streams_do_not_share_freed_blocks)
{
    device_t *d = test_device(name_of(_i), 64 * MiB);
    uint64_t a = test_alloc(d, 1000, 16, 1);
    test_alloc(d, 1000, 16, 1); /* a's neighbour stays allocated */
    test_free(d, a);
    uint64_t c = test_alloc(d, 1000, 16, 2);
    ck_assert_uint_ne(c, a);
    ck_assert_device_ok(d);
    /* The owner gets its block back where the policy looks for it first. */
    if (is(_i, "best-fit") || is(_i, "first-fit") || is(_i, "buddy") || is(_i, "caching"))
        ck_assert_uint_eq(test_alloc(d, 1000, 16, 1), a);
    device_destroy(d);
}
END_TEST

START_TEST(free_requested_blocks_wait_for_completion)
{
    device_t *d = test_device(name_of(_i), 64 * MiB);
    device_result_t r;
    uint64_t a = test_alloc(d, 1000, 16, 0);
    test_alloc(d, 1000, 16, 0);
    ck_assert_int_eq(device_free_request(d, a, &r), POOL_OK);
    expect_failure(d, device_free_request(d, a, &r), &r, POOL_EDOUBLE, "already requested");
    expect_failure(d, device_free(d, a, &r), &r, POOL_EDOUBLE, "already requested");
    device_metrics_t m;
    device_metrics(d, &m);
    ck_assert_uint_eq(m.live_blocks, 2); /* still unavailable */
    uint64_t c = test_alloc(d, 1000, 16, 0);
    ck_assert_uint_ne(c, a);
    expect_failure(d, device_free_complete(d, c, &r), &r, POOL_ESTATE, "not free_requested");
    ck_assert_int_eq(device_free_complete(d, a, &r), POOL_OK);
    ck_assert_uint_eq(r.addr, a);
    expect_failure(d, device_free_complete(d, a, &r), &r, POOL_EDOUBLE, "already free");
    device_metrics(d, &m);
    ck_assert_uint_eq(m.live_blocks, 2);
    if (is(_i, "best-fit") || is(_i, "first-fit") || is(_i, "buddy") || is(_i, "caching"))
        ck_assert_uint_eq(test_alloc(d, 1000, 16, 0), a);
    const device_stats_t *st = device_stats(d, (size_t)_i);
    ck_assert_uint_eq(st->frees, 1);
    device_destroy(d);
}
END_TEST

START_TEST(reset_empties_everything)
{
    device_t *d = test_device(name_of(_i), 64 * MiB);
    for (int i = 0; i < 100; i++)
        test_alloc(d, 100 + (uint64_t)i, 16, 0);
    ck_assert_int_eq(device_reset(d), POOL_OK);
    device_metrics_t m;
    device_metrics(d, &m);
    ck_assert_uint_eq(m.live_blocks, 0);
    ck_assert_uint_eq(m.live_requested, 0);
    ck_assert_uint_eq(m.peak_live_requested, 0);
    ck_assert_uint_eq(device_stats(d, (size_t)_i)->allocations, 0);
    ck_assert_device_ok(d);
    test_alloc(d, 100, 16, 0);
    device_destroy(d);
}
END_TEST

/* ---- randomized: invariants after every operation ------------------------ */

typedef struct live_s {
    uint64_t addr, size;
    bool requested; /* free requested, not yet completed */
} live_t;

START_TEST(random_operations_keep_every_invariant)
{
    enum { OPS = 100000, MAX_LIVE = 160 };
    device_t *d = test_device(name_of(_i), 96 * MiB);
    live_t live[MAX_LIVE];
    size_t n = 0;
    uint64_t want_live_bytes = 0, want_allocs = 0, want_frees = 0;
    uint64_t rover = device_base(d);
    rng_t rng;
    rng_seed(&rng, 0x5eed0000u + (uint64_t)_i);
    device_result_t r;
    for (int op = 0; op < OPS; op++) {
        uint64_t pick = rng_below(&rng, 100);
        if (n < MAX_LIVE && (n == 0 || pick < 48)) {
            /* Log-uniform sizes from 1 B to 2 MiB; mostly 16-byte alignment. */
            uint64_t size = 1 + (rng_next(&rng) >> (43 + rng_below(&rng, 21)));
            static const uint64_t aligns[] = {16, 16, 16, 16, 1, 8, 64, 4096};
            uint64_t align = aligns[rng_below(&rng, 8)];
            int64_t stream = (int64_t)rng_below(&rng, 6); /* more than FIT_BIN_STREAMS */
            bool can = device_can_alloc(d, size, align, stream);
            bool by_hand = !is(_i, "buddy") && !is(_i, "caching");
            uint64_t want = by_hand ? placed_by_hand(_i, d, size, align, stream, rover) : 0;
            int rc = device_alloc(d, size, align, stream, &r);
            if (rc == POOL_OK)
                rover = r.addr + r.size; /* next fit resumes where this block ends */
            if (by_hand)
                REQUIRE((rc == POOL_OK ? r.addr : UINT64_MAX) == want,
                        "%s placed %zu bytes at 0x%llx, by hand 0x%llx", name_of(_i), (size_t)size,
                        rc == POOL_OK ? (unsigned long long)r.addr : 0ull,
                        (unsigned long long)want);
            REQUIRE(can == (rc == POOL_OK), "can_alloc said %d, alloc gave %d (%s)", can,
                          rc, r.error);
            if (rc == POOL_OK) {
                REQUIRE(r.addr % align == 0, "0x%llx not aligned to %llu", (unsigned long long)r.addr,
                        (unsigned long long)align);
                REQUIRE(r.size >= size, "block smaller than the request");
                for (size_t k = 0; k < n; k++)
                    REQUIRE(r.addr + r.size <= live[k].addr ||
                                      live[k].addr + live[k].size <= r.addr,
                                  "new block overlaps a live one");
                live[n++] = (live_t){.addr = r.addr, .size = size};
                want_live_bytes += size;
                want_allocs++;
            } else {
                REQUIRE(rc == POOL_ENOMEM, "alloc failed with %d: %s", rc, r.error);
            }
        } else if (n) {
            size_t k = (size_t)rng_below(&rng, n);
            if (live[k].requested) {
                REQUIRE(device_free_complete(d, live[k].addr, &r) == POOL_OK, "%s", r.error);
            } else if (pick >= 90) {
                REQUIRE(device_free_request(d, live[k].addr, &r) == POOL_OK, "%s", r.error);
                live[k].requested = true;
                goto checked;
            } else {
                REQUIRE(device_free(d, live[k].addr, &r) == POOL_OK, "%s", r.error);
            }
            want_live_bytes -= live[k].size;
            want_frees++;
            live[k] = live[--n];
        }
    checked:;
        device_metrics_t m;
        device_metrics(d, &m);
        REQUIRE(m.live_requested == want_live_bytes, "live bytes %llu, want %llu",
                (unsigned long long)m.live_requested, (unsigned long long)want_live_bytes);
        REQUIRE(m.live_blocks == n, "live blocks %llu, want %zu",
                (unsigned long long)m.live_blocks, n);
        REQUIRE(m.live_allocated >= m.live_requested, "allocated below requested");
        REQUIRE(m.peak_footprint >= m.reserved, "footprint above its peak");
        if (op % 97 == 0) { /* the largest free block, by brute force */
            uint64_t largest = 0;
            const pool_t *p = device_pool(d);
            for (segment_t *sg = pool_segment_first(p); sg; sg = pool_segment_next(sg))
                for (block_t *b = sg->first; b; b = b->next)
                    if (block_is_free(b) && b->size > largest)
                        largest = b->size;
            REQUIRE(m.largest_free == largest, "largest free %llu, want %llu",
                    (unsigned long long)m.largest_free, (unsigned long long)largest);
        }
        ck_assert_device_ok(d);
    }
    const device_stats_t *st = device_stats(d, (size_t)_i);
    ck_assert_uint_eq(st->allocations, want_allocs);
    ck_assert_uint_eq(st->frees, want_frees);
    ck_assert_uint_eq(st->current_bytes, want_live_bytes);
    ck_assert_uint_eq(st->active_blocks, want_allocs - want_frees);
    ck_assert_uint_gt(want_allocs, OPS / 3);
    /* Free what is left: the pool returns to no live blocks. */
    for (size_t k = 0; k < n; k++) {
        if (live[k].requested)
            REQUIRE(device_free_complete(d, live[k].addr, &r) == POOL_OK, "%s", r.error);
        else
            test_free(d, live[k].addr);
    }
    device_metrics_t m;
    device_metrics(d, &m);
    ck_assert_uint_eq(m.live_allocated, 0);
    ck_assert_device_ok(d);
    device_destroy(d);
}
END_TEST

/* Best fit's size bins are pairing heaps: the invariant check sees a
 * mislinked one (and the device is whole again once it is mended). */
START_TEST(best_fit_check_sees_a_broken_bin)
{
    device_t *d = test_device("best-fit", 1 * MiB);
    uint64_t a[8];
    for (int i = 0; i < 8; i++) {
        a[i] = test_alloc(d, 64, 16, 0);
        test_alloc(d, 32, 16, 0); /* a neighbour that stays: no coalescing */
    }
    for (int i = 0; i < 8; i++)
        test_free(d, a[i]);
    ck_assert_device_ok(d);
    block_t *victim = NULL;
    const pool_t *p = device_pool(d);
    for (segment_t *sg = pool_segment_first(p); sg && !victim; sg = pool_segment_next(sg))
        for (block_t *b = sg->first; b && !victim; b = b->next)
            if (block_is_free(b) && b->size == 64 && b->ix->heap.prev)
                victim = b; /* a bin member below the root */
    ck_assert_ptr_nonnull(victim);
    ixnode_t *saved = victim->ix->heap.prev;
    victim->ix->heap.prev = victim->ix;
    const char *why = NULL;
    ck_assert_int_eq(device_check(d, &why), -1);
    ck_assert_str_eq(why, "size bin heap out of order or mislinked");
    victim->ix->heap.prev = saved;
    ck_assert_device_ok(d);
    /* A node whose key is not its block's. */
    victim->ix->heap.addr++;
    ck_assert_int_eq(device_check(d, &why), -1);
    ck_assert_str_eq(why, "size bin node is not its block's, or has another key");
    victim->ix->heap.addr--;
    ck_assert_device_ok(d);
    device_destroy(d);
}
END_TEST

/* The top of the device (above the extent) is a last resort for worst
 * and next fit, as the break of a real heap: a hole that fits is taken
 * first.  Before, worst fit always took the top (the largest block of a
 * device larger than the heap) and next fit, once its rover was there,
 * never wrapped: neither reused a hole, and the footprint grew by every
 * allocation. */
START_TEST(worst_fit_takes_a_hole_before_the_top)
{
    device_t *d = test_device("worst-fit", 1 * MiB);
    uint64_t a = test_alloc(d, 1000, 16, 0); /* 1008 bytes at the base */
    test_alloc(d, 100, 16, 0);               /* 112 above it */
    test_free(d, a);
    ck_assert_uint_eq(test_alloc(d, 100, 16, 0), a); /* the hole, not the top */
    /* the largest hole: the rest of the first (896) */
    ck_assert_uint_eq(test_alloc(d, 200, 16, 0), a + 112);
    /* nothing below fits 4000 bytes: the top */
    ck_assert_uint_eq(test_alloc(d, 4000, 16, 0), a + 1120);
    device_metrics_t m;
    device_metrics(d, &m);
    ck_assert_uint_eq(m.peak_footprint, 1120 + 4000);
    ck_assert_device_ok(d);
    device_destroy(d);
}
END_TEST

START_TEST(next_fit_wraps_before_taking_the_top)
{
    device_t *d = test_device("next-fit", 1 * MiB);
    uint64_t a = test_alloc(d, 1000, 16, 0); /* 1008 bytes at the base */
    test_alloc(d, 100, 16, 0);               /* 112 above it: the rover at the top */
    test_free(d, a);
    ck_assert_uint_eq(test_alloc(d, 100, 16, 0), a);       /* wrapped: the hole */
    ck_assert_uint_eq(test_alloc(d, 100, 16, 0), a + 112); /* from the rover on */
    ck_assert_uint_eq(test_alloc(d, 900, 16, 0), a + 1120); /* 784 left: the top */
    device_metrics_t m;
    device_metrics(d, &m);
    ck_assert_uint_eq(m.peak_footprint, 1120 + 912);
    ck_assert_device_ok(d);
    device_destroy(d);
}
END_TEST

/* Worst and next fit choose what a scan of every block would choose:
 * worst, the largest free block that fits but the top (lowest address
 * among equals), the top only when none does; next, the first that fits
 * from where the last allocation ended but the top, then the first from
 * the bottom, then the top.  Random sizes and frees on one stream. */
static uint64_t scan_choice(const pool_t *p, bool worst, uint64_t rover, uint64_t need)
{
    const block_t *pick = NULL, *top = NULL, *low = NULL;
    for (segment_t *sg = pool_segment_first(p); sg; sg = pool_segment_next(sg))
        for (const block_t *b = sg->first; b; b = b->next) {
            if (b->state == BLOCK_ALLOC || b->state == BLOCK_FREE_REQUESTED || b->size < need)
                continue;
            if (!b->next && b->stream == POOL_STREAM_ANY) { /* the top: pristine, last */
                top = b;
                continue;
            }
            if (worst) {
                if (!pick || b->size > pick->size)
                    pick = b;
            } else {
                if (!low)
                    low = b;
                if (!pick && b->addr >= rover)
                    pick = b;
            }
        }
    if (!pick)
        pick = low;
    if (!pick)
        pick = top;
    return pick ? pick->addr : 0;
}

START_TEST(worst_and_next_fit_choose_as_a_scan_does)
{
    for (int worst = 0; worst <= 1; worst++) {
        device_t *d = test_device(worst ? "worst-fit" : "next-fit", 4 * MiB);
        rng_t rng;
        rng_seed(&rng, 7 + (uint64_t)worst);
        enum { SLOTS = 200 };
        uint64_t live[SLOTS] = {0};
        uint64_t rover = 0;
        for (int op = 0; op < 20000; op++) {
            size_t k = (size_t)rng_below(&rng, SLOTS);
            if (live[k]) {
                test_free(d, live[k]);
                live[k] = 0;
                continue;
            }
            uint64_t size = 1 + rng_below(&rng, rng_below(&rng, 4) ? 256 : 16384);
            uint64_t want = scan_choice(device_pool(d), worst, rover, (size + 15) & ~15ull);
            device_result_t r;
            if (device_alloc(d, size, 16, 0, &r) != POOL_OK) {
                REQUIRE(want == 0, "op %d: %llu bytes failed, a scan finds 0x%llx", op,
                        (unsigned long long)size, (unsigned long long)want);
                continue;
            }
            REQUIRE(r.addr == want, "op %d: %s put %llu bytes at 0x%llx, a scan at 0x%llx", op,
                    worst ? "worst fit" : "next fit", (unsigned long long)size,
                    (unsigned long long)r.addr, (unsigned long long)want);
            live[k] = r.addr;
            rover = r.addr + r.size;
        }
        ck_assert_device_ok(d);
        device_destroy(d);
    }
}
END_TEST

/* Next fit keeps the free block at its rover and searches from its
 * node (sim/fits.c).  Frees right below the rover merge
 * that block away, frees right above it grow it, and other streams' and
 * pristine blocks sit at the rover too: after every operation the
 * choice is the scan's from the rover (fit_by_hand). */
START_TEST(next_fit_searches_from_the_block_at_its_rover)
{
    device_t *d = test_device("next-fit", 2 * MiB);
    int nf = strategy_index(strategy_find("next-fit"));
    rng_t rng;
    rng_seed(&rng, 0x40fe4u + (uint64_t)_i);
    enum { SLOTS = 64 };
    uint64_t live[SLOTS] = {0};
    size_t last = SLOTS; /* the slot of the last allocation: it ends at the rover */
    uint64_t rover = device_base(d);
    for (int op = 0; op < 30000; op++) {
        uint64_t pick = rng_below(&rng, 10);
        size_t k = pick < 3 && last < SLOTS ? last : (size_t)rng_below(&rng, SLOTS);
        if (live[k] && pick < 6) {
            test_free(d, live[k]);
            live[k] = 0;
            continue;
        }
        if (live[k])
            continue;
        uint64_t size = 1 + rng_below(&rng, rng_below(&rng, 8) ? 200 : 3000);
        uint64_t align = rng_below(&rng, 8) ? 16 : 256;
        int64_t stream = (int64_t)rng_below(&rng, 3);
        device_result_t r;
        if (alloc_as_by_hand(nf, d, size, align, stream, &rover, op, &r) != POOL_OK)
            continue;
        live[k] = r.addr;
        last = k;
        if (op % 64 == 0)
            ck_assert_device_ok(d);
    }
    ck_assert_device_ok(d);
    device_destroy(d);
}
END_TEST

/* Streams beyond the fit index's own tags (FIT_TAGS) share one tree
 * (sim/fit.h), and so does pristine memory once they are all taken:
 * with twelve streams every fit strategy still chooses what a scan of
 * every block chooses (fit_by_hand), at every allocation. */
START_TEST(fit_choices_hold_beyond_the_tags)
{
    if (is(_i, "buddy") || is(_i, "caching"))
        return;
    device_t *d = test_device(name_of(_i), 4 * MiB);
    rng_t rng;
    rng_seed(&rng, 0x7a95u + (uint64_t)_i);
    enum { SLOTS = 96 };
    uint64_t live[SLOTS] = {0};
    uint64_t rover = device_base(d);
    for (int op = 0; op < 20000; op++) {
        size_t k = (size_t)rng_below(&rng, SLOTS);
        if (live[k]) {
            test_free(d, live[k]);
            live[k] = 0;
            continue;
        }
        uint64_t size = 1 + rng_below(&rng, rng_below(&rng, 4) ? 300 : 12000);
        uint64_t align = rng_below(&rng, 6) ? 16 : 128;
        int64_t stream = (int64_t)rng_below(&rng, 12) * 7; /* past FIT_SMALL_STREAMS too */
        device_result_t r;
        if (alloc_as_by_hand(_i, d, size, align, stream, &rover, op, &r) != POOL_OK)
            continue;
        live[k] = r.addr;
        if (op % 256 == 0)
            ck_assert_device_ok(d);
    }
    ck_assert_device_ok(d);
    device_destroy(d);
}
END_TEST

Suite *strategy_suite(void)
{
    Suite *s = suite_create("strategy");
    TCase *tc = tcase_create("contract");
    int n = (int)strategy_count();
    tcase_add_test(tc, table_lists_six_by_name);
    tcase_add_test(tc, best_fit_check_sees_a_broken_bin);
    tcase_add_test(tc, worst_fit_takes_a_hole_before_the_top);
    tcase_add_test(tc, next_fit_wraps_before_taking_the_top);
    tcase_add_test(tc, worst_and_next_fit_choose_as_a_scan_does);
    tcase_add_loop_test(tc, next_fit_searches_from_the_block_at_its_rover, 0, 3);
    tcase_add_loop_test(tc, alloc_then_free_restores_the_pool, 0, n);
    tcase_add_loop_test(tc, every_error_is_a_result, 0, n);
    tcase_add_loop_test(tc, out_of_memory_then_recovery, 0, n);
    tcase_add_loop_test(tc, alignment_is_honoured, 0, n);
    tcase_add_loop_test(tc, streams_do_not_share_freed_blocks, 0, n);
    tcase_add_loop_test(tc, free_requested_blocks_wait_for_completion, 0, n);
    tcase_add_loop_test(tc, reset_empties_everything, 0, n);
    suite_add_tcase(s, tc);
    TCase *rnd = tcase_create("randomized");
    tcase_set_timeout(rnd, 600);
    tcase_add_loop_test(rnd, random_operations_keep_every_invariant, 0, n);
    tcase_add_loop_test(rnd, fit_choices_hold_beyond_the_tags, 0, n);
    suite_add_tcase(s, rnd);
    return s;
}
