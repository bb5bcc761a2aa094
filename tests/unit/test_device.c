/* device: the Python simulator's examples, creation, switching, metrics and status. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/failmalloc.h"
#include "lib/rng.h"
#include "tests/unit/helpers.h"
#include "tests/unit/suites.h"

/* The Python simulator's example: on a device of 256 bytes (id 0) an
 * allocation of 32 bytes succeeds. */
START_TEST(seed_example_small_device)
{
    device_config_t cfg = {.id = 0, .total = 256};
    device_t *d;
    ck_assert_int_eq(device_create(&cfg, &d, NULL, 0), POOL_OK);
    ck_assert_str_eq(device_strategy(d)->name, DEVICE_DEFAULT_STRATEGY);
    ck_assert_uint_eq(device_base(d), 0x10000000);
    device_result_t r;
    ck_assert_int_eq(device_alloc(d, 32, 1, 0, &r), POOL_OK);
    ck_assert(r.ok);
    ck_assert_uint_eq(r.addr, 0x10000000);
    ck_assert_uint_eq(r.size, 32);
    device_destroy(d);
}
END_TEST

/* The Python simulator's example: on a device of 1024 bytes (id 0) an
 * allocation of 64 bytes succeeds, and so does the free of its address. */
START_TEST(seed_example_alloc_free)
{
    for (size_t i = 0; i < strategy_count(); i++) {
        if (strcmp(strategy_at(i)->name, "caching") == 0)
            continue; /* needs at least a 2 MiB segment */
        device_t *d = test_device(strategy_at(i)->name, 1024);
        device_result_t r;
        ck_assert_int_eq(device_alloc(d, 64, 1, 0, &r), POOL_OK);
        ck_assert_int_eq(device_free(d, r.addr, &r), POOL_OK);
        ck_assert(r.ok);
        device_metrics_t m;
        device_metrics(d, &m);
        ck_assert_uint_eq(m.blocks, 1); /* coalesced back */
        device_destroy(d);
    }
}
END_TEST

START_TEST(create_refuses_bad_configurations)
{
    char err[256];
    device_t *d = (device_t *)1;
    device_config_t cfg = {.total = 1024, .strategy = "fastest"};
    ck_assert_int_eq(device_create(&cfg, &d, err, sizeof err), POOL_EINVAL);
    ck_assert_ptr_null(d);
    ck_assert_str_eq(err, "unknown strategy \"fastest\" (known: first-fit, best-fit, "
                          "worst-fit, next-fit, buddy, caching)");
    cfg = (device_config_t){.total = 0};
    ck_assert_int_eq(device_create(&cfg, &d, err, sizeof err), POOL_EINVAL);
    ck_assert_msg(strstr(err, "invalid device size 0"), "%s", err);
    cfg = (device_config_t){.total = 1024, .granule = 24};
    ck_assert_int_eq(device_create(&cfg, &d, err, sizeof err), POOL_EINVAL);
    ck_assert_msg(strstr(err, "granule 24"), "%s", err);
    cfg = (device_config_t){.total = 256, .strategy = "caching"};
    ck_assert_int_eq(device_create(&cfg, &d, err, sizeof err), POOL_EINVAL);
    ck_assert_msg(strstr(err, "cannot start strategy caching"), "%s", err);
    cfg = (device_config_t){.total = 32, .strategy = "buddy"};
    ck_assert_int_eq(device_create(&cfg, &d, err, sizeof err), POOL_EINVAL);
}
END_TEST

START_TEST(switching_strategies)
{
    device_t *d = test_device("first-fit", 1 * MiB);
    device_result_t r;
    uint64_t a = test_alloc(d, 100, 16, 0);
    ck_assert_int_eq(device_set_strategy(d, "buddy", &r), POOL_EBUSY);
    ck_assert_msg(strstr(r.error, "1 blocks are still allocated under first-fit"), "%s",
                  r.error);
    ck_assert_str_eq(device_strategy(d)->name, "first-fit");
    ck_assert_int_eq(device_set_strategy(d, "nope", &r), POOL_EINVAL);
    ck_assert_msg(strstr(r.error, "unknown strategy \"nope\""), "%s", r.error);
    test_free(d, a);
    ck_assert_int_eq(device_set_strategy(d, "buddy", &r), POOL_OK);
    ck_assert_str_eq(device_strategy(d)->name, "buddy");
    ck_assert_uint_eq(test_alloc(d, 100, 16, 0) - device_base(d), 0);
    ck_assert_device_ok(d);
    /* Statistics stay per strategy. */
    ck_assert_uint_eq(device_stats(d, (size_t)strategy_index(strategy_find("first-fit")))
                          ->allocations, 1);
    ck_assert_uint_eq(device_stats(d, (size_t)strategy_index(strategy_find("buddy")))
                          ->allocations, 1);
    ck_assert_ptr_null(device_stats(d, strategy_count()));
    device_destroy(d);
}
END_TEST

START_TEST(metrics_follow_their_definitions)
{
    device_t *d = test_device("best-fit", 1 * MiB);
    uint64_t a = test_alloc(d, 100, 16, 0); /* 112-byte block */
    test_alloc(d, 200, 16, 0);              /* 208-byte block */
    test_free(d, a);
    device_metrics_t m;
    device_metrics(d, &m);
    ck_assert_uint_eq(m.total, 1 * MiB);
    ck_assert_uint_eq(m.segments, 1);
    ck_assert_uint_eq(m.blocks, 3);
    ck_assert_uint_eq(m.live_blocks, 1);
    ck_assert_uint_eq(m.free_blocks, 2);
    ck_assert_uint_eq(m.live_requested, 200);
    ck_assert_uint_eq(m.live_allocated, 208);
    ck_assert_uint_eq(m.internal_fragmentation, 8);
    ck_assert_uint_eq(m.free_bytes, 1 * MiB - 208);
    ck_assert_uint_eq(m.largest_free, 1 * MiB - 320);
    ck_assert_uint_eq(m.reserved, 320);       /* extent: up to the 208-byte block */
    ck_assert_uint_eq(m.peak_footprint, 320);
    ck_assert_uint_eq(m.peak_live_requested, 300);
    ck_assert_double_eq_tol(m.external_fragmentation,
                            1.0 - (double)(1 * MiB - 320) / (double)(1 * MiB - 208), 1e-12);
    ck_assert_double_eq_tol(m.seed_fragmentation, 1.0 - 1.0 / 3.0, 1e-12);
    ck_assert_double_eq_tol(m.utilization, 208.0 / (double)(1 * MiB), 1e-12);
    ck_assert_double_eq_tol(m.jw_fragmentation, 320.0 / 300.0 - 1.0, 1e-12);
    ck_assert_uint_eq(m.internal_at_peak, 12 + 8);
    device_destroy(d);
}
END_TEST

START_TEST(timing_is_optional)
{
    device_t *d = test_device("best-fit", 1 * MiB);
    for (int i = 0; i < 100; i++)
        test_free(d, test_alloc(d, 64, 16, 0));
    const device_stats_t *st = device_stats(d, (size_t)strategy_index(device_strategy(d)));
    ck_assert_uint_gt(st->alloc_ns, 0);
    ck_assert_uint_gt(st->free_ns, 0);
    device_destroy(d);

    device_config_t cfg = {.total = 1 * MiB, .no_timing = true};
    ck_assert_int_eq(device_create(&cfg, &d, NULL, 0), POOL_OK);
    device_result_t r;
    ck_assert_int_eq(device_alloc(d, 64, 16, 0, &r), POOL_OK);
    ck_assert_uint_eq(r.ns, 0);
    ck_assert_uint_eq(device_stats(d, (size_t)strategy_index(device_strategy(d)))->alloc_ns, 0);
    ck_assert_uint_eq(device_trim(d), 0); /* nothing cached outside caching */
    device_destroy(d);
}
END_TEST

/* A device without an address map gives every strategy's results and
 * figures exactly as one with it, freed by handle; its walkers pass;
 * frees by address are refused with a message. */
START_TEST(handles_only_device_is_the_same_device)
{
    const char *name = strategy_at((size_t)_i)->name;
    device_t *with = test_device(name, 32 * MiB), *without;
    device_config_t cfg = {.total = 32 * MiB, .strategy = name, .handles_only = true};
    ck_assert_int_eq(device_create(&cfg, &without, NULL, 0), POOL_OK);
    enum { SLOTS = 300 };
    void *hw[SLOTS] = {0}, *hn[SLOTS] = {0};
    rng_t g;
    rng_seed(&g, 77 + (uint64_t)_i);
    device_result_t a, b;
    for (int op = 0; op < 20000; op++) {
        size_t k = (size_t)rng_below(&g, SLOTS);
        if (hw[k]) {
            ck_assert_int_eq(device_free_block(with, hw[k], &a), POOL_OK);
            ck_assert_int_eq(device_free_block(without, hn[k], &b), POOL_OK);
            REQUIRE(a.addr == b.addr && a.size == b.size, "free %d", op);
            hw[k] = hn[k] = NULL;
        } else {
            uint64_t size = 1 + rng_below(&g, rng_below(&g, 20) ? 4096 : 1 * MiB);
            uint64_t align = rng_below(&g, 10) ? 16 : 1ull << rng_below(&g, 12);
            int64_t stream = (int64_t)rng_below(&g, 3);
            int ea = device_alloc(with, size, align, stream, &a);
            int eb = device_alloc(without, size, align, stream, &b);
            REQUIRE(ea == eb && a.addr == b.addr && a.size == b.size &&
                        strcmp(a.error, b.error) == 0,
                    "alloc %d: %d/%d %s/%s", op, ea, eb, a.error, b.error);
            hw[k] = ea ? NULL : a.block;
            hn[k] = eb ? NULL : b.block;
        }
        if (op % 997 == 0) {
            ck_assert_device_ok(with);
            ck_assert_device_ok(without);
        }
    }
    device_metrics_t mw, mn;
    device_metrics(with, &mw);
    device_metrics(without, &mn);
    ck_assert_int_eq(memcmp(&mw, &mn, sizeof mw), 0);
    ck_assert_device_ok(without);
    ck_assert_int_eq(device_alloc(without, 100, 16, 0, &b), POOL_OK);
    ck_assert_int_eq(device_free(without, b.addr, &a), POOL_EINVAL);
    ck_assert_msg(strstr(a.error, "by handle only"), "%s", a.error);
    ck_assert_int_eq(device_free_request(without, b.addr, &a), POOL_EINVAL);
    ck_assert_int_eq(device_free_complete(without, b.addr, &a), POOL_EINVAL);
    ck_assert_int_eq(device_free_block(without, b.block, &a), POOL_OK);
    ck_assert_int_eq(device_reset(without), POOL_OK); /* the new pool keeps the mode */
    ck_assert_int_eq(device_alloc(without, 100, 16, 0, &b), POOL_OK);
    ck_assert_int_eq(device_free(without, b.addr, &a), POOL_EINVAL);
    device_destroy(with);
    device_destroy(without);
}
END_TEST

START_TEST(status_lists_segments_and_blocks)
{
    device_t *d = test_device("first-fit", 4096);
    test_alloc(d, 100, 16, 0);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    device_print_status(d, f);
    fclose(f);
    ck_assert_msg(strstr(text, "=== Device 0 Memory Status ==="), "%s", text);
    ck_assert_msg(strstr(text, "Current Allocator: first-fit"), "%s", text);
    ck_assert_msg(strstr(text, "0x10000000: 112 bytes (ALLOC) [SEGMENT_START]"), "%s", text);
    ck_assert_msg(strstr(text, "0x10000070: 3984 bytes (FREE)"), "%s", text);
    ck_assert_msg(strstr(text, "Blocks: 2"), "%s", text);
    free(text);
    device_destroy(d);
}
END_TEST


/* ---- the host's allocator fails ------------------------------------------- */

/* One scripted run: create a device, then enough operations to grow the
 * block storage and the address map several times, frees of every kind,
 * a second stream, a trim, a reset and a strategy switch.  Counts the
 * operations that failed for want of host memory; returns -1 when
 * anything else went wrong. */
static int host_script(const char *strategy, device_t **out, int *host_failures)
{
    device_config_t cfg = {.total = 256 * MiB, .strategy = strategy};
    device_result_t r;
    uint64_t addrs[10000];
    *host_failures = 0;
    *out = NULL;
    int rc = device_create(&cfg, out, NULL, 0);
    if (rc)
        return rc == POOL_EHOST ? (++*host_failures, 0) : -1;
    device_t *d = *out;
    for (int i = 0; i < 10000; i++) {
        rc = device_alloc(d, 16 + (uint64_t)(i * 37 % 2000), 16, i % 7 == 0, &r);
        addrs[i] = rc ? 0 : r.addr;
        if (rc == POOL_EHOST && strstr(r.error, "host allocation failed"))
            ++*host_failures;
        else if (rc)
            return -1;
    }
    for (int i = 0; i < 10000; i += 2)
        if (addrs[i] && device_free(d, addrs[i], &r))
            return -1;
    for (int i = 1; i < 10000; i += 4)
        if (addrs[i] && (device_free_request(d, addrs[i], &r) ||
                         device_free_complete(d, addrs[i], &r)))
            return -1;
    device_trim(d);
    int reset = device_reset(d);
    if (reset == POOL_EHOST)
        ++*host_failures;
    else if (reset)
        return -1;
    rc = device_set_strategy(d, "buddy", &r);
    if (rc == POOL_EHOST)
        ++*host_failures;
    else if (rc && !(rc == POOL_EBUSY && reset == POOL_EHOST)) /* blocks still live */
        return -1;
    return 0;
}

/* SQLite's loop: fail the 1st host allocation, then the 2nd, ... until a
 * run needs fewer.  Every failure must come back as POOL_EHOST and leave
 * the device consistent and usable. */
/* A block freed by its handle: the same as by its address, for every
 * strategy; a second free of it is a failed result. */
START_TEST(free_by_block_handle)
{
    for (size_t i = 0; i < strategy_count(); i++) {
        device_t *d = test_device(strategy_at(i)->name, 64 * MiB);
        device_result_t a, b, r;
        ck_assert_int_eq(device_alloc(d, 100, 16, 0, &a), POOL_OK);
        ck_assert_int_eq(device_alloc(d, 300, 16, 0, &b), POOL_OK);
        ck_assert_ptr_nonnull(a.block);
        ck_assert_int_eq(device_free_block(d, a.block, &r), POOL_OK);
        ck_assert(r.ok);
        ck_assert_uint_eq(r.addr, a.addr);
        ck_assert_uint_eq(r.size, a.size);
        ck_assert_device_ok(d);
        device_metrics_t m;
        device_metrics(d, &m);
        ck_assert_uint_eq(m.live_blocks, 1);
        ck_assert_uint_eq(m.live_requested, 300);
        ck_assert_int_eq(device_free(d, b.addr, &r), POOL_OK);
        ck_assert_device_ok(d);
        device_destroy(d);
    }
    device_t *d = test_device("best-fit", 1 * MiB);
    device_result_t a, b, r;
    ck_assert_int_eq(device_alloc(d, 100, 16, 0, &a), POOL_OK);
    ck_assert_int_eq(device_alloc(d, 100, 16, 0, &b), POOL_OK); /* a stays a block of its own */
    ck_assert_int_eq(device_free_block(d, a.block, &r), POOL_OK);
    ck_assert_int_eq(device_free_block(d, a.block, &r), POOL_EDOUBLE);
    ck_assert(!r.ok);
    ck_assert_str_eq(r.error, "free of a block that is not allocated (free_completed)");
    ck_assert_int_eq(device_free_block(d, NULL, &r), POOL_EDOUBLE);
    ck_assert_uint_eq(device_stats(d, strategy_index(device_strategy(d)))->failed_frees, 2);
    ck_assert_device_ok(d);
    device_destroy(d);
}
END_TEST

/* device_alloc_handle and device_free_handle are device_alloc and
 * device_free_block without the result: the same blocks, statistics
 * and metrics on the same sequence, failures included (a device too
 * small for some requests, sizes and alignments it refuses). */
START_TEST(handle_calls_are_the_same_device)
{
    const char *name = strategy_at((size_t)_i)->name;
    device_t *full = test_device(name, 8 * MiB), *bare = test_device(name, 8 * MiB);
    enum { SLOTS = 200 };
    void *hf[SLOTS] = {0}, *hb[SLOTS] = {0};
    rng_t g;
    rng_seed(&g, 0xba4e0000u + (uint64_t)_i);
    device_result_t r;
    for (int op = 0; op < 20000; op++) {
        size_t k = (size_t)rng_below(&g, SLOTS);
        if (hf[k]) {
            ck_assert_int_eq(device_free_block(full, hf[k], &r), POOL_OK);
            ck_assert_int_eq(device_free_handle(bare, hb[k]), POOL_OK);
            hf[k] = hb[k] = NULL;
            continue;
        }
        uint64_t size = rng_below(&g, 50) ? rng_below(&g, rng_below(&g, 8) ? 4096 : 2 * MiB)
                                          : 9 * MiB; /* 0 and too big: refused */
        uint64_t align = rng_below(&g, 20) ? 16 : rng_below(&g, 2) ? 3 : 1ull << rng_below(&g, 13);
        int ef = device_alloc(full, size, align, 0, &r);
        void *blk = NULL;
        int eb = device_alloc_handle(bare, size, align, 0, &blk);
        REQUIRE(ef == eb, "alloc %d of %llu bytes: %d, by handle %d", op,
                (unsigned long long)size, ef, eb);
        if (ef == POOL_OK) {
            REQUIRE(((block_t *)blk)->addr == r.addr && ((block_t *)blk)->size == r.size,
                    "alloc %d: another block by handle", op);
            hf[k] = r.block;
            hb[k] = blk;
        }
    }
    ck_assert_int_eq(device_free_handle(bare, NULL), POOL_EDOUBLE);
    ck_assert_int_eq(device_free_block(full, NULL, &r), POOL_EDOUBLE);
    size_t i = (size_t)strategy_index(device_strategy(full));
    device_stats_t sf = *device_stats(full, i), sb = *device_stats(bare, i);
    sf.alloc_ns = sf.free_ns = sb.alloc_ns = sb.free_ns = 0; /* clock readings */
    ck_assert_int_eq(memcmp(&sf, &sb, sizeof sf), 0);
    ck_assert_uint_gt(sf.failed_allocations, 0);
    device_metrics_t mf, mb;
    device_metrics(full, &mf);
    device_metrics(bare, &mb);
    ck_assert_int_eq(memcmp(&mf, &mb, sizeof mf), 0);
    ck_assert_device_ok(bare);
    device_destroy(full);
    device_destroy(bare);
}
END_TEST

START_TEST(host_allocation_failures_are_results)
{
    const char *name = strategy_at((size_t)_i)->name;
    long n;
    int injected = 0;
    for (n = 1; n < 100000; n++) {
        device_t *d;
        int host_failures;
        failmalloc_arm(n);
        int rc = host_script(name, &d, &host_failures);
        bool fired = failmalloc_disarm();
        REQUIRE(rc == 0, "%s: failing allocation %ld broke the run", name, n);
        REQUIRE(host_failures == (fired ? 1 : 0), "%s: allocation %ld failed, %d reported",
                name, n, host_failures);
        injected += host_failures;
        if (d) {
            ck_assert_device_ok(d);
            device_result_t r;
            REQUIRE(device_alloc(d, 100, 16, 0, &r) == POOL_OK, "%s: unusable after %ld: %s",
                    name, n, r.error);
            ck_assert_device_ok(d);
            device_destroy(d);
        }
        if (!fired)
            break; /* the whole script ran on fewer allocations */
    }
    ck_assert_int_lt(n, 100000);
    ck_assert_int_gt(injected, 3); /* failures landed inside operations */
}
END_TEST

Suite *device_suite(void)
{
    Suite *s = suite_create("device");
    TCase *tc = tcase_create("device");
    tcase_add_test(tc, seed_example_small_device);
    tcase_add_test(tc, seed_example_alloc_free);
    tcase_add_test(tc, create_refuses_bad_configurations);
    tcase_add_test(tc, switching_strategies);
    tcase_add_test(tc, metrics_follow_their_definitions);
    tcase_add_test(tc, timing_is_optional);
    tcase_add_test(tc, status_lists_segments_and_blocks);
    tcase_add_test(tc, free_by_block_handle);
    tcase_add_loop_test(tc, handles_only_device_is_the_same_device, 0, (int)strategy_count());
    tcase_add_loop_test(tc, handle_calls_are_the_same_device, 0, (int)strategy_count());
    suite_add_tcase(s, tc);
    TCase *oom = tcase_create("host-oom");
    tcase_set_timeout(oom, 300);
    tcase_add_loop_test(oom, host_allocation_failures_are_results, 0, (int)strategy_count());
    suite_add_tcase(s, oom);
    return s;
}
