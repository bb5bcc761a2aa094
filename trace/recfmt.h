/*
 * recfmt: the three records the writer formats millions of times (alloc,
 * free, realloc) built from literal pieces and integers, without jsonw's
 * general machinery (commas, escaping, bounds per token).
 *
 * The caller's buffer must hold RECFMT_MAX bytes: every piece is a
 * constant, every integer at most 20 digits (and recfmt_u64 and
 * recfmt_hex may store 7 scratch bytes past their digits), so a record never exceeds it
 * (checked by the unit tests, which also compare the output byte for byte
 * with jsonw's).
 */
#ifndef MEMSIM_TRACE_RECFMT_H
#define MEMSIM_TRACE_RECFMT_H

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

static const char recfmt_pairs_[201] = "00010203040506070809101112131415161718192021222324"
                                       "25262728293031323334353637383940414243444546474849"
                                       "50515253545556575859606162636465666768697071727374"
                                       "75767778798081828384858687888990919293949596979899";

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* v < 10^8 as eight ASCII digits, zero-padded, in memory order in a
 * little-endian word.  The four digit pairs come from independent
 * divisions, not from a chain of one division per pair. */
static inline uint64_t recfmt_8(uint32_t v)
{
    uint32_t hi = v / 10000, lo = v % 10000;
    uint16_t a, b, c, d;
    memcpy(&a, recfmt_pairs_ + 2 * (hi / 100), 2);
    memcpy(&b, recfmt_pairs_ + 2 * (hi % 100), 2);
    memcpy(&c, recfmt_pairs_ + 2 * (lo / 100), 2);
    memcpy(&d, recfmt_pairs_ + 2 * (lo % 100), 2);
    return a | (uint64_t)b << 16 | (uint64_t)c << 32 | (uint64_t)d << 48;
}

/* The last n (1..8) of v's eight digits at p (8 bytes stored). */
static inline char *recfmt_tail(char *p, uint32_t v, unsigned n)
{
    uint64_t w = recfmt_8(v) >> (8 * (8 - n));
    memcpy(p, &w, 8);
    return p + n;
}

/* v in decimal at p, in chunks of eight digits.  Stores up to 7 bytes
 * past the digits (the caller's buffer has room: RECFMT_MAX). */
static inline char *recfmt_u64(char *p, uint64_t v)
{
    if (v < 10) { /* thread indexes, stack ids, time steps: mostly one or two digits */
        *p = (char)('0' + v);
        return p + 1;
    }
    if (v < 100) {
        memcpy(p, recfmt_pairs_ + 2 * v, 2);
        return p + 2;
    }
    if (v < 100000000u)
        return recfmt_tail(p, (uint32_t)v, recfmt_digits(v));
    uint64_t hi = v / 100000000u;
    uint32_t lo = (uint32_t)(v - hi * 100000000u);
    if (hi < 100000000u) {
        p = recfmt_tail(p, (uint32_t)hi, recfmt_digits(hi));
    } else {
        uint64_t top = hi / 100000000u; /* v >= 10^16: at most 4 digits */
        p = recfmt_tail(p, (uint32_t)top, recfmt_digits(top));
        p = recfmt_tail(p, (uint32_t)(hi - top * 100000000u), 8);
    }
    return recfmt_tail(p, lo, 8);
}
#else
/* v in decimal, written straight into p (digit pairs from the back). */
static inline char *recfmt_u64(char *p, uint64_t v)
{
    unsigned n = recfmt_digits(v);
    char *q = p + n;
    while (v >= 100) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        q -= 2;
        q[0] = recfmt_pairs_[2 * r];
        q[1] = recfmt_pairs_[2 * r + 1];
    }
    if (v >= 10) {
        q[-2] = recfmt_pairs_[2 * v];
        q[-1] = recfmt_pairs_[2 * v + 1];
    } else {
        q[-1] = (char)('0' + v);
    }
    return p + n;
}
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* The eight nibbles of v as eight lower-case hex digits, most significant
 * first in memory (a little-endian word): each nibble spread to a byte,
 * the byte order reversed, then '0' added, and 'a' - '0' - 10 more
 * where a nibble is 10 or more. */
static inline uint64_t recfmt_hex8(uint32_t v)
{
    uint64_t x = v;
    x = (x | x << 16) & 0x0000FFFF0000FFFFull;
    x = (x | x << 8) & 0x00FF00FF00FF00FFull;
    x = (x | x << 4) & 0x0F0F0F0F0F0F0F0Full;
    x = __builtin_bswap64(x);
    uint64_t letters = ((x + 0x0606060606060606ull) >> 4) & 0x0101010101010101ull;
    return x + 0x3030303030303030ull + letters * ('a' - '0' - 10);
}

/* v in lower-case hex, without leading zeros ("0" for 0): sixteen digits
 * made two words at a time, the last n of them copied by two overlapping
 * eight-byte moves.  Stores up to 7 bytes past the digits, as
 * recfmt_u64 does. */
static inline char *recfmt_hex(char *p, uint64_t v)
{
    unsigned n = v ? (67u - (unsigned)__builtin_clzll(v)) / 4 : 1;
    char d[24];
    uint64_t hi = recfmt_hex8((uint32_t)(v >> 32)), lo = recfmt_hex8((uint32_t)v);
    memcpy(d, &hi, 8);
    memcpy(d + 8, &lo, 8);
    memset(d + 16, 0, 8);
    memcpy(p, d + 16 - n, 8);
    if (n > 8)
        memcpy(p + n - 8, d + 8, 8);
    return p + n;
}
#else
/* v in lower-case hex, without leading zeros ("0" for 0): the digits
 * are computed from the back, nibble by nibble, then moved to p. */
static inline char *recfmt_hex(char *p, uint64_t v)
{
    static const char hex[] = "0123456789abcdef";
    unsigned n = v ? (67u - (unsigned)__builtin_clzll(v)) / 4 : 1;
    for (unsigned i = n; i-- > 0; v >>= 4)
        p[i] = hex[v & 15];
    return p + n;
}
#endif

static inline char *recfmt_i64(char *p, int64_t v)
{
    if (v < 0) {
        *p++ = '-';
        return recfmt_u64(p, (uint64_t)0 - (uint64_t)v);
    }
    return recfmt_u64(p, (uint64_t)v);
}

#endif
