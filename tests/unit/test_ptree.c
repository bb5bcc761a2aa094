/*
 * ptree: parents, edges and depth-first order of a process tree from the
 * traces' pids, parent pids and start times.
 */
#include "analyzer/read/ptree.h"
#include "tests/unit/suites.h"

/* A shell (pid 10, started by pid 1, which is not traced) execs into bash;
 * bash forks a child (pid 11) that execs ls, then spawns pid 12; the
 * forked child of ls (pid 13) starts later.  Given out of order. */
START_TEST(shell_forks_execs_and_spawns)
{
    ptree_item_t v[] = {
        /* 0 */ {.pid = 11, .ppid = 10, .start = 300, .forked = 1},  /* bash's fork */
        /* 1 */ {.pid = 10, .ppid = 1, .start = 100},                 /* sh */
        /* 2 */ {.pid = 12, .ppid = 10, .start = 500},                /* spawned */
        /* 3 */ {.pid = 10, .ppid = 1, .start = 200},                 /* exec bash */
        /* 4 */ {.pid = 11, .ppid = 10, .start = 400},                /* exec ls */
        /* 5 */ {.pid = 13, .ppid = 11, .start = 450, .forked = 1},  /* ls's fork */
    };
    ptree_t t;
    ck_assert_int_eq(ptree_build(&t, v, 6), 0);
    ck_assert_uint_eq(t.parent[1], PTREE_NONE);
    ck_assert_ptr_null(t.via[1]);
    ck_assert_uint_eq(t.parent[3], 1);
    ck_assert_str_eq(t.via[3], "exec");
    ck_assert_uint_eq(t.parent[0], 3); /* the bash image, not sh: the latest before it */
    ck_assert_str_eq(t.via[0], "fork");
    ck_assert_uint_eq(t.parent[4], 0);
    ck_assert_str_eq(t.via[4], "exec");
    ck_assert_uint_eq(t.parent[5], 4); /* pid 11 as ls by then */
    ck_assert_str_eq(t.via[5], "fork");
    ck_assert_uint_eq(t.parent[2], 3);
    ck_assert_str_eq(t.via[2], "spawn");
    size_t want[] = {1, 3, 0, 4, 5, 2};
    for (size_t k = 0; k < 6; k++)
        ck_assert_uint_eq(t.order[k], want[k]);
    ck_assert_uint_eq(t.depth[1], 0);
    ck_assert_uint_eq(t.depth[3], 0); /* an exec stays at its depth */
    ck_assert_uint_eq(t.depth[0], 1);
    ck_assert_uint_eq(t.depth[4], 1);
    ck_assert_uint_eq(t.depth[5], 2);
    ck_assert_uint_eq(t.depth[2], 1);
    ptree_free(&t);
}
END_TEST

/* Unrelated traces are all roots, ordered by start; a child that started
 * before every image of its parent pid (clocks, pid reuse) is a root. */
START_TEST(strangers_are_roots)
{
    ptree_item_t v[] = {
        {.pid = 5, .ppid = 1, .start = 30},
        {.pid = 6, .ppid = 2, .start = 10},
        {.pid = 7, .ppid = 5, .start = 20}, /* before pid 5's only image */
    };
    ptree_t t;
    ck_assert_int_eq(ptree_build(&t, v, 3), 0);
    for (size_t i = 0; i < 3; i++)
        ck_assert_uint_eq(t.parent[i], PTREE_NONE);
    ck_assert_uint_eq(t.order[0], 1);
    ck_assert_uint_eq(t.order[1], 2);
    ck_assert_uint_eq(t.order[2], 0);
    ptree_free(&t);
}
END_TEST

/* Every item is placed exactly once whatever the input, even with pids
 * that make a cycle of parents (same start times, pid reuse). */
START_TEST(every_item_placed_once)
{
    ptree_item_t v[] = {
        {.pid = 1, .ppid = 2, .start = 5},
        {.pid = 2, .ppid = 1, .start = 5},
        {.pid = 3, .ppid = 3, .start = 5},
        {.pid = 0, .ppid = 0, .start = 0},
    };
    ptree_t t;
    ck_assert_int_eq(ptree_build(&t, v, 4), 0);
    int seen[4] = {0};
    for (size_t k = 0; k < 4; k++) {
        ck_assert_uint_lt(t.order[k], 4);
        seen[t.order[k]]++;
    }
    for (size_t i = 0; i < 4; i++)
        ck_assert_int_eq(seen[i], 1);
    ptree_free(&t);
    ck_assert_int_eq(ptree_build(&t, v, 0), 0);
    ptree_free(&t);
}
END_TEST

Suite *ptree_suite(void)
{
    Suite *s = suite_create("ptree");
    TCase *tc = tcase_create("tree");
    tcase_add_test(tc, shell_forks_execs_and_spawns);
    tcase_add_test(tc, strangers_are_roots);
    tcase_add_test(tc, every_item_placed_once);
    suite_add_tcase(s, tc);
    return s;
}
