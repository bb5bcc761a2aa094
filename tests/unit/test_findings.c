/*
 * findings on synthetic series: a sampled trace's heap estimate moves by
 * its error alone (a temporary block sampled stands for the whole
 * interval); a spike or a drift within that error is no finding, one
 * well beyond it is, and the same series in a full trace (exact figures)
 * is.
 */
#include <string.h>

#include "analyzer/consume/findings.h"
#include "analyzer/consume/summary.h"
#include "tests/unit/suites.h"

#define POINTS 200
#define MB (1024.0 * 1024.0)

static summary_point_t points[POINTS];

/* A summary of POINTS samples 100 ms apart whose heap is heap(i) with
 * standard error se (bytes; sample_bytes 0: a full trace, no error), a
 * small deterministic jitter on it, and no allocator or device figures
 * (no gap series, no fragmentation). */
static void make(summary_t *s, uint64_t sample_bytes, double se, double (*heap)(size_t))
{
    memset(s, 0, sizeof *s);
    s->have_t = true;
    s->first_t = 0;
    s->sample_bytes = sample_bytes;
    uint32_t x = 12345;
    for (size_t i = 0; i < POINTS; i++) {
        x = x * 1103515245u + 12345u;
        double v = heap(i) + (double)(x >> 16 & 0xffff) * 2.0; /* up to 128 KiB */
        uint64_t h = (uint64_t)v;
        points[i] = (summary_point_t){.t = (uint64_t)i * 100000000u, .used = (uint64_t)(200 * MB),
                                      .heap_live = h, .heap_max = h,
                                      .heap_se = sample_bytes ? se : 0,
                                      .heap_max_se = sample_bytes ? se : 0};
        if (h > s->peak_heap)
            s->peak_heap = h;
    }
    s->points = points;
    s->npoints = POINTS;
    s->samples = POINTS;
    s->peak_rss = (uint64_t)(200 * MB);
    s->last_t = points[POINTS - 1].t;
}

static size_t count(const findings_t *f, finding_class_t c)
{
    size_t n = 0;
    for (size_t i = 0; i < f->n; i++)
        n += f->v[i].classification == c && f->v[i].series == SERIES_HEAP;
    return n;
}

static findings_t run(const summary_t *s)
{
    findings_config_t c = FINDINGS_DEFAULTS;
    findings_t f;
    findings_analyze(s, NULL, &c, &f);
    return f;
}

/* 100 MB steady, one sample 6 MiB higher at 10 s: what one sampled
 * temporary of a few bytes weighs at a 6 MiB interval. */
static double small_spike(size_t i) { return 100 * MB + (i == 100 ? 6 * MB : 0); }
/* the same with 60 MiB */
static double big_spike(size_t i) { return 100 * MB + (i == 100 ? 60 * MB : 0); }
/* 20 MB growing to 40 MB over the run */
static double ramp(size_t i) { return 20 * MB + 20 * MB * (double)i / (POINTS - 1); }

START_TEST(spike_within_the_error_is_none)
{
    summary_t s;
    /* the exact series: a spike */
    make(&s, 0, 0, small_spike);
    findings_t f = run(&s);
    ck_assert_uint_eq(count(&f, FINDING_SPIKE), 1);
    /* sampled, the estimate's standard error 7 MB (100 MB live at a
     * 512 KiB interval: sqrt(100 MB × 512 KiB)): none */
    make(&s, 512 * 1024, 7.2e6, small_spike);
    f = run(&s);
    ck_assert_uint_eq(count(&f, FINDING_SPIKE), 0);
    /* ten times higher than the error: found */
    make(&s, 512 * 1024, 7.2e6, big_spike);
    f = run(&s);
    ck_assert_uint_eq(count(&f, FINDING_SPIKE), 1);
}
END_TEST

START_TEST(drift_within_the_error_is_none)
{
    summary_t s;
    make(&s, 0, 0, ramp);
    findings_t f = run(&s);
    ck_assert_uint_eq(count(&f, FINDING_DRIFT), 1);
    /* a 20 MiB rise, the estimate's error 8 MB at each end: 3 standard
     * errors of the difference are 34 MB */
    make(&s, 6 * 1024 * 1024, 8e6, ramp);
    f = run(&s);
    ck_assert_uint_eq(count(&f, FINDING_DRIFT), 0);
    /* the error 2 MB: 8.5 MB, the rise stands out */
    make(&s, 512 * 1024, 2e6, ramp);
    f = run(&s);
    ck_assert_uint_eq(count(&f, FINDING_DRIFT), 1);
}
END_TEST

Suite *findings_suite(void)
{
    Suite *s = suite_create("findings");
    TCase *tc = tcase_create("sampled");
    tcase_add_test(tc, spike_within_the_error_is_none);
    tcase_add_test(tc, drift_within_the_error_is_none);
    suite_add_tcase(s, tc);
    return s;
}
