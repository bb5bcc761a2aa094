/*
 * recfmt: the three records the writer formats millions of times (alloc,
 * free, realloc) built from literal pieces and integers, without jsonw's
 * general machinery (commas, escaping, bounds per token).
 *
 * The caller's buffer must hold RECFMT_MAX bytes: every piece is a
 * constant, every integer at most 20 digits, so a record never exceeds it
 * (checked by the unit tests, which also compare the output byte for byte
 * with jsonw's).
 */
#ifndef MEMSIM_PRELOAD_RECFMT_H
#define MEMSIM_PRELOAD_RECFMT_H

#include <stdint.h>
#include <string.h>

#define RECFMT_MAX 400

static inline char *recfmt_lit(char *p, const char *s, size_t n)
{
    memcpy(p, s, n);
    return p + n;
}

/* A string literal, its length known at compile time. */
#define RECFMT_LIT(p, s) recfmt_lit((p), (s), sizeof(s) - 1)

/* Decimal digits of v (1..20). */
static inline unsigned recfmt_digits(uint64_t v)
{
    static const uint64_t pow10[20] = {
        1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
        100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
        10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
        100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull};
    /* bits * 1233 / 4096 approximates log10(2^bits); one correction. */
    if (v < 10)
        return 1;
    unsigned bits = 64 - (unsigned)__builtin_clzll(v);
    unsigned d = (bits * 1233) >> 12;
    return d + (v >= pow10[d]);
}

/* v in decimal, written straight into p (digit pairs from the back: no
 * temporary, no call to memcpy). */
static inline char *recfmt_u64(char *p, uint64_t v)
{
    static const char pairs[] = "00010203040506070809101112131415161718192021222324"
                                "25262728293031323334353637383940414243444546474849"
                                "50515253545556575859606162636465666768697071727374"
                                "75767778798081828384858687888990919293949596979899";
    unsigned n = recfmt_digits(v);
    char *q = p + n;
    while (v >= 100) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        q -= 2;
        q[0] = pairs[2 * r];
        q[1] = pairs[2 * r + 1];
    }
    if (v >= 10) {
        q[-2] = pairs[2 * v];
        q[-1] = pairs[2 * v + 1];
    } else {
        q[-1] = (char)('0' + v);
    }
    return p + n;
}

static inline char *recfmt_i64(char *p, int64_t v)
{
    if (v < 0) {
        *p++ = '-';
        return recfmt_u64(p, (uint64_t)0 - (uint64_t)v);
    }
    return recfmt_u64(p, (uint64_t)v);
}

#endif
