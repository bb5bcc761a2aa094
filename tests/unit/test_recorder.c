/*
 * recorder: the records, through the C API (no LD_PRELOAD).  The
 * recorder is one per process, so every test runs in Check's forked
 * child (the default) with a fresh one.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "preload/recorder.h"
#include "tests/unit/helpers.h"
#include "tests/unit/suites.h"

static char dir[64];
static char output[80];

static const char *fake_env(const char *name)
{
    if (!strcmp(name, "MEMSIM_OUTPUT"))
        return output;
    if (!strcmp(name, "MEMSIM_DEVICE_SIZE"))
        return "64M";
    if (!strcmp(name, "MEMSIM_STACK_DEPTH"))
        return "16";
    return NULL;
}

static void start(void)
{
    strcpy(dir, "/tmp/memsim-recorder-test.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(output, sizeof output, "%s", dir);
    config_t cfg;
    char err[512];
    ck_assert_int_eq(config_load(&cfg, fake_env, err, sizeof err), 0);
    static char *argv[] = {"fake", "--flag", "caf\xc3\xa9", NULL};
    ck_assert_msg(recorder_start(&cfg, "/usr/bin/fake", 3, argv, NULL, err, sizeof err) == 0,
                  "%s", err);
    ck_assert(recorder_active());
}

static void cleanup(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* All records of the trace, parsed. */
static json_t *records(void)
{
    FILE *f = fopen(recorder_trace_path(), "r");
    ck_assert_ptr_nonnull(f);
    json_t *all = json_array();
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) > 0 && line[0]) {
        json_error_t e;
        json_t *o = json_loadb(line, (size_t)len, 0, &e);
        ck_assert_msg(o != NULL, "bad line %s: %s", line, e.text);
        json_array_append_new(all, o);
    }
    free(line);
    fclose(f);
    return all;
}

/* Whether the trace holds text exactly (the hot records are formatted by
 * hand: their keys must come in the order docs/trace-format.md gives). */
static bool trace_has(const char *text)
{
    FILE *f = fopen(recorder_trace_path(), "r");
    ck_assert_ptr_nonnull(f);
    static char all[1 << 20];
    size_t n = fread(all, 1, sizeof all - 1, f);
    all[n] = '\0';
    fclose(f);
    return strstr(all, text) != NULL;
}

/* The first record of type ev at or after *from; fails if none. */
static json_t *next_of(json_t *all, const char *ev, size_t *from)
{
    for (size_t i = *from; i < json_array_size(all); i++) {
        json_t *o = json_array_get(all, i);
        if (!strcmp(json_string_value(json_object_get(o, "ev")), ev)) {
            *from = i + 1;
            return o;
        }
    }
    ck_abort_msg("no %s record after %zu", ev, *from);
    return NULL;
}

static json_int_t ival(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    ck_assert_msg(json_is_integer(v), "%s is not an integer", k);
    return json_integer_value(v);
}

static const char *sval(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    ck_assert_msg(json_is_string(v), "%s is not a string", k);
    return json_string_value(v);
}

START_TEST(heap_events_become_records)
{
    start();
    recorder_alloc(FN_MALLOC, (void *)0x1000, 100, 16, NULL);
    recorder_alloc(FN_CALLOC, (void *)0x2000, 48, 16, NULL);
    recorder_free(FN_FREE, (void *)0x1000, NULL);
    recorder_free(FN_FREE, (void *)0x9999, NULL); /* never allocated: an unknown_free error */
    livemap_entry_t q = {.addr = 0x8888, .size = 8};
    livemap_put(&livemap_quiet, &q);         /* a block memsim's own work made */
    recorder_free(FN_FREE, (void *)0x8888, NULL); /* no error, no record */
    recorder_flush();
    ck_assert_uint_eq(livemap_count(&livemap_quiet), 0);
    recorder_move_t m;
    recorder_realloc_begin(&m, (void *)0x2000, NULL);
    recorder_realloc_end(&m, FN_REALLOC, (void *)0x3000, 4000);
    recorder_realloc_begin(&m, (void *)0x3000, NULL);
    recorder_realloc_end(&m, FN_REALLOC, NULL, 1ull << 40); /* failed: 0x3000 stays */
    recorder_alloc(FN_MEMALIGN, (void *)0x5000, 10, 64, NULL);
    recorder_phase("load", true);
    recorder_phase(NULL, false);
    recorder_end("exit", 3, -1);
    ck_assert(!recorder_active());

    /* "fn" and "align" are left out when they are the defaults (malloc,
     * free, realloc; 16). */
    ck_assert(trace_has(",\"addr\":4096,\"size\":100,\"stack\":1,\"sim\":268435456}\n"));
    ck_assert(trace_has(",\"fn\":\"calloc\",\"addr\":8192,\"size\":48,\"stack\":1,"));
    ck_assert(trace_has(",\"addr\":4096,\"size\":100,\"stack\":1}\n"));
    ck_assert(trace_has(",\"old_addr\":8192,\"addr\":12288,"
                        "\"old_size\":48,\"size\":4000,\"stack\":1,\"sim\":"));
    ck_assert(trace_has(",\"addr\":12288,\"size\":1099511627776,\"stack\":1}\n"));
    ck_assert(trace_has(",\"fn\":\"memalign\",\"addr\":20480,\"size\":10,\"align\":64,"));
    ck_assert(!trace_has("\"fn\":\"malloc\"") && !trace_has("\"fn\":\"realloc\"") &&
              !trace_has("\"align\":16"));
    json_t *all = records();
    size_t at = 0;
    json_t *meta = next_of(all, "meta", &at);
    ck_assert_uint_eq(at, 1); /* first */
    ck_assert_str_eq(sval(meta, "format"), "memsim-trace");
    ck_assert_int_eq(ival(meta, "version"), 2);
    ck_assert_int_eq(ival(meta, "pid"), getpid());
    ck_assert_str_eq(sval(meta, "exe"), "/usr/bin/fake");
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(meta, "argv"), 2)),
                     "caf\xc3\xa9");
    ck_assert_str_eq(sval(meta, "strategy"), "best-fit");
    ck_assert_int_eq(ival(meta, "device_size"), 64 << 20);
    ck_assert_int_eq(ival(meta, "stack_depth"), 16);
    ck_assert(json_is_null(json_object_get(meta, "parent_trace")));
    size_t mods = at;
    next_of(all, "module", &mods); /* the loaded objects */

    json_t *a = next_of(all, "alloc", &at);
    ck_assert(!json_object_get(a, "fn"));    /* malloc */
    ck_assert_int_eq(ival(a, "addr"), 0x1000);
    ck_assert_int_eq(ival(a, "size"), 100);
    ck_assert(!json_object_get(a, "align")); /* 16 */
    ck_assert_int_eq(ival(a, "sim"), 0x10000000); /* best fit: the device's first block */
    ck_assert_int_eq(ival(a, "tid"), ival(meta, "tid"));
    json_int_t stack = ival(a, "stack");
    ck_assert_int_ge(stack, 1);
    size_t s = 0;
    json_t *st = next_of(all, "stack", &s);
    ck_assert_uint_lt(s, at); /* defined before use */
    ck_assert_int_eq(ival(st, "id"), 1);
    ck_assert(json_array_size(json_object_get(st, "frames")) >= 1);

    a = next_of(all, "alloc", &at);
    ck_assert_str_eq(sval(a, "fn"), "calloc");
    ck_assert_int_eq(ival(a, "sim"), 0x10000000 + 112); /* after the 112-byte block */
    json_t *f = next_of(all, "free", &at);
    ck_assert(!json_object_get(f, "fn")); /* free (the unknown_free error below names it) */
    ck_assert_int_eq(ival(f, "addr"), 0x1000);
    ck_assert_int_eq(ival(f, "size"), 100);
    ck_assert(!json_object_get(f, "inherited"));
    json_t *e = next_of(all, "error", &at);
    ck_assert_str_eq(sval(e, "kind"), "unknown_free");
    ck_assert_int_eq(ival(e, "addr"), 0x9999);
    json_t *r = next_of(all, "realloc", &at);
    ck_assert_int_eq(ival(r, "old_addr"), 0x2000);
    ck_assert_int_eq(ival(r, "addr"), 0x3000);
    ck_assert_int_eq(ival(r, "old_size"), 48);
    ck_assert_int_eq(ival(r, "size"), 4000);
    json_t *rf = next_of(all, "realloc_failed", &at);
    ck_assert_int_eq(ival(rf, "addr"), 0x3000);
    json_t *p = next_of(all, "phase", &at);
    ck_assert_str_eq(sval(p, "op"), "begin");
    ck_assert_str_eq(sval(p, "name"), "load");
    p = next_of(all, "phase", &at);
    ck_assert_str_eq(sval(p, "op"), "end");
    json_t *end = next_of(all, "end", &at);
    ck_assert_uint_eq(at, json_array_size(all)); /* last */
    ck_assert_str_eq(sval(end, "reason"), "exit");
    ck_assert_int_eq(ival(end, "status"), 3);
    ck_assert(json_is_null(json_object_get(end, "signal")));
    ck_assert_int_eq(ival(end, "records"), (json_int_t)json_array_size(all));
    ck_assert_int_eq(ival(end, "dropped"), 0);
    ck_assert_int_eq(ival(end, "unknown_frees"), 1);
    ck_assert_int_eq(ival(end, "live_allocations"), 2); /* 0x3000, 0x5000 */
    ck_assert_int_eq(ival(end, "live_bytes"), 4010);
    json_decref(all);
    cleanup();
}
END_TEST

START_TEST(mappings_become_records)
{
    start();
    recorder_mmap(FN_MMAP, (void *)0x7000, 8192, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1);
    recorder_move_t m;
    recorder_mremap_begin(&m, (void *)0x7000, 8192);
    recorder_mremap_end(&m, (void *)0x9000, 16384, MREMAP_MAYMOVE);
    recorder_munmap((void *)0x9000, 16384);
    recorder_end("_exit", 0, -1);
    json_t *all = records();
    size_t at = 0;
    json_t *o = next_of(all, "mmap", &at);
    ck_assert_int_eq(ival(o, "addr"), 0x7000);
    ck_assert_int_eq(ival(o, "size"), 8192);
    ck_assert_int_eq(ival(o, "prot"), PROT_READ);
    ck_assert_int_eq(ival(o, "fd"), -1);
    o = next_of(all, "mremap", &at);
    ck_assert_int_eq(ival(o, "old_addr"), 0x7000);
    ck_assert_int_eq(ival(o, "addr"), 0x9000);
    ck_assert_int_eq(ival(o, "size"), 16384);
    o = next_of(all, "munmap", &at);
    ck_assert_int_eq(ival(o, "addr"), 0x9000);
    o = next_of(all, "end", &at);
    ck_assert_str_eq(sval(o, "reason"), "_exit");
    json_decref(all);
    cleanup();
}
END_TEST

START_TEST(a_failed_exec_continues_the_trace)
{
    start();
    char *argv[] = {"/nonexistent", "x", NULL};
    recorder_exec("/nonexistent", argv);
    ck_assert(!recorder_active());
    recorder_exec_failed(2);
    ck_assert(recorder_active());
    recorder_alloc(FN_MALLOC, (void *)0x1000, 1, 16, NULL);
    recorder_end("exit", 0, -1);
    json_t *all = records();
    size_t at = 0;
    json_t *o = next_of(all, "exec", &at);
    ck_assert_str_eq(sval(o, "path"), "/nonexistent");
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(o, "argv"), 1)), "x");
    o = next_of(all, "end", &at);
    ck_assert_str_eq(sval(o, "reason"), "exec");
    o = next_of(all, "exec_failed", &at);
    ck_assert_int_eq(ival(o, "errno"), 2);
    next_of(all, "alloc", &at);
    o = next_of(all, "end", &at);
    ck_assert_str_eq(sval(o, "reason"), "exit");
    json_decref(all);
    cleanup();
}
END_TEST

START_TEST(an_unwritable_directory_is_one_clear_line)
{
    snprintf(output, sizeof output, "/nonexistent/memsim");
    config_t cfg;
    char err[512];
    ck_assert_int_eq(config_load(&cfg, fake_env, err, sizeof err), 0);
    char *argv[] = {"fake", NULL};
    ck_assert_int_eq(recorder_start(&cfg, "/usr/bin/fake", 1, argv, NULL, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "cannot create the trace file /nonexistent/memsim/memsim.fake."),
                  "%s", err);
    ck_assert_msg(strstr(err, "No such file or directory; tracing is off"), "%s", err);
    ck_assert_ptr_null(strchr(err, '\n'));
    ck_assert(!recorder_active());
}
END_TEST

Suite *recorder_suite(void)
{
    Suite *s = suite_create("recorder");
    TCase *tc = tcase_create("recorder");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, heap_events_become_records);
    tcase_add_test(tc, mappings_become_records);
    tcase_add_test(tc, a_failed_exec_continues_the_trace);
    tcase_add_test(tc, an_unwritable_directory_is_one_clear_line);
    suite_add_tcase(s, tc);
    return s;
}
