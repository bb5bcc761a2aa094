/* units: sizes as people write them and as reports print them. */
#include <check.h>

#include "lib/units.h"
#include "tests/unit/suites.h"

static uint64_t parsed(const char *s)
{
    uint64_t v = 12345;
    ck_assert_msg(units_parse_size(s, &v) == 0, "\"%s\" refused", s);
    return v;
}

START_TEST(parse_accepts_suffixes)
{
    ck_assert_uint_eq(parsed("0"), 0);
    ck_assert_uint_eq(parsed("4096"), 4096);
    ck_assert_uint_eq(parsed("64K"), 65536);
    ck_assert_uint_eq(parsed("64k"), 65536);
    ck_assert_uint_eq(parsed("64KiB"), 65536);
    ck_assert_uint_eq(parsed("64KB"), 65536);
    ck_assert_uint_eq(parsed("512M"), 512ull << 20);
    ck_assert_uint_eq(parsed("2G"), 2ull << 30);
    ck_assert_uint_eq(parsed("2gib"), 2ull << 30);
    ck_assert_uint_eq(parsed("1T"), 1ull << 40);
    ck_assert_uint_eq(parsed("3P"), 3ull << 50);
    ck_assert_uint_eq(parsed("100B"), 100);
    ck_assert_uint_eq(parsed("18446744073709551615"), UINT64_MAX);
}
END_TEST

START_TEST(parse_refuses_the_rest)
{
    static const char *const bad[] = {"", "-1", "1.5G", "12X", "G", "K1", " 1", "1 ", "1GG",
                                      "18446744073709551616", "16384P", "0x10"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t v = 7;
        ck_assert_msg(units_parse_size(bad[i], &v) == -1, "\"%s\" accepted", bad[i]);
        ck_assert_uint_eq(v, 7);
    }
    uint64_t v;
    ck_assert_int_eq(units_parse_size(NULL, &v), -1);
}
END_TEST

START_TEST(format_is_human)
{
    char b[32];
    ck_assert_str_eq(units_format_bytes(0, b, sizeof b), "0 B");
    ck_assert_str_eq(units_format_bytes(1023, b, sizeof b), "1023 B");
    ck_assert_str_eq(units_format_bytes(1024, b, sizeof b), "1.00 KiB");
    ck_assert_str_eq(units_format_bytes(1536, b, sizeof b), "1.50 KiB");
    ck_assert_str_eq(units_format_bytes(10ull << 20, b, sizeof b), "10.0 MiB");
    ck_assert_str_eq(units_format_bytes(200ull << 30, b, sizeof b), "200 GiB");
    ck_assert_str_eq(units_format_bytes(UINT64_MAX, b, sizeof b), "16.0 EiB");
}
END_TEST

Suite *units_suite(void)
{
    Suite *s = suite_create("units");
    TCase *tc = tcase_create("units");
    tcase_add_test(tc, parse_accepts_suffixes);
    tcase_add_test(tc, parse_refuses_the_rest);
    tcase_add_test(tc, format_is_human);
    suite_add_tcase(s, tc);
    return s;
}
