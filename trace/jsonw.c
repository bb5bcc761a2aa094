/*
 * jsonw: the JSON-line writer for inside the traced process.  See jsonw.h.
 *
 * Everything here is pure computation on the caller's jsonw_t and
 * buffer, with read-only tables: async-signal-safe by construction.
 * Keep it that way: no stdio, no malloc, no errno, no locale, no
 * mutable statics, and include nothing beyond the headers below.
 *
 * Every writer follows one pattern: work out the token's exact length,
 * check it against cap - len once (reserve), then write it without
 * further checks.  Strings, whose escaped length is unknown until they
 * are scanned, check before each piece and commit len at the end.
 */
#include "trace/jsonw.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "trace/utf8.h"

/* ---- tables ------------------------------------------------------------- */

/* "00" "01" ... "99": two digits per lookup, half the divisions. */
static const char digit_pairs[201] = "00010203040506070809"
                                     "10111213141516171819"
                                     "20212223242526272829"
                                     "30313233343536373839"
                                     "40414243444546474849"
                                     "50515253545556575859"
                                     "60616263646566676869"
                                     "70717273747576777879"
                                     "80818283848586878889"
                                     "90919293949596979899";

static const uint64_t pow10_u64[20] = {
    1ull,
    10ull,
    100ull,
    1000ull,
    10000ull,
    100000ull,
    1000000ull,
    10000000ull,
    100000000ull,
    1000000000ull,
    10000000000ull,
    100000000000ull,
    1000000000000ull,
    10000000000000ull,
    100000000000000ull,
    1000000000000000ull,
    10000000000000000ull,
    100000000000000000ull,
    1000000000000000000ull,
    10000000000000000000ull,
};

/* How a string byte is written.  0: as is.  ESC_U: \u00XX.  ESC_UTF8: a
 * byte >= 0x80, copied as part of a well-formed sequence or replaced.
 * Anything else: a backslash and that character. */
enum { ESC_U = 'u', ESC_UTF8 = 1 };

/* clang-format off */
#define U_ ESC_U
#define H_ ESC_UTF8
#define H16_ H_, H_, H_, H_, H_, H_, H_, H_, H_, H_, H_, H_, H_, H_, H_, H_
static const unsigned char str_escape[256] = {
    /* 0x00 */ U_, U_, U_, U_, U_, U_, U_, U_, 'b', 't', 'n', U_, 'f', 'r', U_, U_,
    /* 0x10 */ U_, U_, U_, U_, U_, U_, U_, U_, U_, U_, U_, U_, U_, U_, U_, U_,
    /* 0x20 */ 0, 0, '"', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* 0x30 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* 0x40 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* 0x50 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, '\\', 0, 0, 0,
    /* 0x60 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* 0x70 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, U_,
    /* 0x80 */ H16_, H16_, H16_, H16_, H16_, H16_, H16_, H16_,
};
#undef U_
#undef H_
#undef H16_
/* clang-format on */

static const char hex_digits[16] = "0123456789abcdef";

/* ---- primitives --------------------------------------------------------- */

/* Room for n more bytes?  If not, or if an earlier token overflowed,
 * set overflow and return false: the caller writes nothing. */
static inline bool reserve(jsonw_t *w, size_t n)
{
    if (w->overflow || n > w->cap - w->len) {
        w->overflow = true;
        return false;
    }
    return true;
}

/* Decimal digits in v, 1 for 0.  bits * 1233 / 4096 ~ bits * log10(2)
 * is the digit count or one less; one table compare decides.  (v | 1
 * has as many digits as v, since no power of ten is odd but 1.) */
static inline unsigned u64_digits(uint64_t v)
{
    v |= 1;
    unsigned bits = 64 - (unsigned)__builtin_clzll(v);
    unsigned t = (bits * 1233) >> 12;
    return t + (v >= pow10_u64[t]);
}

/* Exactly n (1..4) digits of v < 10^n, ending just before end. */
static inline void put_digits4(char *end, uint32_t v, unsigned n)
{
    if (n > 2) {
        uint32_t q = v / 100;
        memcpy(end - 2, digit_pairs + 2 * (v - 100 * q), 2);
        end -= 2;
        n -= 2;
        v = q;
    }
    if (n == 2)
        memcpy(end - 2, digit_pairs + 2 * v, 2);
    else
        end[-1] = (char)('0' + v);
}

/* Exactly n (>= 1) digits of v < 10^n, zero-padded, ending just before
 * end.  Splitting into 8-digit chunks, each into 4-digit halves, keeps
 * the chain of dependent multiply-by-reciprocal divisions short: three
 * deep for a 15-digit address where two-at-a-time would be eight. */
static inline void put_digits(char *end, uint64_t v, unsigned n)
{
    while (n > 8) {
        uint64_t q = v / 100000000;
        uint32_t r = (uint32_t)(v - q * 100000000);
        uint32_t hi = r / 10000;
        put_digits4(end, r - hi * 10000, 4);
        put_digits4(end - 4, hi, 4);
        end -= 8;
        n -= 8;
        v = q;
    }
    uint32_t x = (uint32_t)v;
    if (n > 4) {
        uint32_t hi = x / 10000;
        put_digits4(end, x - hi * 10000, 4);
        end -= 4;
        n -= 4;
        x = hi;
    }
    put_digits4(end, x, n);
}

/* memcpy for the short copies that dominate (keys, "malloc"): a libc
 * call with a variable length costs more than the copy.  Overlapping
 * fixed-size moves, none outside [s, s + n) or [d, d + n). */
static inline void copy_small(char *d, const void *s, size_t n)
{
    const char *c = s;
    if (n > 16) {
        memcpy(d, c, n);
    } else if (n >= 8) {
        memcpy(d, c, 8);
        memcpy(d + n - 8, c + n - 8, 8);
    } else if (n >= 4) {
        memcpy(d, c, 4);
        memcpy(d + n - 4, c + n - 4, 4);
    } else {
        for (size_t i = 0; i < n; i++)
            d[i] = c[i];
    }
}

/* A value token of n bytes after the comma, if one is due.  Returns
 * where to write it, or NULL on overflow.  Sets need_comma. */
static inline char *value_begin(jsonw_t *w, size_t n)
{
    size_t c = w->need_comma;
    if (!reserve(w, c + n))
        return NULL;
    char *d = w->buf + w->len;
    *d = ','; /* in room: c + n >= 1; overwritten when c == 0 */
    d += c;
    w->len += c + n;
    w->need_comma = true;
    return d;
}

static void put_literal(jsonw_t *w, const char *s, size_t n)
{
    char *d = value_begin(w, n);
    if (d)
        memcpy(d, s, n);
}

/* "{" or "[", after a comma when it is an array element. */
static void put_open(jsonw_t *w, char ch)
{
    char *d = value_begin(w, 1);
    if (!d)
        return;
    *d = ch;
    w->need_comma = false;
}

static void put_close(jsonw_t *w, char ch)
{
    if (!reserve(w, 1))
        return;
    w->buf[w->len++] = ch;
    w->need_comma = true;
}

/* ---- structure ---------------------------------------------------------- */

void jsonw_init(jsonw_t *w, char *buf, size_t cap)
{
    w->buf = buf;
    w->cap = buf ? cap : 0;
    w->len = 0;
    w->overflow = false;
    w->need_comma = false;
}

void jsonw_object_begin(jsonw_t *w)
{
    put_open(w, '{');
}

void jsonw_object_end(jsonw_t *w)
{
    put_close(w, '}');
}

void jsonw_array_begin(jsonw_t *w)
{
    put_open(w, '[');
}

void jsonw_array_end(jsonw_t *w)
{
    put_close(w, ']');
}

void jsonw_line_end(jsonw_t *w)
{
    if (!reserve(w, 2))
        return;
    memcpy(w->buf + w->len, "}\n", 2);
    w->len += 2;
    w->need_comma = false;
}

void jsonw_keyn(jsonw_t *w, const char *key, size_t n)
{
    char *d = value_begin(w, n + 3);
    if (!d)
        return;
    *d++ = '"';
    copy_small(d, key, n);
    memcpy(d + n, "\":", 2);
    w->need_comma = false;
}

/* ---- numbers ------------------------------------------------------------ */

void jsonw_u64(jsonw_t *w, uint64_t v)
{
    unsigned n = u64_digits(v);
    char *d = value_begin(w, n);
    if (d)
        put_digits(d + n, v, n);
}

void jsonw_i64(jsonw_t *w, int64_t v)
{
    unsigned neg = v < 0;
    uint64_t mag = neg ? 0 - (uint64_t)v : (uint64_t)v; /* INT64_MIN too */
    unsigned n = u64_digits(mag);
    char *d = value_begin(w, neg + n);
    if (!d)
        return;
    *d = '-';
    put_digits(d + neg + n, mag, n);
}

/*
 * |v| rounded to d decimals, as an integer part *ip and d fraction
 * digits *fq (< 10^d); false for NaN, infinities and |v| >= 1e18.
 * v = m * 2^e exactly, from its bits.  The integer part is m >> -e; the
 * fraction is fm / 2^s (s = -e), and fm * 10^d / 2^s rounded half up is
 * its d digits.  fm < 2^53 and 10^d < 2^30, so the product fits in 128
 * bits, and when s >= 84 it is below half of 2^s: the digits are 0.
 */
static bool double_fixed(uint64_t bits, unsigned d, uint64_t *ip, uint64_t *fq)
{
    unsigned bexp = (unsigned)(bits >> 52) & 0x7ff;
    uint64_t m = bits & ((1ull << 52) - 1);

    if (bexp == 0x7ff)
        return false;
    if (bexp)
        m |= 1ull << 52;
    else
        bexp = 1; /* subnormal */
    int e = (int)bexp - 1075;
    if (e >= 0) { /* an integer; m << e < 2^63 while e <= 10 */
        if (e > 10 || (m << e) >= pow10_u64[18])
            return false;
        *ip = m << e;
        *fq = 0;
        return true;
    }
    unsigned s = (unsigned)-e;
    uint64_t fm = s < 64 ? m & ((1ull << s) - 1) : m;
    *ip = s < 64 ? m >> s : 0;
    *fq = 0;
    if (s < 84) {
        unsigned __int128 p = (unsigned __int128)fm * pow10_u64[d];
        uint64_t q = (uint64_t)(p >> s);
        unsigned __int128 rem = p - ((unsigned __int128)q << s);
        q += rem >= ((unsigned __int128)1 << (s - 1)); /* ties away from zero */
        if (q == pow10_u64[d]) {
            ++*ip;
            q = 0;
        }
        *fq = q;
    }
    return true;
}

void jsonw_double(jsonw_t *w, double v, int decimals)
{
    uint64_t bits, ip, fq;
    unsigned d = decimals < 0 ? 0 : decimals > 9 ? 9 : (unsigned)decimals;

    memcpy(&bits, &v, sizeof bits);
    if (!double_fixed(bits, d, &ip, &fq)) {
        jsonw_null(w);
        return;
    }
    unsigned neg = (unsigned)(bits >> 63) & ((ip | fq) != 0); /* never "-0" */
    unsigned ni = u64_digits(ip);
    size_t n = neg + ni + (d ? d + 1 : 0);
    char *out = value_begin(w, n);
    if (!out)
        return;
    *out = '-';
    put_digits(out + neg + ni, ip, ni);
    if (d) {
        out[neg + ni] = '.';
        put_digits(out + n, fq, d);
    }
}

/* ---- literals ----------------------------------------------------------- */

void jsonw_null(jsonw_t *w)
{
    put_literal(w, "null", 4);
}

void jsonw_bool(jsonw_t *w, bool v)
{
    if (v)
        put_literal(w, "true", 4);
    else
        put_literal(w, "false", 5);
}

/* ---- strings ------------------------------------------------------------ */

/*
 * Runs of bytes written as they are (printable ASCII and well-formed
 * UTF-8) are found first and copied in one go; each escape or
 * replacement ends a run.  w->len moves only once the closing quote
 * has fitted, so on overflow the string is all or nothing (though
 * buf[len, cap) may have been written).
 *
 * to_nul: stop at the first NUL instead of after n bytes (n is then
 * SIZE_MAX), so that jsonw_str() reads its string once.  No byte past
 * the NUL is read: utf8_len() stops at the first byte that is not
 * a continuation, and NUL is not one.
 */
static inline void put_string(jsonw_t *w, const unsigned char *s, size_t n, bool to_nul)
{
    size_t c = w->need_comma, len = w->len, cap = w->cap, i = 0, j = 0;
    char *buf = w->buf;

    if (!reserve(w, c + 2))
        return;
    buf[len] = ',';
    len += c;
    buf[len++] = '"';
    for (;;) {
        while (j < n) {
            unsigned char e = str_escape[s[j]];
            if (e == 0) {
                j++;
            } else if (e == ESC_UTF8) {
                size_t k = utf8_len(s + j, n - j);
                if (!k)
                    break;
                j += k;
            } else {
                break;
            }
        }
        if (j > i) {
            if (cap - len < j - i)
                goto full;
            copy_small(buf + len, s + i, j - i);
            len += j - i;
        }
        if (j == n || (to_nul && s[j] == 0))
            break;
        unsigned char ch = s[j], e = str_escape[ch];
        if (e == ESC_UTF8) { /* a byte that starts no well-formed sequence */
            if (cap - len < 3)
                goto full;
            memcpy(buf + len, "\xef\xbf\xbd", 3);
            len += 3;
        } else if (e == ESC_U) {
            if (cap - len < 6)
                goto full;
            memcpy(buf + len, "\\u00", 4);
            buf[len + 4] = hex_digits[ch >> 4];
            buf[len + 5] = hex_digits[ch & 15];
            len += 6;
        } else {
            if (cap - len < 2)
                goto full;
            buf[len] = '\\';
            buf[len + 1] = (char)e;
            len += 2;
        }
        i = j = j + 1;
    }
    if (cap - len < 1)
        goto full;
    buf[len++] = '"';
    w->len = len;
    w->need_comma = true;
    return;
full:
    w->overflow = true;
}

void jsonw_strn(jsonw_t *w, const char *s, size_t n)
{
    put_string(w, (const unsigned char *)s, n, false);
}

void jsonw_str(jsonw_t *w, const char *s)
{
    if (!s)
        jsonw_null(w);
    else
        put_string(w, (const unsigned char *)s, SIZE_MAX, true);
}
