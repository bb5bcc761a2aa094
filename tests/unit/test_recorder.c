/*
 * recorder: the recorder's pipeline, driven in one process: a region in
 * shared memory, messages posted as the preload posts them, the trace
 * read back.  Each test runs in Check's forked child (the recorder's
 * state is one per process).
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "preload/arena.h"
#include "preload/clock.h"
#include "preload/events.h"
#include "preload/msg.h"
#include "preload/ring.h"
#include "recorder/recorder.h"
#include "tests/unit/helpers.h"
#include "tests/unit/suites.h"

static char dir[64];
static rec_t rc;
static region_t *r;
static void *arena;

static void *arena_of(void) { return arena; }

/* A published region of this process, tracing into dir (or out_dir). */
static void start_in(const char *out_dir)
{
    arena = mmap(NULL, ARENA_SIZE(2, RING_SLOTS), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                       -1, 0);
    ck_assert_ptr_ne(arena, MAP_FAILED);
    arena_format(arena, 2, RING_SLOTS);
    r = arena_region(arena, 0);
    config_defaults(&r->cfg);
    snprintf(r->cfg.output, sizeof r->cfg.output, "%s", out_dir);
    r->cfg.device_size = 64 << 20;
    snprintf(r->exe, sizeof r->exe, "/usr/bin/fake");
    clock_init(false);
    r->t0 = clock_ns();
    atomic_store(&r->pid, getpid());
    atomic_store(&r->state, REGION_LIVE);
    memset(&rc, 0, sizeof rc);
    rc.watch = false;
}

static void start(void)
{
    strcpy(dir, "/tmp/memsim-recorder-test.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    start_in(dir);
    ck_assert_int_eq(rec_attach(&rc, arena_of(), r, -1), 0);
    ck_assert_uint_eq(atomic_load(&r->rec_state), REC_RUNNING);
}

static void cleanup(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static void post(uint8_t kind, uint8_t fn, uint64_t a, uint64_t b, uint64_t c, uint32_t stack)
{
    ring_slot_t m = {.kind = kind, .fn = fn, .tid = 77, .stack = stack, .t = clock_ticks(),
                     .a = a, .b = b, .c = c};
    ck_assert_uint_ne(ring_post(r, &m, NULL, 0, 0), 0);
}

static void post_bytes(uint8_t kind, uint64_t a, uint64_t b, const void *bytes, size_t n)
{
    ring_slot_t m = {.kind = kind, .tid = 77, .t = clock_ticks(), .a = a, .b = b};
    ck_assert_uint_ne(ring_post(r, &m, bytes, n, 0), 0);
}

/* Take everything posted, then end the trace. */
static void finish(msg_end_t reason, int status)
{
    while (rec_step(&rc, 100000))
        ;
    post(MSG_END, 0, reason, (uint64_t)(int64_t)status, 0, 0);
    while (rec_step(&rc, 100000))
        ;
    ck_assert(rc.done);
    ck_assert_uint_eq(atomic_load(&r->rec_state), REC_DONE);
}

/* All records of the trace, parsed. */
static json_t *records(void)
{
    FILE *f = fopen(r->trace_path, "r");
    ck_assert_ptr_nonnull(f);
    json_t *all = json_array();
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) > 0) {
        json_error_t e;
        json_t *o = json_loadb(line, (size_t)len, 0, &e);
        ck_assert_msg(o != NULL, "bad line %s: %s", line, e.text);
        json_array_append_new(all, o);
    }
    free(line);
    fclose(f);
    return all;
}

static bool trace_has(const char *text)
{
    FILE *f = fopen(r->trace_path, "r");
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
    post(MSG_ALLOC, FN_MALLOC, 0x1000, 100, 16, 0);
    post(MSG_ALLOC, FN_CALLOC, 0x2000, 48, 16, 0);
    post(MSG_FREE, FN_FREE, 0x1000, 0, 0, 0);
    post(MSG_FREE, FN_FREE, 0x9999, 0, 0, 0);      /* never allocated: an unknown_free error */
    post(MSG_QUIET, 0, 0x8888, 0, 0, 0);           /* a block memsim's own work made */
    post(MSG_FREE, FN_FREE, 0x8888, 0, 0, 0);      /* no error, no record */
    post(MSG_REALLOC, FN_REALLOC, 0x2000, 0x3000, 4000, 0);
    post(MSG_REALLOC, FN_REALLOC, 0x3000, 0, 1ull << 40, 0); /* failed: 0x3000 stays */
    post(MSG_ALLOC, FN_POSIX_MEMALIGN, 0x5000, 64, 4096, 0);
    post(MSG_REALLOC, FN_REALLOCARRAY, 0x5000, 0, 0, 0); /* reallocarray(p, 0, n): p freed */
    finish(END_EXIT, 3);
    json_t *all = records();
    size_t at = 0;
    json_t *meta = next_of(all, "meta", &at);
    ck_assert_str_eq(sval(meta, "format"), "memsim-trace");
    ck_assert_int_eq(ival(meta, "pid"), getpid());
    ck_assert_str_eq(sval(meta, "exe"), "/usr/bin/fake");
    json_t *a = next_of(all, "alloc", &at);
    ck_assert_int_eq(ival(a, "addr"), 0x1000);
    ck_assert_int_eq(ival(a, "size"), 100);
    ck_assert_ptr_null(json_object_get(a, "fn")); /* malloc: the default */
    ck_assert(json_is_integer(json_object_get(a, "sim")));
    a = next_of(all, "alloc", &at);
    ck_assert_str_eq(sval(a, "fn"), "calloc");
    json_t *f = next_of(all, "free", &at);
    ck_assert_int_eq(ival(f, "addr"), 0x1000);
    ck_assert_int_eq(ival(f, "size"), 100);
    json_t *e = next_of(all, "error", &at);
    ck_assert_str_eq(sval(e, "kind"), "unknown_free");
    ck_assert_int_eq(ival(e, "addr"), 0x9999);
    json_t *re = next_of(all, "realloc", &at);
    ck_assert_int_eq(ival(re, "old_addr"), 0x2000);
    ck_assert_int_eq(ival(re, "old_size"), 48);
    ck_assert_int_eq(ival(re, "size"), 4000);
    json_t *rf = next_of(all, "realloc_failed", &at);
    ck_assert_int_eq(ival(rf, "addr"), 0x3000);
    a = next_of(all, "alloc", &at);
    ck_assert_str_eq(sval(a, "fn"), "posix_memalign");
    ck_assert_int_eq(ival(a, "align"), 4096);
    f = next_of(all, "free", &at);
    ck_assert_str_eq(sval(f, "fn"), "reallocarray");
    ck_assert_int_eq(ival(f, "addr"), 0x5000);
    json_t *end = next_of(all, "end", &at);
    ck_assert_str_eq(sval(end, "reason"), "exit");
    ck_assert_int_eq(ival(end, "status"), 3);
    ck_assert_int_eq(ival(end, "records"), (json_int_t)json_array_size(all));
    ck_assert_int_eq(ival(end, "dropped"), 0);
    ck_assert_int_eq(ival(end, "unknown_frees"), 1);
    ck_assert_int_eq(ival(end, "live_allocations"), 1); /* 0x3000 */
    ck_assert_int_eq(ival(end, "live_bytes"), 4000);
    ck_assert_uint_eq(at, json_array_size(all)); /* end is last; the quiet free wrote nothing */
    /* The hot records' keys, byte for byte (docs/trace-format.md). */
    ck_assert(trace_has(",\"tid\":77,\"addr\":4096,\"size\":100,\"stack\":0,\"sim\":"));
    json_decref(all);
    cleanup();
}
END_TEST

START_TEST(stacks_modules_mappings_phases)
{
    start();
    uint64_t frames[3] = {0x401000, 0x402000, 0x403000};
    post_bytes(MSG_STACK, 1, 3, frames, sizeof frames);
    const char *path = "/usr/lib/libcaf\xc3\xa9.so";
    post_bytes(MSG_MODULE_LOAD, 0x7f0000000000, 0x4000, path, strlen(path));
    post(MSG_ALLOC, FN_MALLOC, 0x1000, 10, 16, 1);
    post(MSG_MODULE_UNLOAD, 0, 0x7f0000000000, 0x4000, 0, 0);
    post(MSG_MMAP, FN_MMAP, 0x7e0000000000, 1 << 20, 3 | (uint64_t)0x22 << 32, 1);
    ring_slot_t m = {.kind = MSG_MREMAP, .tid = 77, .t = clock_ticks(), .a = 0x7e0000000000,
                     .b = 1 << 20, .c = 0x7d0000000000, .d = 2 << 20, .e = 1};
    ring_post(r, &m, NULL, 0, 0);
    post(MSG_MUNMAP, FN_MUNMAP, 0x7d0000000000, 2 << 20, 0, 1);
    post_bytes(MSG_PHASE, 1, 0, "load", 4);
    post(MSG_PHASE, 0, 0, 0, 0, 0);
    finish(END_SIGNAL, -1);
    json_t *all = records();
    size_t at = 0;
    json_t *s = next_of(all, "stack", &at);
    ck_assert_int_eq(ival(s, "id"), 1);
    ck_assert_uint_eq(json_array_size(json_object_get(s, "frames")), 3);
    ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(s, "frames"), 2)), 0x403000);
    json_t *mod = next_of(all, "module", &at);
    ck_assert_str_eq(sval(mod, "op"), "load");
    ck_assert_str_eq(sval(mod, "path"), path);
    ck_assert_int_eq(ival(mod, "size"), 0x4000);
    next_of(all, "alloc", &at);
    mod = next_of(all, "module", &at);
    ck_assert_str_eq(sval(mod, "op"), "unload");
    json_t *mm = next_of(all, "mmap", &at);
    ck_assert_int_eq(ival(mm, "prot"), 3);
    ck_assert_int_eq(ival(mm, "flags"), 0x22);
    json_t *mr = next_of(all, "mremap", &at);
    ck_assert_int_eq(ival(mr, "addr"), 0x7d0000000000);
    ck_assert_int_eq(ival(mr, "size"), 2 << 20);
    next_of(all, "munmap", &at);
    json_t *ph = next_of(all, "phase", &at);
    ck_assert_str_eq(sval(ph, "name"), "load");
    ph = next_of(all, "phase", &at);
    ck_assert_str_eq(sval(ph, "op"), "end");
    json_t *end = next_of(all, "end", &at);
    ck_assert_str_eq(sval(end, "reason"), "signal");
    ck_assert(json_is_null(json_object_get(end, "status")));
    ck_assert_int_eq(ival(end, "stacks"), 1);
    json_decref(all);
    cleanup();
}
END_TEST

/* exec, then exec_failed: the trace goes on, and ends as it will. */
START_TEST(a_failed_exec_continues_the_trace)
{
    start();
    const char launch[] = "/no/such\0prog\0arg";
    post_bytes(MSG_EXEC, 0, 2, launch, sizeof launch - 1);
    post(MSG_EXEC_FAILED, 0, 2, 0, 0, 0);
    post(MSG_ALLOC, FN_MALLOC, 0x1000, 10, 16, 0);
    finish(END_QUICK_EXIT, 5);
    json_t *all = records();
    size_t at = 0;
    json_t *x = next_of(all, "exec", &at);
    ck_assert_str_eq(sval(x, "path"), "/no/such");
    ck_assert_uint_eq(json_array_size(json_object_get(x, "argv")), 2);
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(x, "argv"), 1)), "arg");
    ck_assert_int_eq(ival(next_of(all, "exec_failed", &at), "errno"), 2);
    next_of(all, "alloc", &at);
    json_t *end = next_of(all, "end", &at);
    ck_assert_str_eq(sval(end, "reason"), "quick_exit");
    ck_assert_int_eq(ival(end, "status"), 5);
    json_decref(all);
    cleanup();
}
END_TEST

/* The process vanished (SIGKILL): what it had published is written,
 * holes count as dropped, and the end says so. */
START_TEST(a_vanished_process_leaves_a_complete_trace)
{
    start();
    post(MSG_ALLOC, FN_MALLOC, 0x1000, 10, 16, 0);
    ck_assert_uint_ne(ring_begin(r, 0), 0); /* claimed, never published */
    ring_forget_thread();
    post(MSG_ALLOC, FN_MALLOC, 0x2000, 10, 16, 0);
    rec_vanished(&rc);
    json_t *all = records();
    size_t at = 0;
    next_of(all, "alloc", &at);
    next_of(all, "alloc", &at);
    json_t *end = next_of(all, "end", &at);
    ck_assert_str_eq(sval(end, "reason"), "vanished");
    ck_assert_int_eq(ival(end, "dropped"), 1);
    json_decref(all);
    cleanup();
}
END_TEST

START_TEST(an_unwritable_directory_is_one_clear_line)
{
    start_in("/nonexistent/dir");
    ck_assert_int_eq(rec_attach(&rc, arena_of(), r, -1), -1);
    ck_assert_uint_eq(atomic_load(&r->rec_state), REC_FAILED);
    ck_assert_msg(strstr(r->error, "memsim: cannot create the trace file /nonexistent/dir/") &&
                      strstr(r->error, "; tracing is off") && !strchr(r->error, '\n'),
                  "%s", r->error);
}
END_TEST

Suite *recorder_suite(void)
{
    Suite *s = suite_create("recorder");
    TCase *tc = tcase_create("recorder");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, heap_events_become_records);
    tcase_add_test(tc, stacks_modules_mappings_phases);
    tcase_add_test(tc, a_failed_exec_continues_the_trace);
    tcase_add_test(tc, a_vanished_process_leaves_a_complete_trace);
    tcase_add_test(tc, an_unwritable_directory_is_one_clear_line);
    suite_add_tcase(s, tc);
    return s;
}
