/*
 * reader: streaming trace reader.  See reader.h and docs/trace-format.md.
 */
#include "analyzer/read/reader.h"

#include "analyzer/escape.h"
#include "analyzer/progress.h"
#include "analyzer/read/reader_json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MESSAGES 10 /* problems reported per trace; the rest are counted */

#define names tracefmt_names

const char *event_type_name(event_type_t t) { return t < EV_COUNT ? names[t] : "?"; }

/* One line on stderr, "memsim-analyze: " first (the progress line erased
 * before it), escaped: it quotes paths and jansson's errors, which quote
 * the line; nothing when the reader is quiet. */
__attribute__((format(printf, 2, 3)))
static void say(const reader_t *r, const char *fmt, ...)
{
    if (r->quiet)
        return;
    progress_interrupt();
    fputs("memsim-analyze: ", stderr);
    va_list ap;
    va_start(ap, fmt);
    escape_vline(stderr, fmt, ap);
    va_end(ap);
}

/* A problem with the current line: the first MAX_MESSAGES are said. */
void reader_problem(reader_t *r, const char *fmt, ...)
{
    if (r->quiet)
        return;
    if (r->messages++ >= MAX_MESSAGES) {
        if (r->messages == MAX_MESSAGES + 1)
            say(r, "%s: more problems follow; counting them only", r->path);
        return;
    }
    char what[1024]; /* problems are short: a field name, a jansson error (<= 160) */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    say(r, "%s:%ld: %s", r->path, r->lineno, what);
}

int reader_open(reader_t *r, const char *path)
{
    memset(r, 0, sizeof *r);
    r->path = path;
    r->in = tracein_open(path);
    if (!r->in) {
        escape_line(stderr, "memsim-analyze: cannot open %s: %s",
                    strcmp(path, "-") ? path : "standard input", strerror(errno));
        return -1;
    }
    return 0;
}

int reader_from(reader_t *r, FILE *f, const char *name)
{
    memset(r, 0, sizeof *r);
    r->path = name;
    r->in = tracein_from(f);
    return r->in ? 0 : -1;
}

void reader_close(reader_t *r)
{
    tracein_close(r->in);
    json_decref(r->obj);
    free(r->buf);
    free(r->tids);
    r->in = NULL;
    r->obj = NULL;
    r->buf = NULL;
    r->tids = NULL;
    r->cap = r->pos = r->end = 0;
}

/* ---- the fast path ------------------------------------------------------- */

/* Every helper is inlined into fast(), where the literals are constants:
 * the compares become word compares and the cursor stays in a register. */
#define SCAN static inline __attribute__((always_inline))

typedef struct scan_s {
    const char *p, *end;
} scan_t;

SCAN uint64_t load8(const char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

SCAN uint32_t load4(const char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

SCAN uint16_t load2(const char *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* p[0, n) == text[0, n) for a constant n: at most two overlapping loads
 * of each, the text's folded into immediates (gcc leaves some memcmp of
 * these lengths as calls). */
SCAN bool same(const char *p, const char *text, size_t n)
{
    if (n > 16)
        return memcmp(p, text, n) == 0;
    if (n >= 8)
        return load8(p) == load8(text) && load8(p + n - 8) == load8(text + n - 8);
    if (n >= 4)
        return load4(p) == load4(text) && load4(p + n - 4) == load4(text + n - 4);
    if (n >= 2)
        return load2(p) == load2(text) && load2(p + n - 2) == load2(text + n - 2);
    return n == 0 || *p == *text;
}

SCAN bool lit_n(scan_t *s, const char *text, size_t n)
{
    if ((size_t)(s->end - s->p) < n || !same(s->p, text, n))
        return false;
    s->p += n;
    return true;
}

/* Literal text: its length is a constant. */
#define lit(s, text) lit_n((s), (text), sizeof(text) - 1)

SCAN bool digit(char c) { return (unsigned char)(c - '0') < 10; }

/* Eight digits at a time needs the first character in the lowest byte. */
#define SWAR_DIGITS (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)

/* Eight bytes of text, little-endian: how many of them, from the first,
 * are digits (0 to 8).  A byte is a digit when its high nibble is 3 and
 * stays 3 once 6 is added; a carry out of a non-digit byte only reaches
 * the bytes after it. */
SCAN unsigned lead_digits(uint64_t w)
{
    uint64_t hi = w & 0xF0F0F0F0F0F0F0F0ull;
    uint64_t hi6 = (w + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull;
    uint64_t bad = (hi ^ 0x3030303030303030ull) | (hi6 ^ 0x3030303030303030ull);
    return bad ? (unsigned)__builtin_ctzll(bad) / 8 : 8;
}

/* The value of the first k (1 to 8) digits of w: they are moved to the
 * top and '0's fill the bottom, then eight digits are combined in three
 * multiplications (as simdjson does). */
SCAN uint64_t digits_value(uint64_t w, unsigned k)
{
    if (k < 8)
        w = (w << (8 * (8 - k))) | (0x3030303030303030ull >> (8 * k));
    w -= 0x3030303030303030ull;
    w = w * 10 + (w >> 8);
    w = (((w & 0x000000FF000000FFull) * 0x000F424000000064ull) +
         (((w >> 16) & 0x000000FF000000FFull) * 0x0000271000000001ull)) >> 32;
    return w;
}

/* A JSON integer as memsim writes it: no sign for u64, no leading zero,
 * at most INT64_MAX (what jansson accepts).  Eight digits at a time while
 * eight bytes of line remain; one at a time near the line's end.  Up to
 * eighteen digits cannot overflow (10^18 - 1 < INT64_MAX); a nineteenth
 * is checked; a twentieth never fits. */
SCAN bool u64(scan_t *s, uint64_t *v)
{
    static const uint64_t scale[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
                                      100000000};
    const char *p = s->p, *end = s->end;
    /* One or two digits, the most common (thread indexes, stack ids,
     * time steps): without the word's arithmetic. */
    if (end - p >= 3 && digit(p[0]) && !digit(p[1])) {
        *v = (uint64_t)(p[0] - '0');
        s->p = p + 1;
        return true;
    }
    if (end - p >= 3 && p[0] > '0' && digit(p[0]) && digit(p[1]) && !digit(p[2])) {
        *v = (uint64_t)(p[0] - '0') * 10 + (uint64_t)(p[1] - '0');
        s->p = p + 2;
        return true;
    }
    uint64_t x = 0;
    unsigned n = 0; /* digits read */
    while (SWAR_DIGITS && end - p >= 8) {
        uint64_t w = load8(p);
        unsigned k = lead_digits(w);
        if (n + k > 18)
            break; /* one at a time, checked */
        if (k) {
            x = x * scale[k] + digits_value(w, k);
            p += k;
            n += k;
        }
        if (k < 8)
            goto done;
    }
    for (; n < 18 && p < end && digit(*p); n++)
        x = x * 10 + (uint64_t)(*p++ - '0');
    if (p < end && digit(*p)) {
        uint64_t d = (uint64_t)(*p++ - '0');
        if (x > (UINT64_C(9223372036854775807) - d) / 10 || (p < end && digit(*p)))
            return false;
        x = x * 10 + d;
        n++;
    }
done:
    if (!n || (n > 1 && *s->p == '0')) /* none, or a leading zero */
        return false;
    s->p = p;
    *v = x;
    return true;
}

SCAN bool i64(scan_t *s, int64_t *v)
{
    bool neg = lit(s, "-");
    uint64_t x;
    if (!u64(s, &x) || (neg && x == 0))
        return false;
    *v = neg ? -(int64_t)x : (int64_t)x;
    return true;
}

/* ,"key": */
#define key(s, k) lit_n((s), ",\"" k "\":", sizeof(k) + 3)

/* ,"fn":"name" — a plain function name: letters, digits, underscore.
 * Optional (left out when it is the record's default, version 2). */
SCAN bool fn_value(scan_t *s, uint8_t *fn)
{
    if (!key(s, "fn"))
        return true;
    if (!lit(s, "\""))
        return false;
    const char *name = s->p;
    while (s->p < s->end && ((*s->p >= 'a' && *s->p <= 'z') || digit(*s->p) || *s->p == '_'))
        s->p++;
    *fn = (uint8_t)tracefmt_fn_find(name, (size_t)(s->p - name));
    return lit(s, "\"");
}

/* ,"align":N, or READER_DEFAULT_ALIGN when left out (version 2). */
SCAN bool align_value(scan_t *s, uint64_t *v)
{
    *v = READER_DEFAULT_ALIGN;
    return !key(s, "align") || u64(s, v);
}

/* u64 or null into *v (0 for null), *present. */
SCAN bool u64_or_null(scan_t *s, uint64_t *v, bool *present)
{
    if (lit(s, "null")) {
        *v = 0;
        *present = false;
        return true;
    }
    *present = true;
    return u64(s, v);
}

/* The end of a record: optional ,"inherited":true, then "}", blanks, end. */
SCAN bool tail(scan_t *s, bool *inherited)
{
    *inherited = key(s, "inherited") && lit(s, "true");
    if (!lit(s, "}"))
        return false;
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\r' || *s->p == '\t'))
        s->p++;
    if (s->p < s->end && *s->p == '\n')
        s->p++; /* the line's end */
    return true;
}

/* Read text (len bytes) as one of memsim's hot record shapes, up to the
 * end of its line: the length of that line (with its '\n', when it has
 * one before len), or 0 when it is not exactly such a record.  text may
 * be one line or the unread buffer: a '\n' inside a record's shape fails
 * it, so the length returned is always that of the first line. */
static size_t fast(const char *line, size_t len, event_t *e)
{
    scan_t s = {line, line + len};
    uint64_t sim;
    bool present, inherited = false;
    uint8_t other_fn; /* free's and realloc's: not kept */
    if (!lit(&s, "{\"ev\":\""))
        return false;
    static const event_t zero;
    *e = zero; /* vector moves; memset's rep stos costs more at this size */
    if (lit(&s, "alloc\",\"t\":")) {
        e->type = EV_ALLOC;
        if (!u64(&s, &e->t) || !key(&s, "tid") || !i64(&s, &e->tid) || !fn_value(&s, &e->fn) ||
            !key(&s, "addr") || !u64(&s, &e->addr) || !key(&s, "size") || !u64(&s, &e->size) ||
            !align_value(&s, &e->align) || !key(&s, "stack") || !u64(&s, &e->stack) ||
            !key(&s, "sim") || !u64_or_null(&s, &sim, &present))
            return false;
    } else if (lit(&s, "free\",\"t\":")) {
        e->type = EV_FREE;
        if (!u64(&s, &e->t) || !key(&s, "tid") || !i64(&s, &e->tid) || !fn_value(&s, &other_fn) ||
            !key(&s, "addr") || !u64(&s, &e->addr) || !key(&s, "size") || !u64(&s, &e->size) ||
            !key(&s, "stack") || !u64(&s, &e->stack))
            return false;
    } else if (lit(&s, "realloc\",\"t\":")) {
        e->type = EV_REALLOC;
        if (!u64(&s, &e->t) || !key(&s, "tid") || !i64(&s, &e->tid) || !fn_value(&s, &other_fn) ||
            !key(&s, "old_addr") || !u64(&s, &e->old_addr) || !key(&s, "addr") ||
            !u64(&s, &e->addr) || !key(&s, "old_size") ||
            !u64_or_null(&s, &e->old_size, &e->has_old_size) || !key(&s, "size") ||
            !u64(&s, &e->size) || !key(&s, "stack") || !u64(&s, &e->stack) ||
            !key(&s, "sim") || !u64_or_null(&s, &sim, &present))
            return false;
    } else {
        return false;
    }
    if (!tail(&s, &inherited) || (e->type == EV_ALLOC && inherited))
        return 0;
    e->inherited = inherited;
    return (size_t)(s.p - line);
}

/* ---- the compact records of version 3 ---------------------------------------------- */

/* Eight bytes of text, little-endian: how many of them, from the first,
 * are lower-case hex digits (0 to 8).  Bytes with the high bit clear are
 * compared with 0x30, 0x3a, 0x61 and 0x67 by adding each one's
 * complement to 0x80: no carry leaves a byte. */
SCAN unsigned lead_hex(uint64_t w)
{
    const uint64_t hi = 0x8080808080808080ull;
    uint64_t ge30 = w + 0x5050505050505050ull, ge3a = w + 0x4646464646464646ull;
    uint64_t ge61 = w + 0x1F1F1F1F1F1F1F1Full, ge67 = w + 0x1919191919191919ull;
    uint64_t hex = ((ge30 & ~ge3a) | (ge61 & ~ge67)) & hi & ~w;
    uint64_t bad = ~hex & hi;
    return bad ? (unsigned)__builtin_ctzll(bad) / 8 : 8;
}

/* The value of the first k (1 to 8) hex digits of w (lead_hex's): they
 * move to the top and '0's fill the bottom, each byte becomes its
 * nibble, and the nibbles are packed pairwise, then the pairs. */
SCAN uint64_t hex_value8(uint64_t w, unsigned k)
{
    if (k < 8)
        w = (w << (8 * (8 - k))) | (0x3030303030303030ull >> (8 * k));
    uint64_t x = (w & 0x0F0F0F0F0F0F0F0Full) + 9 * ((w >> 6) & 0x0101010101010101ull);
    x = ((x & 0x000F000F000F000Full) << 8 | (x & 0x0F000F000F000F00ull) >> 8) & 0x0F0F0F0F0F0F0F0Full;
    x = (x | x >> 4) & 0x00FF00FF00FF00FFull;  /* each 16-bit lane: two digits, in order */
    x = (x | x >> 8) & 0x0000FFFF0000FFFFull;  /* each 32-bit lane: four, bytes reversed */
    x = (x | x >> 16) & 0xFFFFFFFFull;
    return __builtin_bswap32((uint32_t)x);
}

/* ,"hex" (lower-case, no 0x, at most 16 digits) */
SCAN bool hex_str(scan_t *s, uint64_t *v)
{
    if (!lit(s, ",\""))
        return false;
    const char *p = s->p;
    uint64_t x = 0;
    unsigned n = 0;
    while (SWAR_DIGITS && s->end - p >= 8 && n < 16) {
        uint64_t w = load8(p);
        unsigned k = lead_hex(w);
        if (k)
            x = (k == 8 ? x << 32 : x << (4 * k)) | hex_value8(w, k);
        p += k;
        n += k;
        if (k < 8)
            goto done;
    }
    for (; p < s->end; p++, n++) {
        unsigned c = (unsigned char)*p, d;
        if (c - '0' < 10)
            d = c - '0';
        else if (c - 'a' < 6)
            d = c - 'a' + 10;
        else
            break;
        if (n == 16)
            return false;
        x = x << 4 | d;
    }
done:
    if (!n || n > 16 || p >= s->end || *p != '"')
        return false;
    s->p = p + 1;
    *v = x;
    return true;
}

SCAN bool comma_u64(scan_t *s, uint64_t *v) { return lit(s, ",") && u64(s, v); }

/* ,"name": a function's name, skipped (letters, digits, underscore). */
SCAN bool fn_str(scan_t *s, uint8_t *fn)
{
    if (!lit(s, ",\""))
        return false;
    const char *name = s->p;
    while (s->p < s->end && ((*s->p >= 'a' && *s->p <= 'z') || digit(*s->p) || *s->p == '_'))
        s->p++;
    *fn = (uint8_t)tracefmt_fn_find(name, (size_t)(s->p - name));
    return lit(s, "\"");
}

/* Optional trailing elements: ,flags[,"fn"[,touched]] (free, realloc);
 * *touched: the pages + 1, 0 when not there. */
SCAN bool opt_flags_fn(scan_t *s, uint64_t *flags, uint64_t *touched)
{
    *flags = 0;
    *touched = 0;
    if (!comma_u64(s, flags))
        return true;
    uint8_t fn;
    if (s->p >= s->end || *s->p != ',')
        return true;
    if (!fn_str(s, &fn))
        return false;
    if (s->p >= s->end || *s->p != ',')
        return true;
    if (!comma_u64(s, touched) || *touched == UINT64_MAX)
        return false;
    (*touched)++;
    return true;
}

/* The length of the compact record at line (up to its '\n'), or 0 when it
 * is not exactly one (the slow path then reads, or reports, it).  The
 * reader's clock does not move: *now is its time, for the caller to
 * commit once the record is taken. */
static size_t fast3(const reader_t *r, const char *line, size_t len, event_t *e, int64_t *now)
{
    scan_t s = {line, line + len};
    if (!lit(&s, "[\"") || s.end - s.p < 3)
        return 0;
    char tag = *s.p++;
    int64_t dt;
    uint64_t ti, flags = 0;
    uint8_t flags8; /* realloc_failed's fn: not kept */
    if (!lit(&s, "\",") || !i64(&s, &dt) || !comma_u64(&s, &ti) || ti >= r->ntids)
        return 0;
    static const event_t zero;
    *e = zero;
    switch (tag) {
    case TRACEFMT_TAG_ALLOC:
        e->type = EV_ALLOC;
        e->align = READER_DEFAULT_ALIGN;
        if (!hex_str(&s, &e->addr) || !comma_u64(&s, &e->size) || !comma_u64(&s, &e->stack))
            return 0;
        if (s.p < s.end && *s.p == ',' && (!fn_str(&s, &e->fn) || (s.p < s.end && *s.p == ',' &&
                                                             !comma_u64(&s, &e->align))))
            return 0;
        break;
    case TRACEFMT_TAG_FREE:
        e->type = EV_FREE;
        if (!hex_str(&s, &e->addr) || !opt_flags_fn(&s, &flags, &e->touched))
            return 0;
        break;
    case TRACEFMT_TAG_REALLOC:
        e->type = EV_REALLOC;
        if (!hex_str(&s, &e->old_addr) || !hex_str(&s, &e->addr) || !comma_u64(&s, &e->size) ||
            !comma_u64(&s, &e->stack) || !opt_flags_fn(&s, &flags, &e->touched))
            return 0;
        e->has_old_size = !(flags & TRACEFMT_F_OLD_UNKNOWN);
        break;
    case TRACEFMT_TAG_REALLOC_FAILED:
        e->type = EV_REALLOC_FAILED;
        if (!hex_str(&s, &e->addr) || !comma_u64(&s, &e->size) || !comma_u64(&s, &e->stack) ||
            (s.p < s.end && *s.p == ',' && !fn_str(&s, &flags8)))
            return 0;
        break;
    default:
        return 0;
    }
    if (!lit(&s, "]"))
        return 0;
    while (s.p < s.end && (*s.p == ' ' || *s.p == '\r' || *s.p == '\t'))
        s.p++;
    if (s.p < s.end && *s.p == '\n')
        s.p++;
    e->inherited = flags & TRACEFMT_F_INHERITED;
    e->tid = r->tids[ti];
    *now = r->last_us + dt;
    if (*now < 0)
        *now = 0;
    e->t = (uint64_t)*now * 1000;
    return (size_t)(s.p - line);
}

/* ---- lines ----------------------------------------------------------------- */

/* Move the unreturned bytes to the front of the buffer (growing it when
 * they fill it) and read more after them; false when nothing more came
 * (end of input, a read error, or no memory for a longer line). */
static bool refill(reader_t *r)
{
    size_t chunk = r->chunk ? r->chunk : READER_CHUNK;
    size_t have = r->end - r->pos;
    if (r->pos) {
        memmove(r->buf, r->buf + r->pos, have);
        r->pos = 0;
        r->end = have;
    }
    if (r->cap - r->end < chunk) {
        size_t cap = r->cap ? r->cap : chunk;
        while (cap - r->end < chunk)
            cap *= 2;
        char *buf = realloc(r->buf, cap);
        if (!buf) {
            say(r, "%s:%ld: out of memory for a line of %zu bytes", r->path, r->lineno + 1,
                have);
            r->truncated = true; /* said: the input ends here, no other line about it */
            return false;
        }
        r->buf = buf;
        r->cap = cap;
    }
    size_t got = tracein_read(r->in, r->buf + r->end, chunk);
    r->end += got;
    if (got < chunk)
        r->eof = true;
    return got > 0;
}

/* The next line, in place: *line (valid until the next call) and its
 * length *len, with its '\n' unless it is the input's unterminated last.
 * A line that starts with a NUL byte is returned as soon as its first
 * byte is seen (the trace stops there: its NUL tail is never read).
 * 0 at the end of the input. */
static int next_line(reader_t *r, char **line, size_t *len)
{
    size_t scanned = 0; /* bytes of the pending line known to hold no '\n' */
    for (;;) {
        size_t have = r->end - r->pos;
        char *start = have ? r->buf + r->pos : NULL; /* buf is NULL before the first read */
        char *nl = have > scanned ? memchr(start + scanned, '\n', have - scanned) : NULL;
        if (!nl && have && r->eof && start[0] != '\0' &&
            (tracein_cut(r->in) || tracein_error(r->in))) {
            r->pos = r->end; /* cut short by the data's end: end_of_input says so */
            return 0;
        }
        if (nl || (have && (start[0] == '\0' || r->eof))) {
            *line = start;
            *len = nl ? (size_t)(nl - start) + 1 : have;
            r->pos += *len;
            return 1;
        }
        scanned = have;
        if (r->eof || !refill(r)) {
            r->eof = true;
            if (r->end == r->pos)
                return 0;
            if (r->truncated) { /* no memory to read the rest of the line: not a line */
                r->pos = r->end;
                return 0;
            }
        }
    }
}

/* The input is over: one line says how, when it is not an end record's
 * clean end.  A line cut short by the end of the data (a frame cut off,
 * damaged) is part of that one message, not a bad line of its own. */
static void end_of_input(reader_t *r)
{
    if (r->truncated)
        return;
    r->truncated = !r->ended;
    const char *err = tracein_error(r->in);
    bool cut = tracein_cut(r->in);
    if (!r->lineno) {
        r->truncated = true;
        if (err)
            say(r, "%s: damaged: its compressed data cannot be decoded (%s) before the first "
                   "record", r->path, err);
        else if (cut)
            say(r, "%s: truncated or damaged: its compressed data stops inside the first frame, "
                   "before the first record", r->path);
        else
            say(r, "%s: empty trace", r->path);
    } else if (err) {
        r->truncated = true;
        say(r, "%s: cannot read past line %ld: %s", r->path, r->lineno, err);
    } else if (cut) {
        r->truncated = true;
        say(r, "%s: the compressed trace stops inside a frame (cut off, e.g. its recorder was "
               "killed): analyzed up to line %ld", r->path, r->lineno);
    } else if (!r->ended) {
        say(r, "%s: no end record: the trace is truncated (analyzed up to line %ld)", r->path,
            r->lineno);
    }
}

/* The next record into *e: 1, or 0 at the end of the input (said by
 * end_of_input). */
static int next_record(reader_t *r, event_t *e)
{
    for (;;) {
        json_decref(r->obj);
        r->obj = NULL;
        if (!r->in)
            return 0;
        /* The common case first: a hot record whole in the buffer, read
         * where it lies, its end found by the parse (no memchr). */
        size_t have = r->end - r->pos;
        if (!r->no_fast && have) {
            const char *text = r->buf + r->pos;
            int64_t now = r->last_us;
            size_t used = text[0] == '[' ? fast3(r, text, have, e, &now) : fast(text, have, e);
            if (used && text[used - 1] == '\n') {
                r->last_us = now;
                r->pos += used;
                r->lineno++;
                r->fast++;
                r->by_type[e->type]++;
                return 1;
            }
        }
        char *line;
        size_t len;
        if (!next_line(r, &line, &len)) {
            end_of_input(r);
            return 0;
        }
        r->lineno++;
        if (line[0] == '\0') {
            r->truncated = true;
            say(r, "%s:%ld: the trace stops here (NUL bytes: cut off, e.g. by SIGKILL)", r->path,
                r->lineno);
            tracein_close(r->in);
            r->in = NULL;
            return 0;
        }
        int64_t now = r->last_us;
        if (!r->no_fast &&
            (line[0] == '[' ? fast3(r, line, len, e, &now) : fast(line, len, e)) == len) {
            r->last_us = now;
            r->fast++;
            r->by_type[e->type]++;
            return 1;
        }
        if (reader_json_line(r, line, len, e))
            return 1;
    }
}

int reader_next(reader_t *r, event_t *e)
{
    int got = next_record(r, e);
    if (got)
        e->line = r->lineno;
    return got;
}
