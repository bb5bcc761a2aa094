/*
 * findings_series: what the classifiers of analyzer/consume/findings.c share: a
 * series of the samples (values, times, standard errors), a drift's
 * trend, and small statistics (median, rounding, the exit's tail).
 * Included by findings*.c only.
 */
#ifndef MEMSIM_ANALYZER_FINDINGS_SERIES_H
#define MEMSIM_ANALYZER_FINDINGS_SERIES_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/consume/findings.h"

#define NOISE_FLOOR 65536.0 /* bytes: the spread is never taken below this */

static inline double round_to(double v, int digits)
{
    double f = pow(10.0, digits);
    return round(v * f) / f;
}

static inline void evidence(finding_t *f, const char *name, double v, bool integer)
{
    if (f->nevidence < FINDING_MAX_EVIDENCE)
        f->evidence[f->nevidence++] = (finding_evidence_t){.name = name, .value = v,
                                                           .integer = integer};
}

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of x[0..n) (n > 0), sorting scratch (room for n). */
static inline double median(const double *x, size_t n, double *scratch)
{
    memcpy(scratch, x, n * sizeof *x);
    qsort(scratch, n, sizeof *scratch, cmp_double);
    return n % 2 ? scratch[n / 2] : (scratch[n / 2 - 1] + scratch[n / 2]) / 2;
}

static inline double secs(const summary_t *s, uint64_t t)
{
    return t >= s->first_t ? (double)(t - s->first_t) / 1e9 : 0;
}

/* A series of the samples: values, their times and their samples. */
typedef struct series_s {
    finding_series_t which;
    double *v;
    uint64_t *t;
    size_t *at; /* index in the summary's points */
    double *se; /* a sampled trace's heap: each value's standard error; else NULL */
    size_t n;
} series_t;

/* A change of a sampled series is told from the estimate's error only
 * beyond this many standard errors of the difference (the values it
 * compares taken as independent: more error, never less, than the
 * blocks that differ carry alone). */
#define SE_Z 3.0

/* The standard error of x's difference between its values i and j, the
 * second's given as se_j; 0 without standard errors. */
static inline double diff_se(const series_t *x, size_t i, double se_j)
{
    return x->se ? sqrt(x->se[i] * x->se[i] + se_j * se_j) : 0;
}

/* A drift's fitted line, clamped to its range: the trend spikes are
 * measured against. */
typedef struct trend_s {
    bool on;
    double t0, t1, v0, v1; /* seconds from the series' first sample; fitted values */
} trend_t;

static inline double trend_at(const trend_t *d, double t)
{
    if (!d->on)
        return 0;
    if (t <= d->t0)
        return d->v0;
    if (t >= d->t1)
        return d->v1;
    return d->v0 + (d->v1 - d->v0) * (t - d->t0) / (d->t1 - d->t0);
}

/* Where the exit's own frees begin: the first of the trailing samples
 * that only fall to the last one, within the last three samples or the
 * last 5% of the run, whichever is more (n when there is no fall). */
static inline size_t exit_tail(const series_t *x)
{
    size_t n = x->n, k = n;
    if (n < 2)
        return n;
    double run = (double)(x->t[n - 1] - x->t[0]);
    while (k > 1 && x->v[k - 2] >= x->v[k - 1] &&
           (n - (k - 1) <= 3 || (double)(x->t[n - 1] - x->t[k - 2]) <= 0.05 * run))
        k--;
    return k < n && x->v[k - 1] > x->v[n - 1] ? k : n;
}

#endif
