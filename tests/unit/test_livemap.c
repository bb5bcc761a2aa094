/* livemap: the live allocations, shared by threads. */
#include <check.h>
#include <pthread.h>
#include <stdint.h>

#include "recorder/livemap.h"
#include "tests/unit/helpers.h"
#include "tests/unit/suites.h"

static livemap_t m = LIVEMAP_INITIALIZER;

static void setup(void) { livemap_clear(&m); }

START_TEST(put_take_and_totals)
{
    livemap_entry_t e = {.addr = 0x1000, .size = 10, .sim_block = (void *)7, .stack = 3, .owner = 42}, out;
    ck_assert(livemap_put(&m, &e));
    ck_assert_uint_eq(livemap_count(&m), 1);
    ck_assert_uint_eq(livemap_bytes(&m), 10);
    e.size = 25; /* replace */
    ck_assert(livemap_put(&m, &e));
    ck_assert_uint_eq(livemap_count(&m), 1);
    ck_assert_uint_eq(livemap_bytes(&m), 25);
    ck_assert(!livemap_take(&m, 0x2000, &out));
    ck_assert(livemap_take(&m, 0x1000, &out));
    ck_assert_uint_eq(out.size, 25);
    ck_assert_ptr_eq(out.sim_block, (void *)7);
    ck_assert_uint_eq(out.stack, 3);
    ck_assert_int_eq(out.owner, 42);
    ck_assert(!livemap_take(&m, 0x1000, &out));
    ck_assert_uint_eq(livemap_count(&m), 0);
    ck_assert_uint_eq(livemap_bytes(&m), 0);
}
END_TEST

START_TEST(many_entries_grow_the_shards)
{
    for (uint64_t i = 1; i <= 300000; i++) {
        livemap_entry_t e = {.addr = i * 16, .size = i};
        REQUIRE(livemap_put(&m, &e), "put %llu", (unsigned long long)i);
    }
    ck_assert_uint_eq(livemap_count(&m), 300000);
    ck_assert_uint_eq(livemap_bytes(&m), 300000ull * 300001 / 2);
    livemap_entry_t out;
    for (uint64_t i = 1; i <= 300000; i += 2)
        REQUIRE(livemap_take(&m, i * 16, &out) && out.size == i, "take %llu", (unsigned long long)i);
    for (uint64_t i = 2; i <= 300000; i += 2)
        REQUIRE(livemap_take(&m, i * 16, &out) && out.size == i, "take %llu", (unsigned long long)i);
    ck_assert_uint_eq(livemap_count(&m), 0);
}
END_TEST

static void *churn(void *arg)
{
    uint64_t base = (uintptr_t)arg << 40;
    livemap_entry_t out;
    for (uint64_t round = 0; round < 20; round++) {
        for (uint64_t i = 1; i <= 5000; i++) {
            livemap_entry_t e = {.addr = base + i * 32, .size = 1};
            if (!livemap_put(&m, &e))
                return (void *)1;
        }
        for (uint64_t i = 1; i <= 5000; i++)
            if (!livemap_take(&m, base + i * 32, &out))
                return (void *)2;
    }
    return NULL;
}

START_TEST(threads_share_it)
{
    pthread_t th[4];
    for (uintptr_t i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, churn, (void *)(i + 1));
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(th[i], &r);
        ck_assert_ptr_null(r);
    }
    ck_assert_uint_eq(livemap_count(&m), 0);
    ck_assert_uint_eq(livemap_bytes(&m), 0);
}
END_TEST

Suite *livemap_suite(void)
{
    Suite *s = suite_create("livemap");
    TCase *tc = tcase_create("livemap");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, put_take_and_totals);
    tcase_add_test(tc, many_entries_grow_the_shards);
    tcase_add_test(tc, threads_share_it);
    suite_add_tcase(s, tc);
    return s;
}
