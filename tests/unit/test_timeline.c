/*
 * timeline: extremes per bucket, the width doubling as the trace grows;
 * no peak is lost and memory stays fixed.
 */
#include "analyzer/timeline.h"
#include "tests/unit/suites.h"

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

Suite *timeline_suite(void)
{
    Suite *s = suite_create("timeline");
    TCase *tc = tcase_create("buckets");
    tcase_add_test(tc, extremes_kept_through_coarsening);
    suite_add_tcase(s, tc);
    return s;
}
