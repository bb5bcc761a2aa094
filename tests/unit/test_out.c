/*
 * out: the recorder's trace file.  Names are never reused, only whole
 * records reach the file, and under the file size limit the end record
 * still fits, with what did not counted.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "trace/tracein.h"
#include "recorder/out.h"
#include "tests/unit/helpers.h"
#include "tests/unit/suites.h"

static char dir[64];

/* A plain trace's configuration (the compressed tests set compress). */
static config_t cfg_for(const char *d)
{
    config_t c;
    config_defaults(&c);
    snprintf(c.output, sizeof c.output, "%s", d);
    c.compress = false;
    return c;
}

/* The whole of a trace file as tracein decodes it, NUL-terminated. */
static char *decoded(const char *path, size_t *len, bool *cut)
{
    tracein_t *in = tracein_open(path);
    ck_assert_ptr_nonnull(in);
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap + 1);
    for (size_t got; (got = tracein_read(in, buf + n, cap - n));) {
        n += got;
        if (n == cap)
            buf = realloc(buf, (cap *= 2) + 1);
    }
    ck_assert_ptr_null(tracein_error(in));
    *cut = tracein_cut(in);
    tracein_close(in);
    buf[n] = '\0';
    *len = n;
    return buf;
}

static void make_dir(void)
{
    strcpy(dir, "/tmp/memsim-out-test.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static void put(out_t *o, const char *rec)
{
    size_t n = strlen(rec);
    memcpy(out_line(o, n), rec, n);
    out_commit(o, n);
}

static off_t size_of(const char *path)
{
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    return st.st_size;
}

START_TEST(names_are_never_reused)
{
    make_dir();
    config_t c = cfg_for(dir);
    out_t a, b;
    char err[600];
    ck_assert_int_eq(out_create(&a, &c, "prog", 42, err, sizeof err), 0);
    ck_assert_int_eq(out_create(&b, &c, "prog", 42, err, sizeof err), 0);
    ck_assert(strstr(a.path, "memsim.prog.42.0.jsonl"));
    ck_assert(strstr(b.path, "memsim.prog.42.1.jsonl"));
    struct stat st;
    ck_assert_int_eq(stat(a.path, &st), 0);
    ck_assert_uint_eq(st.st_mode & 0777, 0600);
    out_close(&a);
    out_close(&b);
    config_t bad = cfg_for("/nonexistent/dir");
    ck_assert_int_eq(out_create(&a, &bad, "prog", 1, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "memsim: cannot create the trace file /nonexistent/dir/") &&
                      strstr(err, "No such file or directory; tracing is off"),
                  "%s", err);
    remove_dir();
}
END_TEST

START_TEST(records_reach_the_file_whole)
{
    make_dir();
    config_t c = cfg_for(dir);
    out_t o;
    char err[600];
    ck_assert_int_eq(out_create(&o, &c, "p", 1, err, sizeof err), 0);
    for (int i = 0; i < 100000; i++)
        put(&o, "{\"ev\":\"x\"}\n");
    out_flush(&o);
    ck_assert_int_eq(size_of(o.path), 100000 * 11);
    out_last(&o, "{\"ev\":\"end\"}\n", 13);
    out_close(&o);
    ck_assert_int_eq(size_of(o.path), 100000 * 11 + 13); /* no preallocated tail */
    ck_assert_uint_eq(o.records, 100001);
    ck_assert_uint_eq(o.dropped, 0);
    remove_dir();
}
END_TEST

/* The disk's blocks of a file, in bytes. */
static long long blocks_of(const char *path)
{
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    return (long long)st.st_blocks * 512;
}

/* The file takes the end record's room from its creation, and no more
 * than that past what is written (a mebibyte at a time took a small
 * disk's room from the program and the other traces of its tree). */
START_TEST(the_file_takes_its_reserve_and_no_more)
{
    make_dir();
    config_t c = cfg_for(dir);
    out_t o;
    char err[600];
    ck_assert_int_eq(out_create(&o, &c, "p", 1, err, sizeof err), 0);
    long long at_start = blocks_of(o.path);
    ck_assert(at_start == 0 || at_start == OUT_RESERVE); /* 0: no fallocate here */
    for (int i = 0; i < 1000; i++)
        put(&o, "{\"ev\":\"x\"}\n");
    out_flush(&o);
    ck_assert_int_eq(size_of(o.path), 1000 * 11);
    ck_assert_int_le(blocks_of(o.path), (1000 * 11 + OUT_RESERVE + 4095) / 4096 * 4096);
    out_close(&o);
    remove_dir();
}
END_TEST

/* ulimit -f: the file stops short of the limit, keeping room for the end
 * record; the rest is counted, with EFBIG as the cause. */
START_TEST(the_file_size_limit_keeps_room_for_the_end)
{
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {2u << 20, RLIM_INFINITY};
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
    make_dir();
    config_t c = cfg_for(dir);
    out_t o;
    char err[600];
    ck_assert_int_eq(out_create(&o, &c, "p", 1, err, sizeof err), 0);
    char rec[101];
    memset(rec, 'x', 99);
    rec[0] = '{';
    rec[98] = '}';
    rec[99] = '\n';
    rec[100] = '\0';
    for (int i = 0; i < 40000; i++) /* 4 MB: twice the limit */
        put(&o, rec);
    out_last(&o, "{\"ev\":\"end\"}\n", 13);
    out_close(&o);
    off_t size = size_of(o.path);
    ck_assert_int_le(size, 2 << 20);
    ck_assert_int_eq((size - 13) % 100, 0); /* whole records, then the end */
    ck_assert_uint_eq(o.dropped, 40000 - (uint64_t)(size - 13) / 100);
    ck_assert_int_eq(o.err, EFBIG);
    remove_dir();
}
END_TEST

/* Compressed: a frame at each flush, and together they decode to every
 * record in order; the file is locked while it is being written. */
START_TEST(compressed_records_decode_whole)
{
    make_dir();
    config_t c = cfg_for(dir);
    c.compress = true;
    out_t o;
    char err[600];
    ck_assert_int_eq(out_create(&o, &c, "p", 1, err, sizeof err), 0);
    ck_assert(strstr(o.path, ".jsonl.zst"));
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s", o.path);
    int fd = open(path, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(flock(fd, LOCK_SH | LOCK_NB), -1); /* the writer holds it */
    char rec[64];
    for (int i = 0; i < 200000; i++) {
        int n = snprintf(rec, sizeof rec, "[\"a\",%d,0,\"%x\",16,1]\n", i % 7, i);
        memcpy(out_line(&o, (size_t)n), rec, (size_t)n);
        out_commit(&o, (size_t)n);
        if (i % 50000 == 0)
            out_flush(&o); /* several frames */
    }
    out_last(&o, "{\"ev\":\"end\"}\n", 13);
    out_close(&o);
    ck_assert_int_eq(flock(fd, LOCK_SH | LOCK_NB), 0); /* closed: free */
    close(fd);
    ck_assert_uint_eq(o.records, 200001);
    ck_assert_uint_eq(o.dropped, 0);
    size_t len;
    bool cut;
    char *text = decoded(path, &len, &cut);
    ck_assert(!cut);
    char *p = text;
    for (int i = 0; i < 200000; i++) {
        int n = snprintf(rec, sizeof rec, "[\"a\",%d,0,\"%x\",16,1]\n", i % 7, i);
        REQUIRE(strncmp(p, rec, (size_t)n) == 0, "record %d differs", i);
        p += n;
    }
    ck_assert_str_eq(p, "{\"ev\":\"end\"}\n");
    ck_assert_int_lt(size_of(path), (off_t)len / 4); /* it does compress */
    free(text);
    remove_dir();
}
END_TEST

/* A short trace: its records and its end in one frame, written at once;
 * one that outgrew its allocation: the records' frame, then the end's. */
START_TEST(a_short_trace_ends_in_one_frame)
{
    make_dir();
    config_t c = cfg_for(dir);
    c.compress = true;
    for (int big = 0; big < 2; big++) {
        out_t o;
        char err[600];
        ck_assert_int_eq(out_create(&o, &c, "p", 1, err, sizeof err), 0);
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s", o.path);
        uint64_t x = 88172645463325252ull;
        char rec[64];
        int total = big ? 2000 : 20; /* 2000: 58 KB of records that compress badly */
        for (int i = 0; i < total; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            int n = snprintf(rec, sizeof rec, "[\"f\",1,0,\"%016llx\"]\n", (unsigned long long)x);
            memcpy(out_line(&o, (size_t)n), rec, (size_t)n);
            out_commit(&o, (size_t)n);
        }
        ck_assert(out_last_fits(&o, 13) == !big);
        out_last(&o, "{\"ev\":\"end\"}\n", 13);
        out_close(&o);
        ck_assert_uint_eq(o.records, (uint64_t)total + 1);
        ck_assert_uint_eq(o.dropped, 0);
        size_t len;
        bool cut;
        char *text = decoded(path, &len, &cut);
        ck_assert(!cut);
        ck_assert_int_eq(len, total * 29 + 13);
        ck_assert_str_eq(text + len - 13, "{\"ev\":\"end\"}\n");
        free(text);
        static char file[1 << 20];
        int fd = open(path, O_RDONLY);
        ssize_t got = read(fd, file, sizeof file);
        close(fd);
        ck_assert_int_gt(got, 0);
        size_t first = ZSTD_findFrameCompressedSize(file, (size_t)got);
        ck_assert(!ZSTD_isError(first));
        if (big)
            ck_assert_uint_lt(first, (size_t)got); /* the records, then the end */
        else
            ck_assert_uint_eq(first, (size_t)got); /* one frame */
    }
    remove_dir();
}
END_TEST

/* Compressed under ulimit -f: the frames that fit, whole records only,
 * then the end; what was dropped is counted exactly. */
START_TEST(compressed_file_size_limit)
{
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {256u << 10, RLIM_INFINITY};
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
    make_dir();
    config_t c = cfg_for(dir);
    c.compress = true;
    out_t o;
    char err[600];
    ck_assert_int_eq(out_create(&o, &c, "p", 1, err, sizeof err), 0);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s", o.path);
    /* Records that compress badly: a pseudo-random hex number each. */
    uint64_t x = 88172645463325252ull;
    char rec[64];
    int total = 100000;
    for (int i = 0; i < total; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int n = snprintf(rec, sizeof rec, "[\"f\",1,0,\"%016llx\"]\n", (unsigned long long)x);
        memcpy(out_line(&o, (size_t)n), rec, (size_t)n);
        out_commit(&o, (size_t)n);
    }
    out_last(&o, "{\"ev\":\"end\"}\n", 13);
    out_close(&o);
    ck_assert_int_le(size_of(path), 256 << 10);
    size_t len;
    bool cut;
    char *text = decoded(path, &len, &cut);
    ck_assert(!cut);
    long lines = 0;
    for (char *q = text; (q = strchr(q, '\n')); q++)
        lines++;
    ck_assert_int_gt(lines, 1000); /* a good part of it went in */
    ck_assert_uint_eq(o.dropped, (uint64_t)(total + 1 - lines));
    ck_assert(strstr(text, "{\"ev\":\"end\"}\n") == text + len - 13);
    ck_assert_int_eq(o.err, EFBIG);
    free(text);
    remove_dir();
}
END_TEST

Suite *out_suite(void)
{
    Suite *s = suite_create("out");
    TCase *tc = tcase_create("out");
    tcase_add_test(tc, names_are_never_reused);
    tcase_add_test(tc, records_reach_the_file_whole);
    tcase_add_test(tc, the_file_takes_its_reserve_and_no_more);
    tcase_add_test(tc, the_file_size_limit_keeps_room_for_the_end);
    tcase_add_test(tc, compressed_records_decode_whole);
    tcase_add_test(tc, compressed_file_size_limit);
    tcase_add_test(tc, a_short_trace_ends_in_one_frame);
    suite_add_tcase(s, tc);
    return s;
}
