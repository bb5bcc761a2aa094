/*
 * stats: the few statistics memsim-analyze's findings rest on, with the
 * semantics of the numpy/scipy calls the reference Python code makes:
 * np.mean, np.std(ddof=1), (x - mean) / std, scipy.stats.linregress and
 * the Student t tail behind its p-value.
 *
 * Sizes in bytes reach 1e10 and more with a small relative spread, and
 * timestamps carry a large offset, so nothing here sums raw squares:
 * means are taken of deviations from a shift and refined by a second
 * pass, and variances and the regression use centred sums (the corrected
 * two-pass algorithm of Chan, Golub and LeVeque 1983).
 *
 * NaN in, NaN out; none of these allocate or keep state.
 */
#ifndef MEMSIM_ANALYZER_STATS_H
#define MEMSIM_ANALYZER_STATS_H

#include <stddef.h>

/* Arithmetic mean; NaN when n == 0.  Exact for a constant array. */
double stats_mean(const double *x, size_t n);

/* Sample standard deviation (n - 1 in the denominator, numpy ddof=1);
 * NaN when n < 2.  0 for a constant array. */
double stats_std(const double *x, size_t n);

/* z-score of v against mean and std; NaN when std is 0 or NaN. */
double stats_zscore(double v, double mean, double std);

typedef struct stats_linregress_s {
    double slope, intercept;
    double r;            /* Pearson correlation, clipped to [-1, 1] */
    double r_squared;    /* r * r */
    double p_value;      /* two-sided, H0: slope == 0, t-test with n - 2 degrees of freedom */
    double stderr_slope; /* standard error of the slope */
} stats_linregress_t;

/* Least-squares line through (x[i], y[i]) with scipy.stats.linregress's
 * semantics.  0, or -1 when n < 2 or every x is the same (scipy raises
 * ValueError there), or x's spread is not a positive number (a NaN in x,
 * or distinct x so close that their squared deviations underflow); *out
 * is written only on success.  NaN or inf in y give NaN results.
 *
 * Edge cases, as scipy has them:
 *   - y constant: slope 0, r 0, p_value 1, stderr_slope 0.
 *   - n == 2: r is +-1 (0 when y[0] == y[1]), p_value 0 (1 when
 *     y[0] == y[1]), stderr_slope 0.
 *   - r is clipped to [-1, 1] against rounding.
 * Where this differs from scipy, by design:
 *   - stderr_slope is sqrt(SSE / (n - 2) / Sxx) with SSE summed from the
 *     residuals, not scipy's sqrt((1 - r^2) Syy / Sxx / (n - 2)); the two
 *     are equal in exact arithmetic, but 1 - r^2 cancels when the fit is
 *     good (NIST's Norris data lose 5 digits to it).
 *   - p_value comes from t = slope / stderr_slope, not scipy's
 *     t = r sqrt(df / ((1 - r + 1e-20)(1 + r + 1e-20))), for the same
 *     reason.  A perfect fit (n > 2, no residual) therefore has t = inf,
 *     p_value 0 and stderr_slope 0, where scipy's 1e-20 guard leaves a
 *     tiny nonzero p (about 9e-11 with n == 3, 1e-20 with n == 4, below
 *     2e-30 beyond).  Elsewhere the two agree to rounding, which scipy's
 *     route amplifies by about 1 / (1 - |r|). */
int stats_linregress(const double *x, const double *y, size_t n, stats_linregress_t *out);

/* Student's t distribution: P(|T| >= |t|) with df degrees of freedom
 * (df > 0; infinite df is the normal distribution, erfc(|t| / sqrt 2)).
 * 1 at t == 0, 0 at |t| == inf; NaN when t or df is NaN or df <= 0.
 * Against 450-digit references (2,300 points, df from 0.3 to 1e6, |t|
 * from 1e-3 to 1e3): relative error below 3e-14 while p > 1e-30, below
 * 2e-13 on down to underflow, where ln p is in the hundreds.  p
 * underflows to 0 for large |t| when df is large too. */
double stats_t_two_sided(double t, double df);

#endif
