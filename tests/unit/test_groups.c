/*
 * groups: which frames are the allocator's or its wrappers'.
 */
#include "analyzer/report/groups.h"
#include "tests/unit/suites.h"

START_TEST(allocator_names)
{
    const char *yes[] = {"malloc", "xmalloc", "g_malloc0" /* no: ends in 0 */, "PyMem_Malloc",
                         "_PyObject_Calloc", "xrealloc", "operator new(unsigned long)",
                         "operator new[](unsigned long)", "_IO_file_doallocate", "lua_alloc",
                         "posix_memalign", "my_xmalloc"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        ck_assert_msg(groups_is_allocator(yes[i]) == (i != 2), "%s", yes[i]);
    const char *no[] = {"main", "build", "allocate_tree(int)", "free", "mallocx_stats", NULL};
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        ck_assert_msg(!groups_is_allocator(no[i]), "%s", no[i] ? no[i] : "NULL");
}
END_TEST

Suite *groups_suite(void)
{
    Suite *s = suite_create("groups");
    TCase *tc = tcase_create("names");
    tcase_add_test(tc, allocator_names);
    suite_add_tcase(s, tc);
    return s;
}
