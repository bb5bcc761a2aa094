/* workload: the seeded random workload. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "sim/workload.h"
#include "tests/unit/helpers.h"
#include "tests/unit/suites.h"

START_TEST(validation_names_the_problem)
{
    char err[160];
    workload_config_t w = WORKLOAD_DEFAULTS;
    ck_assert_int_eq(workload_validate(&w, err, sizeof err), POOL_OK);
    w.min_size = 0;
    ck_assert_int_eq(workload_validate(&w, err, sizeof err), POOL_EINVAL);
    ck_assert_msg(strstr(err, "size range 0..4096"), "%s", err);
    w = (workload_config_t)WORKLOAD_DEFAULTS;
    w.min_size = 5000;
    ck_assert_int_eq(workload_validate(&w, err, sizeof err), POOL_EINVAL);
    w = (workload_config_t)WORKLOAD_DEFAULTS;
    w.free_probability = 1.5;
    ck_assert_int_eq(workload_validate(&w, err, sizeof err), POOL_EINVAL);
    ck_assert_msg(strstr(err, "free probability 1.5"), "%s", err);
    w.free_probability = NAN;
    ck_assert_int_eq(workload_validate(&w, err, sizeof err), POOL_EINVAL);
    w = (workload_config_t)WORKLOAD_DEFAULTS;
    w.align = 12;
    ck_assert_int_eq(workload_validate(&w, err, sizeof err), POOL_EINVAL);
    device_t *d = test_device("best-fit", 1 * MiB);
    workload_report_t rep;
    ck_assert_int_eq(workload_run(d, &w, &rep, 0, NULL), POOL_EINVAL);
    device_destroy(d);
}
END_TEST

static void run(const char *strategy, const workload_config_t *w, workload_report_t *rep,
                device_metrics_t *m)
{
    device_t *d = test_device(strategy, 64 * MiB);
    const char *why = NULL;
    ck_assert_msg(workload_run(d, w, rep, 1, &why) == POOL_OK, "%s", why ? why : "");
    device_metrics(d, m);
    ck_assert_uint_eq(m->live_blocks, rep->live_at_end);
    device_destroy(d);
}

START_TEST(same_seed_same_run)
{
    workload_config_t w = WORKLOAD_DEFAULTS;
    w.operations = 5000;
    w.seed = 42;
    workload_report_t a, b;
    device_metrics_t ma, mb;
    run("best-fit", &w, &a, &ma);
    run("best-fit", &w, &b, &mb);
    ck_assert_mem_eq(&a, &b, sizeof a);
    ck_assert_uint_eq(ma.peak_footprint, mb.peak_footprint);
    ck_assert_uint_eq(ma.live_requested, mb.live_requested);
    /* Every strategy sees the same requests while nothing fails. */
    run("buddy", &w, &b, &mb);
    ck_assert_uint_eq(b.failed_allocations, 0);
    ck_assert_mem_eq(&a, &b, sizeof a);
    ck_assert_uint_eq(ma.peak_live_requested, mb.peak_live_requested);
    w.seed = 43;
    run("best-fit", &w, &b, &mb);
    ck_assert_uint_ne(a.bytes_allocated, b.bytes_allocated);
}
END_TEST

START_TEST(counts_add_up)
{
    workload_config_t w = WORKLOAD_DEFAULTS;
    w.operations = 10000;
    w.free_probability = 0.4;
    workload_report_t rep;
    device_metrics_t m;
    run("first-fit", &w, &rep, &m);
    ck_assert_uint_eq(rep.allocations + rep.failed_allocations + rep.frees + rep.failed_frees,
                      10000);
    ck_assert_uint_eq(rep.failed_frees, 0);
    ck_assert_uint_eq(rep.live_at_end, rep.allocations - rep.frees);
    /* 40% frees, within 3 sigma of 10000 Bernoulli draws. */
    ck_assert_uint_gt(rep.frees, 4000 - 150);
    ck_assert_uint_lt(rep.frees, 4000 + 150);

    w.free_probability = 0.0;
    run("first-fit", &w, &rep, &m);
    ck_assert_uint_eq(rep.frees, 0);
    ck_assert_uint_eq(rep.allocations, 10000);
    ck_assert_uint_ge(rep.bytes_allocated, 10000 * 64);
    ck_assert_uint_le(rep.bytes_allocated, 10000 * 4096);

    w.free_probability = 1.0; /* alternate: nothing live means allocate */
    run("first-fit", &w, &rep, &m);
    ck_assert_uint_eq(rep.allocations, 5000);
    ck_assert_uint_eq(rep.frees, 5000);
    ck_assert_uint_eq(m.live_blocks, 0);
}
END_TEST

START_TEST(a_full_device_fails_allocations_not_the_run)
{
    device_t *d = test_device("worst-fit", 64 * KiB);
    workload_config_t w = WORKLOAD_DEFAULTS;
    w.operations = 2000;
    w.free_probability = 0.1;
    workload_report_t rep;
    ck_assert_int_eq(workload_run(d, &w, &rep, 1, NULL), POOL_OK);
    ck_assert_uint_gt(rep.failed_allocations, 0);
    ck_assert_device_ok(d);
    device_destroy(d);
}
END_TEST

Suite *workload_suite(void)
{
    Suite *s = suite_create("workload");
    TCase *tc = tcase_create("workload");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, validation_names_the_problem);
    tcase_add_test(tc, same_seed_same_run);
    tcase_add_test(tc, counts_add_up);
    tcase_add_test(tc, a_full_device_fails_allocations_not_the_run);
    suite_add_tcase(s, tc);
    return s;
}
