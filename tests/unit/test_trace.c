/* trace: the mapped trace file. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "preload/trace.h"
#include "tests/unit/helpers.h"
#include "tests/unit/suites.h"

static char dir[64];

/* Closes with a fixed text of its length (what recorder_end does with
 * the end record); records counted are checked by the caller. */
static uint64_t closed_records;
static void fill_text(char *slot, size_t len, uint64_t records, void *ctx)
{
    memcpy(slot, ctx, len);
    closed_records = records;
}

static int close_with(trace_t *t, const char *text)
{
    return trace_close_with(t, strlen(text), fill_text, (void *)text, 100000000ull);
}

static void setup(void)
{
    strcpy(dir, "/tmp/memsim-trace-test.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return buf;
}

START_TEST(open_creates_a_private_file_once)
{
    char path[128];
    snprintf(path, sizeof path, "%s/t.jsonl", dir);
    trace_t *t = calloc(1, sizeof *t);
    ck_assert_int_eq(trace_open(t, path), 0);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0600);
    trace_t *u = calloc(1, sizeof *u);
    ck_assert_int_eq(trace_open(u, path), -EEXIST); /* never overwrite */
    char link[128];
    snprintf(link, sizeof link, "%s/link.jsonl", dir);
    ck_assert_int_eq(symlink("/tmp/whatever", link), 0);
    ck_assert_int_eq(trace_open(u, link), -EEXIST); /* O_EXCL refuses links too */
    free(u);
    free(t);
}
END_TEST

START_TEST(records_close_and_truncate)
{
    char path[128];
    snprintf(path, sizeof path, "%s/t.jsonl", dir);
    trace_t *t = calloc(1, sizeof *t);
    ck_assert_int_eq(trace_open(t, path), 0);
    ck_assert_int_eq(trace_append(t, "{\"a\":1}\n", 8), 0);
    ck_assert_int_eq(trace_append(t, "{\"b\":2}\n", 8), 0);
    ck_assert_int_eq(close_with(t, "{\"end\":1}\n"), 0);
    ck_assert_uint_eq(closed_records, 3);
    ck_assert_int_eq(trace_append(t, "{\"c\":3}\n", 8), -1); /* after the end */
    ck_assert_int_eq(close_with(t, "x\n"), -1);
    ck_assert_uint_eq(t->records, 3);
    ck_assert_uint_eq(t->dropped, 0);
    ck_assert_uint_eq(t->after_end, 1);
    trace_finish(t);
    size_t len;
    char *data = slurp(path, &len);
    ck_assert_uint_eq(len, 26);
    ck_assert_str_eq(data, "{\"a\":1}\n{\"b\":2}\n{\"end\":1}\n");
    /* A failed exec reopens the trace: records follow the end again. */
    trace_reopen(t);
    ck_assert_int_eq(trace_append(t, "{\"d\":4}\n", 8), 0);
    ck_assert_int_eq(close_with(t, "{\"end\":2}\n"), 0);
    trace_finish(t);
    free(data);
    data = slurp(path, &len);
    ck_assert_str_eq(data, "{\"a\":1}\n{\"b\":2}\n{\"end\":1}\n{\"d\":4}\n{\"end\":2}\n");
    free(data);
    free(t);
}
END_TEST

START_TEST(the_file_grows_and_survives_a_directory_change)
{
    char path[128];
    snprintf(path, sizeof path, "%s/t.jsonl", dir);
    char cwd[512];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    ck_assert_int_eq(chdir(dir), 0);
    trace_t *t = calloc(1, sizeof *t);
    ck_assert_int_eq(trace_open(t, "t.jsonl"), 0); /* relative: made absolute */
    ck_assert_str_eq(t->path, path);
    ck_assert_int_eq(chdir("/"), 0);
    char rec[100];
    memset(rec, 'x', sizeof rec);
    rec[0] = '"';
    rec[98] = '"';
    rec[99] = '\n';
    for (int i = 0; i < 200000; i++) /* 20 MB: several growths */
        REQUIRE(trace_append(t, rec, sizeof rec) == 0, "append %d failed", i);
    ck_assert_uint_ge(t->mapped, 20000000);
    ck_assert_int_eq(close_with(t, "\"end\"\n"), 0);
    trace_finish(t);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_size, 200000 * 100 + 6);
    ck_assert_uint_eq(t->dropped, 0);
    ck_assert_int_eq(chdir(cwd), 0);
    free(t);
}
END_TEST

typedef struct writer_s {
    trace_t *t;
    int id;
} writer_t;

static void *write_many(void *arg)
{
    writer_t *w = arg;
    char rec[32];
    for (int i = 0; i < 20000; i++) {
        int n = snprintf(rec, sizeof rec, "{\"w\":%d,\"i\":%d}\n", w->id, i);
        if (trace_append(w->t, rec, (size_t)n))
            return (void *)1;
    }
    return NULL;
}

START_TEST(threads_never_tear_records)
{
    char path[128];
    snprintf(path, sizeof path, "%s/t.jsonl", dir);
    trace_t *t = calloc(1, sizeof *t);
    ck_assert_int_eq(trace_open(t, path), 0);
    pthread_t th[8];
    writer_t w[8];
    for (int i = 0; i < 8; i++) {
        w[i] = (writer_t){.t = t, .id = i};
        ck_assert_int_eq(pthread_create(&th[i], NULL, write_many, &w[i]), 0);
    }
    for (int i = 0; i < 8; i++) {
        void *r;
        pthread_join(th[i], &r);
        ck_assert_ptr_null(r);
    }
    ck_assert_int_eq(close_with(t, "{\"end\":1}\n"), 0);
    ck_assert_uint_eq(closed_records, 8 * 20000 + 1);
    trace_finish(t);
    size_t len;
    char *data = slurp(path, &len);
    /* Every record whole, each thread's in its own order. */
    int next[8] = {0};
    long lines = 0;
    for (char *p = data, *nl; (nl = strchr(p, '\n')); p = nl + 1) {
        int wid, i;
        lines++;
        if (!strncmp(p, "{\"end\"", 6))
            continue;
        REQUIRE(sscanf(p, "{\"w\":%d,\"i\":%d}", &wid, &i) == 2 && wid >= 0 && wid < 8,
                "torn record at line %ld", lines);
        REQUIRE(i == next[wid], "thread %d: record %d after %d", wid, i, next[wid] - 1);
        next[wid]++;
    }
    ck_assert_int_eq(lines, 8 * 20000 + 1);
    free(data);
    free(t);
}
END_TEST

Suite *trace_suite(void)
{
    Suite *s = suite_create("trace");
    TCase *tc = tcase_create("trace");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, open_creates_a_private_file_once);
    tcase_add_test(tc, records_close_and_truncate);
    tcase_add_test(tc, the_file_grows_and_survives_a_directory_change);
    tcase_add_test(tc, threads_never_tear_records);
    suite_add_tcase(s, tc);
    return s;
}
