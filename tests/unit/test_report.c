/*
 * report: what the RSS was made of at its top (report_rss_parts) adds up
 * to the RSS exactly, whatever the allocator and the mappings span.
 */
#include <string.h>

#include "analyzer/report/report.h"
#include "tests/unit/suites.h"

#define MIB (1ull << 20)

static process_t pr; /* large: static */
static summary_point_t pts[4];

/* One process with the samples pts[0, n). */
static const process_t *with_points(size_t n)
{
    memset(&pr, 0, sizeof pr);
    pr.s.points = pts;
    pr.s.npoints = n;
    return &pr;
}

static void assert_sum(const rss_parts_t *p)
{
    ck_assert(p->known);
    ck_assert_uint_eq(p->allocator + p->mapped + p->file_pages + p->other, p->rss);
    ck_assert_uint_le(p->mapped_file, p->mapped);
}

/* A mapping grown to 1 GiB, most of it given back (MADV_DONTNEED): its
 * part is what the RSS has left for it, its span is kept apart. */
START_TEST(span_beyond_rss_without_rollup)
{
    memset(pts, 0, sizeof pts);
    pts[0] = (summary_point_t){.t = 1, .used = 8 * MIB, .reserved = 4 * MIB};
    pts[1] = (summary_point_t){.t = 2, .used = 60 * MIB, .reserved = 16 * MIB, .mapped = 1024 * MIB};
    rss_parts_t p;
    report_rss_parts(with_points(2), &p);
    assert_sum(&p);
    ck_assert_uint_eq(p.t, 2);
    ck_assert_uint_eq(p.rss, 60 * MIB);
    ck_assert_uint_eq(p.allocator, 16 * MIB);
    ck_assert(!p.allocator_is_heap);
    ck_assert_uint_eq(p.mapped, 44 * MIB);
    ck_assert_uint_eq(p.mapped_span, 1024 * MIB);
    ck_assert_uint_eq(p.other, 0);
    ck_assert(!p.have_rollup);
    ck_assert_uint_eq(p.file_pages, 0);
}
END_TEST

/* With a rollup: the file pages come first out of the non-anonymous
 * part; the anonymous mapping gets what the allocator leaves. */
START_TEST(span_beyond_rss_with_rollup)
{
    memset(pts, 0, sizeof pts);
    pts[0] = (summary_point_t){.t = 5, .used = 100 * MIB, .reserved = 30 * MIB,
                               .mapped = 1024 * MIB, .rollup_rss = 100 * MIB,
                               .rollup_anon = 80 * MIB};
    rss_parts_t p;
    report_rss_parts(with_points(1), &p);
    assert_sum(&p);
    ck_assert(p.have_rollup);
    ck_assert_uint_eq(p.allocator, 30 * MIB);
    ck_assert_uint_eq(p.mapped, 50 * MIB);
    ck_assert_uint_eq(p.mapped_file, 0);
    ck_assert_uint_eq(p.mapped_span, 1024 * MIB);
    ck_assert_uint_eq(p.file_pages, 20 * MIB);
    ck_assert_uint_eq(p.other, 0);
}
END_TEST

/* Mappings all resident, anonymous and file-backed: each in its pool;
 * the rollup taken at another sample (the nearest) serves. */
START_TEST(resident_mappings_nearest_rollup)
{
    memset(pts, 0, sizeof pts);
    pts[0] = (summary_point_t){.t = 1, .used = 10 * MIB, .rollup_rss = 10 * MIB,
                               .rollup_anon = 5 * MIB};
    pts[1] = (summary_point_t){.t = 2, .used = 150 * MIB, .rollup_rss = 150 * MIB,
                               .rollup_anon = 100 * MIB};
    pts[2] = (summary_point_t){.t = 3, .used = 200 * MIB, .heap_live = 20 * MIB,
                               .mapped = 130 * MIB, .mapped_file = 40 * MIB};
    pts[3] = (summary_point_t){.t = 4, .used = 20 * MIB, .rollup_rss = 20 * MIB,
                               .rollup_anon = 20 * MIB};
    rss_parts_t p;
    report_rss_parts(with_points(4), &p);
    assert_sum(&p);
    ck_assert_uint_eq(p.t, 3);
    /* pts[1] is nearest before pts[3] (searched first): file 50 MiB */
    ck_assert(p.allocator_is_heap);
    ck_assert_uint_eq(p.allocator, 20 * MIB);
    ck_assert_uint_eq(p.mapped, 130 * MIB);
    ck_assert_uint_eq(p.mapped_file, 40 * MIB);
    ck_assert_uint_eq(p.mapped_span, 130 * MIB);
    ck_assert_uint_eq(p.file_pages, 10 * MIB);
    ck_assert_uint_eq(p.other, 40 * MIB);
}
END_TEST

/* Reserved bytes need not be resident: the allocator's part is at most
 * the RSS, and nothing is left for the rest. */
START_TEST(reserved_beyond_rss)
{
    memset(pts, 0, sizeof pts);
    pts[0] = (summary_point_t){.t = 1, .used = 10 * MIB, .reserved = 50 * MIB,
                               .mapped = 8 * MIB, .mapped_file = 8 * MIB};
    rss_parts_t p;
    report_rss_parts(with_points(1), &p);
    assert_sum(&p);
    ck_assert_uint_eq(p.allocator, 10 * MIB);
    ck_assert_uint_eq(p.mapped, 0);
    ck_assert_uint_eq(p.mapped_span, 8 * MIB);
    ck_assert_uint_eq(p.other, 0);
}
END_TEST

START_TEST(no_samples)
{
    rss_parts_t p;
    report_rss_parts(with_points(0), &p);
    ck_assert(!p.known);
}
END_TEST

Suite *report_suite(void)
{
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("rss_parts");
    tcase_add_test(tc, span_beyond_rss_without_rollup);
    tcase_add_test(tc, span_beyond_rss_with_rollup);
    tcase_add_test(tc, resident_mappings_nearest_rollup);
    tcase_add_test(tc, reserved_beyond_rss);
    tcase_add_test(tc, no_samples);
    suite_add_tcase(s, tc);
    return s;
}
