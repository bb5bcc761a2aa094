/*
 * reader: streaming trace reader.  See reader.h and docs/trace-format.md.
 */
#include "analyzer/reader.h"

#include "analyzer/escape.h"
#include "analyzer/progress.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MESSAGES 10 /* problems reported per trace; the rest are counted */

static const char *const names[EV_COUNT] = {
    [EV_META] = "meta",         [EV_MODULE] = "module",
    [EV_STACK] = "stack",       [EV_ALLOC] = "alloc",
    [EV_FREE] = "free",         [EV_REALLOC] = "realloc",
    [EV_REALLOC_FAILED] = "realloc_failed",
    [EV_MMAP] = "mmap",         [EV_MUNMAP] = "munmap",
    [EV_MREMAP] = "mremap",     [EV_MREMAP_FAILED] = "mremap_failed",
    [EV_SAMPLE] = "sample",     [EV_PHASE] = "phase",
    [EV_FORK] = "fork",         [EV_SPAWN] = "spawn",
    [EV_EXEC] = "exec",         [EV_EXEC_FAILED] = "exec_failed",
    [EV_ERROR] = "error",       [EV_END] = "end",
};

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
__attribute__((format(printf, 2, 3)))
static void problem(reader_t *r, const char *fmt, ...)
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
    r->f = fopen(path, "r");
    if (!r->f) {
        escape_line(stderr, "memsim-analyze: cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

void reader_close(reader_t *r)
{
    if (r->f)
        fclose(r->f);
    json_decref(r->obj);
    free(r->buf);
    r->f = NULL;
    r->obj = NULL;
    r->buf = NULL;
    r->cap = r->pos = r->end = 0;
}

static event_type_t type_of(const char *ev)
{
    for (int i = 0; i < EV_COUNT; i++)
        if (strcmp(ev, names[i]) == 0)
            return (event_type_t)i;
    return EV_COUNT;
}

/* Field k as an unsigned integer into *v; false (and a problem) if absent
 * or not a non-negative integer. */
static bool need_u64(reader_t *r, const json_t *o, const char *k, uint64_t *v)
{
    const json_t *j = json_object_get(o, k);
    if (!json_is_integer(j) || json_integer_value(j) < 0) {
        problem(r, "%s field \"%s\"", j ? "mistyped" : "missing", k);
        return false;
    }
    *v = (uint64_t)json_integer_value(j);
    return true;
}

static void opt_u64(const json_t *o, const char *k, uint64_t *v)
{
    const json_t *j = json_object_get(o, k);
    *v = json_is_integer(j) && json_integer_value(j) >= 0 ? (uint64_t)json_integer_value(j) : 0;
}

/* The fields each record type needs; false when one is missing. */
static bool fill(reader_t *r, const json_t *o, event_t *e)
{
    switch (e->type) {
    case EV_META: {
        uint64_t v = 0;
        if (!need_u64(r, o, "version", &v))
            return false;
        r->version = (int)v;
        if (v > READER_FORMAT_VERSION)
            problem(r, "trace format version %llu is newer than this analyzer's %d; reading "
                       "what it knows", (unsigned long long)v, READER_FORMAT_VERSION);
        return true;
    }
    case EV_ALLOC:
        opt_u64(o, "align", &e->align);
        if (!json_object_get(o, "align"))
            e->align = READER_DEFAULT_ALIGN;
        opt_u64(o, "stack", &e->stack);
        return need_u64(r, o, "addr", &e->addr) && need_u64(r, o, "size", &e->size);
    case EV_FREE:
        opt_u64(o, "stack", &e->stack);
        e->inherited = json_is_true(json_object_get(o, "inherited"));
        return need_u64(r, o, "addr", &e->addr) && need_u64(r, o, "size", &e->size);
    case EV_REALLOC: {
        opt_u64(o, "stack", &e->stack);
        e->inherited = json_is_true(json_object_get(o, "inherited"));
        const json_t *os = json_object_get(o, "old_size");
        e->has_old_size = json_is_integer(os);
        e->old_size = e->has_old_size ? (uint64_t)json_integer_value(os) : 0;
        return need_u64(r, o, "old_addr", &e->old_addr) && need_u64(r, o, "addr", &e->addr) &&
               need_u64(r, o, "size", &e->size);
    }
    case EV_MMAP:
    case EV_MUNMAP:
        return need_u64(r, o, "addr", &e->addr) && need_u64(r, o, "size", &e->size);
    case EV_SAMPLE:
        opt_u64(o, "hwm", &e->hwm);
        opt_u64(o, "tree_rss", &e->tree_rss);
        opt_u64(o, "malloc_reserved", &e->malloc_reserved);
        opt_u64(o, "malloc_in_use", &e->malloc_in_use);
        opt_u64(o, "device_total", &e->device_total);
        opt_u64(o, "heap_live", &e->heap_live);
        return need_u64(r, o, "rss", &e->rss);
    default:
        return true;
    }
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
SCAN bool fn_value(scan_t *s)
{
    if (!key(s, "fn"))
        return true;
    if (!lit(s, "\""))
        return false;
    while (s->p < s->end && ((*s->p >= 'a' && *s->p <= 'z') || digit(*s->p) || *s->p == '_'))
        s->p++;
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
    if (!lit(&s, "{\"ev\":\""))
        return false;
    static const event_t zero;
    *e = zero; /* vector moves; memset's rep stos costs more at this size */
    if (lit(&s, "alloc\",\"t\":")) {
        e->type = EV_ALLOC;
        if (!u64(&s, &e->t) || !key(&s, "tid") || !i64(&s, &e->tid) || !fn_value(&s) ||
            !key(&s, "addr") || !u64(&s, &e->addr) || !key(&s, "size") || !u64(&s, &e->size) ||
            !align_value(&s, &e->align) || !key(&s, "stack") || !u64(&s, &e->stack) ||
            !key(&s, "sim") || !u64_or_null(&s, &sim, &present))
            return false;
    } else if (lit(&s, "free\",\"t\":")) {
        e->type = EV_FREE;
        if (!u64(&s, &e->t) || !key(&s, "tid") || !i64(&s, &e->tid) || !fn_value(&s) ||
            !key(&s, "addr") || !u64(&s, &e->addr) || !key(&s, "size") || !u64(&s, &e->size) ||
            !key(&s, "stack") || !u64(&s, &e->stack))
            return false;
    } else if (lit(&s, "realloc\",\"t\":")) {
        e->type = EV_REALLOC;
        if (!u64(&s, &e->t) || !key(&s, "tid") || !i64(&s, &e->tid) || !fn_value(&s) ||
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
            return false;
        }
        r->buf = buf;
        r->cap = cap;
    }
    size_t got = fread(r->buf + r->end, 1, chunk, r->f);
    r->end += got;
    if (got < chunk && (feof(r->f) || ferror(r->f)))
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
        }
    }
}

int reader_next(reader_t *r, event_t *e)
{
    for (;;) {
        json_decref(r->obj);
        r->obj = NULL;
        if (!r->f)
            return 0;
        /* The common case first: a hot record whole in the buffer, read
         * where it lies, its end found by the parse (no memchr). */
        size_t have = r->end - r->pos;
        if (!r->no_fast && have) {
            const char *text = r->buf + r->pos;
            size_t used = fast(text, have, e);
            if (used && text[used - 1] == '\n') {
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
            if (!r->ended && !r->truncated) {
                r->truncated = true;
                say(r, "%s: no end record: the trace is truncated (analyzed up to line %ld)",
                    r->path, r->lineno);
            }
            return 0;
        }
        r->lineno++;
        if (line[0] == '\0') {
            r->truncated = true;
            say(r, "%s:%ld: the trace stops here (NUL bytes: cut off, e.g. by SIGKILL)", r->path,
                r->lineno);
            fclose(r->f);
            r->f = NULL;
            return 0;
        }
        if (!r->no_fast && fast(line, len, e) == len) {
            r->fast++;
            r->by_type[e->type]++;
            return 1;
        }
        json_error_t err;
        r->obj = json_loadb(line, len, 0, &err);
        if (!json_is_object(r->obj)) {
            r->bad_lines++;
            if (line[len - 1] != '\n' && !r->obj)
                problem(r, "a truncated last line");
            else
                problem(r, "not a JSON object: %s", err.text);
            continue;
        }
        const char *ev = json_string_value(json_object_get(r->obj, "ev"));
        if (!ev) {
            r->bad_lines++;
            problem(r, "no \"ev\" field");
            continue;
        }
        memset(e, 0, sizeof *e);
        e->type = type_of(ev);
        if (e->type == EV_COUNT) {
            r->unknown++;
            continue;
        }
        opt_u64(r->obj, "t", &e->t);
        const json_t *tid = json_object_get(r->obj, "tid");
        e->tid = json_is_integer(tid) ? json_integer_value(tid) : 0;
        if (!fill(r, r->obj, e)) {
            r->bad_lines++;
            continue;
        }
        if (e->type == EV_END)
            r->ended = true;
        else if (e->type == EV_EXEC_FAILED)
            r->ended = false;
        r->by_type[e->type]++;
        e->json = r->obj;
        return 1;
    }
}
