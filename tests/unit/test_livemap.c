/* livemap: the live allocations, shared by threads. */
#include <check.h>
#include <stdint.h>

#include "recorder/livemap.h"
#include "tests/unit/failmalloc.h"
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

/* Doubling moves the old table a little at each operation: no single
 * put moves more than LIVEMAP_MOVE_STEP slots' entries (a put that
 * rehashed the whole table stalled the recorder 400 ms at a million
 * entries), the move ends before the new table needs to grow, and keys
 * still in the old table are found, replaced and taken there; every
 * invariant holds after each operation. */
START_TEST(doubling_moves_a_little_at_a_time)
{
    enum { N = 40000 };
    livemap_entry_t out;
    uint64_t moves = 0, bytes = 0, run = 0, longest = 0;
    bool was_moving = false;
    for (uint64_t i = 1; i <= N; i++) {
        uint64_t before = livemap_count(&m);
        livemap_entry_t e = {.addr = i * 16, .size = i, .owner = 1};
        REQUIRE(livemap_put(&m, &e), "put %llu", (unsigned long long)i);
        bytes += i;
        REQUIRE(livemap_count(&m) == before + 1, "put %llu: count", (unsigned long long)i);
        if (livemap_moving(&m) && !was_moving)
            moves++;
        was_moving = livemap_moving(&m);
        run = was_moving ? run + 1 : 0;
        longest = run > longest ? run : longest;
        /* While a move is under way: the oldest keys (in the old table,
         * mostly) are replaced and taken, and found again. */
        if (was_moving && i % 7 == 0) {
            uint64_t k = 1 + (i * 2654435761u) % (i / 2);
            if (livemap_take(&m, k * 16, &out)) {
                REQUIRE(out.size == k, "take %llu: size %llu", (unsigned long long)k,
                        (unsigned long long)out.size);
                bytes -= k;
                e = (livemap_entry_t){.addr = k * 16, .size = k, .owner = 1};
                REQUIRE(livemap_put(&m, &e), "put back %llu", (unsigned long long)k);
                bytes += k;
            }
            e = (livemap_entry_t){.addr = k * 16, .size = k, .owner = 2};
            REQUIRE(livemap_put(&m, &e), "replace %llu", (unsigned long long)k);
        }
        if (i % 97 == 0 || was_moving) {
            const char *why = NULL;
            REQUIRE(livemap_check(&m, &why) == 0, "put %llu: %s", (unsigned long long)i, why);
            REQUIRE(livemap_bytes(&m) == bytes, "put %llu: bytes", (unsigned long long)i);
        }
    }
    ck_assert_uint_ge(moves, 10); /* 64 slots to 128 Ki: every doubling moved */
    /* The last move (64 Ki slots) took thousands of operations. */
    ck_assert_uint_ge(longest, 65536 / LIVEMAP_MOVE_STEP / 2);
    for (uint64_t i = 1; i <= N; i++)
        REQUIRE(livemap_take(&m, i * 16, &out) && out.size == i, "take %llu", (unsigned long long)i);
    ck_assert_uint_eq(livemap_count(&m), 0);
    ck_assert_uint_eq(livemap_bytes(&m), 0);
}
END_TEST

/* A fork's copy: every entry, fixed, in a map of its own, also when the
 * parent's table is being moved; the two go their own ways after. */
static void fix_block(livemap_entry_t *e, void *ctx)
{
    e->sim_block = ctx;
}

START_TEST(a_copy_is_whole_and_apart)
{
    static livemap_t copy = LIVEMAP_INITIALIZER;
    livemap_entry_t out;
    uint64_t n = 0, left = 1;
    for (uint64_t i = 1; !livemap_moving(&m) || i < 3000; i++, n++) {
        livemap_entry_t e = {.addr = i * 16, .size = i, .owner = 5};
        ck_assert(livemap_put(&m, &e));
    }
    ck_assert(livemap_moving(&m));
    ck_assert(livemap_copy(&copy, &m, fix_block, (void *)9, &left));
    ck_assert_uint_eq(left, 0);
    ck_assert_uint_eq(livemap_count(&copy), n);
    ck_assert_uint_eq(livemap_bytes(&copy), livemap_bytes(&m));
    const char *why = NULL;
    ck_assert_msg(livemap_check(&copy, &why) == 0, "%s", why);
    ck_assert_msg(livemap_check(&m, &why) == 0, "%s", why);
    ck_assert(livemap_take(&m, 16, &out)); /* the parent's free is not the copy's */
    ck_assert(livemap_take(&copy, 16, &out));
    ck_assert_ptr_eq(out.sim_block, (void *)9);
    ck_assert_int_eq(out.owner, 5);
    for (uint64_t i = 2; i <= n; i++)
        REQUIRE(livemap_take(&copy, i * 16, &out) && out.size == i, "take %llu",
                (unsigned long long)i);
    ck_assert_uint_eq(livemap_count(&copy), 0);
    ck_assert_uint_eq(livemap_count(&m), n - 1);
    livemap_clear(&copy);
}
END_TEST

/* A copy into the table a cleared copy left (livemap.c's spare, not
 * zeroed) holds the source as it is now, nothing of the old copy. */
START_TEST(a_copy_over_a_cleared_copy_holds_only_the_source)
{
    static livemap_t copy = LIVEMAP_INITIALIZER;
    livemap_entry_t e = {.owner = 2}, out;
    uint64_t left = 1;
    for (uint64_t i = 1; i <= 40000; i++) { /* a table past LIVEMAP_MAPPED */
        e.addr = i * 16;
        e.size = i;
        ck_assert(livemap_put(&m, &e));
    }
    ck_assert(livemap_copy(&copy, &m, NULL, NULL, &left));
    ck_assert_uint_eq(left, 0);
    ck_assert_uint_ge((copy.mask + 1) * sizeof(livemap_entry_t), LIVEMAP_MAPPED);
    livemap_clear(&copy);
    for (uint64_t i = 1; i <= 20000; i++) {
        ck_assert(livemap_take(&m, i * 16, &out));
        e.addr = (i + 40000) * 16;
        e.size = i + 40000;
        ck_assert(livemap_put(&m, &e));
    }
    ck_assert(livemap_copy(&copy, &m, NULL, NULL, &left));
    ck_assert_uint_eq(left, 0);
    ck_assert_uint_eq(livemap_count(&copy), 40000);
    ck_assert_uint_eq(livemap_bytes(&copy), livemap_bytes(&m));
    const char *why = NULL;
    ck_assert_msg(livemap_check(&copy, &why) == 0, "%s", why);
    for (uint64_t i = 1; i <= 20000; i++)
        REQUIRE(!livemap_take(&copy, i * 16, &out), "%llu was taken before the copy",
                (unsigned long long)i);
    for (uint64_t i = 20001; i <= 60000; i++)
        REQUIRE(livemap_take(&copy, i * 16, &out) && out.size == i && out.owner == 2, "take %llu",
                (unsigned long long)i);
    ck_assert_uint_eq(livemap_count(&copy), 0);
    livemap_clear(&copy);
}
END_TEST

static void check_map(void)
{
    const char *why = NULL;
    REQUIRE(livemap_check(&m, &why) == 0, "%s", why);
}

/* With no memory to double into (the recorder shares the program's
 * RLIMIT_AS), the table fills on past half, to 15/16, and is refused
 * only when that full; growing is tried again LIVEMAP_GROW_RETRY puts
 * after it failed, not at every put.  Nothing is lost on the way. */
START_TEST(a_table_with_no_memory_to_grow_fills_on)
{
    livemap_entry_t e = {.size = 3}, out;
    for (uint64_t a = 1; a <= 32; a++) { /* the first table, 64 slots, half full */
        e.addr = a * 16;
        ck_assert(livemap_put(&m, &e));
    }
    for (uint64_t a = 33; a <= 60; a++) { /* every growth's calloc fails */
        e.addr = a * 16;
        failmalloc_arm(1);
        bool put = livemap_put(&m, &e);
        bool failed = failmalloc_disarm();
        ck_assert(put);
        ck_assert_int_eq(failed, a == 33); /* tried once; then it waits */
        check_map();
    }
    ck_assert_uint_eq(livemap_count(&m), 60);
    e.addr = 61 * 16;
    ck_assert(!livemap_put(&m, &e)); /* 15/16 full: refused, nothing changed */
    ck_assert_uint_eq(livemap_count(&m), 60);
    ck_assert_uint_eq(livemap_bytes(&m), 180);
    check_map();
    for (uint64_t a = 1; a <= 60; a++) { /* every entry still there */
        ck_assert(livemap_take(&m, a * 16, &out));
        ck_assert_uint_eq(out.size, 3);
        e.addr = a * 16;
        ck_assert(livemap_put(&m, &e)); /* back in: it needs room, and the wait counts down */
    }
    unsigned refused = 1;
    e.addr = 61 * 16;
    while (!livemap_put(&m, &e) && refused <= LIVEMAP_GROW_RETRY)
        refused++;
    /* Tried again at the 1,024th put that needed room after the failure:
     * those of 34 to 60, 61's first refusal and the 60 put back counted. */
    ck_assert_uint_eq(refused, LIVEMAP_GROW_RETRY - 27 - 1 - 60 + 1);
    ck_assert_uint_eq(livemap_count(&m), 61);
    check_map();
    for (uint64_t a = 62; a <= 1000; a++) { /* and it grows as usual again */
        e.addr = a * 16;
        ck_assert(livemap_put(&m, &e));
    }
    ck_assert_uint_eq(livemap_count(&m), 1000);
    ck_assert_uint_eq(livemap_bytes(&m), 3000);
    check_map();
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
    tcase_add_test(tc, doubling_moves_a_little_at_a_time);
    tcase_add_test(tc, a_table_with_no_memory_to_grow_fills_on);
    tcase_add_test(tc, a_copy_is_whole_and_apart);
    tcase_add_test(tc, a_copy_over_a_cleared_copy_holds_only_the_source);
    suite_add_tcase(s, tc);
    return s;
}
