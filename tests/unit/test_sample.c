/* sample, sampleset: the Poisson process over allocated bytes, and the
 * set of sampled blocks a free looks in. */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "lib/rng.h"
#include "lib/sampling.h"
#include "preload/sample.h"
#include "preload/sampleset.h"
#include "tests/unit/helpers.h"
#include "tests/unit/suites.h"

/* Distinct 16-byte-aligned addresses, as an allocator's. */
static uintptr_t addr_of(unsigned thread, unsigned i)
{
    return 0x7f0000000000ull + ((uint64_t)thread << 32) + (uint64_t)i * 48;
}

START_TEST(set_absent_until_added_and_after_taken)
{
    ck_assert(!sampleset_absent((void *)0x1000)); /* before sampling: every free looks */
    ck_assert(!sampleset_take((void *)0x1000));
    ck_assert_int_eq(sampleset_start(), 0);
    enum { N = 20000 }; /* past the first table's 128 blocks: it moves on, several times */
    for (unsigned i = 0; i < N; i++)
        ck_assert(sampleset_add((void *)addr_of(0, i)));
    for (unsigned i = 0; i < N; i++)
        ck_assert_msg(!sampleset_absent((void *)addr_of(0, i)), "block %u looks absent", i);
    for (unsigned i = 0; i < N; i++) {
        ck_assert(sampleset_take((void *)addr_of(0, i)));
        ck_assert(!sampleset_take((void *)addr_of(0, i)));
    }
    /* Every counter is back at 0: nothing of them is left to look for. */
    for (unsigned i = 0; i < N; i++)
        ck_assert(sampleset_absent((void *)addr_of(0, i)));
    ck_assert(!sampleset_add((void *)0x1003)); /* not aligned: the mark needs bit 0 */
}
END_TEST

START_TEST(set_most_frees_stop_at_the_counter)
{
    ck_assert_int_eq(sampleset_start(), 0);
    for (unsigned i = 0; i < 100; i++)
        ck_assert(sampleset_add((void *)addr_of(0, i)));
    unsigned absent = 0;
    for (unsigned i = 0; i < 100000; i++)
        absent += sampleset_absent((void *)addr_of(1, i));
    /* 100 blocks over 1,024 counters: about 9% of other addresses look. */
    ck_assert_uint_gt(absent, 85000);
}
END_TEST

/* Threads adding and taking their own blocks while the table moves on
 * under them: no block added is ever missed by its take. */
enum { THREADS = 4, ROUNDS = 30, PER = 3000 };

static void *churn(void *arg)
{
    unsigned t = (unsigned)(uintptr_t)arg;
    for (unsigned r = 0; r < ROUNDS; r++) {
        unsigned base = r * PER;
        for (unsigned i = 0; i < PER; i++)
            if (!sampleset_add((void *)addr_of(t, base + i)))
                return (void *)1;
        for (unsigned i = 0; i < PER; i++)
            if (sampleset_absent((void *)addr_of(t, base + i)) ||
                !sampleset_take((void *)addr_of(t, base + i)))
                return (void *)2;
    }
    return NULL;
}

START_TEST(set_threads_never_miss_a_block)
{
    ck_assert_int_eq(sampleset_start(), 0);
    pthread_t th[THREADS];
    for (unsigned t = 0; t < THREADS; t++)
        ck_assert_int_eq(pthread_create(&th[t], NULL, churn, (void *)(uintptr_t)t), 0);
    for (unsigned t = 0; t < THREADS; t++) {
        void *rc;
        pthread_join(th[t], &rc);
        ck_assert_ptr_null(rc);
    }
}
END_TEST

/* Over many allocations of mixed sizes, the number sampled and the
 * weights' sum are within 4 standard errors of what they stand for. */
START_TEST(sampler_is_unbiased)
{
    const uint64_t interval = 64 << 10;
    sample_start(interval, 7, true, false);
    rng_t r;
    rng_seed(&r, 1);
    double expected = 0, var_expected = 0, estimate = 0, var_estimate = 0, total = 0;
    unsigned sampled = 0;
    for (unsigned i = 0; i < 2000000; i++) {
        /* mostly small, some large: 16 B .. 4 KiB, and one in 100 up to 1 MiB */
        uint64_t n = rng_below(&r, 100) ? 16 + rng_below(&r, 4081) : rng_below(&r, 1u << 20);
        total += (double)n;
        double p = sampling_prob(n, interval);
        expected += p;
        var_expected += p * (1 - p);
        bool took = !sample_skip(n) && sample_take(n);
        if (took) {
            sampled++;
            estimate += sampling_weight(n, interval);
            var_estimate += sampling_var(n, interval);
        }
    }
    ck_assert_double_lt(fabs(sampled - expected), 4 * sqrt(var_expected));
    ck_assert_double_lt(fabs(estimate - total), 4 * sqrt(var_estimate));
    ck_assert_double_gt(estimate, 0.9 * total);
}
END_TEST

START_TEST(sampler_always_takes_huge_allocations)
{
    sample_start(4096, 3, true, false);
    for (unsigned i = 0; i < 10000; i++)
        ck_assert(!sample_skip(40 * 4096) && sample_take(40 * 4096)); /* 37 T is the most drawn */
}
END_TEST

START_TEST(sampler_same_seed_same_samples)
{
    uint64_t a[64], b[64];
    for (int run = 0; run < 2; run++) {
        sample_start(8192, 42, true, false);
        memsim_sample_left = 0;
        uint64_t *out = run ? b : a;
        unsigned k = 0;
        for (unsigned i = 0; k < 64; i++)
            if (!sample_skip(100) && sample_take(100))
                out[k++] = i;
    }
    for (int i = 0; i < 64; i++)
        ck_assert_uint_eq(a[i], b[i]);
}
END_TEST

/* The draws' logarithm agrees with libm's to a few units in the last
 * place over the whole range the draws use, (0, 1] in steps of 2^-53,
 * at both ends and across the binades' edges. */
START_TEST(sample_log_is_libm_s_log)
{
    rng_t r;
    rng_seed(&r, 7);
    double worst = 0.0;
    for (int i = 0; i < 1000000; i++) {
        uint64_t k = rng_next(&r) >> 11;
        if (i % 3 == 1)
            k >>= rng_next(&r) % 53; /* small u: every binade */
        double u = (double)(k + 1) * 0x1.0p-53;
        double want = log(u), got = sample_log(u);
        double ulps = fabs(got - want) / (nextafter(fabs(want), INFINITY) - fabs(want) + 0x1.0p-1074);
        if (want == 0.0)
            ulps = fabs(got) / 0x1.0p-53;
        if (ulps > worst)
            worst = ulps;
    }
    ck_assert_double_eq(sample_log(1.0), 0.0);
    ck_assert_double_eq_tol(sample_log(0x1.0p-53), -53.0 * log(2.0), 1e-13);
    ck_assert_msg(worst <= 4.0, "sample_log off libm's log by %.1f ulp", worst);
}
END_TEST

START_TEST(weights_of_core_sampling)
{
    /* p = 1 - e^-1 for s = T; w = s / p; an allocation much larger is itself */
    ck_assert_double_eq_tol(sampling_prob(4096, 4096), 1 - exp(-1), 1e-12);
    ck_assert_double_eq_tol(sampling_weight(4096, 4096), 4096 / (1 - exp(-1)), 1e-6);
    ck_assert_double_eq_tol(sampling_weight(100u << 20, 4096), 100u << 20, 1e-3);
    ck_assert_double_eq_tol(sampling_var(100u << 20, 4096), 0, 1e-3);
    ck_assert_double_eq_tol(sampling_weight(1, 1u << 20), (1u << 20) + 0.5, 1e-3);
    ck_assert_double_eq(sampling_weight(0, 4096), 0);
}
END_TEST

START_TEST(halves_are_two_samples_at_twice_the_interval)
{
    /* Of the blocks sampled at T, half A holds a share p2 / p (all
     * blocks: p2, as a sample at 2T would), half B the same, both
     * (p2 / p) * p2: the halves independent. */
    const uint64_t interval = 65536;
    const uint64_t sizes[] = {48, 3000, 65536, 200000};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        double p = sampling_prob(sizes[k], interval), p2 = sampling_prob(sizes[k], 2 * interval);
        unsigned n = 200000, a = 0, b = 0, both = 0;
        for (unsigned i = 0; i < n; i++) {
            unsigned in = sampling_halves(0x7f0000001000ull + 16ull * i, sizes[k], interval);
            ck_assert(in >= 1 && in <= 3);
            a += in & 1;
            b += in >> 1;
            both += in == 3;
        }
        double want = p2 / p, sd = sqrt(want * (1 - want) / n) + 1e-9;
        ck_assert_msg(fabs((double)a / n - want) < 5 * sd, "size %llu: A %.4f, want %.4f",
                      (unsigned long long)sizes[k], (double)a / n, want);
        ck_assert_msg(fabs((double)b / n - want) < 5 * sd, "size %llu: B %.4f, want %.4f",
                      (unsigned long long)sizes[k], (double)b / n, want);
        double want2 = want * p2, sd2 = sqrt(want2 * (1 - want2) / n) + 1e-9;
        ck_assert_msg(fabs((double)both / n - want2) < 5 * sd2, "size %llu: both %.4f, want %.4f",
                      (unsigned long long)sizes[k], (double)both / n, want2);
    }
    /* An allocation much larger than the interval is in both. */
    for (unsigned i = 0; i < 1000; i++)
        ck_assert_uint_eq(sampling_halves(i, 100u << 20, interval), 3);
    /* A block's size from what a reader keeps of it. */
    for (uint64_t size = 1; size < (4u << 20); size = size * 3 + 1) {
        uint64_t w = (uint64_t)llround(sampling_weight(size, interval));
        float v = (float)sampling_var(size, interval);
        uint64_t got = sampling_size_of(w, v);
        ck_assert_msg(got + 1 >= size && got <= size + 1, "size %llu: %llu", (unsigned long long)size,
                      (unsigned long long)got);
    }
}
END_TEST

Suite *sample_suite(void)
{
    Suite *s = suite_create("sample");
    TCase *tc = tcase_create("sample");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, set_absent_until_added_and_after_taken);
    tcase_add_test(tc, set_most_frees_stop_at_the_counter);
    tcase_add_test(tc, set_threads_never_miss_a_block);
    tcase_add_test(tc, sampler_is_unbiased);
    tcase_add_test(tc, sampler_always_takes_huge_allocations);
    tcase_add_test(tc, sampler_same_seed_same_samples);
    tcase_add_test(tc, weights_of_core_sampling);
    tcase_add_test(tc, halves_are_two_samples_at_twice_the_interval);
    tcase_add_test(tc, sample_log_is_libm_s_log);
    suite_add_tcase(s, tc);
    return s;
}
