/* buddy: exact splits and merges. */
#include <check.h>
#include <string.h>

#include "tests/unit/helpers.h"
#include "tests/unit/suites.h"

#define BASE DEVICE_DEFAULT_BASE

/* The segment's blocks as "size:state" words, e.g. "64A 64F 128F". */
static const char *layout(const device_t *d)
{
    static char buf[512];
    size_t at = 0;
    buf[0] = '\0';
    for (const segment_t *s = pool_segment_first(device_pool(d)); s; s = pool_segment_next(s))
        for (const block_t *b = s->first; b; b = b->next)
            at += (size_t)snprintf(buf + at, sizeof buf - at, "%s%llu%c", at ? " " : "",
                                   (unsigned long long)b->size, block_is_free(b) ? 'F' : 'A');
    return buf;
}

START_TEST(split_down_to_the_request)
{
    device_t *d = test_device("buddy", 1024);
    ck_assert_str_eq(layout(d), "1024F");
    device_result_t r;
    ck_assert_int_eq(device_alloc(d, 64, 16, 0, &r), POOL_OK);
    ck_assert_uint_eq(r.addr, BASE);
    ck_assert_uint_eq(r.size, 64);
    ck_assert_str_eq(layout(d), "64A 64F 128F 256F 512F");
    ck_assert_device_ok(d);
    test_free(d, BASE);
    ck_assert_str_eq(layout(d), "1024F");
    ck_assert_device_ok(d);
    device_destroy(d);
}
END_TEST

START_TEST(sizes_round_to_powers_of_two_from_64)
{
    device_t *d = test_device("buddy", 1 * MiB);
    device_result_t r;
    ck_assert_int_eq(device_alloc(d, 1, 1, 0, &r), POOL_OK);
    ck_assert_uint_eq(r.size, 64);
    ck_assert_int_eq(device_alloc(d, 100, 16, 0, &r), POOL_OK);
    ck_assert_uint_eq(r.size, 128);
    ck_assert_uint_eq(r.addr, BASE + 128); /* buddy of the 64 was taken next */
    ck_assert_int_eq(device_alloc(d, 4097, 16, 0, &r), POOL_OK);
    ck_assert_uint_eq(r.size, 8192);
    ck_assert_uint_eq(r.addr % 8192, 0);
    device_metrics_t m;
    device_metrics(d, &m);
    ck_assert_uint_eq(m.internal_fragmentation, (64 - 1) + (128 - 100) + (8192 - 4097));
    ck_assert_device_ok(d);
    device_destroy(d);
}
END_TEST

START_TEST(only_buddies_merge)
{
    device_t *d = test_device("buddy", 256);
    uint64_t a[4];
    for (int i = 0; i < 4; i++) {
        a[i] = test_alloc(d, 64, 16, 0);
        ck_assert_uint_eq(a[i], BASE + 64 * (uint64_t)i);
    }
    ck_assert_str_eq(layout(d), "64A 64A 64A 64A");
    test_free(d, a[1]);
    test_free(d, a[2]); /* neighbours of a[1] but not its buddy */
    ck_assert_str_eq(layout(d), "64A 64F 64F 64A");
    ck_assert_device_ok(d);
    test_free(d, a[0]); /* a[0]^64 == a[1]: merge */
    ck_assert_str_eq(layout(d), "128F 64F 64A");
    test_free(d, a[3]); /* a[3] with a[2], then the two halves */
    ck_assert_str_eq(layout(d), "256F");
    ck_assert_device_ok(d);
    device_destroy(d);
}
END_TEST

START_TEST(odd_device_sizes_become_chunks)
{
    device_t *d = test_device("buddy", 1000); /* 960 usable: 512 + 256 + 128 + 64 */
    ck_assert_str_eq(layout(d), "512F 256F 128F 64F");
    device_metrics_t m;
    device_metrics(d, &m);
    ck_assert_uint_eq(m.largest_free, 512);
    device_result_t r;
    ck_assert_int_eq(device_alloc(d, 600, 16, 0, &r), POOL_ENOMEM);
    ck_assert_msg(strstr(r.error, "largest free block 512 bytes"), "%s", r.error);
    uint64_t a = test_alloc(d, 256, 16, 0);
    ck_assert_uint_eq(a, BASE + 512); /* the exact chunk, not half of 512 */
    uint64_t b = test_alloc(d, 512, 16, 0);
    ck_assert_uint_eq(b, BASE);
    test_free(d, a);
    test_free(d, b);
    ck_assert_str_eq(layout(d), "512F 256F 128F 64F"); /* chunks never merge */
    ck_assert_device_ok(d);
    device_destroy(d);
}
END_TEST

/* Each chunk is a segment with its own extent: a block in the small last
 * chunk does not make the program's footprint the whole device. */
START_TEST(chunks_have_their_own_footprint)
{
    device_t *d = test_device("buddy", 1 * MiB + 512);
    ck_assert_uint_eq(pool_segment_count(device_pool(d)), 2);
    uint64_t a = test_alloc(d, 64, 16, 0);
    ck_assert_uint_eq(a, BASE + 1 * MiB); /* the smallest block that fits */
    device_metrics_t m;
    device_metrics(d, &m);
    ck_assert_uint_eq(m.reserved, 64);
    ck_assert_uint_eq(m.peak_footprint, 64);
    test_alloc(d, 1000, 16, 0); /* 1024 bytes: the 1 MiB chunk now */
    device_metrics(d, &m);
    ck_assert_uint_eq(m.reserved, 64 + 1024);
    ck_assert_device_ok(d);
    device_destroy(d);
}
END_TEST

START_TEST(alignment_beyond_the_base_is_refused)
{
    char err[128];
    device_t *d;
    device_config_t cfg = {.total = 1 * MiB, .base = 0x10000040, .strategy = "buddy"};
    ck_assert_int_eq(device_create(&cfg, &d, err, sizeof err), POOL_OK);
    device_result_t r;
    ck_assert_int_eq(device_alloc(d, 64, 64, 0, &r), POOL_OK);
    ck_assert_int_eq(device_alloc(d, 64, 128, 0, &r), POOL_EINVAL);
    ck_assert_msg(strstr(r.error, "cannot align"), "%s", r.error);
    ck_assert_device_ok(d);
    device_destroy(d);
}
END_TEST

Suite *buddy_suite(void)
{
    Suite *s = suite_create("buddy");
    TCase *tc = tcase_create("buddy");
    tcase_add_test(tc, split_down_to_the_request);
    tcase_add_test(tc, sizes_round_to_powers_of_two_from_64);
    tcase_add_test(tc, only_buddies_merge);
    tcase_add_test(tc, odd_device_sizes_become_chunks);
    tcase_add_test(tc, chunks_have_their_own_footprint);
    tcase_add_test(tc, alignment_beyond_the_base_is_refused);
    suite_add_tcase(s, tc);
    return s;
}
