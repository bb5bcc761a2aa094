/*
 * recfmt: integers exactly as printf writes them, at every digit-count
 * boundary and over a seeded sweep.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lib/rng.h"
#include "trace/recfmt.h"
#include "tests/unit/suites.h"

static void same_u64(uint64_t v)
{
    char want[32], got[32];
    snprintf(want, sizeof want, "%" PRIu64, v);
    char *end = recfmt_u64(got, v);
    *end = '\0';
    ck_assert_str_eq(got, want);
}

static void same_i64(int64_t v)
{
    char want[32], got[32];
    snprintf(want, sizeof want, "%" PRId64, v);
    char *end = recfmt_i64(got, v);
    *end = '\0';
    ck_assert_str_eq(got, want);
}

/* recfmt_hex as printf's %" PRIx64 ", with what follows the digits
 * written after it (the 7 scratch bytes past them are the caller's). */
static void same_hex(uint64_t v)
{
    char want[32], got[40];
    snprintf(want, sizeof want, "%" PRIx64 "\"", v);
    memset(got, 'x', sizeof got);
    char *end = recfmt_hex(got, v);
    *end++ = '"';
    *end = '\0';
    ck_assert_str_eq(got, want);
}

START_TEST(hex_at_every_length)
{
    for (int bits = 0; bits <= 64; bits++) {
        uint64_t top = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
        same_hex(top);
        same_hex(top + 1);
        same_hex(top / 3);
        same_hex(top & 0xaaaaaaaaaaaaaaaaull);
        same_hex(top & 0x5f5f5f5f5f5f5f5full);
    }
    rng_t r;
    rng_seed(&r, 2027);
    for (int i = 0; i < 100000; i++)
        same_hex(rng_next(&r) >> (rng_next(&r) % 64));
}
END_TEST

START_TEST(integers_at_every_boundary)
{
    uint64_t p = 1;
    for (int d = 0; d < 20; d++, p *= 10) {
        same_u64(p);
        same_u64(p - 1);
        same_u64(p + 1);
        same_i64(-(int64_t)(p > INT64_MAX ? INT64_MAX : p));
    }
    same_u64(0);
    same_u64(UINT64_MAX);
    same_i64(INT64_MIN);
    same_i64(INT64_MAX);
    same_i64(0);
}
END_TEST

START_TEST(integers_seeded_sweep)
{
    rng_t r;
    rng_seed(&r, 2026);
    for (int i = 0; i < 100000; i++) {
        uint64_t v = rng_next(&r) >> (rng_next(&r) % 64);
        same_u64(v);
        same_i64((int64_t)v);
    }
}
END_TEST

START_TEST(literals_append)
{
    char buf[RECFMT_MAX], *p = RECFMT_LIT(buf, "{\"ev\":\"alloc\",\"t\":");
    p = recfmt_u64(p, 42);
    p = RECFMT_LIT(p, "}\n");
    ck_assert_uint_eq((size_t)(p - buf), strlen("{\"ev\":\"alloc\",\"t\":42}\n"));
    ck_assert(memcmp(buf, "{\"ev\":\"alloc\",\"t\":42}\n", (size_t)(p - buf)) == 0);
}
END_TEST

Suite *recfmt_suite(void)
{
    Suite *s = suite_create("recfmt");
    TCase *tc = tcase_create("format");
    tcase_add_test(tc, hex_at_every_length);
    tcase_add_test(tc, integers_at_every_boundary);
    tcase_add_test(tc, integers_seeded_sweep);
    tcase_add_test(tc, literals_append);
    suite_add_tcase(s, tc);
    return s;
}
