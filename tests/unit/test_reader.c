/*
 * reader: the fast path for memsim's own line shapes reads exactly what
 * jansson reads, on a large generated corpus with every variant the
 * writer produces and near-misses it does not.
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "analyzer/read/reader.h"
#include "lib/rng.h"
#include "tests/unit/failmalloc.h"
#include "tests/unit/helpers.h"
#include "tests/unit/suites.h"

static uint64_t big(rng_t *r)
{
    switch (rng_below(r, 4)) {
    case 0: return rng_below(r, 10);
    case 1: return rng_below(r, 1000000);
    case 2: return rng_next(r) >> 1; /* up to INT64_MAX */
    default: return INT64_MAX;
    }
}

/* A run of 1 to 20 random digits, sometimes with a leading zero: every
 * length the fast path reads eight digits at a time, one at a time, or
 * refuses (beyond INT64_MAX, leading zeros), as jansson does. */
static const char *digits(rng_t *r, char *buf)
{
    size_t n = 1 + rng_below(r, 20);
    for (size_t i = 0; i < n; i++)
        buf[i] = (char)('0' + rng_below(r, 10));
    if (n > 1 && rng_below(r, 3))
        buf[0] = (char)('1' + rng_below(r, 9)); /* mostly no leading zero */
    if (n == 19 && rng_below(r, 2))
        buf[0] = (char)('1' + rng_below(r, 8)); /* mostly within INT64_MAX */
    buf[n] = '\0';
    return buf;
}

/* One line: mostly the writer's shapes, sometimes a near miss. */
static void line(FILE *f, rng_t *r)
{
    uint64_t t = big(r), a = big(r), b = big(r), c = big(r), d = big(r);
    int64_t tid = (int64_t)rng_below(r, 100000) - (rng_below(r, 10) == 0 ? 50000 : 0);
    const char *pad = rng_below(r, 4) == 0 ? "      " : "";
    const char *inh = rng_below(r, 5) == 0 ? ",\"inherited\":true" : "";
    char n1[24], n2[24], n3[24], n4[24], n5[24];
    switch (rng_below(r, 13)) {
    case 0: case 1: case 2: /* version 2 leaves out a default fn and align 16 */
        fprintf(f, "{\"ev\":\"alloc\",\"t\":%" PRIu64 ",\"tid\":%" PRId64, t, tid);
        if (rng_below(r, 2))
            fprintf(f, ",\"fn\":\"%s\"", rng_below(r, 2) ? "malloc" : "posix_memalign");
        fprintf(f, ",\"addr\":%" PRIu64 ",\"size\":%" PRIu64, a, b);
        if (rng_below(r, 2))
            fprintf(f, ",\"align\":%" PRIu64, c);
        fprintf(f, ",\"stack\":%" PRIu64 ",\"sim\":", d);
        if (rng_below(r, 3))
            fprintf(f, "%" PRIu64 "}\n", big(r));
        else
            fprintf(f, "null}\n");
        break;
    case 3: case 4: case 5:
        fprintf(f, "{\"ev\":\"free\",\"t\":%" PRIu64 ",\"tid\":%" PRId64 "%s,"
                   "\"addr\":%" PRIu64 ",\"size\":%" PRIu64 ",\"stack\":%" PRIu64 "%s}%s\n",
                t, tid, rng_below(r, 2) ? ",\"fn\":\"free\"" : "", a, b, c, inh, pad);
        break;
    case 6: case 7:
        fprintf(f, "{\"ev\":\"realloc\",\"t\":%" PRIu64 ",\"tid\":%" PRId64 "%s,"
                   "\"old_addr\":%" PRIu64 ",\"addr\":%" PRIu64 ",\"old_size\":", t, tid,
                rng_below(r, 2) ? ",\"fn\":\"realloc\"" : "", a, b);
        if (rng_below(r, 4))
            fprintf(f, "%" PRIu64, c);
        else
            fprintf(f, "null");
        fprintf(f, ",\"size\":%" PRIu64 ",\"stack\":%" PRIu64 ",\"sim\":null%s}%s\n", d, big(r),
                inh, pad);
        break;
    case 8: /* keys in another order: valid JSON, not the fast shape */
        fprintf(f, "{\"ev\":\"alloc\",\"tid\":%" PRId64 ",\"t\":%" PRIu64 ",\"fn\":\"malloc\","
                   "\"size\":%" PRIu64 ",\"addr\":%" PRIu64 ",\"align\":16,\"stack\":1,"
                   "\"sim\":null}\n", tid, t, b, a);
        break;
    case 9: /* an extra key */
        fprintf(f, "{\"ev\":\"free\",\"t\":%" PRIu64 ",\"tid\":1,\"fn\":\"free\",\"addr\":%" PRIu64
                   ",\"size\":3,\"stack\":1,\"note\":\"x\"}\n", t, a);
        break;
    case 10: /* numbers a JSON reader refuses: leading zero, beyond int64 */
        if (rng_below(r, 2))
            fprintf(f, "{\"ev\":\"free\",\"t\":07,\"tid\":1,\"fn\":\"free\",\"addr\":1,"
                       "\"size\":3,\"stack\":1}\n");
        else
            fprintf(f, "{\"ev\":\"alloc\",\"t\":1,\"tid\":1,\"fn\":\"malloc\",\"addr\":"
                       "9223372036854775808,\"size\":3,\"align\":16,\"stack\":1,\"sim\":null}\n");
        break;
    case 11: /* numbers of any length in every numeric field */
        if (rng_below(r, 2))
            fprintf(f, "{\"ev\":\"free\",\"t\":%s,\"tid\":%s%s,\"fn\":\"free\",\"addr\":%s,"
                       "\"size\":%s,\"stack\":%s}\n", digits(r, n1), rng_below(r, 2) ? "-" : "",
                    digits(r, n2), digits(r, n3), digits(r, n4), digits(r, n5));
        else
            fprintf(f, "{\"ev\":\"realloc\",\"t\":%s,\"tid\":1,\"fn\":\"realloc\",\"old_addr\":%s,"
                       "\"addr\":%s,\"old_size\":%s,\"size\":%s,\"stack\":1,\"sim\":null}%s\n",
                    digits(r, n1), digits(r, n2), digits(r, n3), digits(r, n4), digits(r, n5), pad);
        break;
    default: /* cut short */
        fprintf(f, "{\"ev\":\"alloc\",\"t\":%" PRIu64 ",\"tid\":1,\"fn\":\"mal\n", t);
        break;
    }
}

/* A corpus of lines: a meta record, then n lines from line(). */
static void write_corpus(char *path, int n)
{
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "{\"ev\":\"meta\",\"t\":0,\"tid\":1,\"format\":\"memsim-trace\",\"version\":1}\n");
    rng_t rng;
    rng_seed(&rng, 2026);
    for (int i = 0; i < n; i++)
        line(f, &rng);
    fclose(f);
}

/* ---- version 3 ------------------------------------------------------------------- */

/* An address as the writer spells it, or a near miss of one. */
static const char *hex(rng_t *r, char *buf)
{
    uint64_t v = big(r);
    switch (rng_below(r, 24)) {
    case 0: snprintf(buf, 40, "%" PRIX64, v | 0xa); break;         /* upper case */
    case 1: snprintf(buf, 40, "0x%" PRIx64, v); break;             /* a prefix */
    case 2: snprintf(buf, 40, "1%016" PRIx64, v); break;           /* 17 digits */
    case 3: snprintf(buf, 40, "%s", ""); break;                    /* empty */
    case 4: snprintf(buf, 40, "-%" PRIx64, v); break;              /* a sign */
    case 5: snprintf(buf, 40, "%016" PRIx64, v); break;            /* leading zeros: read */
    case 6: snprintf(buf, 40, "%" PRIx64 "g", v); break;           /* not hex */
    case 7: { /* a byte just outside the digits' and letters' ranges, anywhere */
        static const char near[] = "/:`gG@\xc3";
        int n = snprintf(buf, 40, "%" PRIx64, rng_next(r) >> rng_below(r, 64));
        buf[rng_below(r, (uint64_t)n)] = near[rng_below(r, sizeof near - 1)];
        break;
    }
    default: snprintf(buf, 40, "%" PRIx64, rng_next(r) >> rng_below(r, 64)); break;
    }
    return buf;
}

/* A function name as the writer spells it, or, a third of the time, one
 * of 1 to 20 bytes with a byte just outside a name's ranges anywhere
 * (both sides of the fast path's eight-byte steps): valid JSON the slow
 * path reads (the name is skipped), or not ('"', '\\', a control
 * byte). */
static const char *fname(rng_t *r, char *buf)
{
    static const char *const fns[] = {"calloc", "memalign", "aligned_alloc", "valloc", "new"};
    if (rng_below(r, 3))
        return fns[rng_below(r, 5)];
    static const char near[] = "/:`{@[^A-\x7f\xc3\x01\"\\";
    int n = 1 + (int)rng_below(r, 20);
    for (int i = 0; i < n; i++)
        buf[i] = "abcdefghijklmnopqrstuvwxyz0123456789_"[rng_below(r, 37)];
    buf[rng_below(r, (uint64_t)n)] = near[rng_below(r, sizeof near - 1)];
    buf[n] = 0;
    return buf;
}

/* One version 3 line: the compact records in every variant the writer
 * makes, near misses, and now and then a thread record or an object. */
static void line3(FILE *f, rng_t *r, unsigned *threads)
{
    char h1[40], h2[40];
    long long dt = (long long)rng_below(r, 2000) - (rng_below(r, 8) == 0 ? 1500 : 0);
    unsigned ti = *threads ? (unsigned)rng_below(r, *threads + (rng_below(r, 50) == 0)) : 0;
    uint64_t size = big(r), stack = rng_below(r, 1000);
    const char *pad = rng_below(r, 6) == 0 ? "  " : "";
    char fn[24];
    switch (rng_below(r, 16)) {
    case 0: case 1: case 2: case 3:
        fprintf(f, "[\"a\",%lld,%u,\"%s\",%" PRIu64 ",%" PRIu64, dt, ti, hex(r, h1), size,
                stack);
        if (rng_below(r, 3) == 0) {
            fprintf(f, ",\"%s\"", fname(r, fn));
            if (rng_below(r, 2))
                fprintf(f, ",%" PRIu64, big(r));
        }
        fprintf(f, "]%s\n", pad);
        break;
    case 4: case 5: case 6: case 7:
        fprintf(f, "[\"f\",%lld,%u,\"%s\"", dt, ti, hex(r, h1));
        if (rng_below(r, 4) == 0) {
            fprintf(f, ",%u", (unsigned)rng_below(r, 4));
            if (rng_below(r, 2)) {
                fprintf(f, ",\"%s\"", rng_below(r, 2) ? "reallocarray" : "free_sized");
                if (rng_below(r, 2)) /* version 5: touched pages */
                    fprintf(f, ",%" PRIu64, rng_below(r, 3) ? rng_below(r, 300) : big(r));
            }
        }
        fprintf(f, "]%s\n", pad);
        break;
    case 8: case 9:
        fprintf(f, "[\"r\",%lld,%u,\"%s\",\"%s\",%" PRIu64 ",%" PRIu64, dt, ti, hex(r, h1),
                hex(r, h2), size, stack);
        if (rng_below(r, 3) == 0) {
            fprintf(f, ",%u", (unsigned)rng_below(r, 4));
            if (rng_below(r, 2)) {
                fprintf(f, ",\"reallocarray\"");
                if (rng_below(r, 2))
                    fprintf(f, ",%" PRIu64, rng_below(r, 300));
            }
        }
        fprintf(f, "]%s\n", pad);
        break;
    case 10:
        fprintf(f, "[\"x\",%lld,%u,\"%s\",%" PRIu64 ",%" PRIu64 "%s]\n", dt, ti, hex(r, h1),
                size, stack, rng_below(r, 2) ? ",\"reallocarray\"" : "");
        break;
    case 11: /* valid JSON, not the writer's spacing */
        fprintf(f, "[ \"f\" , %lld , %u , \"%s\" ]\n", dt, ti, hex(r, h1));
        break;
    case 12: /* the wrong number or kind of elements */
        switch (rng_below(r, 6)) {
        case 0: fprintf(f, "[\"a\",%lld,%u,\"%s\",%" PRIu64 "]\n", dt, ti, hex(r, h1), size); break;
        case 1: fprintf(f, "[\"f\",%lld,%u,\"%s\",1,\"free\",7,8]\n", dt, ti, hex(r, h1)); break;
        case 2: fprintf(f, "[\"a\",%lld,%u,\"%s\",1,2,16]\n", dt, ti, hex(r, h1)); break;
        case 3: fprintf(f, "[\"q\",%lld,%u]\n", dt, ti); break;
        case 4: fprintf(f, "[\"r\",%lld,%u,\"%s\",%" PRIu64 ",1,2]\n", dt, ti, hex(r, h1), size); break;
        default: fprintf(f, "[\"f\",\"%lld\",%u,\"%s\"]\n", dt, ti, hex(r, h1)); break;
        }
        break;
    case 13:
        fprintf(f, "{\"ev\":\"thread\",\"t\":%" PRIu64 ",\"tid\":%u,\"index\":%u}\n",
                rng_below(r, 1000000), 1000 + *threads, *threads);
        ++*threads;
        break;
    case 14:
        fprintf(f, "{\"ev\":\"phase\",\"t\":%" PRIu64 ",\"tid\":1,\"op\":\"begin\","
                   "\"name\":\"p\"}\n", rng_below(r, 1000000));
        break;
    default: /* cut short */
        fprintf(f, "[\"a\",%lld,%u,\"%s\n", dt, ti, hex(r, h1));
        break;
    }
}

static void write_corpus3(char *path, int n)
{
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "{\"ev\":\"meta\",\"t\":0,\"tid\":1,\"format\":\"memsim-trace\",\"version\":3}\n");
    fprintf(f, "{\"ev\":\"thread\",\"t\":0,\"tid\":1,\"index\":0}\n");
    unsigned threads = 1;
    rng_t rng;
    rng_seed(&rng, 2027);
    for (int i = 0; i < n; i++)
        line3(f, &rng, &threads);
    fclose(f);
}

/* path compressed into zpath as memsim-recorder writes it: one frame
 * per frame_bytes of input (cut anywhere, as out.c cuts at a flush). */
static void compress_file(const char *path, char *zpath, size_t frame_bytes, size_t keep)
{
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    int fd = mkstemp(zpath);
    ck_assert_int_ge(fd, 0);
    FILE *z = fdopen(fd, "w");
    char *in = malloc(frame_bytes);
    size_t cap = ZSTD_compressBound(frame_bytes), written = 0;
    char *out = malloc(cap);
    ZSTD_CCtx *zc = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(zc, ZSTD_c_compressionLevel, 1);
    ZSTD_CCtx_setParameter(zc, ZSTD_c_checksumFlag, 1);
    for (size_t n; (n = fread(in, 1, frame_bytes, f));) {
        size_t k = ZSTD_compress2(zc, out, cap, in, n);
        ck_assert(!ZSTD_isError(k));
        if (written + k > keep)
            k = keep - written;
        fwrite(out, 1, k, z);
        written += k;
        if (written == keep)
            break;
    }
    ZSTD_freeCCtx(zc);
    free(in);
    free(out);
    fclose(f);
    fclose(z);
}

static void read_chunked(const char *path, bool no_fast, size_t chunk, event_t **out, size_t *n,
                         reader_t *r)
{
    ck_assert_int_eq(reader_open(r, path), 0);
    r->no_fast = no_fast;
    r->chunk = chunk;
    size_t cap = 1024;
    *out = malloc(cap * sizeof **out);
    *n = 0;
    event_t e;
    while (reader_next(r, &e)) {
        if (*n == cap)
            *out = realloc(*out, (cap *= 2) * sizeof **out);
        e.json = NULL;
        (*out)[(*n)++] = e;
    }
}

static void read_all(const char *path, bool no_fast, event_t **out, size_t *n, reader_t *r)
{
    read_chunked(path, no_fast, 0, out, n, r);
}

static bool same_event(const event_t *x, const event_t *y)
{
    return x->type == y->type && x->t == y->t && x->tid == y->tid && x->addr == y->addr &&
           x->size == y->size && x->align == y->align && x->stack == y->stack &&
           (x->type != EV_ALLOC || x->fn == y->fn) &&
           x->old_addr == y->old_addr && x->old_size == y->old_size &&
           x->has_old_size == y->has_old_size && x->inherited == y->inherited &&
           x->touched == y->touched;
}

/* Problems go to stderr: keep a run quiet. */
static FILE *quiet_begin(void)
{
    FILE *saved = stderr;
    stderr = fopen("/dev/null", "w");
    return saved;
}

static void quiet_end(FILE *saved)
{
    fclose(stderr);
    stderr = saved;
}

START_TEST(fast_path_reads_what_jansson_reads)
{
    char path[] = "/tmp/memsim-reader-test.XXXXXX";
    write_corpus(path, 200000);
    FILE *saved = quiet_begin();
    event_t *a, *b;
    size_t na, nb;
    reader_t ra, rb;
    read_all(path, true, &a, &na, &ra);
    read_all(path, false, &b, &nb, &rb);
    quiet_end(saved);

    ck_assert_uint_eq(na, nb);
    ck_assert_int_eq(ra.bad_lines, rb.bad_lines);
    for (int t = 0; t < EV_COUNT; t++)
        ck_assert_int_eq(ra.by_type[t], rb.by_type[t]);
    for (size_t i = 0; i < na; i++) {
        const event_t *x = &a[i], *y = &b[i];
        REQUIRE(same_event(x, y), "event %zu differs (type %d vs %d, t %" PRIu64 " vs %" PRIu64
                ")", i, x->type, y->type, x->t, y->t);
    }
    ck_assert_int_eq(ra.fast, 0);
    ck_assert_int_gt(rb.fast, 100000); /* the fast path did most of the work */
    ck_assert_int_gt(rb.bad_lines, 1000); /* and the near misses were there */
    reader_close(&ra);
    reader_close(&rb);
    free(a);
    free(b);
    unlink(path);
}
END_TEST

/* Lines are parsed where they lie in the read buffer: any read size, down
 * to a byte at a time (every line split across reads, every line longer
 * than the buffer), gives the same events, line numbers and counts. */
START_TEST(any_read_size_reads_the_same)
{
    char path[] = "/tmp/memsim-reader-test.XXXXXX";
    write_corpus(path, 5000);
    FILE *saved = quiet_begin();
    event_t *a;
    size_t na;
    reader_t ra;
    read_all(path, false, &a, &na, &ra);
    static const size_t chunks[] = {1, 2, 7, 64, 1000, 65536};
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
        event_t *b;
        size_t nb;
        reader_t rb;
        read_chunked(path, false, chunks[c], &b, &nb, &rb);
        REQUIRE(na == nb && ra.lineno == rb.lineno && ra.bad_lines == rb.bad_lines &&
                    ra.fast == rb.fast && ra.truncated == rb.truncated,
                "chunk %zu: %zu events vs %zu, line %ld vs %ld", chunks[c], nb, na, rb.lineno,
                ra.lineno);
        for (size_t i = 0; i < na; i++)
            REQUIRE(same_event(&a[i], &b[i]), "chunk %zu: event %zu differs", chunks[c], i);
        reader_close(&rb);
        free(b);
    }
    quiet_end(saved);
    reader_close(&ra);
    free(a);
    unlink(path);
}
END_TEST

/* A trace file in path (a mkstemp template) of a meta record and a
 * sample line far longer than a read (20,000 children), left open. */
static FILE *long_line_trace(char *path)
{
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "{\"ev\":\"meta\",\"t\":0,\"tid\":1,\"format\":\"memsim-trace\",\"version\":1}\n");
    fprintf(f, "{\"ev\":\"sample\",\"t\":5,\"tid\":2,\"rss\":4096,\"children\":[");
    for (int i = 0; i < 20000; i++)
        fprintf(f, "%s{\"pid\":%d,\"rss\":8192}", i ? "," : "", i + 100);
    fprintf(f, "]}\n");
    return f;
}

/* A line far longer than the read size is read whole; an unterminated
 * last line is read (and named truncated when it is not JSON). */
START_TEST(long_and_last_lines)
{
    char path[] = "/tmp/memsim-reader-test.XXXXXX";
    FILE *f = long_line_trace(path);
    fprintf(f, "{\"ev\":\"free\",\"t\":6,\"tid\":1,\"fn\":\"free\",\"addr\":64,\"size\":8,"
               "\"stack\":1}");
    fclose(f);
    for (size_t chunk = 0; chunk <= 4096; chunk += 4096) {
        reader_t r;
        ck_assert_int_eq(reader_open(&r, path), 0);
        r.chunk = chunk;
        event_t e;
        ck_assert_int_eq(reader_next(&r, &e), 1);
        ck_assert_int_eq(e.type, EV_META);
        ck_assert_int_eq(reader_next(&r, &e), 1);
        ck_assert_int_eq(e.type, EV_SAMPLE);
        ck_assert_uint_eq(e.rss, 4096);
        ck_assert_uint_eq(json_array_size(json_object_get(e.json, "children")), 20000);
        ck_assert_int_eq(reader_next(&r, &e), 1); /* no '\n', still a whole record */
        ck_assert_int_eq(e.type, EV_FREE);
        ck_assert_uint_eq(e.addr, 64);
        FILE *saved = quiet_begin();
        ck_assert_int_eq(reader_next(&r, &e), 0);
        quiet_end(saved);
        ck_assert(r.truncated); /* no end record */
        ck_assert_int_eq(r.lineno, 3);
        ck_assert_int_eq(r.bad_lines, 0);
        reader_close(&r);
    }
    unlink(path);
}
END_TEST

/* No memory to read a long line whole: one line says so, and the part
 * read is not taken for a line of its own (it was: "a truncated last
 * line" too, a second message for one cause). */
START_TEST(no_memory_for_a_long_line_is_one_message)
{
    char path[] = "/tmp/memsim-reader-test.XXXXXX";
    FILE *f = long_line_trace(path);
    fclose(f);
    reader_t r;
    ck_assert_int_eq(reader_open(&r, path), 0);
    r.chunk = 4096;
    event_t e;
    ck_assert_int_eq(reader_next(&r, &e), 1);
    ck_assert_int_eq(e.type, EV_META);
    FILE *saved = quiet_begin();
    failmalloc_arm(1); /* the read buffer's first growth for the long line */
    int got = reader_next(&r, &e);
    bool failed = failmalloc_disarm();
    quiet_end(saved);
    ck_assert(failed);
    ck_assert_int_eq(got, 0);
    ck_assert(r.truncated);
    ck_assert_int_eq(r.bad_lines, 0);
    reader_close(&r);
    unlink(path);
}
END_TEST

/* A trace cut by SIGKILL ends in NUL bytes: the reader stops at the
 * first one, without reading (or buffering) the rest of the tail. */
START_TEST(nul_tail_is_not_read)
{
    char path[] = "/tmp/memsim-reader-test.XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "{\"ev\":\"meta\",\"t\":0,\"tid\":1,\"format\":\"memsim-trace\",\"version\":1}\n");
    fprintf(f, "{\"ev\":\"free\",\"t\":6,\"tid\":1,\"fn\":\"free\",\"addr\":64,\"size\":8,"
               "\"stack\":1}\n");
    fclose(f);
    ck_assert_int_eq(truncate(path, 64L << 20), 0); /* 64 MiB of NUL bytes, sparse */
    reader_t r;
    ck_assert_int_eq(reader_open(&r, path), 0);
    event_t e;
    ck_assert_int_eq(reader_next(&r, &e), 1);
    ck_assert_int_eq(reader_next(&r, &e), 1);
    ck_assert_int_eq(e.type, EV_FREE);
    FILE *saved = quiet_begin();
    ck_assert_int_eq(reader_next(&r, &e), 0);
    quiet_end(saved);
    ck_assert(r.truncated);
    ck_assert_int_eq(r.lineno, 3);
    ck_assert_uint_le(r.cap, 2 * READER_CHUNK); /* the tail was not buffered */
    reader_close(&r);
    unlink(path);
}
END_TEST

/* Version 3: the fast path reads every compact record as jansson (and
 * fill_array) do, with the same clock, threads and problems. */
START_TEST(compact_records_fast_and_slow_agree)
{
    char path[] = "/tmp/memsim-reader-test.XXXXXX";
    write_corpus3(path, 200000);
    FILE *saved = quiet_begin();
    event_t *a, *b;
    size_t na, nb;
    reader_t ra, rb;
    read_all(path, true, &a, &na, &ra);
    read_all(path, false, &b, &nb, &rb);
    quiet_end(saved);
    ck_assert_uint_eq(na, nb);
    ck_assert_int_eq(ra.bad_lines, rb.bad_lines);
    for (int t = 0; t < EV_COUNT; t++)
        ck_assert_int_eq(ra.by_type[t], rb.by_type[t]);
    for (size_t i = 0; i < na; i++)
        REQUIRE(same_event(&a[i], &b[i]), "event %zu differs (type %d vs %d, t %" PRIu64
                " vs %" PRIu64 ", addr %" PRIx64 " vs %" PRIx64 ")", i, a[i].type, b[i].type,
                a[i].t, b[i].t, a[i].addr, b[i].addr);
    ck_assert_int_gt(rb.fast, 85000);
    ck_assert_int_gt(rb.bad_lines, 10000);
    ck_assert_int_gt(rb.by_type[EV_REALLOC_FAILED], 1000);
    size_t touched = 0;
    for (size_t i = 0; i < nb; i++)
        touched += b[i].touched != 0;
    ck_assert_uint_gt(touched, 1000); /* version 5's frees and reallocs with touched pages */
    /* Times are microseconds (to ns), never before 0. */
    for (size_t i = 0; i < nb; i++)
        REQUIRE(b[i].t % 1000 == 0, "event %zu at %" PRIu64 " ns", i, b[i].t);
    reader_close(&ra);
    reader_close(&rb);
    free(a);
    free(b);
    unlink(path);
}
END_TEST

/* A compressed trace (many frames) reads exactly as the plain one, at
 * any read size; cut inside a frame it reads up to what zstd gave and
 * says truncated; corrupt, it stops with the error. */
START_TEST(compressed_reads_as_plain)
{
    char path[] = "/tmp/memsim-reader-test.XXXXXX", zpath[] = "/tmp/memsim-reader-z.XXXXXX";
    write_corpus3(path, 20000);
    compress_file(path, zpath, 100000, SIZE_MAX);
    FILE *saved = quiet_begin();
    event_t *a, *b;
    size_t na, nb;
    reader_t ra, rb;
    read_all(path, false, &a, &na, &ra);
    static const size_t chunks[] = {0, 1, 4093};
    for (size_t c = 0; c < 3; c++) {
        read_chunked(zpath, false, chunks[c], &b, &nb, &rb);
        ck_assert(tracein_compressed(rb.in));
        REQUIRE(na == nb && ra.lineno == rb.lineno && ra.bad_lines == rb.bad_lines,
                "chunk %zu: %zu events vs %zu", chunks[c], nb, na);
        for (size_t i = 0; i < na; i++)
            REQUIRE(same_event(&a[i], &b[i]), "chunk %zu: event %zu differs", chunks[c], i);
        reader_close(&rb);
        free(b);
    }
    /* Cut in the middle of its third frame. */
    struct stat st;
    char cut[] = "/tmp/memsim-reader-c.XXXXXX";
    ck_assert_int_eq(stat(zpath, &st), 0);
    compress_file(path, cut, 100000, (size_t)st.st_size / 2);
    read_all(cut, false, &b, &nb, &rb);
    ck_assert(rb.truncated);
    ck_assert(tracein_cut(rb.in));
    ck_assert_uint_gt(nb, na / 4);
    ck_assert_uint_lt(nb, na);
    for (size_t i = 0; i + 1 < nb; i++) /* the last one may be a line cut short */
        REQUIRE(same_event(&a[i], &b[i]), "cut: event %zu differs", i);
    reader_close(&rb);
    free(b);
    /* Damaged: at each of 24 places in turn, 8 bytes flipped.  Reading
     * stops with the error, and none of the damaged frame's bytes were
     * read: what came is a prefix of the whole, event for event, with no
     * line of garbage. */
    char dpath[] = "/tmp/memsim-reader-d.XXXXXX";
    int dfd = mkstemp(dpath);
    ck_assert_int_ge(dfd, 0);
    close(dfd);
    FILE *zf = fopen(zpath, "r");
    char *orig = malloc((size_t)st.st_size);
    ck_assert_uint_eq(fread(orig, 1, (size_t)st.st_size, zf), (size_t)st.st_size);
    fclose(zf);
    for (int k = 1; k <= 24; k++) {
        size_t at = (size_t)st.st_size * (size_t)k / 26;
        FILE *f = fopen(dpath, "w");
        for (size_t i = 0; i < 8; i++)
            orig[at + i] ^= 0x55;
        fwrite(orig, 1, (size_t)st.st_size, f);
        for (size_t i = 0; i < 8; i++)
            orig[at + i] ^= 0x55;
        fclose(f);
        read_all(dpath, false, &b, &nb, &rb);
        REQUIRE(rb.truncated && tracein_error(rb.in), "damage at %zu: no error", at);
        REQUIRE(rb.bad_lines <= ra.bad_lines && nb <= na, "damage at %zu: %ld bad lines "
                "(whole: %ld), %zu events (whole: %zu)", at, rb.bad_lines, ra.bad_lines, nb, na);
        for (size_t i = 0; i < nb; i++)
            REQUIRE(same_event(&a[i], &b[i]), "damage at %zu: event %zu differs", at, i);
        reader_close(&rb);
        free(b);
    }
    free(orig);
    unlink(dpath);
    quiet_end(saved);
    reader_close(&ra);
    free(a);
    unlink(path);
    unlink(zpath);
    unlink(cut);
}
END_TEST

Suite *reader_suite(void)
{
    Suite *s = suite_create("reader");
    TCase *tc = tcase_create("reader");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, fast_path_reads_what_jansson_reads);
    tcase_add_test(tc, any_read_size_reads_the_same);
    tcase_add_test(tc, long_and_last_lines);
    tcase_add_test(tc, no_memory_for_a_long_line_is_one_message);
    tcase_add_test(tc, nul_tail_is_not_read);
    tcase_add_test(tc, compact_records_fast_and_slow_agree);
    tcase_add_test(tc, compressed_reads_as_plain);
    suite_add_tcase(s, tc);
    return s;
}
