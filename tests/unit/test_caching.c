/* caching: PyTorch's rounding, pools, split rules and the DESIGN.md vectors. */
#include <check.h>

#include "tests/unit/helpers.h"
#include "tests/unit/suites.h"

static uint64_t reserved(const device_t *d)
{
    device_metrics_t m;
    device_metrics(d, &m);
    return m.reserved;
}

static uint64_t alloc_size(device_t *d, uint64_t size)
{
    device_result_t r;
    ck_assert_msg(device_alloc(d, size, 16, 0, &r) == POOL_OK, "%s", r.error);
    return r.size;
}

START_TEST(requests_round_to_512)
{
    device_t *d = test_device("caching", 1 * GiB);
    ck_assert_uint_eq(alloc_size(d, 1), 512);
    ck_assert_uint_eq(alloc_size(d, 512), 512);
    ck_assert_uint_eq(alloc_size(d, 513), 1024);
    ck_assert_uint_eq(reserved(d), 2 * MiB); /* one small segment */
    ck_assert_device_ok(d);
    device_destroy(d);
}
END_TEST

START_TEST(small_and_large_pools)
{
    device_t *d = test_device("caching", 1 * GiB);
    ck_assert_uint_eq(alloc_size(d, 1 * MiB), 1 * MiB); /* small: 2 MiB segment */
    ck_assert_uint_eq(reserved(d), 2 * MiB);
    ck_assert_uint_eq(alloc_size(d, 1 * MiB + 1), 1 * MiB + 512); /* large: 20 MiB */
    ck_assert_uint_eq(reserved(d), 22 * MiB);
    ck_assert_uint_eq(alloc_size(d, 3 * MiB), 3 * MiB); /* fits the 20 MiB one */
    ck_assert_uint_eq(reserved(d), 22 * MiB);
    ck_assert_uint_eq(alloc_size(d, 11 * MiB), 11 * MiB); /* best fit: the 20 MiB one */
    ck_assert_uint_eq(reserved(d), 22 * MiB);
    ck_assert_uint_eq(alloc_size(d, 17 * MiB), 18 * MiB); /* own 18 MiB segment, 1 MiB kept */
    ck_assert_uint_eq(reserved(d), 40 * MiB);
    ck_assert_uint_eq(pool_segment_count(device_pool(d)), 3);
    ck_assert_device_ok(d);
    device_destroy(d);
}
END_TEST

START_TEST(split_rules)
{
    device_t *d = test_device("caching", 1 * GiB);
    /* Large pool: a remainder of 1 MiB or less stays in the block. */
    ck_assert_uint_eq(alloc_size(d, 19 * MiB), 20 * MiB); /* own 20 MiB segment */
    ck_assert_uint_eq(alloc_size(d, 5 * MiB), 5 * MiB);   /* 20 MiB segment, 15 MiB left */
    device_metrics_t m;
    device_metrics(d, &m);
    ck_assert_uint_eq(m.largest_free, 15 * MiB);
    ck_assert_uint_eq(alloc_size(d, 14 * MiB + 512 * KiB), 15 * MiB); /* 0.5 MiB stays */
    device_metrics(d, &m);
    ck_assert_uint_eq(m.internal_fragmentation, 1 * MiB + 512 * KiB);
    ck_assert_uint_eq(m.largest_free, 0);
    /* Small pool: split whenever 512 bytes remain. */
    ck_assert_uint_eq(alloc_size(d, 1 * MiB), 1 * MiB);
    ck_assert_uint_eq(alloc_size(d, 1 * MiB - 512), 1 * MiB - 512);
    ck_assert_uint_eq(alloc_size(d, 512), 512); /* exactly the remainder */
    ck_assert_uint_eq(pool_segment_count(device_pool(d)), 3);
    device_metrics(d, &m);
    ck_assert_uint_eq(m.reserved, 42 * MiB);
    ck_assert_device_ok(d);
    device_destroy(d);
}
END_TEST

/* DESIGN.md: 8 x 16 MiB, free all, then 4 x 32 MiB -> 256 MiB reserved. */
START_TEST(segments_cannot_merge)
{
    device_t *d = test_device("caching", 1 * GiB);
    uint64_t a[8];
    for (int i = 0; i < 8; i++)
        a[i] = test_alloc(d, 16 * MiB, 16, 0);
    ck_assert_uint_eq(reserved(d), 128 * MiB);
    for (int i = 0; i < 8; i++)
        test_free(d, a[i]);
    ck_assert_uint_eq(reserved(d), 128 * MiB); /* kept reserved */
    for (int i = 0; i < 4; i++)
        test_alloc(d, 32 * MiB, 16, 0);
    ck_assert_uint_eq(reserved(d), 256 * MiB);
    device_metrics_t m;
    device_metrics(d, &m);
    ck_assert_uint_eq(m.peak_footprint, 256 * MiB);
    ck_assert_device_ok(d);
    device_destroy(d);
}
END_TEST

/* ... and the reverse order: 4 x 32 MiB, free all, 8 x 16 MiB -> 128 MiB. */
START_TEST(large_blocks_split_for_smaller_requests)
{
    device_t *d = test_device("caching", 1 * GiB);
    uint64_t a[4];
    for (int i = 0; i < 4; i++)
        a[i] = test_alloc(d, 32 * MiB, 16, 0);
    for (int i = 0; i < 4; i++)
        test_free(d, a[i]);
    for (int i = 0; i < 8; i++)
        test_alloc(d, 16 * MiB, 16, 0);
    ck_assert_uint_eq(reserved(d), 128 * MiB);
    ck_assert_uint_eq(pool_segment_count(device_pool(d)), 4);
    ck_assert_device_ok(d);
    device_destroy(d);
}
END_TEST

START_TEST(trim_returns_wholly_free_segments)
{
    device_t *d = test_device("caching", 1 * GiB);
    uint64_t a = test_alloc(d, 100, 16, 0);
    uint64_t b = test_alloc(d, 16 * MiB, 16, 0);
    test_alloc(d, 12 * MiB, 16, 0);
    test_free(d, a);
    test_free(d, b);
    ck_assert_uint_eq(reserved(d), (2 + 16 + 12) * MiB);
    ck_assert_uint_eq(device_trim(d), (2 + 16) * MiB);
    ck_assert_uint_eq(reserved(d), 12 * MiB);
    ck_assert_uint_eq(device_trim(d), 0);
    ck_assert_device_ok(d);
    device_destroy(d);
}
END_TEST

START_TEST(capacity_pressure_trims_before_failing)
{
    device_t *d = test_device("caching", 64 * MiB);
    uint64_t a[3];
    for (int i = 0; i < 3; i++)
        a[i] = test_alloc(d, 16 * MiB, 16, 0);
    for (int i = 0; i < 3; i++)
        test_free(d, a[i]);
    ck_assert_uint_eq(reserved(d), 48 * MiB);
    ck_assert(device_can_alloc(d, 32 * MiB, 16, 0));
    test_alloc(d, 32 * MiB, 16, 0); /* 48 + 32 > 64: cache released first */
    ck_assert_uint_eq(reserved(d), 32 * MiB);
    device_result_t r;
    ck_assert_int_eq(device_alloc(d, 40 * MiB, 16, 0, &r), POOL_ENOMEM);
    ck_assert(!device_can_alloc(d, 40 * MiB, 16, 0));
    ck_assert_device_ok(d);
    device_destroy(d);
}
END_TEST

START_TEST(each_stream_gets_its_own_segments)
{
    device_t *d = test_device("caching", 1 * GiB);
    test_alloc(d, 100, 16, 1);
    test_alloc(d, 100, 16, 2);
    test_alloc(d, 100, 16, 1);
    ck_assert_uint_eq(reserved(d), 4 * MiB);
    ck_assert_uint_eq(pool_segment_count(device_pool(d)), 2);
    ck_assert_device_ok(d);
    device_destroy(d);
}
END_TEST

Suite *caching_suite(void)
{
    Suite *s = suite_create("caching");
    TCase *tc = tcase_create("caching");
    tcase_add_test(tc, requests_round_to_512);
    tcase_add_test(tc, small_and_large_pools);
    tcase_add_test(tc, split_rules);
    tcase_add_test(tc, segments_cannot_merge);
    tcase_add_test(tc, large_blocks_split_for_smaller_requests);
    tcase_add_test(tc, trim_returns_wholly_free_segments);
    tcase_add_test(tc, capacity_pressure_trims_before_failing);
    tcase_add_test(tc, each_stream_gets_its_own_segments);
    suite_add_tcase(s, tc);
    return s;
}
