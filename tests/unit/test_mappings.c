/*
 * mappings: the program's own mappings, cut and moved as the kernel
 * does; exact bytes, per-site figures and the peak after every step.
 */
#include <jansson.h>
#include <sys/mman.h>

#include "analyzer/consume/mappings.h"
#include "tests/unit/suites.h"

#define PG 4096u

static event_t ev(event_type_t type, uint64_t t, uint64_t addr, uint64_t size, uint64_t stack,
                  json_t *o)
{
    return (event_t){.type = type, .t = t, .addr = addr, .size = size, .stack = stack, .json = o};
}

static void do_mmap(mappings_t *m, uint64_t t, uint64_t addr, uint64_t size, uint64_t stack,
                    bool file)
{
    json_t *o = json_pack("{s:i, s:i}", "flags", file ? MAP_PRIVATE : MAP_PRIVATE | MAP_ANONYMOUS,
                          "fd", file ? 3 : -1);
    event_t e = ev(EV_MMAP, t, addr, size, stack, o);
    mappings_add(m, &e);
    json_decref(o);
}

static void do_munmap(mappings_t *m, uint64_t t, uint64_t addr, uint64_t size)
{
    event_t e = ev(EV_MUNMAP, t, addr, size, 0, NULL);
    mappings_add(m, &e);
}

/* The live bytes add up over the mappings and over the sites. */
static void check_sums(const mappings_t *m)
{
    uint64_t sum = 0, file = 0, sites = 0;
    for (size_t i = 0; i < m->n; i++) {
        ck_assert_uint_lt(m->v[i].start, m->v[i].end);
        if (i)
            ck_assert_uint_le(m->v[i - 1].end, m->v[i].start);
        sum += m->v[i].end - m->v[i].start;
        file += m->v[i].file ? m->v[i].end - m->v[i].start : 0;
    }
    for (size_t i = 0; i < m->nsites; i++)
        sites += m->sites[i].live;
    ck_assert_uint_eq(sum, m->live);
    ck_assert_uint_eq(file, m->live_file);
    ck_assert_uint_eq(sites, m->live);
}

START_TEST(cut_head_tail_and_middle)
{
    mappings_t m;
    mappings_init(&m);
    do_mmap(&m, 1, 10 * PG, 10 * PG, 1, false); /* [10, 20) */
    check_sums(&m);
    do_mmap(&m, 2, 40 * PG, 3 * PG - 100, 2, true); /* rounded up to 3 pages */
    check_sums(&m);
    ck_assert_uint_eq(m.live, 13 * PG);
    ck_assert_uint_eq(m.live_file, 3 * PG);
    ck_assert_uint_eq(m.peak, 13 * PG);
    ck_assert_uint_eq(m.peak_t, 2);
    do_munmap(&m, 3, 14 * PG, 2 * PG); /* a hole: [10, 14) and [16, 20) */
    check_sums(&m);
    ck_assert_uint_eq(m.n, 3);
    ck_assert_uint_eq(m.live, 11 * PG);
    do_munmap(&m, 4, 9 * PG, 2 * PG); /* the head: [11, 14) */
    do_munmap(&m, 5, 19 * PG, 5 * PG); /* the tail: [16, 19) */
    check_sums(&m);
    ck_assert_uint_eq(m.live, 9 * PG);
    ck_assert_uint_eq(m.sites[1].live, 6 * PG);
    do_munmap(&m, 6, 0, 100 * PG); /* everything */
    check_sums(&m);
    ck_assert_uint_eq(m.live, 0);
    ck_assert_uint_eq(m.n, 0);
    ck_assert_uint_eq(m.peak, 13 * PG);
    /* the sites at the peak: 10 pages of site 1, 3 file pages of site 2 */
    uint64_t file;
    ck_assert_uint_eq(mappings_site_peak(&m, 1, &file), 10 * PG);
    ck_assert_uint_eq(file, 0);
    ck_assert_uint_eq(mappings_site_peak(&m, 2, &file), 3 * PG);
    ck_assert_uint_eq(file, 3 * PG);
    ck_assert_uint_eq(m.calls, 2);
    ck_assert_uint_eq(m.unmaps, 4);
    mappings_fini(&m);
}
END_TEST

/* MAP_FIXED over a live mapping replaces its pages: no double count. */
START_TEST(fixed_replaces)
{
    mappings_t m;
    mappings_init(&m);
    do_mmap(&m, 1, 10 * PG, 10 * PG, 1, false);
    do_mmap(&m, 2, 12 * PG, 2 * PG, 2, true);
    check_sums(&m);
    ck_assert_uint_eq(m.live, 10 * PG);
    ck_assert_uint_eq(m.sites[1].live, 8 * PG);
    ck_assert_uint_eq(m.sites[2].live, 2 * PG);
    ck_assert_uint_eq(m.peak, 10 * PG);
    mappings_fini(&m);
}
END_TEST

/* mremap moves a mapping's pages, keeping its site and kind; the peak
 * counts the moment after. */
START_TEST(mremap_moves_and_grows)
{
    mappings_t m;
    mappings_init(&m);
    do_mmap(&m, 1, 10 * PG, 4 * PG, 7, true);
    json_t *o = json_pack("{s:I, s:I, s:I, s:I}", "old_addr", (json_int_t)(10 * PG), "old_size",
                          (json_int_t)(4 * PG), "addr", (json_int_t)(100 * PG), "size",
                          (json_int_t)(8 * PG));
    event_t e = ev(EV_MREMAP, 2, 0, 0, 9, o);
    mappings_add(&m, &e);
    json_decref(o);
    check_sums(&m);
    ck_assert_uint_eq(m.n, 1);
    ck_assert_uint_eq(m.v[0].start, 100 * PG);
    ck_assert_uint_eq(m.v[0].site, 7);
    ck_assert(m.v[0].file);
    ck_assert_uint_eq(m.live_file, 8 * PG);
    ck_assert_uint_eq(m.peak, 8 * PG);
    ck_assert_uint_eq(m.peak_t, 2);
    ck_assert_uint_eq(m.remaps, 1);
    uint64_t *ids;
    ck_assert_uint_eq(mappings_top(&m, MAPPINGS_BY_END, 5, &ids), 1);
    ck_assert_uint_eq(ids[0], 7);
    free(ids);
    mappings_fini(&m);
}
END_TEST

/* The top sites: largest first, ties by id; the peak snapshot holds a
 * site's bytes at the peak though they changed after. */
START_TEST(top_sites_at_the_peak)
{
    mappings_t m;
    mappings_init(&m);
    do_mmap(&m, 1, 10 * PG, 2 * PG, 3, false);
    do_mmap(&m, 2, 20 * PG, 5 * PG, 4, false);
    do_mmap(&m, 3, 30 * PG, 2 * PG, 5, false); /* the peak: 9 pages */
    do_munmap(&m, 4, 20 * PG, 5 * PG);
    do_mmap(&m, 5, 40 * PG, 1 * PG, 3, false);
    uint64_t *ids;
    size_t n = mappings_top(&m, MAPPINGS_BY_PEAK, 2, &ids);
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_eq(ids[0], 4); /* 5 pages at the peak, none now */
    ck_assert_uint_eq(ids[1], 3); /* 2, tie with 5 broken by id */
    free(ids);
    ck_assert_uint_eq(mappings_site_peak(&m, 3, NULL), 2 * PG);
    ck_assert_uint_eq(m.sites[3].live, 3 * PG);
    ck_assert_uint_eq(m.peak, 9 * PG);
    mappings_fini(&m);
}
END_TEST

Suite *mappings_suite(void)
{
    Suite *s = suite_create("mappings");
    TCase *tc = tcase_create("mappings");
    tcase_add_test(tc, cut_head_tail_and_middle);
    tcase_add_test(tc, fixed_replaces);
    tcase_add_test(tc, mremap_moves_and_grows);
    tcase_add_test(tc, top_sites_at_the_peak);
    suite_add_tcase(s, tc);
    return s;
}
