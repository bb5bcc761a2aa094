/*
 * downsample: exact on known series; every bucket's minimum and maximum
 * are kept, so no spike disappears.
 */
#include <stdlib.h>

#include "analyzer/report/downsample.h"
#include "tests/unit/suites.h"

START_TEST(small_series_kept)
{
    double t[] = {0, 1, 2}, v[] = {5, 1, 9}, ot[6], ov[6];
    ck_assert_uint_eq(downsample_minmax(t, v, 3, 2, ot, ov), 3);
    for (int i = 0; i < 3; i++) {
        ck_assert(ot[i] == t[i]);
        ck_assert(ov[i] == v[i]);
    }
}
END_TEST

/* 12 points, times 0..11, in 3 buckets of 4 (ends at 11/3, 22/3, 11):
 * bucket 0 holds t 0-3, bucket 1 t 4-7, bucket 2 t 8-11. */
START_TEST(min_and_max_per_bucket)
{
    double t[12], v[12] = {3, 7, 1, 4, /**/ 5, 5, 5, 5, /**/ 2, 100, 0, 6};
    for (int i = 0; i < 12; i++)
        t[i] = i;
    double ot[6], ov[6];
    size_t n = downsample_minmax(t, v, 12, 3, ot, ov);
    double want_t[] = {1, 2, 4, 9, 10}, want_v[] = {7, 1, 5, 100, 0};
    ck_assert_uint_eq(n, 5); /* a flat bucket gives one point */
    for (size_t i = 0; i < n; i++) {
        ck_assert_msg(ot[i] == want_t[i], "t[%zu] = %g", i, ot[i]);
        ck_assert_msg(ov[i] == want_v[i], "v[%zu] = %g", i, ov[i]);
    }
}
END_TEST

/* A long random series with one spike: the spike, the global minimum
 * and every bucket's extremes survive, in time order, within 2 per bucket. */
START_TEST(spike_survives)
{
    enum { N = 100000, B = 500 };
    double *t = malloc(N * sizeof *t), *v = malloc(N * sizeof *v);
    double *ot = malloc(2 * B * sizeof *ot), *ov = malloc(2 * B * sizeof *ov);
    unsigned x = 12345;
    for (int i = 0; i < N; i++) {
        x = x * 1103515245u + 12345u;
        t[i] = i * 0.001;
        v[i] = 1000 + (x >> 16) % 100;
    }
    v[77777] = 1e9;
    v[123] = -5;
    size_t n = downsample_minmax(t, v, N, B, ot, ov);
    ck_assert_uint_le(n, 2 * B);
    double max = -1, min = 1e18;
    for (size_t i = 0; i < n; i++) {
        if (i)
            ck_assert(ot[i] > ot[i - 1]);
        if (ov[i] > max)
            max = ov[i];
        if (ov[i] < min)
            min = ov[i];
    }
    ck_assert(max == 1e9);
    ck_assert(min == -5);
    free(t);
    free(v);
    free(ot);
    free(ov);
}
END_TEST

Suite *downsample_suite(void)
{
    Suite *s = suite_create("downsample");
    TCase *tc = tcase_create("minmax");
    tcase_add_test(tc, small_series_kept);
    tcase_add_test(tc, min_and_max_per_bucket);
    tcase_add_test(tc, spike_survives);
    suite_add_tcase(s, tc);
    return s;
}
