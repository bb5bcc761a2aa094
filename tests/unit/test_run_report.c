/*
 * run_report: memsim run --analyze-opts, split at blanks and checked
 * with the analyzer's own parser before anything starts.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "cli/run_report.h"
#include "tests/unit/suites.h"

START_TEST(split_at_blanks)
{
    run_report_opts_t o = {0};
    ck_assert_int_eq(run_report_opts_add("t", &o, "  --sites 3\t--all\n"), 0);
    ck_assert_int_eq(run_report_opts_add("t", &o, "-s buddy"), 0);
    ck_assert_uint_eq(o.n, 5);
    const char *want[] = {"--sites", "3", "--all", "-s", "buddy"};
    for (size_t i = 0; i < 5; i++)
        ck_assert_str_eq(o.v[i], want[i]);
    ck_assert_int_eq(run_report_opts_check("t", &o), 0);
    /* the check leaves the words as they were (-s is parsed in place) */
    ck_assert_str_eq(o.v[4], "buddy");
    run_report_opts_free(&o);
    ck_assert_uint_eq(o.n, 0);
}
END_TEST

START_TEST(blank_refused)
{
    ck_assert_ptr_nonnull(freopen("/dev/null", "w", stderr));
    run_report_opts_t o = {0};
    ck_assert_int_eq(run_report_opts_add("t", &o, " \t "), -1);
    run_report_opts_free(&o);
}
END_TEST

static int check_one(const char *text)
{
    run_report_opts_t o = {0};
    int rc = run_report_opts_add("t", &o, text);
    if (rc == 0)
        rc = run_report_opts_check("t", &o);
    run_report_opts_free(&o);
    return rc;
}

START_TEST(refused)
{
    ck_assert_ptr_nonnull(freopen("/dev/null", "w", stderr)); /* the lines each refusal prints */
    ck_assert_int_eq(check_one("--json"), -1);
    ck_assert_int_eq(check_one("--js"), -1); /* getopt's abbreviation: the parsed form counts */
    ck_assert_int_eq(check_one("--html x.html"), -1);
    ck_assert_int_eq(check_one("--collapsed=calls"), -1);
    ck_assert_int_eq(check_one("--flamegraph f.svg"), -1);
    ck_assert_int_eq(check_one("--help"), -1);
    ck_assert_int_eq(check_one("--he"), -1);
    ck_assert_int_eq(check_one("-h"), -1);
    ck_assert_int_eq(check_one("a-trace"), -1);
    ck_assert_int_eq(check_one("--sites"), -1);
    ck_assert_int_eq(check_one("--fail-on nope"), -1);
    ck_assert_int_eq(check_one("--bogus"), -1);
}
END_TEST

START_TEST(accepted)
{
    ck_assert_int_eq(check_one("--fail-on warning --sites 0 --no-replay"), 0);
    ck_assert_int_eq(check_one("--pid 1,2 --exe sh --all --progress"), 0);
    ck_assert_int_eq(check_one("-s best-fit,buddy -d 2G"), 0);
}
END_TEST

Suite *run_report_suite(void)
{
    Suite *s = suite_create("run_report");
    TCase *tc = tcase_create("analyze_opts");
    tcase_add_test(tc, split_at_blanks);
    tcase_add_test(tc, blank_refused);
    tcase_add_test(tc, refused);
    tcase_add_test(tc, accepted);
    suite_add_tcase(s, tc);
    return s;
}
