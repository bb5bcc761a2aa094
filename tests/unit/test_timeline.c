/*
 * timeline: extremes per bucket, the width doubling as the trace grows;
 * no peak is lost and memory stays fixed.
 */
#include "analyzer/consume/timeline.h"
#include "lib/rng.h"
#include "tests/unit/suites.h"

#define EVENTS 200000

START_TEST(extremes_kept_through_coarsening)
{
    static timeline_t tl;
    timeline_init(&tl);
    /* one event a millisecond for 10 s: 10,000 events, far more than
     * the buckets at 1 µs; one spike of 1000 at t = 5.0005 s, mapped 7
     * for one event at 2 s */
    uint64_t max_heap = 0;
    for (uint64_t i = 0; i < 10000; i++) {
        uint64_t heap = 100 + i % 7, mapped = i == 2000 ? 7 : 0;
        if (i == 5000)
            heap = 1000;
        max_heap = heap > max_heap ? heap : max_heap;
        timeline_add(&tl, 1000000 * i, heap, mapped);
    }
    ck_assert_uint_le(tl.n, TIMELINE_BUCKETS);
    ck_assert_uint_gt(tl.n, TIMELINE_BUCKETS / 2);
    uint64_t hmax = 0, hmin = UINT64_MAX, mmax = 0, smax = 0;
    for (size_t i = 0; i < tl.n; i++) {
        if (!tl.v[i].used)
            continue;
        hmax = tl.v[i].heap_max > hmax ? tl.v[i].heap_max : hmax;
        hmin = tl.v[i].heap_min < hmin ? tl.v[i].heap_min : hmin;
        mmax = tl.v[i].mapped_max > mmax ? tl.v[i].mapped_max : mmax;
        smax = tl.v[i].sum_max > smax ? tl.v[i].sum_max : smax;
    }
    ck_assert_uint_eq(hmax, 1000);
    ck_assert_uint_eq(hmin, 100);
    ck_assert_uint_eq(mmax, 7);
    ck_assert_uint_eq(smax, 1000);
    /* the spike's bucket is where its time says */
    size_t at = (size_t)((5000 * 1000000ull) / tl.width);
    ck_assert_uint_eq(tl.v[at].heap_max, 1000);
}
END_TEST

/* Events several to a bucket, now and then one earlier than the one
 * before: every bucket equals what the events in it give when they are
 * bucketed at the final width directly (coarsening merges exactly, and
 * an event lands where its time says, whichever bucket the one before
 * went to). */
START_TEST(buckets_equal_direct_bucketing)
{
    static timeline_t tl;
    static uint64_t ts[EVENTS], hs[EVENTS], ms[EVENTS];
    static timeline_bucket_t want[TIMELINE_BUCKETS];
    timeline_init(&tl);
    rng_t r;
    rng_seed(&r, 7);
    uint64_t t = 5000;
    for (int i = 0; i < EVENTS; i++) {
        t += rng_below(&r, 400);
        ts[i] = rng_below(&r, 20) == 0 && t > 3000 ? t - rng_below(&r, 3000) : t;
        hs[i] = rng_below(&r, 1u << 20);
        ms[i] = rng_below(&r, 1u << 16);
        timeline_add(&tl, ts[i], hs[i], ms[i]);
    }
    for (int i = 0; i < EVENTS; i++) {
        uint64_t off = ts[i] > ts[0] ? ts[i] - ts[0] : 0;
        timeline_bucket_t *b = &want[off / tl.width];
        uint64_t sum = hs[i] + ms[i];
        if (!b->used)
            *b = (timeline_bucket_t){true, hs[i], hs[i], ms[i], ms[i], sum, sum};
#define LO(f, v) b->f = (v) < b->f ? (v) : b->f
#define HI(f, v) b->f = (v) > b->f ? (v) : b->f
        LO(heap_min, hs[i]);
        HI(heap_max, hs[i]);
        LO(mapped_min, ms[i]);
        HI(mapped_max, ms[i]);
        LO(sum_min, sum);
        HI(sum_max, sum);
#undef LO
#undef HI
    }
    for (size_t i = 0; i < TIMELINE_BUCKETS; i++) {
        ck_assert_int_eq(tl.v[i].used, want[i].used);
        if (!want[i].used)
            continue;
        ck_assert_uint_eq(tl.v[i].heap_min, want[i].heap_min);
        ck_assert_uint_eq(tl.v[i].heap_max, want[i].heap_max);
        ck_assert_uint_eq(tl.v[i].mapped_min, want[i].mapped_min);
        ck_assert_uint_eq(tl.v[i].mapped_max, want[i].mapped_max);
        ck_assert_uint_eq(tl.v[i].sum_min, want[i].sum_min);
        ck_assert_uint_eq(tl.v[i].sum_max, want[i].sum_max);
    }
}
END_TEST

Suite *timeline_suite(void)
{
    Suite *s = suite_create("timeline");
    TCase *tc = tcase_create("buckets");
    tcase_add_test(tc, extremes_kept_through_coarsening);
    tcase_add_test(tc, buckets_equal_direct_bucketing);
    suite_add_tcase(s, tc);
    return s;
}
