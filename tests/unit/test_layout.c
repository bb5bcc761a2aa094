/* layout: the cells follow every block and segment exactly, and the map
 * at the peak is the one a walk of the blocks gives at that moment. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "analyzer/consume/layout.h"
#include "lib/rng.h"
#include "tests/unit/helpers.h"
#include "tests/unit/suites.h"

enum { SLOTS = 300 };

typedef struct drive_s {
    device_t *d;
    layout_t *l;
    void *blk[SLOTS];
    uint64_t requests, peak;
    replay_map_t want; /* the walk's map at the last peak */
    rng_t rng;
} drive_t;

/* One request or free, kept in the layout as the replay keeps it. */
static void step(drive_t *t, uint64_t big)
{
    size_t k = (size_t)rng_below(&t->rng, SLOTS);
    device_result_t res;
    if (t->blk[k]) {
        uint64_t requested = ((const block_t *)t->blk[k])->requested;
        ck_assert_int_eq(device_free_block(t->d, t->blk[k], &res), POOL_OK);
        layout_block(t->l, res.addr, res.size, requested, false);
        t->blk[k] = NULL;
        return;
    }
    uint64_t size = rng_below(&t->rng, 50) == 0 ? 1 + rng_below(&t->rng, big)
                                                : 1 + rng_below(&t->rng, 4096);
    t->requests++;
    if (device_alloc(t->d, size, 16, 0, &res) != POOL_OK) {
        layout_sync_segments(t->l);
        return;
    }
    t->blk[k] = res.block;
    layout_block(t->l, res.addr, res.size, size, true);
    if (device_peak_footprint(t->d) > t->peak) {
        t->peak = device_peak_footprint(t->d);
        layout_mark_peak(t->l, t->d, t->requests);
        layout_scan(t->d, t->requests, &t->want);
    }
}

static void drive_open(drive_t *t, const char *name, uint64_t total, uint64_t seed)
{
    memset(t, 0, sizeof *t);
    char err[256] = "";
    device_config_t cfg = {.total = total, .strategy = name, .handles_only = true};
    ck_assert_msg(device_create(&cfg, &t->d, err, sizeof err) == POOL_OK, "%s", err);
    ck_assert_ptr_nonnull(t->l = layout_create(t->d));
    rng_seed(&t->rng, seed);
}

static void drive_close(drive_t *t)
{
    layout_destroy(t->l);
    device_destroy(t->d);
}

/* After every operation of every strategy, with blocks up to 64 MiB
 * (the cells double several times), the cells hold exactly the blocks
 * and segments. */
START_TEST(cells_follow_every_operation)
{
    const char *name = strategy_at((size_t)_i)->name;
    drive_t t;
    drive_open(&t, name, 4 * GiB, 7 + (uint64_t)_i);
    for (int op = 0; op < 4000; op++) {
        step(&t, 64 * MiB);
        const char *why = "";
        REQUIRE(layout_check(t.l, t.d, &why), "%s after op %d: %s", name, op, why);
    }
    drive_close(&t);
}
END_TEST

/* The map is the walk's at the last peak, however much changed after it:
 * the same span, footprint and requests, each cell within what cutting
 * the cells into the map's cells can move (two cells' share), and the
 * same allocated bytes in all but the share of the cell the span cuts. */
START_TEST(map_is_the_walk_at_the_peak)
{
    const char *name = strategy_at((size_t)_i)->name;
    drive_t t;
    drive_open(&t, name, 4 * GiB, 1000 + (uint64_t)_i);
    for (int op = 0; op < 20000; op++)
        step(&t, op < 10000 ? 16 * MiB : 256 * KiB); /* the peak comes early */
    replay_map_t got;
    ck_assert(layout_map(t.l, &got));
    ck_assert_uint_eq(got.base, t.want.base);
    ck_assert_uint_eq(got.span, t.want.span);
    ck_assert_uint_eq(got.footprint, t.want.footprint);
    ck_assert_uint_eq(got.requests, t.want.requests);
    ck_assert(got.span > 0);
    double w = (double)got.span / REPLAY_MAP_CELLS;
    double tol = 2.0 * (double)layout_cell_bytes(t.l) / w + 1e-4;
    double sum_got = 0, sum_want = 0;
    for (size_t c = 0; c < REPLAY_MAP_CELLS; c++) {
        REQUIRE(fabs(got.alloc[c] - t.want.alloc[c]) <= tol, "%s cell %zu: allocated %g, walk %g",
                name, c, got.alloc[c], t.want.alloc[c]);
        REQUIRE(fabs(got.free[c] - t.want.free[c]) <= tol, "%s cell %zu: free %g, walk %g", name,
                c, got.free[c], t.want.free[c]);
        REQUIRE(fabs(got.waste[c] - t.want.waste[c]) <= tol, "%s cell %zu: waste %g, walk %g",
                name, c, got.waste[c], t.want.waste[c]);
        sum_got += got.alloc[c];
        sum_want += t.want.alloc[c];
    }
    ck_assert_msg(fabs(sum_got - sum_want) <= tol, "%s: %g vs %g", name,
                  sum_got, sum_want);
    drive_close(&t);
}
END_TEST

/* No peak, no map. */
START_TEST(no_peak_no_map)
{
    drive_t t;
    drive_open(&t, "best-fit", 64 * MiB, 1);
    replay_map_t m;
    ck_assert(!layout_map(t.l, &m));
    drive_close(&t);
}
END_TEST

Suite *layout_suite(void)
{
    Suite *s = suite_create("layout");
    TCase *tc = tcase_create("layout");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, cells_follow_every_operation, 0, (int)strategy_count());
    tcase_add_loop_test(tc, map_is_the_walk_at_the_peak, 0, (int)strategy_count());
    tcase_add_test(tc, no_peak_no_map);
    suite_add_tcase(s, tc);
    return s;
}
