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

static inline char *recfmt_u64(char *p, uint64_t v)
{
    static const char pairs[] = "00010203040506070809101112131415161718192021222324"
                                "25262728293031323334353637383940414243444546474849"
                                "50515253545556575859606162636465666768697071727374"
                                "75767778798081828384858687888990919293949596979899";
    char tmp[20], *e = tmp + sizeof tmp, *q = e;
    while (v >= 100) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        q -= 2;
        memcpy(q, pairs + 2 * r, 2);
    }
    if (v >= 10) {
        q -= 2;
        memcpy(q, pairs + 2 * v, 2);
    } else {
        *--q = (char)('0' + v);
    }
    size_t n = (size_t)(e - q);
    memcpy(p, q, n);
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
