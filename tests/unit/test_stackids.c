/*
 * stackids: the recorder's map from the process's stack ids to the
 * trace's, by frames.
 */
#include <check.h>
#include <stdlib.h>

#include "recorder/stackids.h"
#include "tests/unit/helpers.h"
#include "tests/unit/suites.h"

START_TEST(the_same_frames_keep_their_trace_id)
{
    stackids_reset();
    bool fresh;
    uint64_t a[3] = {0x401000, 0x402000, 0x403000}, b[3] = {0x401000, 0x402000, 0x403001};
    ck_assert_uint_eq(stackids_post(1, a, 3, &fresh), 1);
    ck_assert(fresh);
    ck_assert_uint_eq(stackids_post(2, b, 3, &fresh), 2);
    ck_assert(fresh);
    ck_assert_uint_eq(stackids_post(3, a, 2, &fresh), 3); /* a prefix is another stack */
    ck_assert(fresh);
    /* a forgotten by the process, posted again: no record, its old id */
    ck_assert_uint_eq(stackids_post(4, a, 3, &fresh), 1);
    ck_assert(!fresh);
    ck_assert_uint_eq(stackids_post(5, (uint64_t[]){7}, 1, &fresh), 4); /* dense */
    ck_assert(fresh);
    ck_assert_uint_eq(stackids_of(1), 1);
    ck_assert_uint_eq(stackids_of(2), 2);
    ck_assert_uint_eq(stackids_of(4), 1);
    ck_assert_uint_eq(stackids_of(5), 4);
    ck_assert_uint_eq(stackids_of(0), 0);
    ck_assert_uint_eq(stackids_unmapped(), 0);
    ck_assert_uint_eq(stackids_of(6), 0); /* never posted */
    ck_assert_uint_eq(stackids_of(1u << 30), 0);
    ck_assert_uint_eq(stackids_unmapped(), 2);
    ck_assert_uint_eq(stackids_count(), 4);
    /* Ids no event can name. */
    ck_assert_uint_eq(stackids_post(0, a, 3, &fresh), 0);
    ck_assert(!fresh);
    ck_assert_uint_eq(stackids_post(1ull << 32, a, 3, &fresh), 0);
    ck_assert(!fresh);
    /* A new trace (a forked recorder) starts over. */
    stackids_reset();
    ck_assert_uint_eq(stackids_of(1), 0);
    ck_assert_uint_eq(stackids_post(1, b, 3, &fresh), 1);
    ck_assert(fresh);
}
END_TEST

/* Frames far apart, at the ends of the address space, in any order:
 * the differences kept round-trip exactly. */
START_TEST(frames_of_any_value_compare_exactly)
{
    stackids_reset();
    bool fresh;
    uint64_t f[6] = {0, UINT64_MAX, 1, 0x7fffffffffffffffull, 0x8000000000000000ull, 42};
    ck_assert_uint_eq(stackids_post(1, f, 6, &fresh), 1);
    for (unsigned i = 0; i < 6; i++) {
        uint64_t g[6];
        for (unsigned k = 0; k < 6; k++)
            g[k] = f[k];
        g[i] ^= 1;
        ck_assert_uint_eq(stackids_post(2 + i, g, 6, &fresh), 2 + i);
        ck_assert(fresh);
    }
    ck_assert_uint_eq(stackids_post(9, f, 6, &fresh), 1);
    ck_assert(!fresh);
}
END_TEST

/* A library unloaded: the stacks through it are new when posted again;
 * the rest are not.  Ids given before stay as they were. */
START_TEST(an_unload_forgets_the_stacks_through_it)
{
    stackids_reset();
    bool fresh;
    uint64_t in[3] = {0x7000, 0x1500, 0x9000}, out[3] = {0x7000, 0x2500, 0x9000};
    ck_assert_uint_eq(stackids_post(1, in, 3, &fresh), 1);
    ck_assert_uint_eq(stackids_post(2, out, 3, &fresh), 2);
    stackids_forget_range(0x1000, 0x2000);
    ck_assert_uint_eq(stackids_post(3, in, 3, &fresh), 3);
    ck_assert(fresh);
    ck_assert_uint_eq(stackids_post(4, out, 3, &fresh), 2);
    ck_assert(!fresh);
    ck_assert_uint_eq(stackids_of(1), 1);
    ck_assert_uint_eq(stackids_post(5, in, 3, &fresh), 3);
    ck_assert(!fresh);
    stackids_forget_range(0x2500, 0x2501); /* lo inside */
    ck_assert_uint_eq(stackids_post(6, out, 3, &fresh), 4);
    stackids_forget_range(0x1400, 0x1500); /* hi outside */
    ck_assert_uint_eq(stackids_post(7, in, 3, &fresh), 3);
    ck_assert(!fresh);
}
END_TEST

/* 300,000 stacks of 24 frames (192 bytes), each posted twice: one
 * record each, and under 100 bytes a stack, index and map included. */
START_TEST(many_stacks_are_held_small)
{
    stackids_reset();
    bool fresh;
    const uint64_t n = 300000;
    for (uint64_t i = 1; i <= 2 * n; i++) {
        uint64_t k = (i - 1) % n, f[24];
        for (unsigned d = 0; d < 24; d++)
            f[d] = 0x55d0a0401000ull + (k >> (d % 20) & 1) * 0x230 + d * 0x1000;
        f[23] = 0x7f3a00000000ull + k;
        REQUIRE(stackids_post(i, f, 24, &fresh) == k + 1 && fresh == (i <= n), "post %lu",
                (unsigned long)i);
    }
    ck_assert_uint_eq(stackids_count(), n);
    ck_assert_uint_eq(stackids_of((uint32_t)(2 * n)), n);
    ck_assert_uint_lt(stackids_bytes(), n * 100);
    stackids_reset();
}
END_TEST

Suite *stackids_suite(void)
{
    Suite *s = suite_create("stackids");
    TCase *tc = tcase_create("stackids");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, the_same_frames_keep_their_trace_id);
    tcase_add_test(tc, frames_of_any_value_compare_exactly);
    tcase_add_test(tc, an_unload_forgets_the_stacks_through_it);
    tcase_add_test(tc, many_stacks_are_held_small);
    suite_add_tcase(s, tc);
    return s;
}
