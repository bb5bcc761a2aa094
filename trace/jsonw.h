/*
 * jsonw: a JSON-line writer for use inside the traced process.
 *
 * The recorder formats one record per malloc call, from inside the
 * malloc hooks and from signal handlers, so this module is pure
 * computation over the caller's buffer: it never allocates, never
 * touches stdio, locale, errno or any global mutable state, and every
 * function is async-signal-safe and reentrant (after jemalloc's
 * malloc_io.h, which keeps its own formatter for the same reason).
 *
 * A record is built from calls in document order:
 *
 *     jsonw_init(&w, buf, sizeof buf);
 *     jsonw_object_begin(&w);
 *     jsonw_key_str(&w, "ev", "alloc");
 *     jsonw_key_u64(&w, "size", 4096);
 *     jsonw_line_end(&w);               ->  {"ev":"alloc","size":4096}\n
 *     if (w.overflow) ... flush, or retry with a bigger buffer ...
 *
 * Commas are automatic: every key, and every value that does not follow
 * a key (an array element), gets a comma before it when need_comma is
 * set.  A value or a closing bracket sets need_comma; a key, an opening
 * bracket and jsonw_line_end clear it.  So objects in arrays and arrays
 * in objects nest to any depth; the writer does not check that calls
 * are balanced or that keys appear only in objects (the caller's
 * sequence of calls is fixed code, and tests parse what it writes).
 *
 * Overflow.  Each token (a key with its comma, a number, a string, a
 * bracket) is written whole or not at all.  The first token that does
 * not fit sets overflow; from then on every call writes nothing.  So at
 * any time  len <= cap,  buf[0, len) is a prefix of the full record
 * ending on a token boundary, and the record is complete exactly when
 * overflow is false.  A string that does not fit may have scribbled on
 * buf[len, cap) before the writer noticed; nothing past cap is ever
 * written.  jsonw_rewind() takes the writer back to an earlier len, to
 * drop a partial record and retry it after flushing.
 *
 * Strings.  Linux paths, argv and environment strings are bytes; JSON
 * strings are UTF-8.  jsonw_str()/jsonw_strn() write:
 *   - '"' and '\' as \" and \\; \b \f \n \r \t as those escapes; other
 *     bytes below 0x20, 0x7f and (jsonw_strn only) NUL as \u00XX;
 *   - well-formed UTF-8 sequences (RFC 3629: shortest form, no
 *     surrogates U+D800..DFFF, nothing above U+10FFFF) as they are;
 *   - every other byte as U+FFFD (the three bytes EF BF BD), one
 *     replacement per byte: a stray continuation byte, each byte of an
 *     overlong form, of an encoded surrogate, of a code point above
 *     U+10FFFF, of a lead byte F5..FF or C0/C1, and of a sequence cut
 *     short by the end of the string or by a byte that is not a
 *     continuation.  After a bad byte decoding resumes at the next
 *     byte, so "\xE2\x82x" becomes U+FFFD U+FFFD "x".
 * The output is therefore always valid UTF-8 and valid JSON, and a
 * string that was valid UTF-8 without NUL bytes decodes back to itself.
 * Keys are trusted ASCII literals from the recorder: written as given.
 *
 * Numbers.  Integers are exact.  jsonw_double() writes fixed point with
 * 0..9 decimals; see below.  Beware that jansson (the analyzer's parser)
 * refuses integers above INT64_MAX unless told JSON_DECODE_INT_AS_REAL.
 */
#ifndef MEMSIM_TRACE_JSONW_H
#define MEMSIM_TRACE_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct jsonw_s {
    char *buf;       /* destination; may be NULL only when cap == 0 */
    size_t cap;      /* bytes available in buf */
    size_t len;      /* bytes written so far; len <= cap */
    bool overflow;   /* something did not fit: the record is incomplete */
    bool need_comma; /* internal: the next key or element needs a comma */
} jsonw_t;

/* Start writing at buf[0].  A NULL buf counts as cap 0: every token
 * overflows. */
void jsonw_init(jsonw_t *w, char *buf, size_t cap);

/* Back to an earlier state: truncate to len (<= w->len), clear overflow,
 * and expect a new record or line (no comma before the next token).
 * For "save len, write a record, on overflow flush buf[0, saved) and
 * rewind to 0 and write it again". */
static inline void jsonw_rewind(jsonw_t *w, size_t len)
{
    w->len = len < w->len ? len : w->len;
    w->overflow = false;
    w->need_comma = false;
}

/* ---- structure ---------------------------------------------------------- */

void jsonw_object_begin(jsonw_t *w); /* "{" */
void jsonw_object_end(jsonw_t *w);   /* "}" */
void jsonw_array_begin(jsonw_t *w);  /* "[" */
void jsonw_array_end(jsonw_t *w);    /* "]" */

/* "}\n": close the top-level object and end the line.  The next token
 * starts a new record (no comma). */
void jsonw_line_end(jsonw_t *w);

/* "key": with a comma before it when needed.  key is a trusted ASCII
 * literal (no quotes, backslashes or control bytes): written as is.
 * jsonw_key() and the jsonw_key_*() below are inline so that strlen()
 * of a literal key folds to a constant; they all call jsonw_keyn(). */
void jsonw_keyn(jsonw_t *w, const char *key, size_t n);

static inline void jsonw_key(jsonw_t *w, const char *key)
{
    jsonw_keyn(w, key, strlen(key));
}

/* ---- values ------------------------------------------------------------- */

void jsonw_u64(jsonw_t *w, uint64_t v);
void jsonw_i64(jsonw_t *w, int64_t v); /* all of int64_t, INT64_MIN too */
void jsonw_null(jsonw_t *w);
void jsonw_bool(jsonw_t *w, bool v);

/* A NUL-terminated string, escaped as described above; NULL writes null. */
void jsonw_str(jsonw_t *w, const char *s);

/* n bytes of s, which may include NUL bytes (written as \u0000).  Reads
 * exactly s[0, n), never past it; s may be NULL when n == 0. */
void jsonw_strn(jsonw_t *w, const char *s, size_t n);

/* v in fixed point with `decimals` digits after the point (clamped to
 * 0..9; 0 writes no point): "-1.25", "0.50", "3".
 * Rounding is half away from zero, of v's exact binary value, not of
 * its shortest decimal spelling: 0.125 is exact and gives "0.13" at 2
 * decimals, but 2.675 is stored as 2.67499999999999982236431605997495...
 * and gives "2.67".  A result that rounds to zero is written without a
 * sign ("0.00", never "-0.00").
 * NaN, the infinities and |v| >= 1e18 are written as null (JSON has no
 * NaN; the integer part is formatted as a uint64_t, and no measurement
 * memsim writes comes near 1e18). */
void jsonw_double(jsonw_t *w, double v, int decimals);

/* ---- key and value in one call: jsonw_key() then the value -------------- */

static inline void jsonw_key_u64(jsonw_t *w, const char *key, uint64_t v)
{
    jsonw_key(w, key);
    jsonw_u64(w, v);
}

static inline void jsonw_key_i64(jsonw_t *w, const char *key, int64_t v)
{
    jsonw_key(w, key);
    jsonw_i64(w, v);
}

static inline void jsonw_key_str(jsonw_t *w, const char *key, const char *s)
{
    jsonw_key(w, key);
    jsonw_str(w, s);
}

static inline void jsonw_key_strn(jsonw_t *w, const char *key, const char *s, size_t n)
{
    jsonw_key(w, key);
    jsonw_strn(w, s, n);
}

static inline void jsonw_key_null(jsonw_t *w, const char *key)
{
    jsonw_key(w, key);
    jsonw_null(w);
}

static inline void jsonw_key_bool(jsonw_t *w, const char *key, bool v)
{
    jsonw_key(w, key);
    jsonw_bool(w, v);
}

static inline void jsonw_key_double(jsonw_t *w, const char *key, double v, int decimals)
{
    jsonw_key(w, key);
    jsonw_double(w, v, decimals);
}

#endif
