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

#include "trace/tracein.h"
#include "ipc/arena.h"
#include "ipc/clock.h"
#include "preload/events.h"
#include "ipc/msg.h"
#include "ipc/ring.h"
#include "recorder/livemap.h"
#include "recorder/recorder.h"
#include "recorder/records.h"
#include "recorder/sampler.h"
#include "tests/unit/failmalloc.h"
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
    arena_format(arena, 2, RING_SLOTS, 0);
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

static void post_from(int32_t tid, uint8_t kind, uint8_t fn, uint64_t a, uint64_t b, uint64_t c,
                      uint32_t stack)
{
    ring_slot_t m = {.kind = kind, .fn = fn, .tid = tid, .stack = stack, .t = clock_ticks(),
                     .a = a, .b = b, .c = c};
    ck_assert_uint_ne(ring_post(r, &m, NULL, 0, 0), 0);
}

static void post(uint8_t kind, uint8_t fn, uint64_t a, uint64_t b, uint64_t c, uint32_t stack)
{
    post_from(77, kind, fn, a, b, c, stack);
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

/* The trace as text (decoded: the recorder compresses by default). */
static char *trace_text(void)
{
    tracein_t *in = tracein_open(r->trace_path);
    ck_assert_ptr_nonnull(in);
    ck_assert(tracein_compressed(in));
    static char all[1 << 20];
    size_t n = 0;
    for (size_t got; (got = tracein_read(in, all + n, sizeof all - 1 - n));)
        n += got;
    ck_assert_ptr_null(tracein_error(in));
    ck_assert(!tracein_cut(in));
    tracein_close(in);
    all[n] = '\0';
    return all;
}

static json_t *hex_int(json_t *a, size_t i)
{
    return json_integer((json_int_t)strtoull(json_string_value(json_array_get(a, i)), NULL, 16));
}

/* A compact record as the object it stands for (docs/trace-format.md):
 * ev, t (microseconds, from now), tid (from the thread records), and the
 * fields by name. */
static json_t *expand(json_t *a, json_int_t *now, json_t *threads)
{
    const char *tag = json_string_value(json_array_get(a, 0));
    size_t n = json_array_size(a);
    *now += json_integer_value(json_array_get(a, 1));
    json_t *o = json_object();
    json_object_set_new(o, "t", json_integer(*now));
    json_object_set(o, "tid", json_array_get(threads, (size_t)json_integer_value(json_array_get(a, 2))));
    switch (tag[0]) {
    case 'a':
        json_object_set_new(o, "ev", json_string("alloc"));
        json_object_set_new(o, "addr", hex_int(a, 3));
        json_object_set(o, "size", json_array_get(a, 4));
        json_object_set(o, "stack", json_array_get(a, 5));
        if (n > 6)
            json_object_set(o, "fn", json_array_get(a, 6));
        if (n > 7)
            json_object_set(o, "align", json_array_get(a, 7));
        break;
    case 'f':
        json_object_set_new(o, "ev", json_string("free"));
        json_object_set_new(o, "addr", hex_int(a, 3));
        if (n > 4)
            json_object_set(o, "flags", json_array_get(a, 4));
        if (n > 5)
            json_object_set(o, "fn", json_array_get(a, 5));
        break;
    case 'r':
        json_object_set_new(o, "ev", json_string("realloc"));
        json_object_set_new(o, "old_addr", hex_int(a, 3));
        json_object_set_new(o, "addr", hex_int(a, 4));
        json_object_set(o, "size", json_array_get(a, 5));
        json_object_set(o, "stack", json_array_get(a, 6));
        if (n > 7)
            json_object_set(o, "flags", json_array_get(a, 7));
        if (n > 8)
            json_object_set(o, "fn", json_array_get(a, 8));
        break;
    case 'x':
        json_object_set_new(o, "ev", json_string("realloc_failed"));
        json_object_set_new(o, "addr", hex_int(a, 3));
        json_object_set(o, "size", json_array_get(a, 4));
        json_object_set(o, "stack", json_array_get(a, 5));
        if (n > 6)
            json_object_set(o, "fn", json_array_get(a, 6));
        break;
    default: ck_abort_msg("unknown tag %s", tag);
    }
    return o;
}

/* All records of the trace, parsed, the compact ones expanded. */
static json_t *records(void)
{
    json_t *all = json_array(), *threads = json_array();
    json_int_t now = 0;
    for (char *line = trace_text(), *nl; *line; line = nl + 1) {
        nl = strchr(line, '\n');
        ck_assert_ptr_nonnull(nl);
        json_error_t e;
        json_t *o = json_loadb(line, (size_t)(nl - line), 0, &e);
        ck_assert_msg(o != NULL, "bad line %.*s: %s", (int)(nl - line), line, e.text);
        if (json_is_array(o)) {
            json_t *x = expand(o, &now, threads);
            json_decref(o);
            o = x;
        } else {
            now = json_integer_value(json_object_get(o, "t"));
            if (!strcmp(json_string_value(json_object_get(o, "ev")), "thread")) {
                ck_assert_int_eq(json_integer_value(json_object_get(o, "index")),
                                 (json_int_t)json_array_size(threads));
                json_array_append(threads, json_object_get(o, "tid"));
            }
        }
        json_array_append_new(all, o);
    }
    json_decref(threads);
    return all;
}

static bool trace_has(const char *text) { return strstr(trace_text(), text) != NULL; }

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

/* glibc's figures cost what the last call did per free chunk; a burst of
 * frees since raises the guess by the blocks that went, not by churn. */
START_TEST(mallinfo_cost_grows_with_the_blocks_freed_since)
{
    /* 2 ms for 40,000 chunks: 50 ns a chunk, the base 64 chunks' worth. */
    uint64_t took = 2000000, chunks = 40000 - 64;
    ck_assert_uint_eq(rec_mallinfo_cost(took, chunks, 500000, 500000), took);
    ck_assert_uint_eq(rec_mallinfo_cost(took, chunks, 500000, 600000), took); /* growth */
    /* half a million blocks went: 540,000 chunks at 50 ns */
    ck_assert_uint_eq(rec_mallinfo_cost(took, chunks, 1000000, 500000), 27000000);
    /* a first call on an empty heap: 10 us, then a million frees */
    ck_assert_uint_eq(rec_mallinfo_cost(10000, 0, 1000000, 0), 10000 + 1000000ull * 10000 / 64);
    /* no call yet, or one too quick to time */
    ck_assert_uint_eq(rec_mallinfo_cost(0, 0, 0, 0), 0);
    /* absurd figures do not overflow what the recorder multiplies */
    ck_assert_uint_le(rec_mallinfo_cost(UINT64_MAX / 2, 0, UINT64_MAX, 0), UINT64_MAX / 100);
}
END_TEST

/* frag_heap's shape: glibc's figures came in 1 ms with 1,000 blocks live
 * and no free chunk; then every block was freed.  The next call may walk
 * 1,000 chunks (16.6 ms): not asked 100 ms later, as the last call's
 * cost alone allowed, but only after 100 times the guess. */
/* smaps_rollup: at the first peak and each 1/16 above the last read's
 * RSS, but no sooner than 100 times the last read's time after it; a
 * peak held back by the pace is read at the next sample it allows, a
 * peak or not. */
START_TEST(smaps_rollup_at_peaks_paced_by_its_cost)
{
    sampler_t s;
    memset(&s, 0, sizeof s);
    const uint64_t M = 1000000, ms = 1000000;
    ck_assert(sampler_rollup_due(&s, 100 * M, 1000 * ms)); /* the first peak */
    sampler_rollup_read(&s, 100 * M, 1000 * ms, 1002 * ms); /* took 2 ms: 200 ms to wait */
    ck_assert(!sampler_rollup_due(&s, 104 * M, 1500 * ms)); /* a peak under 1/16 above */
    ck_assert(!sampler_rollup_due(&s, 110 * M, 1100 * ms)); /* 1/16 above, but 98 ms after */
    ck_assert(!sampler_rollup_due(&s, 109 * M, 1150 * ms)); /* not a peak: still held */
    ck_assert(sampler_rollup_due(&s, 105 * M, 1202 * ms));  /* the pace allows: read, below the peak */
    sampler_rollup_read(&s, 105 * M, 1202 * ms, 1203 * ms); /* took 1 ms */
    ck_assert(!sampler_rollup_due(&s, 111 * M, 1400 * ms)); /* a peak, under 1/16 above 105 M */
    ck_assert(sampler_rollup_due(&s, 112 * M, 1400 * ms));  /* 1/16 above, 197 ms after */
}
END_TEST

/* The pace is the recorder's: a trace's first peak waits for another
 * trace's last read as for its own (a shell loop's processes do not
 * each get a read). */
START_TEST(smaps_rollup_pace_is_the_recorders)
{
    static sampler_t a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    const uint64_t M = 1000000, ms = 1000000;
    ck_assert(sampler_rollup_due(&a, 10 * M, 5000 * ms));
    sampler_rollup_read(&a, 10 * M, 5000 * ms, 5001 * ms); /* took 1 ms: 100 ms to wait */
    ck_assert(!sampler_rollup_due(&b, 20 * M, 5050 * ms)); /* b's first peak, 49 ms after a's */
    ck_assert(!sampler_rollup_due(&b, 19 * M, 5100 * ms)); /* still held, 99 ms after */
    ck_assert(sampler_rollup_due(&b, 19 * M, 5101 * ms));  /* the pace allows */
    sampler_rollup_read(&b, 19 * M, 5101 * ms, 5101 * ms + 500000); /* took 0.5 ms */
    ck_assert(!sampler_rollup_due(&a, 30 * M, 5140 * ms)); /* a's next peak: b's read paces it */
    ck_assert(sampler_rollup_due(&a, 30 * M, 5152 * ms));
}
END_TEST

START_TEST(a_burst_of_frees_holds_back_the_next_mallinfo)
{
    start();
    for (uint64_t i = 0; i < 1000; i++)
        post(MSG_ALLOC, FN_MALLOC, 0x100000 + 64 * i, 48, 16, 0);
    ring_slot_t m = {.kind = MSG_MALLINFO, .tid = 77, .t = clock_ticks(), .a = 1 << 20, .b = 48000};
    uint64_t t0 = clock_ns();
    while (clock_ns() - t0 < 1000000)
        ;
    m.d = clock_ticks();
    ck_assert_uint_ne(ring_post(r, &m, NULL, 0, 0), 0);
    for (uint64_t i = 0; i < 1000; i++)
        post(MSG_FREE, FN_FREE, 0x100000 + 64 * i, 0, 0, 0);
    while (rec_step(&rc, 100000))
        ;
    uint64_t took = rc.mallinfo_took, end = rc.mallinfo_end;
    ck_assert_uint_ge(took, 1000000);
    ck_assert_uint_eq(rc.mallinfo_live, 1000);
    ck_assert(!rc.mallinfo_pending);
    ck_assert(!rec_mallinfo_may_ask(&rc, end + 150 * took));
    ck_assert(!rec_mallinfo_may_ask(&rc, end + 1600 * took));
    ck_assert(rec_mallinfo_may_ask(&rc, end + 1700 * took));
    finish(END_EXIT, 0);
    cleanup();
}
END_TEST

/* A sample's /proc read, during which the program goes on: it posts
 * what the test gave it (blocks of 64 KiB allocated, or all of them freed
 * and a trim reported), and /proc says 8 MiB. */
typedef enum { DURING_GROWTH, DURING_TRIM } during_t;
#define DURING_BLOCKS 100

static bool read_during(void *ctx, records_sample_t *s)
{
    during_t what = *(const during_t *)ctx;
    for (uint64_t i = 0; i < DURING_BLOCKS; i++)
        if (what == DURING_GROWTH)
            post(MSG_ALLOC, FN_MALLOC, 0x1000000 + 0x10000 * i, 0x10000, 16, 0);
        else
            post(MSG_FREE, FN_FREE, 0x1000000 + 0x10000 * i, 0, 0, 0);
    if (what == DURING_TRIM)
        post(MSG_MALLINFO, 0, 128 << 10, 0, 0, 0);
    s->st.rss = s->st.hwm = 8 << 20;
    return true;
}

static json_t *sample_during(during_t what)
{
    rec_sample(&rc, true, read_during, &what);
    finish(END_EXIT, 0);
    json_t *all = records();
    size_t from = 0;
    json_t *smp = json_incref(next_of(all, "sample", &from));
    json_decref(all);
    return smp;
}

/* The heap the program takes while /proc is read is in the sample's
 * figures: RSS − reserved (the gap) never counts it as other memory. */
START_TEST(a_sample_counts_the_heap_taken_during_its_read)
{
    start();
    post(MSG_MALLINFO, 0, 1 << 20, 0, 0, 0);
    json_t *smp = sample_during(DURING_GROWTH);
    ck_assert_int_eq(ival(smp, "rss"), 8 << 20);
    ck_assert_int_eq(ival(smp, "heap_live"), DURING_BLOCKS * 0x10000);
    ck_assert_int_ge(ival(smp, "malloc_reserved"), DURING_BLOCKS * 0x10000);
    json_decref(smp);
    cleanup();
}
END_TEST

/* A trim reported after the read does not lower the reserved bytes the
 * read's RSS is set against. */
START_TEST(a_sample_keeps_the_reserved_bytes_of_before_a_trim_during_its_read)
{
    start();
    for (uint64_t i = 0; i < DURING_BLOCKS; i++)
        post(MSG_ALLOC, FN_MALLOC, 0x1000000 + 0x10000 * i, 0x10000, 16, 0);
    post(MSG_MALLINFO, 0, 7 << 20, DURING_BLOCKS * 0x10000, 0, 0);
    json_t *smp = sample_during(DURING_TRIM);
    ck_assert_int_eq(ival(smp, "heap_live"), 0);
    ck_assert_int_eq(ival(smp, "malloc_reserved"), 7 << 20);
    json_decref(smp);
    cleanup();
}
END_TEST

/* The recorder acks as it goes; it calls the kernel to wake only when a
 * thread waits for an ack (ring_wait_acked), which the futex word shows:
 * each wake bumps it. */
START_TEST(acks_wake_only_a_waiter)
{
    start();
    uint32_t w0 = atomic_load(&r->rec_futex);
    for (uint64_t i = 0; i < 2000; i++)
        post(MSG_ALLOC, FN_MALLOC, 0x100000 + 64 * i, 48, 16, 0);
    while (rec_step(&rc, 100000))
        ;
    ck_assert_uint_eq(atomic_load(&r->acked), atomic_load(&r->ring.tail));
    ck_assert_uint_eq(atomic_load(&r->rec_futex), w0);
    atomic_store(&r->ack_waiters, 1);
    post(MSG_FREE, FN_FREE, 0x100000, 0, 0, 0);
    while (rec_step(&rc, 100000))
        ;
    ck_assert_uint_gt(atomic_load(&r->rec_futex), w0);
    atomic_store(&r->ack_waiters, 0);
    /* and a waiter gets its ack */
    ring_slot_t m = {.kind = MSG_PHASE, .tid = 77, .t = clock_ticks(), .a = 0};
    uint64_t end = ring_post(r, &m, NULL, 0, RING_SYNC);
    ck_assert_uint_ne(end, 0);
    while (rec_step(&rc, 100000))
        ;
    ck_assert_int_eq(ring_wait_acked(r, end, 1000000000ull), 0);
    ck_assert_uint_eq(atomic_load(&r->ack_waiters), 0);
    finish(END_EXIT, 0);
    cleanup();
}
END_TEST

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
    post(MSG_REALLOC_DONE, 0, 0x2000, 0x3000, 0, 0); /* it moved: the preload says so */
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
    ck_assert_int_eq(ival(a, "tid"), 77);
    a = next_of(all, "alloc", &at);
    ck_assert_str_eq(sval(a, "fn"), "calloc");
    json_t *f = next_of(all, "free", &at);
    ck_assert_int_eq(ival(f, "addr"), 0x1000);
    ck_assert_ptr_null(json_object_get(f, "flags"));
    json_t *e = next_of(all, "error", &at);
    ck_assert_str_eq(sval(e, "kind"), "unknown_free");
    ck_assert_int_eq(ival(e, "addr"), 0x9999);
    json_t *re = next_of(all, "realloc", &at);
    ck_assert_int_eq(ival(re, "old_addr"), 0x2000);
    ck_assert_int_eq(ival(re, "addr"), 0x3000);
    ck_assert_int_eq(ival(re, "size"), 4000);
    ck_assert_ptr_null(json_object_get(re, "flags")); /* the old block was live */
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
    ck_assert_ptr_null(json_object_get(end, "untracked")); /* written only when not 0 */
    ck_assert_ptr_null(json_object_get(end, "stackless"));
    ck_assert_ptr_null(json_object_get(end, "threadless"));
    ck_assert_uint_eq(at, json_array_size(all)); /* end is last; the quiet free wrote nothing */
    /* The compact records, byte for byte (docs/trace-format.md); the
     * first heap event of thread 77 made it thread 0. */
    ck_assert(trace_has("\"tid\":77,\"index\":0}\n[\"a\","));
    ck_assert(trace_has(",0,\"1000\",100,0]\n"));
    ck_assert(trace_has(",0,\"2000\",48,0,\"calloc\"]\n"));
    ck_assert(trace_has(",0,\"1000\"]\n"));
    ck_assert(trace_has(",0,\"2000\",\"3000\",4000,0]\n"));
    ck_assert(trace_has(",0,\"5000\",64,0,\"posix_memalign\",4096]\n"));
    ck_assert(trace_has(",0,\"5000\",0,\"reallocarray\"]\n"));
    json_decref(all);
    cleanup();
}
END_TEST

/* A realloc of a block the trace never saw says so (flag 2), and times
 * count microseconds from the record before. */
START_TEST(a_realloc_of_an_unknown_block_is_flagged)
{
    start();
    post(MSG_REALLOC, FN_REALLOC, 0x7000, 0x8000, 32, 0);
    finish(END_EXIT, 0);
    json_t *all = records();
    size_t at = 0;
    json_t *re = next_of(all, "realloc", &at);
    ck_assert_int_eq(ival(re, "old_addr"), 0x7000);
    ck_assert_int_eq(ival(re, "flags"), 2);
    json_t *end = next_of(all, "end", &at);
    ck_assert_int_ge(ival(end, "t"), ival(re, "t"));
    ck_assert_int_eq(ival(end, "live_allocations"), 1);
    ck_assert_int_eq(ival(end, "live_bytes"), 32);
    ck_assert(trace_has(",0,\"7000\",\"8000\",32,0,2]\n"));
    json_decref(all);
    cleanup();
}
END_TEST

/* The recorder out of memory for its live map (it shares the program's
 * RLIMIT_AS; here the one calloc that would double the first table
 * fails): the table fills on to 15/16 (60 of 64 slots), the 10 blocks
 * past that go untracked, and their frees are still written as frees,
 * not as unknown frees: the trace stays whole.  The end record and the
 * region say how many went untracked, for the program's exit warning;
 * the end record carries the process's count of events without their
 * stack too. */
START_TEST(blocks_the_live_map_has_no_memory_for_are_counted)
{
    start();
    rc.next_sample = UINT64_MAX; /* no sample (its reads allocate) while armed */
    for (uint64_t i = 1; i <= 32; i++) /* the first table half full */
        post(MSG_ALLOC, FN_MALLOC, i * 0x100, 24, 16, 0);
    while (rec_step(&rc, 1000))
        ;
    post(MSG_ALLOC, FN_MALLOC, 33 * 0x100, 24, 16, 0);
    failmalloc_arm(1);
    bool stepped = rec_step(&rc, 100000);
    bool failed = failmalloc_disarm();
    ck_assert(stepped);
    ck_assert(failed);
    for (uint64_t i = 34; i <= 70; i++)
        post(MSG_ALLOC, FN_MALLOC, i * 0x100, 24, 16, 0);
    for (uint64_t i = 1; i <= 70; i++)
        post(MSG_FREE, FN_FREE, i * 0x100, 0, 0, 0);
    atomic_store(&r->stackless, 4); /* the process's count: its stack table's misses */
    finish(END_EXIT, 0);
    json_t *all = records();
    size_t allocs = 0, frees = 0, errors = 0;
    for (size_t i = 0; i < json_array_size(all); i++) {
        const char *ev = sval(json_array_get(all, i), "ev");
        allocs += !strcmp(ev, "alloc");
        frees += !strcmp(ev, "free");
        errors += !strcmp(ev, "error");
    }
    ck_assert_uint_eq(allocs, 70);
    ck_assert_uint_eq(frees, 70);
    ck_assert_uint_eq(errors, 0);
    size_t at = 0;
    json_t *end = next_of(all, "end", &at);
    ck_assert_int_eq(ival(end, "untracked"), 10);
    ck_assert_int_eq(ival(end, "stackless"), 4);
    ck_assert_int_eq(ival(end, "unknown_frees"), 0);
    ck_assert_int_eq(ival(end, "live_allocations"), 0);
    ck_assert_int_eq(ival(end, "live_bytes"), 0);
    ck_assert_uint_eq(atomic_load(&r->end_untracked), 10);
    json_decref(all);
    cleanup();
}
END_TEST

/* An alloc and a free of thread tid: two compact records naming it. */
static void alloc_free(int32_t tid, uint64_t addr)
{
    post_from(tid, MSG_ALLOC, FN_MALLOC, addr, 8, 16, 0);
    post_from(tid, MSG_FREE, FN_FREE, addr, 0, 0, 0);
}

/* The heap records whose thread record says tid. */
static size_t events_of(json_t *all, json_int_t tid)
{
    size_t n = 0;
    for (size_t i = 0; i < json_array_size(all); i++) {
        json_t *o = json_array_get(all, i);
        const char *ev = sval(o, "ev");
        n += (!strcmp(ev, "alloc") || !strcmp(ev, "free")) && ival(o, "tid") == tid;
    }
    return n;
}

/* The recorder out of memory for its thread table (it shares the
 * program's RLIMIT_AS; here the one calloc that would double the first
 * table fails, at the 33rd thread).  A thread it knows keeps its index:
 * looking it up needs no memory.  New threads get their own while the
 * table has room: it fills on to 63 of its 64 slots (one stays empty, so
 * that every probe ends).  Past that, a new thread's events are written
 * under an index of their own whose thread record says tid 0, never
 * under another thread's, and the end record and the region count them,
 * for the program's exit warning.  Growing is tried again
 * RECORDS_GROW_RETRY calls for a new slot later, not at every event;
 * then the next new thread has its own index again. */
START_TEST(threads_the_thread_table_has_no_memory_for_are_counted)
{
    start();
    rc.next_sample = UINT64_MAX; /* no sample (its reads allocate) while armed */
    for (int32_t k = 0; k < 31; k++) /* threads 1000..1031: the first table half full */
        alloc_free(1000 + k, 0x1000);
    post_from(1031, MSG_ALLOC, FN_MALLOC, 0x4000, 8, 16, 0);
    while (rec_step(&rc, 1000))
        ;
    post_from(1005, MSG_ALLOC, FN_MALLOC, 0x2000, 8, 16, 0); /* known */
    post_from(1032, MSG_ALLOC, FN_MALLOC, 0x3000, 8, 16, 0); /* new: the table would double */
    failmalloc_arm(1);
    unsigned stepped = rec_step(&rc, 100000);
    bool failed = failmalloc_disarm();
    ck_assert_uint_eq(stepped, 2);
    ck_assert(failed);
    post_from(1031, MSG_FREE, FN_FREE, 0x4000, 0, 0, 0);
    post_from(1005, MSG_FREE, FN_FREE, 0x2000, 0, 0, 0);
    post_from(1032, MSG_FREE, FN_FREE, 0x3000, 0, 0, 0);
    for (int32_t k = 33; k < 63; k++) /* threads 1033..1062: 63 slots of 64 taken */
        alloc_free(1000 + k, 0x1000);
    alloc_free(1063, 0x1000); /* no slot left for these two */
    alloc_free(1064, 0x1000);
    /* 34 calls for a new slot since growing failed (1033..1062's first
     * events, and 1063's and 1064's four): thread 1065's next `waiting`
     * wait too, and the one after grows the table. */
    uint32_t waiting = RECORDS_GROW_RETRY - 34;
    for (uint32_t i = 0; i <= waiting; i++) {
        post_from(1065, MSG_ALLOC, FN_MALLOC, 0x1000, 8, 16, 0);
        post_from(1000, MSG_FREE, FN_FREE, 0x1000, 0, 0, 0); /* known: no call for a slot */
        while (rec_step(&rc, 1000))
            ;
    }
    finish(END_EXIT, 0);
    json_t *all = records();
    ck_assert_uint_eq(events_of(all, 1005), 4);
    ck_assert_uint_eq(events_of(all, 1032), 2);
    ck_assert_uint_eq(events_of(all, 1000), 2 + waiting + 1);
    for (int32_t k = 1; k < 63; k++)
        if (k != 5 && k != 32)
            ck_assert_uint_eq(events_of(all, 1000 + k), 2);
    ck_assert_uint_eq(events_of(all, 1063), 0);
    ck_assert_uint_eq(events_of(all, 1064), 0);
    ck_assert_uint_eq(events_of(all, 0), 4 + waiting);
    ck_assert_uint_eq(events_of(all, 1065), 1); /* its last alloc, after the table grew */
    size_t threads = 0; /* 0..62: 1000..1062; 63: tid 0, no thread's; 64: 1065 */
    for (size_t i = 0; i < json_array_size(all); i++) {
        json_t *o = json_array_get(all, i);
        if (strcmp(sval(o, "ev"), "thread"))
            continue;
        json_int_t index = ival(o, "index");
        ck_assert_int_eq(ival(o, "tid"), index < 63 ? 1000 + index : index == 63 ? 0 : 1065);
        threads++;
    }
    ck_assert_uint_eq(threads, 65);
    size_t at = 0;
    json_t *end = next_of(all, "end", &at);
    ck_assert_int_eq(ival(end, "threadless"), 4 + waiting);
    ck_assert_uint_eq(atomic_load(&r->end_threadless), 4 + waiting);
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

/* The process forgot a stack and posted it again under a new id: the
 * trace has one record of it, and the events of both ids name it; after
 * its library's unload, the same frames are a new stack. */
START_TEST(a_stack_posted_again_keeps_its_trace_id)
{
    start();
    uint64_t a[2] = {0x7f0000001000, 0x401000}, b[2] = {0x402000, 0x401000};
    post_bytes(MSG_STACK, 1, 2, a, sizeof a);
    post_bytes(MSG_STACK, 2, 2, b, sizeof b);
    post(MSG_ALLOC, FN_MALLOC, 0x1000, 10, 16, 1);
    post_bytes(MSG_STACK, 3, 2, a, sizeof a); /* forgotten, posted again */
    post(MSG_ALLOC, FN_MALLOC, 0x2000, 20, 16, 3);
    post(MSG_ALLOC, FN_MALLOC, 0x3000, 30, 16, 2);
    post(MSG_MODULE_UNLOAD, 0, 0x7f0000000000, 0x4000, 0, 0);
    post_bytes(MSG_STACK, 4, 2, a, sizeof a); /* new code at the same address */
    post(MSG_ALLOC, FN_MALLOC, 0x4000, 40, 16, 4);
    post(MSG_ALLOC, FN_MALLOC, 0x5000, 50, 16, 9); /* never posted */
    finish(END_EXIT, 0);
    json_t *all = records();
    size_t at = 0;
    ck_assert_int_eq(ival(next_of(all, "stack", &at), "id"), 1);
    ck_assert_int_eq(ival(next_of(all, "stack", &at), "id"), 2);
    json_int_t want[] = {1, 1, 2};
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(ival(next_of(all, "alloc", &at), "stack"), want[i]);
    json_t *s = next_of(all, "stack", &at);
    ck_assert_int_eq(ival(s, "id"), 3);
    ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(s, "frames"), 0)),
                     0x7f0000001000);
    ck_assert_int_eq(ival(next_of(all, "alloc", &at), "stack"), 3);
    ck_assert_int_eq(ival(next_of(all, "alloc", &at), "stack"), 0);
    json_t *end = next_of(all, "end", &at);
    ck_assert_int_eq(ival(end, "stacks"), 3);
    ck_assert_int_eq(ival(end, "stackless"), 1);
    json_decref(all);
    cleanup();
}
END_TEST

/* The first sample is due REC_FIRST_SAMPLE_NS after the trace opens. */
START_TEST(the_first_sample_is_due_1_ms_after_the_open)
{
    start();
    ck_assert_uint_eq(rc.next_sample - rc.last_flush, REC_FIRST_SAMPLE_NS);
    ck_assert_uint_eq(REC_FIRST_SAMPLE_NS, 1000000);
    finish(END_EXIT, 0);
    cleanup();
}
END_TEST

static bool read_8_mib(void *ctx, records_sample_t *s)
{
    (void)ctx;
    s->st.rss = s->st.hwm = 8 << 20;
    return true;
}

/* An exec posted during the read: the read may be of the next image. */
static bool read_during_an_exec(void *ctx, records_sample_t *s)
{
    const char launch[] = "/bin/true\0true";
    post_bytes(MSG_EXEC, 0, 1, launch, sizeof launch - 1);
    return read_8_mib(ctx, s);
}

static size_t samples_in(json_t *all)
{
    size_t n = 0;
    for (size_t i = 0; i < json_array_size(all); i++)
        n += !strcmp(sval(json_array_get(all, i), "ev"), "sample");
    return n;
}

/* No sample while an exec is under way (taken before the read, or
 * during it); one again once it failed. */
START_TEST(no_sample_while_an_exec_is_under_way)
{
    start();
    const char launch[] = "/no/such\0prog";
    post_bytes(MSG_EXEC, 0, 1, launch, sizeof launch - 1);
    rec_sample(&rc, true, read_8_mib, NULL);
    post(MSG_EXEC_FAILED, 0, 2, 0, 0, 0);
    rec_sample(&rc, true, read_during_an_exec, NULL);
    post(MSG_EXEC_FAILED, 0, 2, 0, 0, 0);
    rec_sample(&rc, true, read_8_mib, NULL);
    finish(END_EXIT, 0);
    json_t *all = records();
    ck_assert_uint_eq(samples_in(all), 1);
    size_t at = 0;
    next_of(all, "exec_failed", &at);
    at++;
    next_of(all, "exec_failed", &at);
    ck_assert_int_eq(ival(next_of(all, "sample", &at), "rss"), 8 << 20);
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

/* A fork: the child's trace starts from the parent's blocks as of the
 * fork message, and the two go their own ways after, while the recorder
 * takes both rings in turns (each trace's state swapped in). */
static rec_t child;

static void fork_child(rec_t *parent, unsigned k, void *ctx)
{
    (void)ctx;
    rec_fork(parent, &child, k);
}

START_TEST(a_fork_child_starts_from_its_parent_s_blocks)
{
    start();
    rc.on_fork = fork_child;
    post(MSG_ALLOC, FN_MALLOC, 0x1000, 10, 16, 0);
    post(MSG_ALLOC, FN_MALLOC, 0x2000, 20, 16, 0);
    region_t *cr = arena_reserve(arena);
    ck_assert_ptr_nonnull(cr);
    post(MSG_FORK, 0, cr->index, 0, 0, 0);
    post(MSG_ALLOC, FN_MALLOC, 0x3000, 30, 16, 0); /* the parent's, after the fork */
    while (rec_step(&rc, 100000))
        ;
    ck_assert_ptr_eq(child.r, cr);
    cr->cfg = r->cfg;
    memcpy(cr->exe, r->exe, sizeof cr->exe);
    cr->t0 = r->t0;
    cr->parent_pid = getpid();
    cr->flags = REGION_INHERITED;
    atomic_store(&cr->pid, getpid() + 1); /* the child: another pid */
    atomic_store(&cr->state, REGION_LIVE);
    ck_assert_int_eq(rec_open(&child, arena, cr, -1), 0);
    region_t *parent_r = r;
    r = cr; /* the child's ring: it frees an inherited block and ends */
    post(MSG_FREE, FN_FREE, 0x1000, 0, 0, 0);
    r = parent_r; /* the parent frees the other, in between */
    post(MSG_FREE, FN_FREE, 0x2000, 0, 0, 0);
    while (rec_step(&rc, 100000))
        ;
    r = cr;
    while (rec_step(&child, 100000))
        ;
    post(MSG_END, 0, END__EXIT, 0, 0, 0);
    while (rec_step(&child, 100000))
        ;
    ck_assert(child.done);
    json_t *all = records();
    size_t at = 0;
    json_t *meta = next_of(all, "meta", &at);
    ck_assert_str_eq(sval(meta, "parent_trace"), parent_r->trace_path);
    json_t *f = next_of(all, "free", &at);
    ck_assert_int_eq(ival(f, "flags"), 1); /* inherited */
    json_t *end = next_of(all, "end", &at);
    ck_assert_int_eq(ival(end, "live_allocations"), 1); /* 0x2000: still the child's */
    ck_assert_int_eq(ival(end, "live_bytes"), 20);
    ck_assert_int_eq(ival(end, "unknown_frees"), 0);
    json_decref(all);
    r = parent_r;
    finish(END_EXIT, 0);
    all = records();
    at = 0;
    end = next_of(all, "end", &at);
    ck_assert_int_eq(ival(end, "live_allocations"), 2); /* 0x1000 and 0x3000 */
    ck_assert_int_eq(ival(end, "live_bytes"), 40);
    json_decref(all);
    cleanup();
}
END_TEST

/* A fork's child numbers its stacks afresh (its stack table is reset at
 * the fork), so each trace keeps its own ids, taken in turns: the
 * child's stack 1 is its own first stack (a record of its own, though
 * the parent has the same frames), and the parent goes on from its own. */
START_TEST(each_trace_of_a_tree_numbers_its_own_stacks)
{
    start();
    rc.on_fork = fork_child;
    uint64_t a[2] = {0x401000, 0x400100}, c[2] = {0x403000, 0x400100};
    post_bytes(MSG_STACK, 1, 2, a, sizeof a);
    post(MSG_ALLOC, FN_MALLOC, 0x1000, 10, 16, 1);
    region_t *cr = arena_reserve(arena);
    ck_assert_ptr_nonnull(cr);
    post(MSG_FORK, 0, cr->index, 0, 0, 0);
    while (rec_step(&rc, 100000))
        ;
    cr->cfg = r->cfg;
    memcpy(cr->exe, r->exe, sizeof cr->exe);
    cr->t0 = r->t0;
    cr->parent_pid = getpid();
    cr->flags = REGION_INHERITED;
    atomic_store(&cr->pid, getpid() + 1);
    atomic_store(&cr->state, REGION_LIVE);
    ck_assert_int_eq(rec_open(&child, arena, cr, -1), 0);
    region_t *parent_r = r;
    post_bytes(MSG_STACK, 2, 2, c, sizeof c); /* the parent's second */
    post(MSG_ALLOC, FN_MALLOC, 0x5000, 7, 16, 2);
    post(MSG_ALLOC, FN_MALLOC, 0x6000, 8, 16, 1);
    while (rec_step(&rc, 100000))
        ;
    r = cr;
    post_bytes(MSG_STACK, 1, 2, a, sizeof a); /* the child's first */
    post(MSG_ALLOC, FN_MALLOC, 0x4000, 5, 16, 1);
    post(MSG_END, 0, END__EXIT, 0, 0, 0);
    while (rec_step(&child, 100000))
        ;
    ck_assert(child.done);
    json_t *all = records();
    size_t at = 0;
    json_t *s = next_of(all, "stack", &at);
    ck_assert_int_eq(ival(s, "id"), 1);
    ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(s, "frames"), 0)), 0x401000);
    ck_assert_int_eq(ival(next_of(all, "alloc", &at), "stack"), 1);
    json_t *end = next_of(all, "end", &at);
    ck_assert_int_eq(ival(end, "stacks"), 1);
    ck_assert_ptr_null(json_object_get(end, "stackless")); /* every id mapped */
    json_decref(all);
    r = parent_r;
    finish(END_EXIT, 0);
    all = records();
    at = 0;
    json_int_t ids[] = {1, 2}, frame[] = {0x401000, 0x403000}, stacks[] = {1, 2, 1};
    for (int i = 0; i < 2; i++) {
        s = next_of(all, "stack", &at);
        ck_assert_int_eq(ival(s, "id"), ids[i]);
        ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(s, "frames"), 0)),
                         frame[i]);
    }
    at = 0;
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(ival(next_of(all, "alloc", &at), "stack"), stacks[i]);
    end = next_of(all, "end", &at);
    ck_assert_int_eq(ival(end, "stacks"), 2);
    ck_assert_ptr_null(json_object_get(end, "stackless"));
    json_decref(all);
    cleanup();
}
END_TEST

/* The process vanished (SIGKILL, a raw exit_group): what it had
 * published is written, also past claims it never published, and the
 * end says so.  Those claims are calls cut inside a post (the event of
 * a call that never returned, as ring_settle's), not dropped records;
 * an event a producer gave up is. */
START_TEST(a_vanished_process_leaves_a_complete_trace)
{
    start();
    post(MSG_ALLOC, FN_MALLOC, 0x1000, 10, 16, 0);
    ck_assert_uint_ne(ring_begin(r, 0, 0, 0), 0); /* claimed, never published */
    ring_forget_thread();
    ck_assert_uint_ne(ring_begin(r, MSG_REALLOC, 0x1000, 0), 0); /* and a realloc's */
    ring_forget_thread();
    post(MSG_ALLOC, FN_MALLOC, 0x2000, 10, 16, 0);
    post(MSG_LOST, 0, 0, 0, 0, 0); /* an event given up */
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
    tcase_add_test(tc, a_sample_counts_the_heap_taken_during_its_read);
    tcase_add_test(tc, a_sample_keeps_the_reserved_bytes_of_before_a_trim_during_its_read);
    tcase_add_test(tc, a_realloc_of_an_unknown_block_is_flagged);
    tcase_add_test(tc, blocks_the_live_map_has_no_memory_for_are_counted);
    tcase_add_test(tc, threads_the_thread_table_has_no_memory_for_are_counted);
    tcase_add_test(tc, stacks_modules_mappings_phases);
    tcase_add_test(tc, a_stack_posted_again_keeps_its_trace_id);
    tcase_add_test(tc, a_failed_exec_continues_the_trace);
    tcase_add_test(tc, the_first_sample_is_due_1_ms_after_the_open);
    tcase_add_test(tc, no_sample_while_an_exec_is_under_way);
    tcase_add_test(tc, a_fork_child_starts_from_its_parent_s_blocks);
    tcase_add_test(tc, each_trace_of_a_tree_numbers_its_own_stacks);
    tcase_add_test(tc, a_vanished_process_leaves_a_complete_trace);
    tcase_add_test(tc, an_unwritable_directory_is_one_clear_line);
    tcase_add_test(tc, mallinfo_cost_grows_with_the_blocks_freed_since);
    tcase_add_test(tc, a_burst_of_frees_holds_back_the_next_mallinfo);
    tcase_add_test(tc, smaps_rollup_at_peaks_paced_by_its_cost);
    tcase_add_test(tc, smaps_rollup_pace_is_the_recorders);
    tcase_add_test(tc, acks_wake_only_a_waiter);
    suite_add_tcase(s, tc);
    return s;
}
