/* livemap: the live allocations, shared by threads. */
#include <check.h>
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

START_TEST(many_entries_grow_the_table)
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

/* Random puts and takes, every invariant checked after each one, and
 * the table agreeing with a plain array of what should be there. */
START_TEST(invariants_hold_after_every_operation)
{
    enum { KEYS = 5000, OPS = 200000 };
    static uint64_t size_of[KEYS + 1]; /* 0: absent */
    uint64_t x = 88172645463325252ull, live = 0, bytes = 0;
    for (int op = 0; op < OPS; op++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        uint64_t k = 1 + x % KEYS, addr = k * 48;
        livemap_entry_t out;
        if (x & (1u << 20)) {
            livemap_entry_t e = {.addr = addr, .size = 1 + (x >> 40) % 4096};
            REQUIRE(livemap_put(&m, &e), "put %d", op);
            if (!size_of[k])
                live++;
            bytes += e.size - size_of[k];
            size_of[k] = e.size;
        } else {
            bool was = size_of[k] != 0;
            REQUIRE(livemap_take(&m, addr, &out) == was, "take %d", op);
            if (was) {
                REQUIRE(out.size == size_of[k], "take %d: size", op);
                live--;
                bytes -= size_of[k];
                size_of[k] = 0;
            }
        }
        const char *why = NULL;
        REQUIRE(livemap_check(&m, &why) == 0, "op %d: %s", op, why);
        REQUIRE(livemap_count(&m) == live && livemap_bytes(&m) == bytes, "op %d: totals", op);
    }
}
END_TEST

Suite *livemap_suite(void)
{
    Suite *s = suite_create("livemap");
    TCase *tc = tcase_create("livemap");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, put_take_and_totals);
    tcase_add_test(tc, many_entries_grow_the_table);
    tcase_add_test(tc, invariants_hold_after_every_operation);
    suite_add_tcase(s, tc);
    return s;
}
