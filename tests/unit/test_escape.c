/*
 * escape: control characters, invalid UTF-8 and backslashes come out as
 * escapes; valid UTF-8 comes out as it is.  JSON strings of invalid UTF-8,
 * and copies cut short that stay valid.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/escape.h"
#include "tests/unit/suites.h"

/* What escape_write makes of s[0..n) with also. */
static char *escaped_n(const char *s, size_t n, const char *also)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    ck_assert_ptr_nonnull(f);
    escape_write(f, s, n, also);
    fclose(f);
    return out;
}

static void check_escaped(const char *s, const char *want)
{
    char *got = escaped_n(s, strlen(s), NULL);
    ck_assert_str_eq(got, want);
    free(got);
}

START_TEST(valid_text_unchanged)
{
    check_escaped("", "");
    check_escaped("/usr/lib/libfoo.so.1", "/usr/lib/libfoo.so.1");
    check_escaped("std::vector<int, std::allocator<int> >::push_back(int const&)",
                  "std::vector<int, std::allocator<int> >::push_back(int const&)");
    /* Two, three and four bytes; U+00A0 is the first character past C1;
     * U+10FFFF the last there is. */
    check_escaped("café — 日本 \xf0\x9f\x98\x80 \xc2\xa0 \xf4\x8f\xbf\xbf",
                  "café — 日本 \xf0\x9f\x98\x80 \xc2\xa0 \xf4\x8f\xbf\xbf");
}
END_TEST

START_TEST(control_characters)
{
    check_escaped("\x1b[31mred", "\\x1b[31mred");
    check_escaped("a\nb\tc\rd", "a\\x0ab\\x09c\\x0dd");
    check_escaped("\x01\x1f\x7f", "\\x01\\x1f\\x7f");
    /* C1 controls: U+009B is CSI to a terminal that takes 8-bit controls. */
    check_escaped("\xc2\x9b" "2J", "\\xc2\\x9b" "2J");
    check_escaped("\xc2\x80", "\\xc2\\x80");
}
END_TEST

START_TEST(backslash_doubled)
{
    /* So that a name holding the text \x1b is not taken for an ESC. */
    check_escaped("a\\x1b", "a\\\\x1b");
    check_escaped("\\", "\\\\");
}
END_TEST

START_TEST(invalid_utf8)
{
    check_escaped("\xff", "\\xff");
    check_escaped("ok\xc3", "ok\\xc3");               /* cut short at the end */
    check_escaped("\xc3(", "\\xc3(");                 /* a bad continuation */
    check_escaped("\x80x", "\\x80x");                 /* a lone continuation */
    check_escaped("\xc0\xaf", "\\xc0\\xaf");          /* overlong '/' */
    check_escaped("\xe0\x80\xaf", "\\xe0\\x80\\xaf"); /* overlong, 3 bytes */
    check_escaped("\xed\xa0\x80", "\\xed\\xa0\\x80"); /* a surrogate */
    check_escaped("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"); /* above U+10FFFF */
    check_escaped("\xf5\x80", "\\xf5\\x80");
    /* A bad byte does not swallow the valid character after it. */
    check_escaped("\xe6\x97é", "\\xe6\\x97é");
}
END_TEST

START_TEST(also_and_length)
{
    char *got = escaped_n("a;b c", 5, ";");
    ck_assert_str_eq(got, "a\\x3bb c");
    free(got);
    /* Only n bytes, a NUL among them included. */
    got = escaped_n("ab\0cd", 5, NULL);
    ck_assert_str_eq(got, "ab\\x00cd");
    free(got);
    got = escaped_n("abc", 2, NULL);
    ck_assert_str_eq(got, "ab");
    free(got);
}
END_TEST

START_TEST(line)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    ck_assert_ptr_nonnull(f);
    escape_line(f, "module %s: %d", "/x/lib\n.so", 7);
    /* Longer than the first buffer: formatted whole. */
    char big[3000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    big[2500] = '\x1b';
    escape_line(f, "%s", big);
    fclose(f);
    ck_assert_int_eq(strncmp(out, "module /x/lib\\x0a.so: 7\n", 24), 0);
    const char *second = out + 24;
    ck_assert_uint_eq(strlen(second), sizeof big - 1 + 3 + 1);
    ck_assert_int_eq(strncmp(second + 2500, "\\x1bxx", 6), 0);
    ck_assert_int_eq(second[strlen(second) - 1], '\n');
    ck_assert_ptr_null(strchr(second, '\x1b'));
    free(out);
}
END_TEST

START_TEST(json)
{
    json_t *j = escape_json("a\x1b\n\\b é");
    ck_assert_str_eq(json_string_value(j), "a\x1b\n\\b é"); /* valid: jansson's to escape */
    json_decref(j);
    j = escape_json("bad\xff\x1b");
    ck_assert_str_eq(json_string_value(j), "bad\\xff\\x1b"); /* invalid: escaped */
    json_decref(j);
    j = escape_json(NULL);
    ck_assert(json_is_null(j));
    json_decref(j);
}
END_TEST

START_TEST(copy_cut_at_a_character)
{
    char buf[5];
    escape_copy(buf, sizeof buf, "abc");
    ck_assert_str_eq(buf, "abc");
    escape_copy(buf, sizeof buf, "abcdef");
    ck_assert_str_eq(buf, "abcd");
    escape_copy(buf, sizeof buf, "abcé"); /* 5 bytes: é would be cut */
    ck_assert_str_eq(buf, "abc");
    escape_copy(buf, sizeof buf, "aé€");  /* a, é, then € cut after 1 byte */
    ck_assert_str_eq(buf, "aé");
    escape_copy(buf, sizeof buf, "\xf0\x9f\x98\x80x"); /* a 4-byte character fits */
    ck_assert_str_eq(buf, "\xf0\x9f\x98\x80");
    escape_copy(buf, sizeof buf, "a\xf0\x9f\x98\x80"); /* and is cut whole */
    ck_assert_str_eq(buf, "a");
    escape_copy(buf, 1, "abc");
    ck_assert_str_eq(buf, "");
}
END_TEST

/* HTML: markup characters as references, control bytes and broken
 * UTF-8 as escape_put writes them, valid UTF-8 as it is. */
static void check_html(const char *s, const char *want)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    ck_assert_ptr_nonnull(f);
    escape_html(f, s);
    fclose(f);
    ck_assert_str_eq(out, want);
    free(out);
}

START_TEST(html)
{
    check_html("<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)&gt;");
    check_html("a\"b'c&d", "a&quot;b&#39;c&amp;d");
    check_html("</script><script>x()</script>", "&lt;/script&gt;&lt;script&gt;x()&lt;/script&gt;");
    check_html("caf\xc3\xa9 \xe2\x82\xac", "caf\xc3\xa9 \xe2\x82\xac");
    check_html("bad\xff\x1b[2J\n", "bad\\xff\\x1b[2J\\x0a");
    check_html("", "");
}
END_TEST

Suite *escape_suite(void)
{
    Suite *s = suite_create("escape");
    TCase *tc = tcase_create("escape");
    tcase_add_test(tc, valid_text_unchanged);
    tcase_add_test(tc, control_characters);
    tcase_add_test(tc, backslash_doubled);
    tcase_add_test(tc, invalid_utf8);
    tcase_add_test(tc, also_and_length);
    tcase_add_test(tc, line);
    tcase_add_test(tc, json);
    tcase_add_test(tc, copy_cut_at_a_character);
    tcase_add_test(tc, html);
    suite_add_tcase(s, tc);
    return s;
}
