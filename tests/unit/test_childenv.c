/*
 * childenv: the environments children get, from memsim run and from the
 * preload: entries kept in order, memsim's replaced, and libmemsim.so
 * recognized in LD_PRELOAD however it is spelled.
 */
#include <check.h>
#include <string.h>

#include "ipc/childenv.h"
#include "tests/unit/suites.h"

START_TEST(merge_replaces_and_drops)
{
    char *envp[] = {"A=1", "MEMSIM_OUTPUT=rel", "LD_PRELOAD=x.so", "B=2", "MEMSIM_ROOT_PID=9", NULL};
    char *set[] = {"MEMSIM_OUTPUT=/abs", NULL, "C=3"};
    const char *drop[] = {"MEMSIM_ROOT_PID", NULL};
    char *out[5 + 3 + 1];
    ck_assert_ptr_eq(childenv_merge(envp, drop, 2, set, 3, out), out);
    const char *want[] = {"A=1", "LD_PRELOAD=x.so", "B=2", "MEMSIM_OUTPUT=/abs", "C=3", NULL};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        if (!want[i])
            ck_assert_ptr_null(out[i]);
        else
            ck_assert_str_eq(out[i], want[i]);
    }
    ck_assert_uint_eq(childenv_count(out), 5);
    ck_assert_uint_eq(childenv_count(NULL), 0);
    /* a name that only starts like another is not it */
    char *e2[] = {"MEMSIM_OUTPUTX=1", NULL};
    char *o2[4];
    childenv_merge(e2, NULL, 0, set, 1, o2);
    ck_assert_str_eq(o2[0], "MEMSIM_OUTPUTX=1");
    ck_assert_str_eq(o2[1], "MEMSIM_OUTPUT=/abs");
}
END_TEST

START_TEST(get)
{
    char *envp[] = {"A=1", "AB=2", "B=", NULL};
    ck_assert_str_eq(childenv_get(envp, "AB"), "2");
    ck_assert_str_eq(childenv_get(envp, "B"), "");
    ck_assert_ptr_null(childenv_get(envp, "C"));
    ck_assert_ptr_null(childenv_get(NULL, "A"));
}
END_TEST

START_TEST(preloads_memsim)
{
    char *yes1[] = {"LD_PRELOAD=/x/build/libmemsim.so", NULL};
    char *yes2[] = {"LD_PRELOAD=libfoo.so:libmemsim.so libbar.so", NULL};
    char *yes3[] = {"LD_PRELOAD= libmemsim.so", NULL};
    char *no1[] = {"LD_PRELOAD=/x/libmemsim.so.1", NULL};
    char *no2[] = {"LD_PRELOAD=/x/notlibmemsim.so", NULL};
    char *no3[] = {"PATH=/bin", NULL};
    char *no4[] = {NULL};
    ck_assert(childenv_preloads_memsim(yes1));
    ck_assert(childenv_preloads_memsim(yes2));
    ck_assert(childenv_preloads_memsim(yes3));
    ck_assert(!childenv_preloads_memsim(no1));
    ck_assert(!childenv_preloads_memsim(no2));
    ck_assert(!childenv_preloads_memsim(no3));
    ck_assert(!childenv_preloads_memsim(no4));
    ck_assert(!childenv_preloads_memsim(NULL));
}
END_TEST

Suite *childenv_suite(void)
{
    Suite *s = suite_create("childenv");
    TCase *tc = tcase_create("childenv");
    tcase_add_test(tc, merge_replaces_and_drops);
    tcase_add_test(tc, get);
    tcase_add_test(tc, preloads_memsim);
    suite_add_tcase(s, tc);
    return s;
}
