/*
 * sites: hand-built traces with known figures per stack, the lazy peak
 * snapshot against a brute-force one on a randomized trace, bad stack
 * records, modules assigned at a stack's first use, the out-of-memory
 * loop, and a block the summary has no memory for.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/consume/sites.h"
#include "analyzer/consume/summary.h"
#include "lib/rng.h"
#include "tests/unit/failmalloc.h"
#include "tests/unit/helpers.h"
#include "tests/unit/suites.h"

/* ---- building events ------------------------------------------------------ */

static summary_t *also; /* a summary fed the same heap events, or NULL */
/* The heap tests run twice: through sites_add (a summary the sites make
 * for themselves), then through sites_add_with on the test's summary
 * (memsim-analyze's way); every figure must be the same. */
static bool with_summary;
static summary_t mode_sum;

static int add(sites_t *s, const event_t *e)
{
    if (also)
        summary_add(also, e);
    return with_summary ? sites_add_with(s, e, also) : sites_add(s, e);
}

/* mode 1: through a summary (the test's own, or one made here). */
static void mode_begin(int mode)
{
    with_summary = mode == 1;
    if (with_summary && !also) {
        ck_assert_int_eq(summary_init(&mode_sum), 0);
        also = &mode_sum;
    }
}

static void mode_end(void)
{
    if (also == &mode_sum) {
        summary_fini(&mode_sum);
        also = NULL;
    }
    with_summary = false;
}

static int stack(sites_t *s, uint64_t id, const uint64_t *frames, size_t n)
{
    json_t *fr = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(fr, json_integer((json_int_t)frames[i]));
    json_t *o = json_pack("{s:s, s:I, s:o}", "ev", "stack", "id", (json_int_t)id, "frames", fr);
    event_t e = {.type = EV_STACK, .json = o};
    int rc = sites_add(s, &e);
    json_decref(o);
    return rc;
}

static int alloc(sites_t *s, uint64_t stack_id, uint64_t addr, uint64_t size)
{
    event_t e = {.type = EV_ALLOC, .addr = addr, .size = size, .stack = stack_id};
    return add(s, &e);
}

static int release(sites_t *s, uint64_t addr)
{
    event_t e = {.type = EV_FREE, .addr = addr};
    return add(s, &e);
}

static int resize(sites_t *s, uint64_t stack_id, uint64_t old_addr, uint64_t addr, uint64_t size)
{
    event_t e = {.type = EV_REALLOC, .old_addr = old_addr, .addr = addr, .size = size,
                 .stack = stack_id, .has_old_size = true};
    return add(s, &e);
}

static int module(sites_t *s, const char *op, const char *path, uint64_t base, uint64_t size)
{
    json_t *o = json_pack("{s:s, s:s, s:s, s:I, s:I}", "ev", "module", "op", op, "path", path,
                          "base", (json_int_t)base, "size", (json_int_t)size);
    event_t e = {.type = EV_MODULE, .json = o};
    int rc = sites_add(s, &e);
    json_decref(o);
    return rc;
}

static const uint64_t F1[] = {0x1010, 0x2020}, F2[] = {0x1030}, F3[] = {0x1040, 0x2050, 0x3060};

/* ---- known figures ---------------------------------------------------------- */

START_TEST(known_figures)
{
    sites_t s;
    ck_assert_int_eq(sites_init(&s, NULL), 0);
    mode_begin(_i);
    ck_assert_int_eq(stack(&s, 1, F1, 2), 0);
    ck_assert_int_eq(stack(&s, 2, F2, 1), 0);
    ck_assert_int_eq(stack(&s, 3, F3, 3), 0);
    ck_assert_int_eq(alloc(&s, 1, 0xa0, 100), 0);
    ck_assert_int_eq(alloc(&s, 1, 0xb0, 200), 0);
    ck_assert_int_eq(alloc(&s, 2, 0xc0, 300), 0);   /* heap 600: a peak */
    ck_assert_int_eq(release(&s, 0xa0), 0);         /* 500 */
    ck_assert_int_eq(alloc(&s, 2, 0xd0, 50), 0);    /* 550 */
    ck_assert_int_eq(resize(&s, 3, 0xb0, 0xe0, 400), 0); /* 750: the peak; B moves to stack 3 */
    ck_assert_int_eq(release(&s, 0xc0), 0);         /* 450 */
    ck_assert_int_eq(release(&s, 0x999), 0);        /* unknown: ignored */
    ck_assert_int_eq(alloc(&s, 1, 0xf0, 10), 0);    /* 460 */
    sites_finish(&s);

    ck_assert_uint_eq(s.peak, 750);
    ck_assert_uint_eq(sites_count(&s), 4);
    const site_t *a = sites_get(&s, 1), *b = sites_get(&s, 2), *c = sites_get(&s, 3);
    ck_assert_uint_eq(a->calls, 3);
    ck_assert_uint_eq(a->allocated, 310);
    ck_assert_uint_eq(b->calls, 2);
    ck_assert_uint_eq(b->allocated, 350);
    ck_assert_uint_eq(c->calls, 1);
    ck_assert_uint_eq(c->allocated, 400);
    ck_assert_uint_eq(sites_peak_bytes(&s, 1), 0);
    ck_assert_uint_eq(sites_peak_bytes(&s, 2), 350);
    ck_assert_uint_eq(sites_peak_bytes(&s, 3), 400);
    ck_assert_uint_eq(a->live, 10);
    ck_assert_uint_eq(a->live_blocks, 1);
    ck_assert_uint_eq(b->live, 50);
    ck_assert_uint_eq(b->live_blocks, 1);
    ck_assert_uint_eq(c->live, 400);
    ck_assert_uint_eq(c->live_blocks, 1);
    ck_assert_uint_eq(c->nframes, 3);
    ck_assert_uint_eq(c->frames[2], 0x3060);

    uint64_t *ids;
    ck_assert_uint_eq(sites_top(&s, SITES_BY_PEAK, 10, &ids), 2); /* stack 1 had 0 at the peak */
    ck_assert_uint_eq(ids[0], 3);
    ck_assert_uint_eq(ids[1], 2);
    free(ids);
    ck_assert_uint_eq(sites_top(&s, SITES_BY_CALLS, 2, &ids), 2);
    ck_assert_uint_eq(ids[0], 1);
    ck_assert_uint_eq(ids[1], 2);
    free(ids);
    ck_assert_uint_eq(sites_top(&s, SITES_BY_LEAKED, 10, &ids), 3);
    ck_assert_uint_eq(ids[0], 3);
    ck_assert_uint_eq(ids[1], 2);
    ck_assert_uint_eq(ids[2], 1);
    free(ids);
    ck_assert_uint_eq(sites_top(&s, SITES_BY_LEAKED, 0, &ids), 0);
    ck_assert_ptr_null(ids);
    mode_end();
    sites_fini(&s);
}
END_TEST

START_TEST(ties_and_no_stack)
{
    sites_t s;
    ck_assert_int_eq(sites_init(&s, NULL), 0);
    mode_begin(_i);
    ck_assert_int_eq(stack(&s, 1, F1, 2), 0);
    ck_assert_int_eq(stack(&s, 2, F2, 1), 0);
    ck_assert_int_eq(alloc(&s, 2, 0x10, 64), 0);
    ck_assert_int_eq(alloc(&s, 1, 0x20, 64), 0);
    ck_assert_int_eq(alloc(&s, 0, 0x30, 64), 0); /* no stack: site 0 */
    uint64_t *ids;
    ck_assert_uint_eq(sites_top(&s, SITES_BY_LEAKED, 10, &ids), 3);
    ck_assert_uint_eq(ids[0], 0); /* equal keys: by id */
    ck_assert_uint_eq(ids[1], 1);
    ck_assert_uint_eq(ids[2], 2);
    free(ids);
    ck_assert_uint_eq(sites_get(&s, 0)->calls, 1);
    ck_assert_uint_eq(sites_peak_bytes(&s, 0) + sites_peak_bytes(&s, 1) + sites_peak_bytes(&s, 2),
                      192);
    mode_end();
    sites_fini(&s);
}
END_TEST

/* An address allocated twice without a free (a broken trace): counted as
 * the summary counts it, so the heap and its peak are the summary's. */
START_TEST(address_reused_without_free)
{
    sites_t s;
    summary_t sum;
    ck_assert_int_eq(sites_init(&s, NULL), 0);
    ck_assert_int_eq(summary_init(&sum), 0);
    also = &sum;
    mode_begin(_i);
    ck_assert_int_eq(stack(&s, 1, F1, 2), 0);
    ck_assert_int_eq(stack(&s, 2, F2, 1), 0);
    ck_assert_int_eq(alloc(&s, 1, 0x10, 100), 0);
    ck_assert_int_eq(alloc(&s, 2, 0x10, 30), 0);
    ck_assert_uint_eq(s.heap, 130);
    ck_assert_uint_eq(sites_get(&s, 1)->live, 100);
    ck_assert_uint_eq(sites_get(&s, 2)->live, 30);
    ck_assert_int_eq(resize(&s, 1, 0x10, 0x10, 60), 0); /* in place, to stack 1 */
    ck_assert_uint_eq(s.heap, 160);
    ck_assert_uint_eq(sites_get(&s, 2)->live_blocks, 0);
    ck_assert_uint_eq(sites_get(&s, 1)->live, 160);
    ck_assert_int_eq(release(&s, 0x10), 0);
    ck_assert_uint_eq(s.heap, 100);
    ck_assert_uint_eq(s.heap, sum.heap);
    ck_assert_uint_eq(s.peak, sum.peak_heap);
    mode_end();
    also = NULL;
    summary_fini(&sum);
    sites_fini(&s);
}
END_TEST

/* ---- the peak against brute force ---------------------------------------------- */

START_TEST(peak_matches_brute_force)
{
    enum { STACKS = 40, SLOTS = 3000, EVENTS = 200000 };
    rng_t rng;
    rng_seed(&rng, 20261130 + (uint64_t)(_i % 3));
    sites_t s;
    summary_t sum;
    ck_assert_int_eq(sites_init(&s, NULL), 0);
    ck_assert_int_eq(summary_init(&sum), 0);
    also = &sum;
    mode_begin(_i / 3); /* _i 0..2: own map, 3..5: the summary's */
    for (uint64_t id = 1; id <= STACKS; id++) {
        uint64_t fr = 0x400000 + id;
        ck_assert_int_eq(stack(&s, id, &fr, 1), 0);
    }
    /* The reference: every stack's live bytes, copied whole at each new peak. */
    uint64_t live[STACKS + 1] = {0}, at_peak[STACKS + 1] = {0}, heap = 0, peak = 0;
    uint64_t calls[STACKS + 1] = {0}, blocks[STACKS + 1] = {0};
    uint64_t slot_size[SLOTS] = {0}, slot_stack[SLOTS] = {0};
    bool used[SLOTS] = {0};
    for (int i = 0; i < EVENTS; i++) {
        uint64_t k = rng_below(&rng, SLOTS), id = rng_below(&rng, STACKS + 1);
        /* Sizes from tiny to large, some zero; frees a bit less likely than
         * allocations early on, so the heap climbs and falls. */
        uint64_t size =
            rng_below(&rng, 8) == 0 ? 0 : 1 + rng_below(&rng, 1u << rng_below(&rng, 16));
        uint64_t addr = 0x10000 + k * 16;
        unsigned op = (unsigned)rng_below(&rng, 10);
        if (!used[k]) {
            if (op == 0) {
                EXPECT(release(&s, addr) == 0, "free of an unknown block");
                continue;
            }
            EXPECT(alloc(&s, id, addr, size) == 0, "alloc");
            used[k] = true;
        } else if (op < 4 + (i > EVENTS / 2 ? 3 : 0)) {
            EXPECT(release(&s, addr) == 0, "free");
            used[k] = false;
            live[slot_stack[k]] -= slot_size[k];
            blocks[slot_stack[k]]--;
            heap -= slot_size[k];
            continue;
        } else {
            /* a realloc, in place or to another free slot */
            uint64_t k2 = rng_below(&rng, SLOTS);
            if (k2 != k && used[k2])
                k2 = k;
            EXPECT(resize(&s, id, addr, 0x10000 + k2 * 16, size) == 0, "realloc");
            live[slot_stack[k]] -= slot_size[k];
            blocks[slot_stack[k]]--;
            heap -= slot_size[k];
            used[k] = false;
            k = k2;
            used[k] = true;
        }
        calls[id]++;
        slot_size[k] = size;
        slot_stack[k] = id;
        live[id] += size;
        blocks[id]++;
        heap += size;
        if (heap > peak) {
            peak = heap;
            memcpy(at_peak, live, sizeof live);
        }
    }
    mode_end();
    also = NULL;
    EXPECT_UINT(s.peak, ==, peak);
    EXPECT_UINT(s.heap, ==, heap);
    EXPECT_UINT(sum.peak_heap, ==, peak); /* the same peak as the summary's */
    uint64_t total = 0;
    for (uint64_t id = 0; id <= STACKS; id++) {
        const site_t *st = sites_get(&s, id);
        EXPECT(sites_peak_bytes(&s, id) == at_peak[id], "stack %llu: peak %llu, brute force %llu",
               (unsigned long long)id, (unsigned long long)sites_peak_bytes(&s, id),
               (unsigned long long)at_peak[id]);
        EXPECT_UINT(st->calls, ==, calls[id]);
        EXPECT_UINT(st->live, ==, live[id]);
        EXPECT_UINT(st->live_blocks, ==, blocks[id]);
        total += sites_peak_bytes(&s, id);
    }
    EXPECT_UINT(total, ==, peak);
    summary_fini(&sum);
    sites_fini(&s);
}
END_TEST

/* ---- bad records ------------------------------------------------------------------ */

START_TEST(bad_stack_records)
{
    sites_t s;
    ck_assert_int_eq(sites_init(&s, NULL), 0);
    event_t e = {.type = EV_STACK, .json = NULL};
    ck_assert_int_eq(sites_add(&s, &e), SITES_E_RECORD);
    json_t *o = json_pack("{s:s, s:s}", "ev", "stack", "id", "one");
    e.json = o;
    ck_assert_int_eq(sites_add(&s, &e), SITES_E_RECORD);
    json_decref(o);
    o = json_pack("{s:s, s:I, s:[i, s]}", "ev", "stack", "id", (json_int_t)1, "frames", 5, "x");
    e.json = o;
    ck_assert_int_eq(sites_add(&s, &e), SITES_E_RECORD);
    json_decref(o);
    ck_assert_int_eq(stack(&s, 0, F1, 2), SITES_E_RECORD);
    ck_assert_int_eq(stack(&s, 1, F1, 2), 0);
    ck_assert_int_eq(stack(&s, 1, F2, 1), SITES_E_DUPLICATE);
    ck_assert_uint_eq(sites_get(&s, 1)->nframes, 2);
    ck_assert_int_eq(stack(&s, 1u << 30, F2, 1), SITES_E_RANGE);
    ck_assert_uint_eq(s.problem_id, 1u << 30);

    /* A stack used without a record: said once, counted on its own. */
    ck_assert_int_eq(alloc(&s, 7, 0x10, 8), SITES_E_UNDEFINED);
    ck_assert_uint_eq(s.problem_id, 7);
    ck_assert_int_eq(alloc(&s, 7, 0x20, 8), 0);
    ck_assert_uint_eq(sites_get(&s, 7)->calls, 2);
    ck_assert_uint_eq(sites_get(&s, 7)->nframes, 0);
    /* Its record late: taken. */
    ck_assert_int_eq(stack(&s, 7, F3, 3), 0);
    ck_assert_uint_eq(sites_get(&s, 7)->nframes, 3);

    /* An id far beyond every other: counted as no stack. */
    ck_assert_int_eq(alloc(&s, 1ull << 40, 0x30, 8), SITES_E_RANGE);
    ck_assert_uint_eq(sites_get(&s, 0)->calls, 1);
    ck_assert_uint_lt(s.cap, 1u << 20);

    /* Ids that keep jumping: bounded by the records read, not by the
     * highest id, so the array cannot be walked up to any size. */
    int refused = 0;
    for (uint64_t k = 1; k <= 64; k++)
        refused += stack(&s, 7 + k * (SITES_MAX_ID_GAP - 1), F1, 2) == SITES_E_RANGE;
    ck_assert_int_gt(refused, 0);
    ck_assert_uint_le(s.cap, 4 * (s.records + SITES_MAX_ID_GAP));

    ck_assert_int_eq(module(&s, "load", "/x", 1, 1), 0); /* no space: ignored */
    sites_fini(&s);
}
END_TEST

/* ---- modules at the first use ------------------------------------------------------- */

START_TEST(modules_at_first_use)
{
    symbols_t store;
    symbols_space_t space;
    sites_t s;
    ck_assert_int_eq(symbols_init(&store), 0);
    store.quiet = true;
    symbols_space_init(&space, &store);
    ck_assert_int_eq(sites_init(&s, &space), 0);

    ck_assert_int_eq(module(&s, "load", "/gone/liba.so", 0x1000, 0x1000), 0);
    ck_assert_int_eq(module(&s, "load", "/gone/libc.so", 0x3000, 0x1000), 0);
    uint64_t f1[] = {0x1100, 0x3010, 0x9000};
    ck_assert_int_eq(stack(&s, 1, f1, 3), 0);
    ck_assert_int_eq(alloc(&s, 1, 0x10, 8), 0);
    /* liba is replaced by libb at the same place: as the preload lists it,
     * the new load first, then the old one's unload. */
    ck_assert_int_eq(module(&s, "load", "/gone/libb.so", 0x1000, 0x1000), 0);
    ck_assert_int_eq(module(&s, "unload", "", 0x1000, 0x1000), 0);
    uint64_t f2[] = {0x1100};
    ck_assert_int_eq(stack(&s, 2, f2, 1), 0);
    ck_assert_int_eq(alloc(&s, 2, 0x20, 8), 0);
    ck_assert_int_eq(alloc(&s, 1, 0x30, 8), 0); /* stack 1 keeps what it meant */

    const site_t *a = sites_get(&s, 1), *b = sites_get(&s, 2);
    ck_assert_ptr_nonnull(a->modules);
    ck_assert_int_eq(a->modules[2], SYMBOLS_NO_MODULE);
    const symbols_frame_t *f;
    char buf[64];
    ck_assert_uint_eq(symbols_resolve(&store, a->modules[0], a->frames[0], &f), 1);
    ck_assert_str_eq(symbols_label(f, buf, sizeof buf), "liba.so+0x100");
    ck_assert_uint_eq(symbols_resolve(&store, a->modules[1], a->frames[1], &f), 1);
    ck_assert_str_eq(symbols_label(f, buf, sizeof buf), "libc.so+0x10");
    ck_assert_uint_eq(symbols_resolve(&store, a->modules[2], a->frames[2], &f), 1);
    ck_assert_str_eq(symbols_label(f, buf, sizeof buf), "0x9000");
    ck_assert_uint_eq(symbols_resolve(&store, b->modules[0], b->frames[0], &f), 1);
    ck_assert_str_eq(symbols_label(f, buf, sizeof buf), "libb.so+0x100");

    ck_assert_int_eq(module(&s, "unload", "", 0x1000, 0x1000), 0);
    ck_assert_int_eq(symbols_space_find(&space, 0x1100), SYMBOLS_NO_MODULE);
    ck_assert_int_eq(module(&s, "jump", "/x", 1, 1), SITES_E_MODULE);

    sites_fini(&s);
    symbols_space_fini(&space);
    symbols_fini(&store);
}
END_TEST

/* ---- out of memory ------------------------------------------------------------------ */

/* A small trace with every event kind; returns the first error seen. */
static int small_trace(sites_t *s)
{
    int rc = 0, r;
#define STEP(x)                                                                  \
    do {                                                                         \
        r = (x);                                                                 \
        if (r && !rc)                                                            \
            rc = r;                                                              \
    } while (0)
    STEP(module(s, "load", "/gone/liba.so", 0x1000, 0x1000));
    for (uint64_t id = 1; id <= 100; id++) {
        uint64_t fr[] = {0x1000 + id, 0x2000 + id};
        STEP(stack(s, id, fr, 2));
    }
    for (uint64_t i = 0; i < 3000; i++)
        STEP(alloc(s, 1 + i % 100, 0x100000 + i * 16, i));
    for (uint64_t i = 0; i < 3000; i += 2)
        STEP(resize(s, 1 + i % 7, 0x100000 + i * 16, 0x900000 + i * 16, 7));
    for (uint64_t i = 1; i < 3000; i += 2)
        STEP(release(s, 0x100000 + i * 16));
#undef STEP
    return rc;
}

START_TEST(out_of_memory_loop)
{
    for (long n = 1;; n++) {
        symbols_t store;
        symbols_space_t space;
        sites_t s;
        failmalloc_arm(n);
        int init = symbols_init(&store);
        if (!init) {
            store.quiet = true;
            symbols_space_init(&space, &store);
            init = sites_init(&s, &space);
            if (!init) {
                small_trace(&s);
                sites_finish(&s);
                sites_fini(&s);
            }
            symbols_space_fini(&space);
            symbols_fini(&store);
        }
        if (!failmalloc_disarm())
            break; /* the whole run fit: every failure point was visited */
        ck_assert_int_lt(n, 100000);
    }
}
END_TEST

/* A block the summary has no memory for is counted as lost (what
 * follows a block's life is incomplete from there on: its free finds
 * nothing), its bytes still in the heap; the blocks after it are
 * tracked as usual. */
START_TEST(a_block_without_memory_is_counted_lost)
{
    summary_t sum;
    ck_assert_int_eq(summary_init(&sum), 0);
    event_t e = {.type = EV_ALLOC, .addr = 0x100, .size = 10, .stack = 1};
    failmalloc_arm(1); /* the first block's room */
    summary_add(&sum, &e);
    bool failed = failmalloc_disarm();
    ck_assert(failed);
    ck_assert_uint_eq(sum.lost_blocks, 1);
    ck_assert_uint_eq(sum.heap, 10);
    e.addr = 0x200;
    summary_add(&sum, &e);
    ck_assert_uint_eq(sum.lost_blocks, 1);
    ck_assert_uint_eq(sum.heap, 20);
    event_t f = {.type = EV_FREE, .addr = 0x200};
    summary_add(&sum, &f);
    ck_assert_uint_eq(sum.heap, 10);
    f.addr = 0x100; /* the lost one: not found */
    summary_add(&sum, &f);
    ck_assert_uint_eq(sum.unknown_frees, 1);
    ck_assert_uint_eq(sum.heap, 10);
    summary_fini(&sum);
}
END_TEST

/* Stack ids of 32 bits and more (a broken trace's) are kept whole: a
 * free is a temporary only after an allocation of the very same id, not
 * one that agrees in its low 32 bits. */
START_TEST(summary_keeps_stack_ids_whole)
{
    summary_t sum;
    ck_assert_int_eq(summary_init(&sum), 0);
    uint64_t big = ((uint64_t)1 << 32) + 5;
    event_t a = {.type = EV_ALLOC, .addr = 0x100, .size = 10, .stack = big};
    summary_add(&sum, &a);
    event_t b = {.type = EV_ALLOC, .addr = 0x200, .size = 10, .stack = 5};
    summary_add(&sum, &b);
    event_t f = {.type = EV_FREE, .addr = 0x100};
    summary_add(&sum, &f); /* after stack 5's allocation: not a temporary */
    ck_assert(sum.has_freed);
    ck_assert_uint_eq(sum.freed_stack, big);
    ck_assert_uint_eq(sum.temporaries, 0);
    a.stack = UINT64_MAX;
    summary_add(&sum, &a);
    summary_add(&sum, &f); /* right after its own allocation: a temporary */
    ck_assert_uint_eq(sum.freed_stack, UINT64_MAX);
    ck_assert_uint_eq(sum.temporaries, 1);
    a.stack = UINT32_MAX; /* the first id that does not fit */
    summary_add(&sum, &a);
    f.addr = 0x200;
    summary_add(&sum, &f);
    ck_assert_uint_eq(sum.freed_stack, 5);
    ck_assert_uint_eq(sum.temporaries, 1);
    f.addr = 0x100;
    summary_add(&sum, &f);
    ck_assert_uint_eq(sum.freed_stack, UINT32_MAX);
    ck_assert_uint_eq(sum.temporaries, 1);
    ck_assert_uint_eq(sum.big_stacks.count, 0); /* given back with their blocks */
    ck_assert_uint_eq(sum.heap, 0);
    summary_fini(&sum);
}
END_TEST

/* The summary's blocks follow the live blocks, not the trace: freed
 * slots are taken again, and the map holds only the live addresses. */
START_TEST(summary_slots_follow_live_blocks)
{
    enum { N = 5000 };
    summary_t sum;
    ck_assert_int_eq(summary_init(&sum), 0);
    for (int round = 0; round < 4; round++) {
        for (uint64_t i = 0; i < N; i++) {
            event_t a = {.type = EV_ALLOC, .addr = 0x10000 * (uint64_t)(round + 1) + 32 * i,
                         .size = i + 1, .stack = i % 7};
            summary_add(&sum, &a);
            ck_assert_ptr_nonnull(summary_added(&sum));
        }
        ck_assert_uint_eq(sum.live.count, N);
        ck_assert_uint_eq(sum.nblocks, N);
        for (uint64_t i = 0; i < N; i++) {
            event_t f = {.type = EV_FREE, .addr = 0x10000 * (uint64_t)(round + 1) + 32 * i};
            summary_add(&sum, &f);
            ck_assert(sum.has_freed);
            ck_assert_uint_eq(sum.freed.size, i + 1);
            ck_assert_uint_eq(sum.freed_stack, i % 7);
        }
        ck_assert_uint_eq(sum.live.count, 0);
        ck_assert_uint_eq(sum.heap, 0);
    }
    ck_assert_uint_eq(sum.nblocks, N);
    ck_assert_uint_le(sum.live.mask + 1, SLOTMAP_MIN * 2); /* shrunk */
    ck_assert_uint_eq(sum.lost_blocks, 0);
    summary_fini(&sum);
}
END_TEST

Suite *sites_suite(void)
{
    Suite *s = suite_create("sites");
    TCase *tc = tcase_create("sites");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, known_figures, 0, 2);
    tcase_add_loop_test(tc, ties_and_no_stack, 0, 2);
    tcase_add_loop_test(tc, address_reused_without_free, 0, 2);
    tcase_add_loop_test(tc, peak_matches_brute_force, 0, 6);
    tcase_add_test(tc, bad_stack_records);
    tcase_add_test(tc, a_block_without_memory_is_counted_lost);
    tcase_add_test(tc, summary_keeps_stack_ids_whole);
    tcase_add_test(tc, summary_slots_follow_live_blocks);
    tcase_add_test(tc, modules_at_first_use);
    tcase_add_test(tc, out_of_memory_loop);
    suite_add_tcase(s, tc);
    return s;
}
