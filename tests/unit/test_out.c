/*
 * out: the recorder's trace file.  Names are never reused, only whole
 * records reach the file, and under the file size limit the end record
 * still fits, with what did not counted.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recorder/out.h"
#include "tests/unit/suites.h"

static char dir[64];

static config_t cfg_for(const char *d)
{
    config_t c;
    config_defaults(&c);
    snprintf(c.output, sizeof c.output, "%s", d);
    return c;
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

Suite *out_suite(void)
{
    Suite *s = suite_create("out");
    TCase *tc = tcase_create("out");
    tcase_add_test(tc, names_are_never_reused);
    tcase_add_test(tc, records_reach_the_file_whole);
    tcase_add_test(tc, the_file_size_limit_keeps_room_for_the_end);
    suite_add_tcase(s, tc);
    return s;
}
