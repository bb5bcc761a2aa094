/*
 * utf8: the one check of well-formed UTF-8, for the trace's writer
 * (trace/jsonw.c: what it copies into a JSON string as it is) and the
 * analyzer's printers (analyzer/escape.c: what they print as it is).
 * Both sides agree on what is valid, so a string the recorder wrote
 * unchanged prints unchanged.
 */
#ifndef MEMSIM_TRACE_UTF8_H
#define MEMSIM_TRACE_UTF8_H

#include <stddef.h>

/* The length of the well-formed UTF-8 sequence at s[0..n) (n > 0), or 0
 * when s[0] starts none (RFC 3629, table 3-7 of the Unicode standard: no
 * overlong forms, no surrogates, nothing above U+10FFFF).  An ASCII byte
 * is a sequence of 1.  lo..hi bounds the second byte where the lead byte
 * restricts it.  Reads no byte past the first that is not a continuation
 * (so never past a NUL). */
static inline size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0], lo = 0x80, hi = 0xbf;
    size_t len;
    if (c < 0x80)
        return 1;
    if (c < 0xc2) /* a continuation byte, or an overlong 2-byte form */
        return 0;
    if (c < 0xe0) {
        len = 2;
    } else if (c < 0xf0) {
        len = 3;
        lo = c == 0xe0 ? 0xa0 : lo; /* overlong below U+0800 */
        hi = c == 0xed ? 0x9f : hi; /* surrogates U+D800..DFFF */
    } else if (c < 0xf5) {
        len = 4;
        lo = c == 0xf0 ? 0x90 : lo; /* overlong below U+10000 */
        hi = c == 0xf4 ? 0x8f : hi; /* above U+10FFFF */
    } else {
        return 0;
    }
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return len;
}

#endif
