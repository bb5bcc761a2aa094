/*
 * config: memsim's environment variables.  See config.h.
 *
 * This runs inside the traced process at start-up: no malloc, no stdio
 * streams.  Messages and paths are built with a small bounded appender
 * (sbuf_t) that always NUL-terminates and remembers when it ran out of
 * room.
 */
#include "ipc/config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/strategy.h"
#include "lib/units.h"

/* ---------------------------------------------------------------------
 * Bounded appender
 * ------------------------------------------------------------------- */

typedef struct sbuf_s {
    char *p;    /* the buffer; p[at] == '\0' whenever len > 0 */
    size_t len; /* bytes of p; at < len when len > 0 */
    size_t at;  /* bytes written, excluding the NUL */
    bool cut;   /* something did not fit */
} sbuf_t;

static void sbuf_init(sbuf_t *b, char *p, size_t len)
{
    *b = (sbuf_t){.p = p, .len = len, .cut = len == 0};
    if (len)
        p[0] = '\0';
}

static void sbuf_putn(sbuf_t *b, const char *s, size_t n)
{
    if (!b->len) {
        b->cut |= n > 0;
        return;
    }
    size_t room = b->len - 1 - b->at;
    if (n > room) {
        n = room;
        b->cut = true;
    }
    memcpy(b->p + b->at, s, n);
    b->at += n;
    b->p[b->at] = '\0';
}

static void sbuf_puts(sbuf_t *b, const char *s) { sbuf_putn(b, s, strlen(s)); }

static void sbuf_putc(sbuf_t *b, char ch) { sbuf_putn(b, &ch, 1); }

static void sbuf_putu(sbuf_t *b, unsigned long long v)
{
    char digits[24];
    size_t i = sizeof digits;
    do {
        digits[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    sbuf_putn(b, digits + i, sizeof digits - i);
}

static void sbuf_putl(sbuf_t *b, long v)
{
    if (v < 0) {
        sbuf_putc(b, '-');
        sbuf_putu(b, 0ull - (unsigned long long)v); /* LONG_MIN too */
        return;
    }
    sbuf_putu(b, (unsigned long long)v);
}

/* ---------------------------------------------------------------------
 * Error messages
 * ------------------------------------------------------------------- */

static bool is_continuation(unsigned char ch) { return (ch & 0xC0) == 0x80; }

/* value with control characters shown as '?' (bytes map one to one). */
static void sbuf_put_shown(sbuf_t *b, const char *value, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)value[i];
        sbuf_putc(b, ch < 0x20 || ch == 0x7F ? '?' : (char)ch);
    }
}

/* err = memsim: NAME="VALUE" WHAT; tracing is off
 * VALUE is cut and followed by "..." when the whole line would not fit;
 * if even the fixed parts do not fit, the line itself is cut. */
static int fail(char *err, size_t errlen, const char *name, const char *value, const char *what)
{
    static const char head[] = "memsim: ", tail[] = "; tracing is off";
    sbuf_t b;
    sbuf_init(&b, err, errlen);
    size_t fixed = strlen(head) + strlen(name) + 2 + 2 + strlen(what) + strlen(tail);
    size_t vlen = strlen(value), room = errlen > fixed ? errlen - 1 - fixed : 0;

    sbuf_puts(&b, head);
    sbuf_puts(&b, name);
    sbuf_puts(&b, "=\"");
    if (vlen <= room) {
        sbuf_put_shown(&b, value, vlen);
    } else {
        size_t keep = room >= 3 ? room - 3 : 0;
        while (keep > 0 && is_continuation((unsigned char)value[keep]))
            keep--;
        sbuf_put_shown(&b, value, keep);
        sbuf_puts(&b, "...");
    }
    sbuf_puts(&b, "\" ");
    sbuf_puts(&b, what);
    sbuf_puts(&b, tail);
    return -1;
}

/* ---------------------------------------------------------------------
 * Output patterns
 * ------------------------------------------------------------------- */

/* Whether "%<letter>" is a conversion of MEMSIM_OUTPUT patterns. */
static bool pattern_known(char letter)
{
    return letter == 'p' || letter == 'e' || letter == 'n' || letter == '%';
}

/* 0, or -1 with the first bad sequence ("%x", or "%" at the end) in bad. */
static int pattern_check(const char *s, char bad[3])
{
    for (; *s; s++) {
        if (*s != '%')
            continue;
        if (!pattern_known(s[1])) {
            unsigned char ch = (unsigned char)s[1];
            bad[0] = '%';
            bad[1] = ch < 0x20 || ch >= 0x7F ? (ch ? '?' : '\0') : (char)ch;
            bad[2] = '\0';
            return -1;
        }
        s++; /* past the letter, which is never '\0' here */
    }
    return 0;
}

/* ---------------------------------------------------------------------
 * One loader per kind of value; each returns 0 when value is NULL (unset)
 * ------------------------------------------------------------------- */

#define OUTPUT_ACCEPTS                                                                             \
    "is not a directory or a file pattern with %p (pid), %e (executable), %n (counter), "          \
    "%% (a literal %)"

static int load_output(config_t *c, const char *v, char *err, size_t errlen)
{
    if (!v)
        return 0;
    if (!*v)
        return fail(err, errlen, CONFIG_ENV_OUTPUT, v, OUTPUT_ACCEPTS);
    char what[192];
    sbuf_t w;
    sbuf_init(&w, what, sizeof what);
    if (strlen(v) >= sizeof c->output) {
        sbuf_puts(&w, "is not a path shorter than ");
        sbuf_putu(&w, sizeof c->output);
        sbuf_puts(&w, " bytes");
        return fail(err, errlen, CONFIG_ENV_OUTPUT, v, what);
    }
    char bad[3];
    if (pattern_check(v, bad) < 0) {
        sbuf_puts(&w, OUTPUT_ACCEPTS);
        sbuf_puts(&w, bad[1] ? ": \"" : ": a lone \"");
        sbuf_puts(&w, bad);
        sbuf_puts(&w, bad[1] ? "\" is unknown" : "\" at the end");
        return fail(err, errlen, CONFIG_ENV_OUTPUT, v, what);
    }
    memcpy(c->output, v, strlen(v) + 1);
    c->output_is_pattern = strchr(v, '%') != NULL;
    return 0;
}

static int load_strategy(config_t *c, const char *v, char *err, size_t errlen)
{
    if (!v)
        return 0;
    bool known = strcmp(v, CONFIG_STRATEGY_NONE) == 0 || strategy_find(v) != NULL;
    if (!known || strlen(v) >= sizeof c->strategy) {
        char names[160], what[224];
        sbuf_t w;
        sbuf_init(&w, what, sizeof what);
        sbuf_puts(&w, "is not a strategy (" CONFIG_STRATEGY_NONE ", ");
        sbuf_puts(&w, strategy_names(names, sizeof names));
        sbuf_puts(&w, ")");
        return fail(err, errlen, CONFIG_ENV_STRATEGY, v, what);
    }
    memcpy(c->strategy, v, strlen(v) + 1);
    return 0;
}

static int load_device_size(config_t *c, const char *v, char *err, size_t errlen)
{
    uint64_t size;
    if (!v)
        return 0;
    if (units_parse_size(v, &size) < 0 || size < CONFIG_DEVICE_SIZE_MIN)
        return fail(err, errlen, CONFIG_ENV_DEVICE_SIZE, v,
                    "is not a size of at least 4096 bytes (4096, 64KiB, 512M, 2G)");
    c->device_size = size;
    return 0;
}

/* Digits only, no overflow, lo <= value <= hi. */
static int parse_whole(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
    if (!*s)
        return -1;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
        if (v > hi) /* hi < 2^32, so v never overflows */
            return -1;
    }
    if (v < lo)
        return -1;
    *out = (unsigned)v;
    return 0;
}

static int load_whole(const char *name, const char *v, unsigned lo, unsigned hi, unsigned *out,
                      char *err, size_t errlen)
{
    if (!v)
        return 0;
    if (parse_whole(v, lo, hi, out) < 0) {
        char what[80];
        sbuf_t w;
        sbuf_init(&w, what, sizeof what);
        sbuf_puts(&w, "is not a whole number from ");
        sbuf_putu(&w, lo);
        sbuf_puts(&w, " to ");
        sbuf_putu(&w, hi);
        return fail(err, errlen, name, v, what);
    }
    return 0;
}

/* ASCII-only, so the locale cannot change what is accepted. */
static bool same_word(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
        if (x != *b)
            return false;
    }
    return *a == *b;
}

static int load_bool(const char *name, const char *v, bool *out, char *err, size_t errlen)
{
    static const char *const no[] = {"0", "no", "false", "off"};
    static const char *const yes[] = {"1", "yes", "true", "on"};
    if (!v)
        return 0;
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        if (same_word(v, no[i])) {
            *out = false;
            return 0;
        }
        if (same_word(v, yes[i])) {
            *out = true;
            return 0;
        }
    }
    return fail(err, errlen, name, v, "is not a boolean (0/1, no/yes, false/true, off/on)");
}

static int load_unwind(config_t *c, const char *v, char *err, size_t errlen)
{
    static const char *const names[] = {"fast", "libunwind", "check"};
    if (!v)
        return 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(v, names[i]) == 0) {
            c->unwind = (config_unwind_t)i;
            return 0;
        }
    return fail(err, errlen, CONFIG_ENV_UNWIND, v, "is not fast, libunwind or check");
}

static int load_sample_bytes(config_t *c, const char *v, char *err, size_t errlen)
{
    uint64_t size;
    if (!v)
        return 0;
    if (units_parse_size(v, &size) < 0 || size > CONFIG_SAMPLE_BYTES_MAX)
        return fail(err, errlen, CONFIG_ENV_SAMPLE_BYTES, v,
                    "is not 0 or a size from 1 byte to 1 GiB (524288, 512K, 4M)");
    c->sample_bytes = size;
    return 0;
}

static int load_sample_seed(config_t *c, const char *v, char *err, size_t errlen)
{
    unsigned seed;
    if (!v)
        return 0;
    if (load_whole(CONFIG_ENV_SAMPLE_SEED, v, 0, UINT_MAX, &seed, err, errlen) < 0)
        return -1;
    c->sample_seed = seed;
    c->sample_seeded = true;
    return 0;
}

/* ---------------------------------------------------------------------
 * Public entry points
 * ------------------------------------------------------------------- */

static uint64_t physical_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0 || (uint64_t)pages > UINT64_MAX / (uint64_t)page)
        return CONFIG_DEVICE_SIZE_FALLBACK;
    uint64_t bytes = (uint64_t)pages * (uint64_t)page;
    return bytes < CONFIG_DEVICE_SIZE_MIN ? CONFIG_DEVICE_SIZE_MIN : bytes;
}

void config_defaults(config_t *c)
{
    memcpy(c->output, CONFIG_DEFAULT_OUTPUT, sizeof CONFIG_DEFAULT_OUTPUT);
    c->output_is_pattern = false;
    memcpy(c->strategy, CONFIG_DEFAULT_STRATEGY, sizeof CONFIG_DEFAULT_STRATEGY);
    c->device_size = physical_memory();
    c->stack_depth = CONFIG_DEFAULT_STACK_DEPTH;
    c->sample_ms = CONFIG_DEFAULT_SAMPLE_MS;
    c->trace_children = true;
    c->mmap = true;
    c->compress = true;
    c->unwind = CONFIG_UNWIND_FAST;
    c->sample_bytes = 0;
    c->sample_seed = 0;
    c->sample_seeded = false;
}

/* getenv returns char *; a call through a pointer of another type is
 * undefined, hence the wrapper. */
static const char *env_get(const char *name) { return getenv(name); }

int config_load(config_t *c, const char *(*get)(const char *name), char *err, size_t errlen)
{
    if (!get)
        get = env_get;
    if (errlen)
        err[0] = '\0';
    config_defaults(c);
    /* The order of the checks is the documented order of the variables. */
    if (load_output(c, get(CONFIG_ENV_OUTPUT), err, errlen) < 0 ||
        load_strategy(c, get(CONFIG_ENV_STRATEGY), err, errlen) < 0 ||
        load_device_size(c, get(CONFIG_ENV_DEVICE_SIZE), err, errlen) < 0 ||
        load_whole(CONFIG_ENV_STACK_DEPTH, get(CONFIG_ENV_STACK_DEPTH), 0, CONFIG_STACK_DEPTH_MAX,
                   &c->stack_depth, err, errlen) < 0 ||
        load_whole(CONFIG_ENV_SAMPLE_MS, get(CONFIG_ENV_SAMPLE_MS), CONFIG_SAMPLE_MS_MIN,
                   CONFIG_SAMPLE_MS_MAX, &c->sample_ms, err, errlen) < 0 ||
        load_bool(CONFIG_ENV_TRACE_CHILDREN, get(CONFIG_ENV_TRACE_CHILDREN), &c->trace_children,
                  err, errlen) < 0 ||
        load_bool(CONFIG_ENV_MMAP, get(CONFIG_ENV_MMAP), &c->mmap, err, errlen) < 0 ||
        load_bool(CONFIG_ENV_COMPRESS, get(CONFIG_ENV_COMPRESS), &c->compress, err, errlen) < 0 ||
        load_unwind(c, get(CONFIG_ENV_UNWIND), err, errlen) < 0 ||
        load_sample_bytes(c, get(CONFIG_ENV_SAMPLE_BYTES), err, errlen) < 0 ||
        load_sample_seed(c, get(CONFIG_ENV_SAMPLE_SEED), err, errlen) < 0) {
        config_defaults(c);
        return -1;
    }
    return 0;
}

static bool exe_char_ok(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '.' || ch == '_' || ch == '+' || ch == '-';
}

/* exe as one harmless path component (see config_trace_path). */
static void sbuf_put_exe(sbuf_t *b, const char *exe)
{
    if (!exe || !*exe) {
        sbuf_puts(b, "unknown");
        return;
    }
    if (strcmp(exe, ".") == 0 || strcmp(exe, "..") == 0) {
        sbuf_puts(b, exe[1] ? "__" : "_");
        return;
    }
    for (; *exe; exe++)
        sbuf_putc(b, exe_char_ok(*exe) ? *exe : '_');
}

int config_trace_path(const config_t *c, const char *exe, long pid, unsigned counter, char *out,
                      size_t len)
{
    sbuf_t b;
    sbuf_init(&b, out, len < PATH_MAX ? len : PATH_MAX);
    if (!c->output_is_pattern) {
        size_t n = strlen(c->output);
        sbuf_puts(&b, c->output);
        if (n == 0 || c->output[n - 1] != '/')
            sbuf_putc(&b, '/');
        sbuf_puts(&b, "memsim.");
        sbuf_put_exe(&b, exe);
        sbuf_putc(&b, '.');
        sbuf_putl(&b, pid);
        sbuf_putc(&b, '.');
        sbuf_putu(&b, counter);
        sbuf_puts(&b, c->compress ? ".jsonl.zst" : ".jsonl");
    } else {
        /* !b.cut first: after a lone '%' at the end, s is past the NUL. */
        for (const char *s = c->output; !b.cut && *s; s++) {
            if (*s != '%') {
                sbuf_putc(&b, *s);
                continue;
            }
            switch (*++s) {
            case 'p': sbuf_putl(&b, pid); break;
            case 'e': sbuf_put_exe(&b, exe); break;
            case 'n': sbuf_putu(&b, counter); break;
            case '%': sbuf_putc(&b, '%'); break;
            default: b.cut = true; break; /* config_load refuses these */
            }
        }
        /* A compressed trace says so in its name, whatever the pattern. */
        if (c->compress && !(b.at >= 4 && memcmp(b.p + b.at - 4, ".zst", 4) == 0))
            sbuf_puts(&b, ".zst");
    }
    if (b.cut) {
        if (len)
            out[0] = '\0';
        return -1;
    }
    return 0;
}

bool config_path_has_counter(const config_t *c)
{
    if (!c->output_is_pattern)
        return true;
    for (const char *s = c->output; *s; s++) {
        if (*s != '%')
            continue;
        if (s[1] == 'n')
            return true;
        if (s[1])
            s++;
    }
    return false;
}
