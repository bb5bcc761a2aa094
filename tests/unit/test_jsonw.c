/*
 * Unit tests for preload/jsonw: the JSON-line writer of the preload.
 *
 * Every line the writer produces is parsed back with jansson (the
 * analyzer's parser) and the values compared exactly.  Strings are
 * checked against a reference sanitizer written differently from the
 * writer's: it decodes each sequence to a code point and judges the
 * value (overlong, surrogate, above U+10FFFF), where the writer judges
 * byte ranges.  Doubles are checked against glibc's exact "%.1100f"
 * expansion rounded by hand, half away from zero.
 */
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/rng.h"
#include "trace/jsonw.h"
#include "tests/unit/suites.h"

#include "tests/unit/expect.h"

#define BIG 65536

/* ---- helpers ------------------------------------------------------------ */

/* Printable form of n bytes for failure messages; up to four at a time. */
static const char *show(const void *p, size_t n)
{
    static char ring[4][4096];
    static unsigned next;
    char *out = ring[next++ % 4];
    const unsigned char *s = p;
    size_t o = 0;
    for (size_t i = 0; i < n && o + 8 < sizeof ring[0]; i++) {
        if (s[i] >= 0x20 && s[i] < 0x7f && s[i] != '\\')
            out[o++] = (char)s[i];
        else
            o += (size_t)snprintf(out + o, sizeof ring[0] - o, "\\x%02x", s[i]);
    }
    out[o] = 0;
    return out;
}

/* Parse exactly buf[0, len) as one JSON text; the test fails otherwise. */
static json_t *parse(const char *buf, size_t len, size_t flags)
{
    json_error_t err;
    json_t *j = json_loadb(buf, len, flags, &err);
    EXPECT(j != NULL, "jansson refuses \"%s\": %s at %d", show(buf, len), err.text, err.position);
    return j;
}

/* Parse a one-key object line {"v":...}\n and return the value (a new
 * reference); the top level must be an object with exactly that key. */
static json_t *parse_v(const char *buf, size_t len, size_t flags)
{
    EXPECT(len >= 2 && buf[len - 1] == '\n', "line does not end in a newline: %s", show(buf, len));
    json_t *root = parse(buf, len, flags);
    EXPECT(json_is_object(root) && json_object_size(root) == 1, "not {\"v\":...}: %s",
           show(buf, len));
    json_t *v = json_object_get(root, "v");
    EXPECT(v != NULL, "no key v: %s", show(buf, len));
    json_incref(v);
    json_decref(root);
    return v;
}

/* Reference: the writer's documented output for n bytes, decoded (what a
 * JSON parser returns).  Well-formed sequences kept, every other byte
 * U+FFFD.  Returns the length; *valid says whether nothing was replaced. */
static size_t ref_sanitize(const unsigned char *in, size_t n, unsigned char *out, bool *valid)
{
    size_t o = 0;
    *valid = true;
    for (size_t i = 0; i < n;) {
        unsigned char c = in[i];
        size_t k = c < 0x80             ? 1
                   : (c & 0xe0) == 0xc0 ? 2
                   : (c & 0xf0) == 0xe0 ? 3
                   : (c & 0xf8) == 0xf0 ? 4
                                        : 0;
        uint32_t cp = k == 1 ? c : k == 2 ? c & 0x1fu : k == 3 ? c & 0x0fu : c & 0x07u;
        bool ok = k != 0 && i + k <= n;
        for (size_t t = 1; ok && t < k; t++) {
            ok = (in[i + t] & 0xc0) == 0x80;
            cp = cp << 6 | (in[i + t] & 0x3fu);
        }
        static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (ok && (cp < min_cp[k] || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff))
            ok = false;
        if (ok) {
            memcpy(out + o, in + i, k);
            o += k;
            i += k;
        } else {
            memcpy(out + o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
            *valid = false;
        }
    }
    return o;
}

static bool is_valid_utf8(const void *p, size_t n)
{
    static unsigned char tmp[4 * BIG];
    bool valid;
    ref_sanitize(p, n, tmp, &valid);
    return valid;
}

/* {"v":"<s>"}\n for n bytes of s into buf; returns the length. */
static size_t str_line(char *buf, size_t cap, const void *s, size_t n)
{
    jsonw_t w;
    jsonw_init(&w, buf, cap);
    jsonw_object_begin(&w);
    jsonw_key(&w, "v");
    jsonw_strn(&w, s, n);
    jsonw_line_end(&w);
    EXPECT(!w.overflow, "overflow for a %zu-byte string in %zu bytes", n, cap);
    return w.len;
}

/* Write n bytes of s, parse the line back, and check that the decoded
 * string is the reference's.  Returns whether s was valid UTF-8. */
static bool check_string(const void *s, size_t n)
{
    static char buf[8 * BIG];
    static unsigned char want[4 * BIG];
    bool valid;
    size_t wn = ref_sanitize(s, n, want, &valid);
    size_t len = str_line(buf, sizeof buf, s, n);
    EXPECT(is_valid_utf8(buf, len), "output is not UTF-8: %s", show(buf, len));
    for (size_t i = 0; i < len; i++)
        EXPECT((unsigned char)buf[i] >= 0x20 || (i == len - 1 && buf[i] == '\n'),
               "raw control byte in %s", show(buf, len));
    json_t *v = parse_v(buf, len, JSON_ALLOW_NUL);
    EXPECT(json_is_string(v), "not a string: %s", show(buf, len));
    const char *got = json_string_value(v);
    size_t gn = json_string_length(v);
    EXPECT(gn == wn && memcmp(got, want, wn) == 0, "input %s decodes to %s", show(s, n),
           show(got, gn));
    EXPECT(is_valid_utf8(got, gn), "decoded string not UTF-8: %s", show(got, gn));
    if (valid)
        EXPECT(gn == n && memcmp(got, s, n) == 0, "valid %s changed", show(s, n));
    json_decref(v);

    /* without NUL bytes, jsonw_str on a terminated copy writes the same */
    if (!memchr(s, 0, n)) {
        static char z[BIG + 1], buf2[8 * BIG];
        memcpy(z, s, n);
        z[n] = 0;
        jsonw_t w;
        jsonw_init(&w, buf2, sizeof buf2);
        jsonw_object_begin(&w);
        jsonw_key_str(&w, "v", z);
        jsonw_line_end(&w);
        EXPECT(!w.overflow && w.len == len && memcmp(buf, buf2, len) == 0,
               "jsonw_str and jsonw_strn differ on %s", show(s, n));
    }
    return valid;
}

/* Raw output of jsonw_strn(s, n), quotes included, equals want. */
static void check_raw(const char *s, size_t n, const char *want)
{
    char buf[1024];
    jsonw_t w;
    jsonw_init(&w, buf, sizeof buf);
    jsonw_strn(&w, s, n);
    EXPECT(!w.overflow && w.len == strlen(want) && memcmp(buf, want, w.len) == 0,
           "%s written as %s", show(s, n), show(buf, w.len));
}

/* ---- integers ----------------------------------------------------------- */

static void check_u64(uint64_t v)
{
    char buf[64], want[32];
    jsonw_t w;
    jsonw_init(&w, buf, sizeof buf);
    jsonw_object_begin(&w);
    jsonw_key_u64(&w, "v", v);
    jsonw_line_end(&w);
    int wn = snprintf(want, sizeof want, "{\"v\":%" PRIu64 "}\n", v);
    EXPECT(!w.overflow && w.len == (size_t)wn && memcmp(buf, want, w.len) == 0,
           "%" PRIu64 " written as %s", v, show(buf, w.len));
    /* jansson's integers are long long: above INT64_MAX only as reals */
    json_t *j = parse_v(buf, w.len, v > INT64_MAX ? JSON_DECODE_INT_AS_REAL : 0);
    if (v <= INT64_MAX)
        EXPECT(json_is_integer(j) && (uint64_t)json_integer_value(j) == v,
               "%" PRIu64 " parsed as %s", v, show(buf, w.len));
    else
        EXPECT(json_is_real(j) && json_real_value(j) == (double)v, "%" PRIu64 " parsed as %g", v,
               json_real_value(j));
    json_decref(j);
}

static void check_i64(int64_t v)
{
    char buf[64], want[32];
    jsonw_t w;
    jsonw_init(&w, buf, sizeof buf);
    jsonw_object_begin(&w);
    jsonw_key_i64(&w, "v", v);
    jsonw_line_end(&w);
    int wn = snprintf(want, sizeof want, "{\"v\":%" PRId64 "}\n", v);
    EXPECT(!w.overflow && w.len == (size_t)wn && memcmp(buf, want, w.len) == 0,
           "%" PRId64 " written as %s", v, show(buf, w.len));
    json_t *j = parse_v(buf, w.len, 0);
    EXPECT(json_is_integer(j) && json_integer_value(j) == v, "%" PRId64 " parsed wrong", v);
    json_decref(j);
}

START_TEST(test_u64)
{
    uint64_t p = 1;
    check_u64(0);
    for (int k = 0; k < 20; k++, p *= 10) {
        check_u64(p);
        check_u64(p - 1);
        check_u64(p + 1);
        check_u64(p * 2 - 1);
        check_u64(p * 5);
    }
    for (int k = 0; k < 64; k++) {
        check_u64(1ull << k);
        check_u64((1ull << k) - 1);
        check_u64((1ull << k) + 1);
    }
    check_u64(INT64_MAX);
    check_u64((uint64_t)INT64_MAX + 1);
    check_u64(UINT64_MAX - 1);
    check_u64(UINT64_MAX);
    rng_t r;
    rng_seed(&r, 1);
    for (int i = 0; i < 10000; i++)
        check_u64(rng_next(&r) >> rng_below(&r, 64));
}
END_TEST

START_TEST(test_i64)
{
    uint64_t up = 1;
    for (int k = 0; k < 19; k++, up *= 10) {
        int64_t p = (int64_t)up;
        check_i64(p);
        check_i64(-p);
        check_i64(p - 1);
        check_i64(-p + 1);
        check_i64(-p - 1);
    }
    check_i64(0);
    check_i64(-1);
    check_i64(INT64_MAX);
    check_i64(INT64_MIN);
    check_i64(INT64_MIN + 1);
    rng_t r;
    rng_seed(&r, 2);
    for (int i = 0; i < 10000; i++)
        check_i64((int64_t)rng_next(&r) >> rng_below(&r, 64));
}
END_TEST

/* ---- strings ------------------------------------------------------------ */

START_TEST(test_str_every_byte)
{
    for (int b = 1; b < 256; b++) {
        unsigned char s[2] = {(unsigned char)b, 0};
        bool valid = check_string(s, 1);
        EXPECT(valid == (b < 0x80), "byte 0x%02x judged %d", b, valid);

        /* jsonw_str on the NUL-terminated form: the same line */
        char a[64], c[64];
        size_t an = str_line(a, sizeof a, s, 1);
        jsonw_t w;
        jsonw_init(&w, c, sizeof c);
        jsonw_object_begin(&w);
        jsonw_key_str(&w, "v", (const char *)s);
        jsonw_line_end(&w);
        EXPECT(w.len == an && memcmp(a, c, an) == 0, "jsonw_str differs for 0x%02x", b);

        /* a lone byte >= 0x80 is never well-formed: exactly one U+FFFD */
        json_t *v = parse_v(a, an, 0);
        if (b >= 0x80)
            EXPECT(strcmp(json_string_value(v), "\xef\xbf\xbd") == 0, "0x%02x decoded wrong", b);
        else
            EXPECT(json_string_length(v) == 1 && json_string_value(v)[0] == b,
                   "0x%02x decoded wrong", b);
        json_decref(v);
    }
}
END_TEST

START_TEST(test_str_all_bytes)
{
    unsigned char s[256], want[128 + 3 * 128 + 1];
    for (int b = 1; b < 256; b++)
        s[b - 1] = (unsigned char)b;
    s[255] = 0;
    /* ASCII as is; 0x80..0xff never form a sequence in increasing order */
    size_t wn = 0;
    for (int b = 1; b < 0x80; b++)
        want[wn++] = (unsigned char)b;
    for (int b = 0x80; b < 0x100; b++, wn += 3)
        memcpy(want + wn, "\xef\xbf\xbd", 3);

    char buf[4096];
    jsonw_t w;
    jsonw_init(&w, buf, sizeof buf);
    jsonw_object_begin(&w);
    jsonw_key_str(&w, "v", (const char *)s);
    jsonw_line_end(&w);
    ck_assert(!w.overflow);
    json_t *v = parse_v(buf, w.len, 0);
    ck_assert_uint_eq(json_string_length(v), wn);
    ck_assert(memcmp(json_string_value(v), want, wn) == 0);
    json_decref(v);
    check_string(s, 255);

    /* and descending, and with NUL via jsonw_strn */
    for (int b = 0; b < 256; b++)
        s[b] = (unsigned char)(255 - b);
    check_string(s, 256);
}
END_TEST

START_TEST(test_str_escapes)
{
    check_raw("", 0, "\"\"");
    check_raw("plain text", 10, "\"plain text\"");
    check_raw("\"", 1, "\"\\\"\"");
    check_raw("\\", 1, "\"\\\\\"");
    check_raw("a\"b\\c", 5, "\"a\\\"b\\\\c\"");
    check_raw("\n\r\t\b\f", 5, "\"\\n\\r\\t\\b\\f\"");
    check_raw("\x01\x1f\x7f\x0b", 4, "\"\\u0001\\u001f\\u007f\\u000b\"");
    check_raw("/", 1, "\"/\"");
    check_raw("\"\"\\\\", 4, "\"\\\"\\\"\\\\\\\\\"");
    check_string("a\"b\\c\n\r\t\b\f\x01\x1f\x7f/", 14);
    for (int b = 1; b < 0x20; b++) {
        unsigned char s[1] = {(unsigned char)b};
        check_string(s, 1);
    }
}
END_TEST

START_TEST(test_str_utf8_valid)
{
    static const char *const ok[] = {
        "\xc3\xa9",         /* é */
        "\xe2\x82\xac",     /* € */
        "\xf0\x9d\x84\x9e", /* 𝄞 U+1D11E */
        "\xc2\x80",         /* U+0080, the first two-byte */
        "\xdf\xbf",         /* U+07FF */
        "\xe0\xa0\x80",     /* U+0800, the first three-byte */
        "\xed\x9f\xbf",     /* U+D7FF, just below the surrogates */
        "\xee\x80\x80",     /* U+E000, just above */
        "\xef\xbf\xbd",     /* U+FFFD itself */
        "\xef\xbf\xbf",     /* U+FFFF */
        "\xf0\x90\x80\x80", /* U+10000, the first four-byte */
        "\xf4\x8f\xbf\xbf", /* U+10FFFF, the last */
        "caf\xc3\xa9 \xe2\x82\xac\x35 \xf0\x9d\x84\x9e\"\n",
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        size_t n = strlen(ok[i]);
        EXPECT(check_string(ok[i], n), "%s judged invalid", show(ok[i], n));
        if (i < sizeof ok / sizeof ok[0] - 1) { /* copied as is */
            char want[16];
            snprintf(want, sizeof want, "\"%s\"", ok[i]);
            check_raw(ok[i], n, want);
        }
    }
}
END_TEST

#define R "\xef\xbf\xbd"

START_TEST(test_str_utf8_invalid)
{
    static const struct {
        const char *in, *out;
    } bad[] = {
        {"\x80", R}, /* stray continuation */
        {"\xbf", R},
        {"a\x80\x80z", "a" R R "z"},
        {"\x80\xc3\xa9", R "\xc3\xa9"},            /* then a good sequence */
        {"\xc0\x80", R R},                         /* overlong NUL */
        {"\xc1\xbf", R R},                         /* overlong U+007F */
        {"\xe0\x80\x80", R R R},                   /* overlong 3-byte */
        {"\xe0\x9f\xbf", R R R},                   /* overlong U+07FF */
        {"\xf0\x80\x80\x80", R R R R},             /* overlong 4-byte */
        {"\xf0\x8f\xbf\xbf", R R R R},             /* overlong U+FFFF */
        {"\xed\xa0\x80", R R R},                   /* surrogate U+D800 */
        {"\xed\xbf\xbf", R R R},                   /* surrogate U+DFFF */
        {"\xed\xa0\xbd\xed\xb2\xa9", R R R R R R}, /* CESU-8 pair */
        {"\xf4\x90\x80\x80", R R R R},             /* U+110000 */
        {"\xf5\x80\x80\x80", R R R R},             /* lead F5 */
        {"\xf7\xbf\xbf\xbf", R R R R},             /* U+1FFFFF */
        {"\xf8\x88\x80\x80\x80", R R R R R},       /* five-byte form */
        {"\xfc\x84\x80\x80\x80\x80", R R R R R R}, /* six-byte form */
        {"\xfe", R},
        {"\xff", R},
        {"\xc3", R}, /* truncated at the end */
        {"a\xe2\x82", "a" R R},
        {"\xe2", R},
        {"\xf0\x9d\x84", R R R},
        {"\xf0\x9d", R R},
        {"\xe2\x82x", R R "x"},         /* cut short by ASCII */
        {"\xc3\xc3\xa9", R "\xc3\xa9"}, /* cut short by a lead */
        {"\xf0\x9d\x84\xe2\x82\xac", R R R "\xe2\x82\xac"},
        {"\xc3\"", R "\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char buf[256];
        size_t n = strlen(bad[i].in);
        size_t len = str_line(buf, sizeof buf, bad[i].in, n);
        json_t *v = parse_v(buf, len, 0);
        EXPECT(json_is_string(v) && strcmp(json_string_value(v), bad[i].out) == 0,
               "%s decoded as %s", show(bad[i].in, n),
               show(json_string_value(v), json_string_length(v)));
        json_decref(v);
        EXPECT(!check_string(bad[i].in, n), "%s judged valid", show(bad[i].in, n));
    }
}
END_TEST

START_TEST(test_strn_nul_and_bounds)
{
    check_raw("a\0b", 3, "\"a\\u0000b\"");
    check_raw("\0", 1, "\"\\u0000\"");
    check_raw("\xc3\0", 2, "\"" R "\\u0000\"");
    check_raw("abc", 2, "\"ab\"");         /* n, not strlen */
    check_raw("\xc3\xa9", 1, "\"" R "\""); /* a sequence cut by n */
    check_raw(NULL, 0, "\"\"");

    char buf[64];
    size_t len = str_line(buf, sizeof buf, "a\0b\0", 4);
    json_t *v = parse_v(buf, len, JSON_ALLOW_NUL);
    ck_assert_uint_eq(json_string_length(v), 4);
    ck_assert(memcmp(json_string_value(v), "a\0b\0", 4) == 0);
    json_decref(v);

    /* exact-size heap copies without a terminator: under ASan any read
     * past n faults, truncated sequences at the very end included */
    static const char *const tails[] = {"x\xc3", "x\xe2\x82", "x\xf0\x9d\x84", "\xf4", "ab"};
    for (size_t i = 0; i < sizeof tails / sizeof tails[0]; i++) {
        size_t n = strlen(tails[i]);
        char *p = malloc(n);
        ck_assert_ptr_nonnull(p);
        memcpy(p, tails[i], n);
        check_string(p, n);
        free(p);

        char line[64], *z = malloc(n + 1); /* jsonw_str: nothing past the NUL */
        ck_assert_ptr_nonnull(z);
        memcpy(z, tails[i], n + 1);
        jsonw_t w;
        jsonw_init(&w, line, sizeof line);
        jsonw_str(&w, z);
        ck_assert(!w.overflow);
        free(z);
    }

    /* jsonw_str(NULL) is null */
    jsonw_t w;
    jsonw_init(&w, buf, sizeof buf);
    jsonw_object_begin(&w);
    jsonw_key_str(&w, "v", NULL);
    jsonw_line_end(&w);
    ck_assert_uint_eq(w.len, strlen("{\"v\":null}\n"));
    ck_assert(memcmp(buf, "{\"v\":null}\n", w.len) == 0);
}
END_TEST

#undef R

/* 20000 strings from four generators: uniform bytes, well-formed
 * UTF-8, well-formed with a byte corrupted, and bytes from a small
 * alphabet of the interesting boundaries. */
static size_t random_string(rng_t *r, unsigned char *s)
{
    static const unsigned char edge[] = {0x00, 0x01, '"',  '\\', 'a',  0x7f, 0x80, 0x8f,
                                         0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf,
                                         0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff};
    size_t want = (size_t)rng_below(r, 65), n = 0;
    switch (rng_below(r, 4)) {
    case 0:
        for (; n < want; n++)
            s[n] = (unsigned char)rng_next(r);
        break;
    case 1:
    case 2:
        while (n < want) {
            uint32_t cp;
            switch (rng_below(r, 4)) {
            case 0:
                cp = (uint32_t)rng_below(r, 0x80);
                break;
            case 1:
                cp = (uint32_t)rng_between(r, 0x80, 0x7ff);
                break;
            case 2:
                do
                    cp = (uint32_t)rng_between(r, 0x800, 0xffff);
                while (cp >= 0xd800 && cp <= 0xdfff);
                break;
            default:
                cp = (uint32_t)rng_between(r, 0x10000, 0x10ffff);
                break;
            }
            if (cp < 0x80) {
                s[n++] = (unsigned char)cp;
            } else if (cp < 0x800) {
                s[n++] = (unsigned char)(0xc0 | cp >> 6);
                s[n++] = (unsigned char)(0x80 | (cp & 0x3f));
            } else if (cp < 0x10000) {
                s[n++] = (unsigned char)(0xe0 | cp >> 12);
                s[n++] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
                s[n++] = (unsigned char)(0x80 | (cp & 0x3f));
            } else {
                s[n++] = (unsigned char)(0xf0 | cp >> 18);
                s[n++] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
                s[n++] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
                s[n++] = (unsigned char)(0x80 | (cp & 0x3f));
            }
        }
        if (n && rng_below(r, 2) == 0) /* corrupt one byte, or cut the end */
            s[rng_below(r, n)] = (unsigned char)rng_next(r);
        else if (n && rng_below(r, 2) == 0)
            n -= (size_t)rng_below(r, 3 < n ? 3 : n);
        break;
    default:
        for (; n < want; n++)
            s[n] = edge[rng_below(r, sizeof edge)];
        break;
    }
    return n;
}

START_TEST(test_str_random)
{
    rng_t r;
    rng_seed(&r, 0x6a736f6e77ull);
    unsigned char s[80];
    int valid = 0, valid_nonascii = 0;
    for (int i = 0; i < 20000; i++) {
        size_t n = random_string(&r, s);
        if (check_string(s, n)) {
            valid++;
            for (size_t k = 0; k < n; k++)
                if (s[k] >= 0x80) {
                    valid_nonascii++;
                    break;
                }
        }
    }
    /* both outcomes exercised, not just the invalid one */
    EXPECT(valid > 2000 && valid < 18000, "only %d of 20000 valid", valid);
    EXPECT(valid_nonascii > 2000, "only %d valid non-ASCII", valid_nonascii);
}
END_TEST

/* ---- structure and literals --------------------------------------------- */

static void check_text(const jsonw_t *w, const char *want)
{
    EXPECT(!w->overflow && w->len == strlen(want) && memcmp(w->buf, want, w->len) == 0,
           "wrote %s, want %s", show(w->buf, w->len), want);
    json_decref(parse(w->buf, w->len, 0));
}

START_TEST(test_nesting)
{
    char buf[512];
    jsonw_t w;

    jsonw_init(&w, buf, sizeof buf);
    jsonw_object_begin(&w);
    jsonw_key(&w, "children");
    jsonw_array_begin(&w);
    for (int i = 0; i < 2; i++) {
        jsonw_object_begin(&w);
        jsonw_key_u64(&w, "pid", (uint64_t)(2 * i + 1));
        jsonw_key_u64(&w, "rss", (uint64_t)(2 * i + 2));
        jsonw_object_end(&w);
    }
    jsonw_array_end(&w);
    jsonw_line_end(&w);
    check_text(&w, "{\"children\":[{\"pid\":1,\"rss\":2},{\"pid\":3,\"rss\":4}]}\n");

    jsonw_init(&w, buf, sizeof buf);
    jsonw_object_begin(&w);
    jsonw_key(&w, "a");
    jsonw_array_begin(&w);
    jsonw_array_begin(&w);
    jsonw_u64(&w, 1);
    jsonw_array_begin(&w);
    jsonw_i64(&w, -2);
    jsonw_array_begin(&w);
    jsonw_array_end(&w);
    jsonw_array_end(&w);
    jsonw_array_end(&w);
    jsonw_object_begin(&w);
    jsonw_key(&w, "b");
    jsonw_object_begin(&w);
    jsonw_key(&w, "c");
    jsonw_array_begin(&w);
    jsonw_object_begin(&w);
    jsonw_object_end(&w);
    jsonw_str(&w, "s");
    jsonw_null(&w);
    jsonw_bool(&w, true);
    jsonw_bool(&w, false);
    jsonw_double(&w, 0.5, 1);
    jsonw_array_end(&w);
    jsonw_object_end(&w);
    jsonw_object_end(&w);
    jsonw_array_end(&w);
    jsonw_key_null(&w, "d");
    jsonw_key(&w, "e");
    jsonw_object_begin(&w);
    jsonw_object_end(&w);
    jsonw_key(&w, "f");
    jsonw_array_begin(&w);
    jsonw_array_end(&w);
    jsonw_line_end(&w);
    check_text(&w, "{\"a\":[[1,[-2,[]]],{\"b\":{\"c\":[{},\"s\",null,true,false,0.5]}}],"
                   "\"d\":null,\"e\":{},\"f\":[]}\n");

    jsonw_init(&w, buf, sizeof buf); /* an empty record */
    jsonw_object_begin(&w);
    jsonw_line_end(&w);
    check_text(&w, "{}\n");
}
END_TEST

START_TEST(test_key_helpers)
{
    char buf[512];
    jsonw_t w;
    jsonw_init(&w, buf, sizeof buf);
    jsonw_object_begin(&w);
    jsonw_key_u64(&w, "u", 42);
    jsonw_key_i64(&w, "i", -42);
    jsonw_key_str(&w, "s", "x");
    jsonw_key_strn(&w, "sn", "yz", 1);
    jsonw_key_null(&w, "n");
    jsonw_key_bool(&w, "t", true);
    jsonw_key_bool(&w, "f", false);
    jsonw_key_double(&w, "d", 1.5, 2);
    jsonw_line_end(&w);
    check_text(&w, "{\"u\":42,\"i\":-42,\"s\":\"x\",\"sn\":\"y\",\"n\":null,\"t\":true,"
                   "\"f\":false,\"d\":1.50}\n");

    json_t *j = parse(buf, w.len, 0);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "u")), 42);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "i")), -42);
    ck_assert_str_eq(json_string_value(json_object_get(j, "s")), "x");
    ck_assert(json_is_null(json_object_get(j, "n")));
    ck_assert(json_is_true(json_object_get(j, "t")));
    ck_assert(json_is_false(json_object_get(j, "f")));
    ck_assert(json_real_value(json_object_get(j, "d")) == 1.5);
    json_decref(j);
}
END_TEST

/* Keys and plain strings of every length from 0 to 40, through every
 * size class of the short-copy paths. */
START_TEST(test_lengths)
{
    char src[41], want[128], buf[128];
    for (int i = 0; i < 40; i++)
        src[i] = (char)('a' + i % 26);
    for (size_t n = 0; n <= 40; n++) {
        jsonw_t w;
        jsonw_init(&w, buf, sizeof buf);
        jsonw_object_begin(&w);
        jsonw_keyn(&w, src, n);
        jsonw_strn(&w, src, n);
        jsonw_line_end(&w);
        int wn = snprintf(want, sizeof want, "{\"%.*s\":\"%.*s\"}\n", (int)n, src, (int)n, src);
        EXPECT(!w.overflow && w.len == (size_t)wn && memcmp(buf, want, w.len) == 0,
               "length %zu: %s", n, show(buf, w.len));
        json_decref(parse(buf, w.len, 0));
    }
}
END_TEST

/* Lines follow each other in one buffer; jsonw_rewind drops a partial one. */
START_TEST(test_lines_and_rewind)
{
    char buf[64];
    jsonw_t w;
    jsonw_init(&w, buf, sizeof buf);
    jsonw_object_begin(&w);
    jsonw_key_u64(&w, "a", 1);
    jsonw_line_end(&w);
    jsonw_object_begin(&w);
    jsonw_key_u64(&w, "b", 2);
    jsonw_line_end(&w);
    ck_assert(!w.overflow);
    ck_assert_uint_eq(w.len, 16);
    ck_assert(memcmp(buf, "{\"a\":1}\n{\"b\":2}\n", 16) == 0);
    json_decref(parse(buf, 8, 0));
    json_decref(parse(buf + 8, 8, 0));

    size_t mark = w.len;
    jsonw_object_begin(&w);
    jsonw_key_str(&w, "long", "0123456789012345678901234567890123456789012345678901234567890");
    ck_assert(w.overflow);
    ck_assert_uint_le(w.len, sizeof buf);
    ck_assert(memcmp(buf, "{\"a\":1}\n{\"b\":2}\n", 16) == 0);

    /* sticky: a token that would fit is not written after an overflow */
    size_t len = w.len;
    jsonw_null(&w);
    jsonw_line_end(&w);
    ck_assert_uint_eq(w.len, len);
    ck_assert(w.overflow);

    jsonw_rewind(&w, mark);
    ck_assert(!w.overflow);
    ck_assert_uint_eq(w.len, mark);
    jsonw_object_begin(&w);
    jsonw_key_bool(&w, "c", true);
    jsonw_line_end(&w);
    ck_assert(!w.overflow);
    ck_assert(memcmp(buf, "{\"a\":1}\n{\"b\":2}\n{\"c\":true}\n", w.len) == 0);

    /* no buffer at all */
    jsonw_init(&w, NULL, 100);
    jsonw_object_begin(&w);
    jsonw_key_str(&w, "x", "y");
    jsonw_double(&w, 1.0, 3);
    ck_assert(w.overflow);
    ck_assert_uint_eq(w.len, 0);
}
END_TEST

/* ---- doubles ------------------------------------------------------------ */

/* Reference: glibc prints a double's exact binary value with %.1100f;
 * round that decimal string half away from zero by hand. */
static void ref_double(double v, int d, char *out, size_t cap)
{
    if (isnan(v) || isinf(v) || fabs(v) >= 1e18) {
        snprintf(out, cap, "null");
        return;
    }
    static char exact[1500];
    snprintf(exact, sizeof exact, "0%.1100f", fabs(v)); /* leading 0 absorbs a carry */
    char *dot = strchr(exact, '.');
    bool up = dot[1 + d] >= '5';
    /* digits without the point: exact[0, dot) then dot[1, 1+d) */
    char digits[64];
    size_t nd = 0;
    for (char *p = exact; p < dot; p++)
        digits[nd++] = *p;
    for (int i = 0; i < d; i++)
        digits[nd++] = dot[1 + i];
    for (size_t i = nd; up && i-- > 0;) {
        if (digits[i] == '9') {
            digits[i] = '0';
        } else {
            digits[i]++;
            up = false;
        }
    }
    size_t ni = nd - (size_t)d, first = 0;
    while (first + 1 < ni && digits[first] == '0')
        first++;
    bool zero = true;
    for (size_t i = 0; i < nd; i++)
        zero = zero && digits[i] == '0';
    size_t o = 0;
    if (signbit(v) && !zero)
        out[o++] = '-';
    for (size_t i = first; i < ni; i++)
        out[o++] = digits[i];
    if (d) {
        out[o++] = '.';
        for (size_t i = ni; i < nd; i++)
            out[o++] = digits[i];
    }
    out[o] = 0;
}

static void check_double_as(double v, int d, const char *want)
{
    char buf[128], line[128];
    jsonw_t w;
    jsonw_init(&w, buf, sizeof buf);
    jsonw_double(&w, v, d);
    EXPECT(!w.overflow && w.len == strlen(want) && memcmp(buf, want, w.len) == 0,
           "%.17g at %d decimals written as %s, want %s", v, d, show(buf, w.len), want);

    jsonw_init(&w, line, sizeof line);
    jsonw_object_begin(&w);
    jsonw_key_double(&w, "v", v, d);
    jsonw_line_end(&w);
    json_t *j = parse_v(line, w.len, 0);
    if (strcmp(want, "null") == 0)
        EXPECT(json_is_null(j), "%.17g not null", v);
    else
        EXPECT(json_is_number(j) && json_number_value(j) == strtod(want, NULL),
               "%s parsed as %.17g", want, json_number_value(j));
    json_decref(j);
}

static void check_double(double v, int d)
{
    char want[64];
    ref_double(v, d < 0 ? 0 : d > 9 ? 9 : d, want, sizeof want);
    check_double_as(v, d, want);
}

START_TEST(test_double_table)
{
    static const struct {
        double v;
        int d;
        const char *want;
    } t[] = {
        {0.0, 0, "0"},
        {0.0, 2, "0.00"},
        {-0.0, 0, "0"},
        {-0.0, 3, "0.000"},
        {0.5, 1, "0.5"},
        {0.5, 0, "1"}, /* ties away from zero */
        {-0.5, 0, "-1"},
        {1.5, 0, "2"},
        {2.5, 0, "3"},
        {-2.5, 0, "-3"},
        {0.125, 2, "0.13"},
        {-0.125, 2, "-0.13"},
        {0.25, 1, "0.3"},
        {-1.25, 2, "-1.25"},
        {-1.25, 1, "-1.3"},
        {2.675, 2, "2.67"}, /* 2.67499999999999982236431605997495353221893310546875 */
        {1.005, 2, "1.00"}, /* 1.00499999999999989341858963598497211933135986328125 */
        {0.1, 9, "0.100000000"},
        {123.456, 9, "123.456000000"},
        {-0.001, 2, "0.00"}, /* no "-0.00" */
        {-0.004999, 2, "0.00"},
        {-0.005, 2, "-0.01"}, /* 0.005000000000000000104083408558608425664715468883514404296875 */
        {9.9999999999, 9, "10.000000000"},
        {0.9999999996, 9, "1.000000000"},
        {0.49999999999999994, 0, "0"},
        {1e17, 0, "100000000000000000"},
        {1e17, 3, "100000000000000000.000"},
        {-1e17, 1, "-100000000000000000.0"},
        {999999999999999872.0, 2, "999999999999999872.00"}, /* largest below 1e18 */
        {4503599627370495.5, 0, "4503599627370496"},        /* 2^52 - 0.5 */
        {4503599627370496.0, 1, "4503599627370496.0"},
        {5e-324, 9, "0.000000000"}, /* smallest subnormal */
        {1.5e-300, 0, "0"},
        {5e-10, 9, "0.000000001"}, /* 5.00000000000000010358...e-10 */
        {4.9999999999999995e-10, 9, "0.000000000"},
        {3.0, -5, "3"}, /* decimals clamped */
        {3.0, 12, "3.000000000"},
        {1e18, 0, "null"},
        {-1e18, 0, "null"},
        {1e300, 2, "null"},
        {HUGE_VAL, 2, "null"},
        {-HUGE_VAL, 2, "null"},
        {NAN, 2, "null"},
        {-NAN, 0, "null"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        check_double_as(t[i].v, t[i].d, t[i].want);
        check_double(t[i].v, t[i].d); /* the reference agrees with the table */
    }
}
END_TEST

START_TEST(test_double_random)
{
    rng_t r;
    rng_seed(&r, 3);
    for (int i = 0; i < 20000; i++) {
        double v;
        int d = (int)rng_below(&r, 10);
        switch (rng_below(&r, 3)) {
        case 0: /* any magnitude from 1e-12 to 1e19 */
            v = rng_unit(&r) * pow(10, (double)rng_between(&r, 0, 31) - 12);
            break;
        case 1: { /* exact ties: odd / 2^j has j decimals; round at j - 1 */
            int j = (int)rng_between(&r, 1, 10);
            v = (double)(2 * rng_below(&r, 1000000) + 1) / (double)(1u << j);
            d = j - 1;
            break;
        }
        default: { /* any bit pattern: NaNs, infinities, subnormals */
            uint64_t bits = rng_next(&r);
            memcpy(&v, &bits, sizeof v);
            break;
        }
        }
        if (rng_below(&r, 2))
            v = -v;
        check_double(v, d);
    }
}
END_TEST

/* ---- overflow ----------------------------------------------------------- */

/* One record with every kind of token. */
static void write_everything(jsonw_t *w)
{
    jsonw_object_begin(w);
    jsonw_key_str(w, "ev", "alloc");
    jsonw_key_u64(w, "u", UINT64_MAX);
    jsonw_key_i64(w, "i", INT64_MIN);
    jsonw_key_str(w, "esc",
                  "q\"b\\s\n\t\x01\x7f \xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e \xff\xe2\x82");
    jsonw_key_strn(w, "nul", "a\0b", 3);
    jsonw_key_str(w, "empty", "");
    jsonw_key_null(w, "n");
    jsonw_key_bool(w, "t", true);
    jsonw_key_bool(w, "f", false);
    jsonw_key_double(w, "d", -1.25, 3);
    jsonw_key_double(w, "nan", NAN, 2);
    jsonw_key(w, "arr");
    jsonw_array_begin(w);
    jsonw_u64(w, 0);
    jsonw_i64(w, -7);
    jsonw_str(w, "x");
    jsonw_null(w);
    jsonw_bool(w, true);
    jsonw_double(w, 0.5, 1);
    jsonw_object_begin(w);
    jsonw_key_u64(w, "pid", 1);
    jsonw_object_end(w);
    jsonw_array_begin(w);
    jsonw_array_end(w);
    jsonw_array_end(w);
    jsonw_key(w, "obj");
    jsonw_object_begin(w);
    jsonw_key_str(w, "k", "v");
    jsonw_object_end(w);
    jsonw_line_end(w);
}

#define CANARY 0xa5
#define SLACK 32

START_TEST(test_overflow_every_size)
{
    char full[1024];
    jsonw_t w;
    jsonw_init(&w, full, sizeof full);
    write_everything(&w);
    ck_assert(!w.overflow);
    size_t n = w.len;

    json_t *j = parse(full, n, JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL);
    ck_assert_str_eq(json_string_value(json_object_get(j, "ev")), "alloc");
    ck_assert(json_real_value(json_object_get(j, "u")) == 18446744073709551615.0);
    ck_assert(json_real_value(json_object_get(j, "i")) == -9223372036854775808.0);
    ck_assert_str_eq(json_string_value(json_object_get(j, "esc")),
                     "q\"b\\s\n\t\x01\x7f \xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e "
                     "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
    ck_assert_uint_eq(json_string_length(json_object_get(j, "nul")), 3);
    ck_assert(json_real_value(json_object_get(j, "d")) == -1.25);
    ck_assert(json_is_null(json_object_get(j, "nan")));
    ck_assert_uint_eq(json_array_size(json_object_get(j, "arr")), 8);
    json_decref(j);

    size_t prev_len = 0;
    for (size_t cap = 0; cap <= n + 1; cap++) {
        /* canary bytes after cap */
        char buf[1024 + SLACK];
        memset(buf, CANARY, sizeof buf);
        jsonw_init(&w, buf, cap);
        write_everything(&w);
        for (size_t i = cap; i < cap + SLACK; i++)
            EXPECT((unsigned char)buf[i] == CANARY, "cap %zu: byte %zu written", cap, i);
        EXPECT(w.overflow == (cap < n), "cap %zu of %zu: overflow %d", cap, n, w.overflow);
        EXPECT(w.len <= cap, "cap %zu: len %zu", cap, w.len);
        /* tokens are all or nothing: what is there is the record's prefix */
        EXPECT(memcmp(buf, full, w.len) == 0, "cap %zu: %s is not a prefix", cap, show(buf, w.len));
        EXPECT(w.len >= prev_len, "cap %zu: len %zu shrank from %zu", cap, w.len, prev_len);
        if (!w.overflow)
            EXPECT(w.len == n, "cap %zu: len %zu of %zu", cap, w.len, n);
        prev_len = w.len;

        /* an exact-size heap buffer: ASan catches any write past cap */
        char *h = malloc(cap ? cap : 1);
        ck_assert_ptr_nonnull(h);
        jsonw_init(&w, h, cap);
        write_everything(&w);
        EXPECT(w.overflow == (cap < n) && memcmp(h, full, w.len) == 0, "heap cap %zu", cap);
        free(h);
    }
}
END_TEST

Suite *jsonw_suite(void)
{
    Suite *s = suite_create("jsonw");

    TCase *tc = tcase_create("values");
    tcase_add_test(tc, test_u64);
    tcase_add_test(tc, test_i64);
    tcase_add_test(tc, test_double_table);
    tcase_add_test(tc, test_nesting);
    tcase_add_test(tc, test_key_helpers);
    tcase_add_test(tc, test_lengths);
    tcase_add_test(tc, test_lines_and_rewind);
    tcase_add_test(tc, test_overflow_every_size);
    suite_add_tcase(s, tc);

    tc = tcase_create("strings");
    tcase_add_test(tc, test_str_every_byte);
    tcase_add_test(tc, test_str_all_bytes);
    tcase_add_test(tc, test_str_escapes);
    tcase_add_test(tc, test_str_utf8_valid);
    tcase_add_test(tc, test_str_utf8_invalid);
    tcase_add_test(tc, test_strn_nul_and_bounds);
    suite_add_tcase(s, tc);

    tc = tcase_create("random");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_str_random);
    tcase_add_test(tc, test_double_random);
    suite_add_tcase(s, tc);

    return s;
}
