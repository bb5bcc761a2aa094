/* replay: a trace's sequence through sim/ gives exactly what driving sim/ does. */
#include <check.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyzer/options.h"
#include "analyzer/process.h"
#include "analyzer/consume/replay.h"
#include "lib/rng.h"
#include "tests/unit/helpers.h"
#include "tests/unit/suites.h"

START_TEST(replay_equals_driving_the_device)
{
    const char *name = strategy_at((size_t)_i)->name;
    replay_t r;
    char err[256];
    ck_assert_msg(replay_open(&r, name, 64 * MiB, err, sizeof err) == 0, "%s", err);
    device_t *d = test_device(name, 64 * MiB);
    /* The same sequence both ways: trace addresses are made up (the
     * replay maps them), the device gets its own. */
    enum { SLOTS = 256 };
    uint64_t trace_addr[SLOTS] = {0}, dev_addr[SLOTS] = {0};
    bool dev_live[SLOTS] = {0};
    rng_t rng;
    rng_seed(&rng, 99 + (uint64_t)_i);
    uint64_t next = 0x1000;
    device_result_t res;
    for (int op = 0; op < 50000; op++) {
        size_t k = (size_t)rng_below(&rng, SLOTS);
        uint64_t size = 1 + rng_below(&rng, 8192);
        if (trace_addr[k] && rng_below(&rng, 3) == 0) {
            /* realloc: free then allocate, both ways */
            uint64_t a = next += 0x10000;
            replay_realloc(&r, trace_addr[k], a, size);
            if (dev_live[k])
                device_free(d, dev_addr[k], &res);
            dev_live[k] = device_alloc(d, size, 16, 0, &res) == POOL_OK;
            dev_addr[k] = res.addr;
            trace_addr[k] = a;
        } else if (trace_addr[k]) {
            replay_free(&r, trace_addr[k]);
            if (dev_live[k])
                device_free(d, dev_addr[k], &res);
            trace_addr[k] = 0;
            dev_live[k] = false;
        } else {
            uint64_t a = next += 0x10000;
            replay_alloc(&r, a, size, 16);
            dev_live[k] = device_alloc(d, size, 16, 0, &res) == POOL_OK;
            dev_addr[k] = res.addr;
            trace_addr[k] = a;
        }
    }
    replay_result_t out;
    replay_result(&r, &out);
    device_metrics_t m;
    device_metrics(d, &m);
    ck_assert_str_eq(out.name, name);
    ck_assert_uint_eq(out.m.peak_footprint, m.peak_footprint);
    ck_assert_uint_eq(out.m.peak_live_requested, m.peak_live_requested);
    ck_assert_uint_eq(out.m.live_allocated, m.live_allocated);
    ck_assert_uint_eq(out.m.largest_free, m.largest_free);
    ck_assert_uint_eq(out.m.internal_at_peak, m.internal_at_peak);
    ck_assert(out.m.jw_fragmentation == m.jw_fragmentation);
    ck_assert(out.m.external_at_peak == m.external_at_peak);
    ck_assert_uint_eq(out.m.live_at_peak, m.live_at_peak);
    ck_assert_uint_eq(out.m.free_at_peak, m.free_at_peak);
    ck_assert_uint_eq(out.m.peak_footprint,
                      out.m.live_at_peak + out.m.internal_at_peak + out.m.free_at_peak);
    ck_assert_uint_gt(out.requests, 20000);
    replay_result_free(&out);
    replay_close(&r);
    device_destroy(d);
}
END_TEST

/* Every strategy through a set, with 0, 1 and 2 worker threads, all at
 * once or 1, 2 or 3 of them at a time (replay_set_width: the others from
 * the spool): each strategy's figures equal driving its own device
 * directly, mid-way and at the end.  The sequence has more events than
 * a batch, reuses addresses (an alloc of a live address, as a trace
 * that lost a free has), frees of unknown addresses, reallocs, and a
 * device small enough for failures. */
START_TEST(set_equals_driving_each_device)
{
    unsigned threads = (unsigned)_i % 3, width = (unsigned)_i / 3 ? (unsigned)_i % 3 + 1 : 0;
    size_t n = strategy_count();
    replay_set_t *set = replay_set_create(threads);
    ck_assert_ptr_nonnull(set);
    replay_set_width(set, width);
    device_t *d[REPLAY_MAX_STRATEGIES];
    char err[256];
    for (size_t i = 0; i < n; i++) {
        ck_assert_msg(replay_set_add(set, strategy_at(i)->name, 24 * MiB, err, sizeof err) == 0,
                      "%s", err);
        d[i] = test_device(strategy_at(i)->name, 24 * MiB);
    }
    ck_assert_uint_eq(replay_set_count(set), n);
    enum { SLOTS = 512, OPS = 60000 };
    static uint64_t trace_addr[SLOTS], dev_addr[REPLAY_MAX_STRATEGIES][SLOTS];
    static bool dev_live[REPLAY_MAX_STRATEGIES][SLOTS];
    memset(trace_addr, 0, sizeof trace_addr);
    memset(dev_live, 0, sizeof dev_live);
    static uint64_t marked[REPLAY_MAX_STRATEGIES][OPS / 1000];
    size_t nmarks = 0;
    rng_t rng;
    rng_seed(&rng, 4242 + threads);
    uint64_t next = 0x1000;
    device_result_t res;
    for (int op = 0; op < OPS; op++) {
        size_t k = (size_t)rng_below(&rng, SLOTS);
        uint64_t size = 1 + rng_below(&rng, rng_below(&rng, 50) ? 8192 : 2 * MiB);
        uint64_t roll = rng_below(&rng, 100);
        if (roll < 2) {
            replay_set_free(set, 0xdead0000 + (uint64_t)op * 16); /* never allocated */
        } else if (trace_addr[k] && roll < 5) {
            /* an alloc at a live address: the old block is left behind where it succeeds */
            replay_set_alloc(set, trace_addr[k], size, 16);
            for (size_t i = 0; i < n; i++)
                if (device_alloc(d[i], size, 16, 0, &res) == POOL_OK) {
                    dev_live[i][k] = true;
                    dev_addr[i][k] = res.addr;
                }
        } else if (trace_addr[k] && roll < 30) {
            uint64_t a = next += 0x10000;
            replay_set_realloc(set, trace_addr[k], a, size);
            for (size_t i = 0; i < n; i++) {
                if (dev_live[i][k])
                    device_free(d[i], dev_addr[i][k], &res);
                dev_live[i][k] = device_alloc(d[i], size, 16, 0, &res) == POOL_OK;
                dev_addr[i][k] = res.addr;
            }
            trace_addr[k] = a;
        } else if (trace_addr[k]) {
            replay_set_free(set, trace_addr[k]);
            for (size_t i = 0; i < n; i++) {
                if (dev_live[i][k])
                    device_free(d[i], dev_addr[i][k], &res);
                dev_live[i][k] = false;
            }
            trace_addr[k] = 0;
        } else {
            uint64_t a = next += 0x10000;
            uint64_t align = roll < 40 ? 256 : 16;
            replay_set_alloc(set, a, size, align);
            for (size_t i = 0; i < n; i++) {
                dev_live[i][k] = device_alloc(d[i], size, align, 0, &res) == POOL_OK;
                dev_addr[i][k] = res.addr;
            }
            trace_addr[k] = a;
        }
        if (op % 1000 == 999) { /* a mark: each strategy's footprint now, figures unchanged */
            replay_set_mark(set);
            for (size_t i = 0; i < n; i++) {
                device_metrics_t m;
                device_metrics(d[i], &m);
                marked[i][nmarks] = m.reserved;
            }
            nmarks++;
        }
        if (op == OPS / 2) { /* results mid-way; the replay goes on after */
            replay_result_t mid[REPLAY_MAX_STRATEGIES];
            ck_assert_uint_eq(replay_set_results(set, mid), n);
            for (size_t i = 0; i < n; i++) {
                device_metrics_t m;
                device_metrics(d[i], &m);
                ck_assert_uint_eq(mid[i].m.live_allocated, m.live_allocated);
                replay_result_free(&mid[i]);
            }
        }
    }
    replay_result_t out[REPLAY_MAX_STRATEGIES];
    ck_assert_uint_eq(width ? replay_set_finish(set, out) : replay_set_results(set, out), n);
    ck_assert_ptr_null(replay_set_note(set));
    for (size_t i = 0; i < n; i++) {
        device_metrics_t m;
        device_metrics(d[i], &m);
        const device_stats_t *st = device_stats(d[i], i);
        ck_assert_str_eq(out[i].name, strategy_at(i)->name);
        ck_assert_uint_eq(out[i].m.peak_footprint, m.peak_footprint);
        ck_assert_uint_eq(out[i].m.peak_live_requested, m.peak_live_requested);
        ck_assert_uint_eq(out[i].m.live_allocated, m.live_allocated);
        ck_assert_uint_eq(out[i].m.live_blocks, m.live_blocks);
        ck_assert_uint_eq(out[i].m.reserved, m.reserved);
        ck_assert_uint_eq(out[i].m.largest_free, m.largest_free);
        ck_assert_uint_eq(out[i].m.internal_at_peak, m.internal_at_peak);
        ck_assert(out[i].m.jw_fragmentation == m.jw_fragmentation);
        ck_assert(out[i].m.external_at_peak == m.external_at_peak);
        ck_assert(out[i].m.external_fragmentation == m.external_fragmentation);
        ck_assert_uint_eq(out[i].failed, st->failed_allocations);
        ck_assert_uint_eq(out[i].frees, st->frees);
        ck_assert_uint_eq(out[i].requests, st->allocations + st->failed_allocations);
        ck_assert_uint_eq(out[i].nseries, nmarks);
        for (size_t k = 0; k < nmarks; k++)
            ck_assert_uint_eq(out[i].series[k], marked[i][k]);
        replay_result_free(&out[i]);
        device_destroy(d[i]);
    }
    ck_assert_uint_gt(out[0].requests, 30000);
    uint64_t failed = 0;
    for (size_t i = 0; i < n; i++)
        failed += out[i].failed;
    ck_assert_uint_gt(failed, 0); /* the failure paths ran */
    replay_set_destroy(set);
}
END_TEST

/* The calls by record (the caller keeping each address's record, as the
 * analyzer does in the summary's blocks) replay exactly what the calls
 * by address do: allocations at live addresses, unknown frees, reallocs,
 * failures, through every strategy; by record all at once, or two at a
 * time (the spool written to its file, then read back). */
START_TEST(records_equal_addresses)
{
    size_t n = strategy_count();
    replay_set_t *by_addr = replay_set_create(1), *by_rec = replay_set_create(1);
    ck_assert_ptr_nonnull(by_addr);
    ck_assert_ptr_nonnull(by_rec);
    replay_set_width(by_rec, (unsigned)_i * 2);
    char err[256];
    for (size_t i = 0; i < n; i++) {
        ck_assert_int_eq(replay_set_add(by_addr, strategy_at(i)->name, 16 * MiB, err, sizeof err), 0);
        ck_assert_int_eq(replay_set_add(by_rec, strategy_at(i)->name, 16 * MiB, err, sizeof err), 0);
    }
    enum { SLOTS = 700, OPS = 300000 }; /* past the batches in flight: records recycled */
    static uint64_t addr[SLOTS];
    static uint32_t rec[SLOTS];
    memset(addr, 0, sizeof addr);
    rng_t rng;
    rng_seed(&rng, 77);
    uint64_t next = 0x1000;
    for (int op = 0; op < OPS; op++) {
        size_t k = (size_t)rng_below(&rng, SLOTS);
        uint64_t size = rng_below(&rng, rng_below(&rng, 40) ? 4096 : 1 * MiB); /* 0 too */
        uint64_t roll = rng_below(&rng, 100);
        if (roll < 2) { /* never allocated: the caller has no record to free */
            replay_set_free(by_addr, 0xdead0000 + (uint64_t)op * 16);
        } else if (addr[k] && roll < 6) { /* allocated again at a live address */
            replay_set_alloc(by_addr, addr[k], size, 16);
            rec[k] = replay_set_alloc_rec(by_rec, rec[k], size, 16);
        } else if (addr[k] && roll < 30) {
            uint64_t a = roll < 10 ? addr[k] : (next += 0x10000); /* in place, or moved */
            replay_set_realloc(by_addr, addr[k], a, size);
            replay_set_free_rec(by_rec, rec[k]);
            rec[k] = replay_set_alloc_rec(by_rec, REPLAY_NO_REC, size, 16);
            addr[k] = a;
        } else if (addr[k]) {
            replay_set_free(by_addr, addr[k]);
            replay_set_free_rec(by_rec, rec[k]);
            addr[k] = 0;
        } else {
            uint64_t align = roll < 40 ? 512 : roll < 45 ? 3 : 16; /* 3: taken as 16 */
            addr[k] = next += 0x10000;
            replay_set_alloc(by_addr, addr[k], size, align);
            rec[k] = replay_set_alloc_rec(by_rec, REPLAY_NO_REC, size, align);
        }
        if (op % 997 == 0) {
            replay_set_mark(by_addr);
            replay_set_mark(by_rec);
        }
    }
    replay_result_t a[REPLAY_MAX_STRATEGIES], r[REPLAY_MAX_STRATEGIES];
    replay_set_results(by_addr, a);
    replay_set_results(by_rec, r);
    uint64_t failed = 0;
    for (size_t i = 0; i < n; i++) {
        ck_assert_str_eq(a[i].name, r[i].name);
        ck_assert_uint_eq(a[i].requests, r[i].requests);
        ck_assert_uint_eq(a[i].failed, r[i].failed);
        ck_assert_uint_eq(a[i].frees, r[i].frees);
        ck_assert_uint_eq(a[i].m.peak_footprint, r[i].m.peak_footprint);
        ck_assert_uint_eq(a[i].m.peak_live_requested, r[i].m.peak_live_requested);
        ck_assert_uint_eq(a[i].m.live_allocated, r[i].m.live_allocated);
        ck_assert_uint_eq(a[i].m.live_blocks, r[i].m.live_blocks);
        ck_assert_uint_eq(a[i].m.reserved, r[i].m.reserved);
        ck_assert_uint_eq(a[i].m.largest_free, r[i].m.largest_free);
        ck_assert_uint_eq(a[i].m.internal_at_peak, r[i].m.internal_at_peak);
        ck_assert_uint_eq(a[i].m.free_at_peak, r[i].m.free_at_peak);
        ck_assert_uint_eq(a[i].nseries, r[i].nseries);
        for (size_t k = 0; k < a[i].nseries; k++)
            ck_assert_uint_eq(a[i].series[k], r[i].series[k]);
        failed += a[i].failed;
        replay_result_free(&a[i]);
        replay_result_free(&r[i]);
    }
    ck_assert_uint_gt(failed, 0);
    ck_assert_uint_gt(a[0].requests, 20000);
    replay_set_destroy(by_addr);
    replay_set_destroy(by_rec);
}
END_TEST

/* The analyzer's replay of a trace, which keeps each block's record in
 * the summary's live blocks, gives what the replay by address gives:
 * on a trace with addresses allocated twice, frees of addresses never
 * allocated (or freed twice), reallocs in place, onto a live address
 * and away, on a device small enough for requests to fail. */
START_TEST(analyzer_equals_replay_by_address)
{
    char path[] = "/tmp/memsim-test-replay-XXXXXX.jsonl";
    int fd = mkstemps(path, 6);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    ck_assert_ptr_nonnull(f);
    const uint64_t dev = 64 * MiB;
    fprintf(f, "{\"ev\":\"meta\",\"t\":0,\"tid\":1,\"format\":\"memsim-trace\",\"version\":3,"
               "\"pid\":1,\"device_size\":%llu}\n{\"ev\":\"thread\",\"t\":0,\"tid\":1,\"index\":0}\n",
            (unsigned long long)dev);
    replay_set_t *ref = replay_set_create(0);
    char err[256];
    for (size_t i = 0; i < strategy_count(); i++)
        ck_assert_int_eq(replay_set_add(ref, strategy_at(i)->name, dev, err, sizeof err), 0);
    enum { SLOTS = 400, OPS = 40000 };
    static uint64_t live[SLOTS];
    memset(live, 0, sizeof live);
    rng_t rng;
    rng_seed(&rng, 99);
    uint64_t next = 0x10000;
    for (int op = 0; op < OPS; op++) {
        size_t k = (size_t)rng_below(&rng, SLOTS);
        uint64_t size = rng_below(&rng, rng_below(&rng, 30) ? 3000 : 2 * MiB);
        uint64_t roll = rng_below(&rng, 100);
        if (roll < 2) {
            uint64_t a = rng_below(&rng, 2) ? 0xdead0000 + (uint64_t)op * 16 : next; /* next: the newest block, live or not */
            fprintf(f, "[\"f\",1,0,\"%llx\"]\n", (unsigned long long)a);
            replay_set_free(ref, a);
        } else if (live[k] && roll < 6) {
            fprintf(f, "[\"a\",1,0,\"%llx\",%llu,0]\n", (unsigned long long)live[k],
                    (unsigned long long)size);
            replay_set_alloc(ref, live[k], size, 16);
        } else if (live[k] && roll < 30) {
            uint64_t a = roll < 12 ? live[k] : roll < 15 ? live[(k + 1) % SLOTS] : (next += 0x100);
            if (!a)
                a = next += 0x100;
            fprintf(f, "[\"r\",1,0,\"%llx\",\"%llx\",%llu,0]\n", (unsigned long long)live[k],
                    (unsigned long long)a, (unsigned long long)(size ? size : 1));
            replay_set_realloc(ref, live[k], a, size ? size : 1);
            live[k] = a;
        } else if (live[k]) {
            fprintf(f, "[\"f\",1,0,\"%llx\"]\n", (unsigned long long)live[k]);
            replay_set_free(ref, live[k]);
            live[k] = 0;
        } else {
            live[k] = next += 0x100;
            fprintf(f, "[\"a\",1,0,\"%llx\",%llu,0]\n", (unsigned long long)live[k],
                    (unsigned long long)size);
            replay_set_alloc(ref, live[k], size, 16);
        }
    }
    ck_assert_int_eq(fclose(f), 0);
    replay_result_t want[REPLAY_MAX_STRATEGIES];
    replay_set_results(ref, want);

    analyze_opts_t o;
    char *argv[] = {"memsim-analyze", "--no-progress", path, NULL};
    optind = 0;
    ck_assert_int_eq(options_parse(3, argv, &o), 0);
    process_t *pr = calloc(1, sizeof *pr);
    ck_assert_ptr_nonnull(pr);
    fflush(stderr); /* the trace has no end record: one line about it, not shown */
    int saved = dup(STDERR_FILENO), null = open("/dev/null", O_WRONLY);
    dup2(null, STDERR_FILENO);
    int rc = process_analyze(pr, path, &o, NULL);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    close(null);
    ck_assert_int_eq(rc, 0);
    ck_assert_uint_eq(pr->nresults, strategy_count());
    uint64_t failed = 0;
    for (size_t i = 0; i < strategy_count(); i++) {
        const replay_result_t *got = NULL;
        for (size_t k = 0; k < pr->nresults; k++)
            if (!strcmp(pr->results[k].name, want[i].name))
                got = &pr->results[k];
        ck_assert_ptr_nonnull(got);
        ck_assert_uint_eq(got->requests, want[i].requests);
        ck_assert_uint_eq(got->failed, want[i].failed);
        ck_assert_uint_eq(got->frees, want[i].frees);
        ck_assert_uint_eq(got->m.peak_footprint, want[i].m.peak_footprint);
        ck_assert_uint_eq(got->m.live_allocated, want[i].m.live_allocated);
        ck_assert_uint_eq(got->m.live_blocks, want[i].m.live_blocks);
        ck_assert_uint_eq(got->m.free_at_peak, want[i].m.free_at_peak);
        failed += want[i].failed;
        replay_result_free(&want[i]);
    }
    ck_assert_uint_gt(failed, 0);
    process_fini(pr);
    free(pr);
    options_fini(&o);
    replay_set_destroy(ref);
    unlink(path);
}
END_TEST

/* The footprint at its peak, split exactly: live requested bytes,
 * internal fragmentation (block bytes beyond the request) and free bytes
 * inside the footprint (external), on a known trace. */
START_TEST(peak_splits_into_live_internal_and_free)
{
    static const struct {
        const char *strategy;
        uint64_t peak, live, internal, free;
    } want[] = {
        /* 112 + 208, the first freed: a 64-byte block into its hole (48
         * bytes stay free), then 1008 bytes on top: 1328 bytes, of which
         * 1250 requested, 8 + 14 + 8 beyond the requests, 48 free. */
        {"best-fit", 1328, 1250, 30, 48},
        {"first-fit", 1328, 1250, 30, 48},
        /* 128 at 0, 256 at 256; the 128 freed merges with its buddy, the
         * 64 splits that 256 at 0; 1024 at 1024: extent 2048, of which
         * 1250 requested, 56 + 14 + 24 beyond the requests (256 - 200,
         * 64 - 50, 1024 - 1000), free: 64 at 64, 128 at 128, 512 at 512. */
        {"buddy", 2048, 1250, 14 + 56 + 24, 128 + 64 + 512},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        replay_t r;
        char err[256];
        ck_assert_msg(replay_open(&r, want[i].strategy, 1 * MiB, err, sizeof err) == 0, "%s",
                      err);
        replay_alloc(&r, 0x1000, 100, 16);
        replay_alloc(&r, 0x2000, 200, 16);
        replay_free(&r, 0x1000);
        replay_alloc(&r, 0x3000, 50, 16);
        replay_alloc(&r, 0x4000, 1000, 16);
        replay_result_t out;
        replay_result(&r, &out);
        ck_assert_msg(out.m.peak_footprint == want[i].peak, "%s: peak %llu", want[i].strategy,
                      (unsigned long long)out.m.peak_footprint);
        ck_assert_msg(out.m.live_at_peak == want[i].live, "%s: live %llu", want[i].strategy,
                      (unsigned long long)out.m.live_at_peak);
        ck_assert_msg(out.m.internal_at_peak == want[i].internal, "%s: internal %llu",
                      want[i].strategy, (unsigned long long)out.m.internal_at_peak);
        ck_assert_msg(out.m.free_at_peak == want[i].free, "%s: free %llu", want[i].strategy,
                      (unsigned long long)out.m.free_at_peak);
        ck_assert_uint_eq(out.m.peak_live_requested, 1250);
        replay_result_free(&out);
        replay_close(&r);
    }
}
END_TEST

START_TEST(unknown_frees_and_failures_are_counted)
{
    replay_t r;
    char err[256];
    ck_assert_int_eq(replay_open(&r, "best-fit", 4096, err, sizeof err), 0);
    replay_free(&r, 0x1234); /* never allocated: ignored */
    replay_alloc(&r, 0x1000, 3000, 16);
    replay_alloc(&r, 0x2000, 3000, 16); /* does not fit in 4 KiB */
    replay_free(&r, 0x2000);            /* its free is ignored too */
    replay_alloc(&r, 0x3000, 0, 3);     /* size 0 and a bad alignment still replay */
    replay_result_t out;
    replay_result(&r, &out);
    ck_assert_uint_eq(out.requests, 3);
    ck_assert_uint_eq(out.failed, 1);
    ck_assert_uint_eq(out.frees, 0);
    replay_result_free(&out);
    replay_close(&r);
    ck_assert_int_eq(replay_open(&r, "nope", 4096, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "unknown strategy \"nope\""), "%s", err);
}
END_TEST

/* The fragmentation map is the layout at the peak exactly: first fit
 * packs ten 1 MiB blocks, each a new peak, so the map shows all ten
 * allocated over exactly 10 MiB after 10 requests (taking it only as
 * the peak grew by a quarter left it at 9 MiB); the frees and the
 * smaller request after it are no peak and leave it as it was. */
START_TEST(map_at_the_peak)
{
    replay_t r;
    char err[256];
    ck_assert_msg(replay_open(&r, "first-fit", 64 * MiB, err, sizeof err) == 0, "%s", err);
    for (uint64_t i = 0; i < 10; i++)
        replay_alloc(&r, 0x1000 + i * 0x10000, MiB, 16);
    replay_free(&r, 0x1000 + 0x10000);
    replay_free(&r, 0x1000 + 0x20000);
    replay_alloc(&r, 0x900000, 4096, 16);
    replay_result_t out;
    replay_result(&r, &out);
    ck_assert_ptr_nonnull(out.map);
    ck_assert_uint_eq(out.map->footprint, 10 * MiB);
    ck_assert_uint_eq(out.map->span, 10 * MiB);
    ck_assert_uint_eq(out.map->requests, 10);
    double alloc = 0;
    for (size_t c = 0; c < REPLAY_MAP_CELLS; c++) {
        ck_assert(out.map->alloc[c] + out.map->free[c] <= 1.0001f);
        alloc += out.map->alloc[c];
    }
    ck_assert(alloc > REPLAY_MAP_CELLS - 0.01 && alloc < REPLAY_MAP_CELLS + 0.01);
    replay_result_free(&out);
    replay_close(&r);
}
END_TEST

/* Buddy's chunks are drawn as its footprint counts them, each up to its
 * extent, end to end: on a 48 MiB device (chunks of 32 and 16 MiB) a
 * 4 MiB block goes to the 16 MiB chunk, and the map is that block alone
 * (4 MiB, all allocated), not 32 MiB of an untouched chunk before it. */
START_TEST(buddy_map_joins_the_chunks_extents)
{
    replay_t r;
    char err[256];
    ck_assert_msg(replay_open(&r, "buddy", 48 * MiB, err, sizeof err) == 0, "%s", err);
    replay_alloc(&r, 0x1000, 4 * MiB, 16);
    replay_result_t out;
    replay_result(&r, &out);
    ck_assert_ptr_nonnull(out.map);
    ck_assert_uint_eq(out.m.peak_footprint, 4 * MiB);
    ck_assert_uint_eq(out.map->footprint, 4 * MiB);
    ck_assert_uint_eq(out.map->span, 4 * MiB);
    for (size_t c = 0; c < REPLAY_MAP_CELLS; c++)
        ck_assert_msg(out.map->alloc[c] > 0.999f && out.map->free[c] < 0.001f,
                      "cell %zu: %g allocated, %g free", c, out.map->alloc[c], out.map->free[c]);
    replay_result_free(&out);
    replay_close(&r);
}
END_TEST

/* Internal fragmentation is drawn apart: buddy serves 3 MiB with a
 * 4 MiB block, so the map's last quarter is allocated past the request
 * and the first three quarters asked for. */
START_TEST(map_shows_the_bytes_past_the_request)
{
    replay_t r;
    char err[256];
    ck_assert_msg(replay_open(&r, "buddy", 64 * MiB, err, sizeof err) == 0, "%s", err);
    replay_alloc(&r, 0x1000, 3 * MiB, 16);
    replay_result_t out;
    replay_result(&r, &out);
    ck_assert_ptr_nonnull(out.map);
    ck_assert_uint_eq(out.map->span, 4 * MiB);
    for (size_t c = 0; c < REPLAY_MAP_CELLS; c++) {
        ck_assert(out.map->alloc[c] > 0.999f);
        if (c < REPLAY_MAP_CELLS * 3 / 4)
            ck_assert_msg(out.map->waste[c] < 0.001f, "cell %zu: waste %g", c, out.map->waste[c]);
        else
            ck_assert_msg(out.map->waste[c] > 0.999f, "cell %zu: waste %g", c, out.map->waste[c]);
    }
    replay_result_free(&out);
    replay_close(&r);
}
END_TEST

Suite *replay_suite(void)
{
    Suite *s = suite_create("replay");
    TCase *tc = tcase_create("replay");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, replay_equals_driving_the_device, 0, (int)strategy_count());
    tcase_add_loop_test(tc, set_equals_driving_each_device, 0, 6);
    tcase_add_loop_test(tc, records_equal_addresses, 0, 2);
    tcase_add_test(tc, analyzer_equals_replay_by_address);
    tcase_add_test(tc, peak_splits_into_live_internal_and_free);
    tcase_add_test(tc, unknown_frees_and_failures_are_counted);
    tcase_add_test(tc, map_at_the_peak);
    tcase_add_test(tc, buddy_map_joins_the_chunks_extents);
    tcase_add_test(tc, map_shows_the_bytes_past_the_request);
    suite_add_tcase(s, tc);
    return s;
}
