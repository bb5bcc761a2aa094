/* lean: the lean fit strategies place every block where a device of the
 * same strategy does, with the same figures; invariants after every
 * operation. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "sim/lean.h"
#include "lib/rng.h"
#include "tests/unit/failmalloc.h"
#include "tests/unit/helpers.h"
#include "tests/unit/suites.h"

static const char *const lean_names[] = {"first-fit", "next-fit", "best-fit", "worst-fit",
                                         "buddy"};

#define ck_assert_lean_ok(l)                                          \
    do {                                                              \
        const char *why_ = NULL;                                      \
        REQUIRE(lean_check((l), &why_) == 0, "invariant: %s", why_); \
    } while (0)

/* Every figure the reports read, equal. */
static void same_metrics(const device_t *d, const lean_t *l, const char *when)
{
    device_metrics_t a, b;
    device_metrics(d, &a);
    lean_metrics(l, &b);
#define SAME(f) REQUIRE(a.f == b.f, "%s: " #f " %llu (device) != %llu (lean)", when, \
                        (unsigned long long)a.f, (unsigned long long)b.f)
    SAME(total);
    SAME(segments);
    SAME(blocks);
    SAME(live_blocks);
    SAME(free_blocks);
    SAME(live_requested);
    SAME(live_allocated);
    SAME(segment_bytes);
    SAME(free_bytes);
    SAME(reserved);
    SAME(peak_footprint);
    SAME(peak_live_requested);
    SAME(largest_free);
    SAME(internal_fragmentation);
    SAME(internal_at_peak);
    SAME(live_at_peak);
    SAME(free_at_peak);
#undef SAME
    REQUIRE(a.external_at_peak == b.external_at_peak, "%s: external at peak", when);
    REQUIRE(a.external_fragmentation == b.external_fragmentation, "%s: external", when);
    REQUIRE(a.jw_fragmentation == b.jw_fragmentation, "%s: J-W", when);
    REQUIRE(a.seed_fragmentation == b.seed_fragmentation, "%s: seed", when);
    REQUIRE(a.utilization == b.utilization, "%s: utilization", when);
}

typedef struct shape_s {
    uint64_t device;   /* bytes */
    unsigned slots;    /* live blocks at most */
    uint64_t max_size; /* request sizes 1..max_size (a few of 16x) */
    unsigned align_one_in; /* an aligned request one time in this many (0: never) */
    int ops;
    unsigned large_one_in; /* a request of up to large_max bytes one time in this many */
    uint64_t large_max;
} shape_t;

/* The same random sequence through a device and a lean device: every
 * allocation succeeds or fails alike and at the same address, every
 * figure matches, and lean_check holds after every operation. */
static void run_both(const char *name, const shape_t *sh, uint64_t seed)
{
    char err[256];
    device_t *d = NULL;
    device_config_t cfg = {.total = sh->device, .strategy = name, .no_timing = true,
                           .handles_only = true};
    ck_assert_msg(device_create(&cfg, &d, err, sizeof err) == POOL_OK, "%s", err);
    lean_t *l;
    ck_assert_msg(lean_create(name, sh->device, &l, err, sizeof err) == 0, "%s", err);
    void **blk = calloc(sh->slots, sizeof *blk);
    uint32_t *h = calloc(sh->slots, sizeof *h);
    uint64_t *size = calloc(sh->slots, sizeof *size);
    ck_assert(blk && h && size);
    rng_t rng;
    rng_seed(&rng, seed);
    uint64_t failed = 0, placed = 0;
    for (int op = 0; op < sh->ops; op++) {
        unsigned k = (unsigned)rng_below(&rng, sh->slots);
        if (blk[k]) {
            REQUIRE(device_free_handle(d, blk[k]) == POOL_OK, "device free");
            REQUIRE(lean_free(l, h[k], size[k]) == 0, "lean free");
            blk[k] = NULL;
        } else {
            uint64_t s = 1 + rng_below(&rng, sh->max_size);
            if (rng_below(&rng, 16) == 0)
                s *= 16; /* a few large ones */
            if (sh->large_one_in && rng_below(&rng, sh->large_one_in) == 0)
                s = 1 + rng_below(&rng, sh->large_max);
            uint64_t align = 16;
            if (sh->align_one_in && rng_below(&rng, sh->align_one_in) == 0)
                align = 32ull << rng_below(&rng, 8); /* 32 .. 4096 */
            void *b = NULL;
            uint32_t hl = LEAN_NONE;
            int rd = device_alloc_handle(d, s, align, 0, &b);
            int rl = lean_alloc(l, s, align, &hl);
            REQUIRE((rd == POOL_OK) == (rl == POOL_OK), "%s op %d: device %d, lean %d", name,
                    op, rd, rl);
            if (rd == POOL_OK) {
                REQUIRE(((block_t *)b)->addr == lean_addr(l, hl),
                        "%s op %d: device placed %llu bytes at 0x%llx, lean at 0x%llx", name,
                        op, (unsigned long long)s, (unsigned long long)((block_t *)b)->addr,
                        (unsigned long long)lean_addr(l, hl));
                blk[k] = b;
                h[k] = hl;
                size[k] = s;
                placed++;
            } else {
                failed++;
            }
        }
        ck_assert_lean_ok(l);
        if (op % 512 == 0)
            same_metrics(d, l, name);
    }
    same_metrics(d, l, name);
    /* Everything back: one free run again. */
    for (unsigned k = 0; k < sh->slots; k++)
        if (blk[k]) {
            device_free_handle(d, blk[k]);
            REQUIRE(lean_free(l, h[k], size[k]) == 0, "lean free");
            ck_assert_lean_ok(l);
        }
    same_metrics(d, l, name);
    device_metrics_t m;
    device_metrics(d, &m);
    REQUIRE(lean_extents(l) == m.segments, "%s: %llu free runs once all is freed", name,
            (unsigned long long)lean_extents(l)); /* buddy: one per chunk */
    REQUIRE(placed > 0, "%s: nothing placed", name);
    free(blk);
    free(h);
    free(size);
    lean_destroy(l);
    device_destroy(d);
    if (sh->device < MiB)
        REQUIRE(failed > 0, "%s: a full device failed nothing", name);
}

/* A roomy device: the heap grows and churns, the top is carved. */
START_TEST(lean_places_as_the_device_roomy)
{
    shape_t sh = {.device = 256 * MiB, .slots = 2000, .max_size = 600, .align_one_in = 0,
                  .ops = 40000};
    run_both(lean_names[_i], &sh, 7 + (uint64_t)_i);
}
END_TEST

/* Aligned requests: the padding stays free, also off the top. */
START_TEST(lean_places_as_the_device_aligned)
{
    shape_t sh = {.device = 256 * MiB, .slots = 1000, .max_size = 3000, .align_one_in = 5,
                  .ops = 30000};
    run_both(lean_names[_i], &sh, 1234 + (uint64_t)_i);
}
END_TEST

/* A device that fills up: failed requests, the top used up, the last
 * block freed without being pristine. */
START_TEST(lean_places_as_the_device_full)
{
    shape_t sh = {.device = 64 * KiB, .slots = 300, .max_size = 700, .align_one_in = 9,
                  .ops = 30000};
    run_both(lean_names[_i], &sh, 99 + (uint64_t)_i);
}
END_TEST

/* Runs on both sides of best fit's size bins (runs of fewer than 512
 * granules, 8 KiB, binned by size; larger ones in the main treap):
 * requests up to 12 KiB, a run that grows or shrinks across the limit. */
START_TEST(lean_places_as_the_device_across_the_bins)
{
    shape_t sh = {.device = 4 * MiB, .slots = 600, .max_size = 12 * 1024, .align_one_in = 7,
                  .ops = 30000};
    run_both(lean_names[_i], &sh, 4242 + (uint64_t)_i);
}
END_TEST

/* A device that is not a power of two: buddy's chunks, largest first,
 * each a buddy system of its own. */
START_TEST(lean_places_as_the_device_in_chunks)
{
    shape_t sh = {.device = 3 * MiB + 64 * KiB + 640, .slots = 800, .max_size = 9000,
                  .align_one_in = 6, .ops = 30000};
    run_both(lean_names[_i], &sh, 31337 + (uint64_t)_i);
}
END_TEST

/* An out-of-memory loop's stream: ops random allocations and frees over
 * slots, sizes 1..small_max but one time in large_one_in 1..large_max,
 * aligned to 4096 one time in aligned_one_in (0: always 16). */
typedef struct oom_stream_s {
    const char *strategy;
    uint64_t device; /* bytes */
    unsigned slots;  /* live blocks at most */
    uint64_t seed;
    int ops;
    uint64_t small_max, large_max;
    unsigned large_one_in;
    unsigned aligned_one_in;
    bool full_fails; /* a request the device has no room for counts as a failed
                        call too (else only one without host memory) */
} oom_stream_t;

/* The stream through a fresh lean form, host allocation n failing
 * (failmalloc): one allocation failed makes one call fail, or none (a
 * map that could not shrink stays as large); the form is whole after
 * the stream and once every block is freed.  The form, every block
 * freed, for the caller to check and destroy; the calls that failed
 * added to *fails. */
static lean_t *oom_stream_run(const oom_stream_t *st, long n, long *fails)
{
    char err[256];
    lean_t *l;
    ck_assert_int_eq(lean_create(st->strategy, st->device, &l, err, sizeof err), 0);
    uint32_t *h = malloc(st->slots * sizeof *h);
    uint64_t *size = malloc(st->slots * sizeof *size);
    ck_assert(h && size);
    memset(h, 0xff, st->slots * sizeof *h);
    rng_t rng;
    rng_seed(&rng, st->seed);
    long failures = 0;
    failmalloc_arm(n);
    for (int op = 0; op < st->ops; op++) {
        unsigned k = (unsigned)rng_below(&rng, st->slots);
        if (h[k] != LEAN_NONE) {
            if (lean_free(l, h[k], size[k]) == 0)
                h[k] = LEAN_NONE;
            else
                failures++;
            continue;
        }
        size[k] =
            1 + rng_below(&rng, rng_below(&rng, st->large_one_in) ? st->small_max : st->large_max);
        uint64_t align = 16;
        if (st->aligned_one_in && !rng_below(&rng, st->aligned_one_in))
            align = 4096;
        int r = lean_alloc(l, size[k], align, &h[k]);
        if (r != POOL_OK)
            h[k] = LEAN_NONE;
        if (r == POOL_EHOST || (r != POOL_OK && st->full_fails))
            failures++;
    }
    bool failed = failmalloc_disarm();
    ck_assert_msg(failures <= 1 && (!failures || failed),
                  "%s, n %ld: one failure made %ld failed calls", st->strategy, n, failures);
    *fails += failures;
    ck_assert_lean_ok(l);
    for (unsigned k = 0; k < st->slots; k++)
        if (h[k] != LEAN_NONE)
            ck_assert_int_eq(lean_free(l, h[k], size[k]), 0);
    ck_assert_lean_ok(l);
    free(h);
    free(size);
    return l;
}

/* Out of host memory at every allocation in turn (the node array, the
 * map): a failed request or free changes nothing, and the device stays
 * whole; freeing everything afterwards gives back one free block. */
START_TEST(lean_buddy_out_of_memory_loop)
{
    const oom_stream_t st = {.strategy = "buddy",
                             .device = 16 * MiB,
                             .slots = 20000,
                             .seed = 77,
                             .ops = 80000,
                             .small_max = 200,
                             .large_max = 5000,
                             .large_one_in = 8,
                             .full_fails = true};
    long fails = 0;
    for (long n = 1; n <= 12; n++) {
        lean_t *l = oom_stream_run(&st, n, &fails);
        device_metrics_t m;
        lean_metrics(l, &m);
        ck_assert_uint_eq(m.live_blocks, 0);
        ck_assert_uint_eq(m.live_requested, 0);
        ck_assert_uint_eq(lean_extents(l), 1);
        ck_assert_uint_eq(m.reserved, 0);
        lean_destroy(l);
    }
    ck_assert_int_ge(fails, 4); /* the loop reached failing calls (5 of 12) */
}
END_TEST

/* The caching pool: small blocks in 2 MiB segments that touch (their
 * free runs at a shared boundary must not merge), large ones in 20 MiB
 * segments or their own, large blocks that keep a remainder of up to
 * 1 MiB, aligned requests. */
START_TEST(lean_caching_places_as_the_device)
{
    static const shape_t shapes[] = {
        /* roomy: many small segments side by side, a few large ones */
        {.device = 1 * GiB, .slots = 3000, .max_size = 3000, .align_one_in = 0, .ops = 40000,
         .large_one_in = 50, .large_max = 3 * MiB},
        /* aligned, and sizes across the bins (256 KiB) and the small pool's 1 MiB */
        {.device = 1 * GiB, .slots = 600, .max_size = 70 * 1024, .align_one_in = 4,
         .ops = 30000, .large_one_in = 20, .large_max = 2 * MiB},
        /* huge requests: segments of their own (10 MiB and more, in 2 MiB) */
        {.device = 4 * GiB, .slots = 200, .max_size = 5000, .align_one_in = 9, .ops = 20000,
         .large_one_in = 4, .large_max = 40 * MiB},
    };
    const shape_t *sh = &shapes[_i];
    run_both("caching", sh, 555 + (uint64_t)_i);
}
END_TEST

/* A device that fills: requests that need a new segment trim the cache
 * (every wholly free segment given back), the address space has holes
 * a larger segment cannot use, and requests fail. */
START_TEST(lean_caching_places_as_the_device_full)
{
    static const shape_t shapes[] = {
        {.device = 24 * MiB, .slots = 400, .max_size = 20000, .align_one_in = 7, .ops = 40000,
         .large_one_in = 6, .large_max = 12 * MiB},
        {.device = 45 * MiB, .slots = 60, .max_size = 200000, .align_one_in = 0, .ops = 30000,
         .large_one_in = 3, .large_max = 24 * MiB},
        {.device = 6 * MiB + 512, .slots = 900, .max_size = 4000, .align_one_in = 3,
         .ops = 30000, .large_one_in = 40, .large_max = 3 * MiB},
    };
    const shape_t *sh = &shapes[_i];
    run_both("caching", sh, 808 + (uint64_t)_i);
}
END_TEST

/* Adversarial for the merge barriers: fill several small segments with
 * blocks, free every block of one segment but its first, then free
 * the last blocks of the one below and the first of the one above: the
 * runs at each shared boundary stay apart; then everything, in an
 * order that merges from both sides. */
START_TEST(lean_caching_keeps_segments_apart)
{
    enum { N = 4 * 4096 }; /* 4 segments of 4096 blocks of 512 bytes */
    char err[256];
    device_t *d = NULL;
    device_config_t cfg = {.total = 64 * MiB, .strategy = "caching", .no_timing = true,
                           .handles_only = true};
    ck_assert_msg(device_create(&cfg, &d, err, sizeof err) == POOL_OK, "%s", err);
    lean_t *l;
    ck_assert_msg(lean_create("caching", 64 * MiB, &l, err, sizeof err) == 0, "%s", err);
    static void *blk[N];
    static uint32_t h[N];
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(device_alloc_handle(d, 500, 16, 0, &blk[i]), POOL_OK);
        ck_assert_int_eq(lean_alloc(l, 500, 16, &h[i]), 0);
        ck_assert_uint_eq(((block_t *)blk[i])->addr, lean_addr(l, h[i]));
    }
    same_metrics(d, l, "filled");
    for (int pass = 0; pass < 3; pass++)
        for (int i = 0; i < N; i++) {
            int seg = i / 4096, at = i % 4096;
            bool now = pass == 0   ? seg == 1 && at > 0
                       : pass == 1 ? (seg == 0 && at > 4000) || (seg == 2 && at < 50)
                                   : true;
            if (!blk[i] || !now)
                continue;
            ck_assert_int_eq(device_free_handle(d, blk[i]), POOL_OK);
            ck_assert_int_eq(lean_free(l, h[i], 500), 0);
            blk[i] = NULL;
            ck_assert_lean_ok(l);
        }
    same_metrics(d, l, "emptied");
    device_metrics_t m;
    lean_metrics(l, &m);
    ck_assert_uint_eq(m.segments, 4);
    ck_assert_uint_eq(lean_extents(l), 4); /* one free run per segment, none merged across */
    /* A request that needs more than the device has left: every wholly
     * free segment given back first. */
    void *b;
    uint32_t hb;
    ck_assert_int_eq(device_alloc_handle(d, 60 * MiB, 16, 0, &b), POOL_OK);
    ck_assert_int_eq(lean_alloc(l, 60 * MiB, 16, &hb), 0);
    ck_assert_uint_eq(((block_t *)b)->addr, lean_addr(l, hb));
    same_metrics(d, l, "trimmed");
    lean_metrics(l, &m);
    ck_assert_uint_eq(m.segments, 1);
    ck_assert_uint_eq(m.reserved, 60 * MiB);
    lean_destroy(l);
    device_destroy(d);
}
END_TEST

/* Out of host memory at every allocation in turn (runs, the hash of
 * run ends, segments, frames, far slots): a failed request or free
 * changes nothing it should not (a request may have trimmed the cache
 * first, as the device's does), and the device stays whole; freeing
 * everything afterwards leaves one free run per segment. */
START_TEST(lean_caching_out_of_memory_loop)
{
    const oom_stream_t st = {.strategy = "caching",
                             .device = 512 * MiB,
                             .slots = 6000,
                             .seed = 91,
                             .ops = 60000,
                             .small_max = 3000,
                             .large_max = 3 * MiB,
                             .large_one_in = 100,
                             .aligned_one_in = 5};
    long fails = 0;
    for (long n = 1; n <= 16; n++) {
        lean_t *l = oom_stream_run(&st, n, &fails);
        device_metrics_t m;
        lean_metrics(l, &m);
        ck_assert_uint_eq(m.live_blocks, 0);
        ck_assert_uint_eq(m.live_requested, 0);
        ck_assert_uint_eq(m.live_allocated, 0);
        ck_assert_uint_eq(lean_extents(l), m.segments);
        lean_destroy(l);
    }
    ck_assert_int_ge(fails, 5); /* the loop reached failing calls */
}
END_TEST

START_TEST(lean_refuses_what_it_has_no_form_of)
{
    char err[256];
    lean_t *l = (lean_t *)1;
    ck_assert_int_eq(lean_create("cuda-graphs", 1 * GiB, &l, err, sizeof err), -1);
    ck_assert_ptr_null(l);
    ck_assert(strstr(err, "cuda-graphs"));
    ck_assert(!lean_supports("cuda-graphs"));
    ck_assert(lean_supports("caching"));
    ck_assert_int_eq(lean_create("caching", 511, &l, err, sizeof err), -1); /* as the device */
    ck_assert(lean_supports("buddy"));
    /* buddy's handles name 32-byte units: below 128 GiB */
    ck_assert_int_eq(lean_create("buddy", 128 * GiB, &l, err, sizeof err), -1);
    ck_assert_int_eq(lean_create("buddy", 32, &l, err, sizeof err), -1); /* no 64-byte block */
    ck_assert_int_eq(lean_create("buddy", 128 * GiB - 64, &l, err, sizeof err), 0);
    {
        uint32_t hb;
        ck_assert_int_eq(lean_alloc(l, 64 * GiB, 16, &hb), POOL_OK); /* the first chunk */
        ck_assert_uint_eq(lean_addr(l, hb), DEVICE_DEFAULT_BASE);
        ck_assert_int_eq(lean_alloc(l, 100, 1ull << 29, &hb), POOL_EINVAL); /* beyond the base's */
        ck_assert_int_eq(lean_alloc(l, 1, 16, &hb), POOL_OK); /* the smallest: the last chunk */
        ck_assert_uint_eq(lean_addr(l, hb), DEVICE_DEFAULT_BASE + 128 * GiB - 128);
        ck_assert_uint_ne(hb, LEAN_NONE);
        ck_assert_lean_ok(l);
        lean_destroy(l);
    }
    ck_assert(lean_supports("next-fit"));
    /* 2^32 - 1 granules and more: the run boundaries (0 to the size,
     * in granules) would not fit 32 bits beside the hash's empty key */
    ck_assert_int_eq(lean_create("best-fit", 64 * GiB, &l, err, sizeof err), -1);
    ck_assert_int_eq(lean_create("best-fit", 64 * GiB - 16, &l, err, sizeof err), -1);
    ck_assert_int_eq(lean_create("best-fit", 64 * GiB - 32, &l, err, sizeof err), 0);
    uint32_t h;
    ck_assert_int_eq(lean_alloc(l, 0, 16, &h), POOL_EINVAL); /* as the device: size 0 */
    ck_assert_int_eq(lean_alloc(l, 100, 24, &h), POOL_EINVAL);
    ck_assert_int_eq(lean_alloc(l, 64 * GiB - 16, 16, &h), POOL_EINVAL);
    ck_assert_int_eq(lean_alloc(l, 100, 16, &h), POOL_OK);
    ck_assert_uint_eq(lean_addr(l, h), DEVICE_DEFAULT_BASE);
    lean_destroy(l);
}
END_TEST

Suite *lean_suite(void)
{
    Suite *s = suite_create("lean");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    int n = (int)(sizeof lean_names / sizeof lean_names[0]);
    tcase_add_loop_test(tc, lean_places_as_the_device_roomy, 0, n);
    tcase_add_loop_test(tc, lean_places_as_the_device_aligned, 0, n);
    tcase_add_loop_test(tc, lean_places_as_the_device_full, 0, n);
    tcase_add_loop_test(tc, lean_places_as_the_device_across_the_bins, 0, n);
    tcase_add_loop_test(tc, lean_places_as_the_device_in_chunks, 0, n);
    tcase_add_loop_test(tc, lean_caching_places_as_the_device, 0, 3);
    tcase_add_loop_test(tc, lean_caching_places_as_the_device_full, 0, 3);
    tcase_add_test(tc, lean_caching_keeps_segments_apart);
    tcase_add_test(tc, lean_caching_out_of_memory_loop);
    tcase_add_test(tc, lean_refuses_what_it_has_no_form_of);
    tcase_add_test(tc, lean_buddy_out_of_memory_loop);
    suite_add_tcase(s, tc);
    return s;
}
