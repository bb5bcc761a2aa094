/*
 * stats: means, deviations, z-scores, least squares and the Student t
 * tail.  See stats.h.
 *
 * The t tail is the regularized incomplete beta function,
 *     P(|T| >= t) = I_x(df/2, 1/2),   x = df / (df + t^2),
 * evaluated by its continued fraction (DLMF 8.17.22-23) with the modified
 * Lentz algorithm (Thompson and Barnett 1986), after the symmetry
 * I_x(a, b) = 1 - I_{1-x}(b, a) has put x on the side where the fraction
 * converges fast (x < (a + 1) / (a + b + 2)).  With b = 1/2 that takes
 * under 100 terms for any df.  The fraction's first terms cancel to
 * about 1/df when x is near 1, though, which would cost log10(df) digits
 * (5 at df = 1e6): for df >= 30 and x >= 1/e the asymptotic expansion of
 * DiDonato and Morris (BGRAT) takes over, which for b = 1/2 needs only
 * erfc.  The prefactor x^a (1-x)^b / B(a, b) is taken in logarithms, x
 * and 1 - x from t / sqrt(df) without cancellation, and ln B(a, b) with
 * Stirling's series for large arguments so that ln Gamma(a) -
 * ln Gamma(a + 1/2) does not lose the digits that a difference of two
 * lgamma() calls near 1e6 would.
 */
#include "analyzer/consume/stats.h"

#include <math.h>

/* ---------------------------------------------------------------- sums */

/* A first estimate of the mean: the deviations from one element are
 * summed, so a large common offset costs nothing and a constant array
 * gives its value exactly.  n > 0. */
static double mean_rough(const double *x, size_t n)
{
    double k = isfinite(x[0]) ? x[0] : 0.0;
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += x[i] - k;
    return k + s / (double)n;
}

double stats_mean(const double *x, size_t n)
{
    if (n == 0)
        return NAN;
    double m = mean_rough(x, n);
    if (!isfinite(m))
        return m;
    /* One refining pass: the mean of the residuals, ideally 0. */
    double c = 0.0;
    for (size_t i = 0; i < n; i++)
        c += x[i] - m;
    return m + c / (double)n;
}

double stats_std(const double *x, size_t n)
{
    if (n < 2)
        return NAN;
    double m = mean_rough(x, n);
    double s1 = 0.0, s2 = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = x[i] - m;
        s1 += d;
        s2 += d * d;
    }
    /* Corrected two-pass: s1 is what the rough mean was off by, n times. */
    double var = (s2 - s1 * s1 / (double)n) / (double)(n - 1);
    if (isnan(var))
        return NAN;
    return var > 0.0 ? sqrt(var) : 0.0;
}

double stats_zscore(double v, double mean, double std)
{
    if (std == 0.0 || isnan(std))
        return NAN;
    return (v - mean) / std;
}

/* ----------------------------------------------------------- regression */

int stats_linregress(const double *x, const double *y, size_t n, stats_linregress_t *out)
{
    if (n < 2)
        return -1;
    size_t same = 1;
    while (same < n && x[same] == x[0])
        same++;
    if (same == n)
        return -1;

    double mx = mean_rough(x, n), my = mean_rough(y, n);
    double sdx = 0.0, sdy = 0.0, sxx = 0.0, syy = 0.0, sxy = 0.0;
    for (size_t i = 0; i < n; i++) {
        double dx = x[i] - mx, dy = y[i] - my;
        sdx += dx;
        sdy += dy;
        sxx += dx * dx;
        syy += dy * dy;
        sxy += dx * dy;
    }
    double nn = (double)n;
    sxx -= sdx * sdx / nn;
    syy -= sdy * sdy / nn;
    sxy -= sdx * sdy / nn;
    mx += sdx / nn;
    my += sdy / nn;
    if (!(sxx > 0.0))
        return -1; /* distinct x whose spread underflows */
    if (syy < 0.0)
        syy = 0.0;

    double r = 0.0;
    if (syy > 0.0) {
        r = sxy / (sqrt(sxx) * sqrt(syy));
        if (r > 1.0)
            r = 1.0;
        else if (r < -1.0)
            r = -1.0;
    }
    double slope = sxy / sxx;
    stats_linregress_t res = {
        .slope = slope,
        .intercept = my - slope * mx,
        .r = r,
        .r_squared = r * r,
    };

    if (n == 2) {
        res.p_value = y[0] == y[1] ? 1.0 : 0.0;
        res.stderr_slope = 0.0;
    } else {
        double df = (double)(n - 2);
        double sse = 0.0;
        for (size_t i = 0; i < n; i++) {
            double e = (y[i] - my) - slope * (x[i] - mx);
            sse += e * e;
        }
        res.stderr_slope = sqrt(sse / df / sxx);
        if (syy == 0.0 || slope == 0.0)
            res.p_value = 1.0; /* t == 0: scipy's r == 0 */
        else
            res.p_value = stats_t_two_sided(slope / res.stderr_slope, df);
    }
    *out = res;
    return 0;
}

/* ---------------------------------------------------------- t and beta */

/* lgamma(x) - ((x - 1/2) ln x - x + ln sqrt(2 pi)) for x >= 10: Stirling's
 * series, sum of B_2k / (2k (2k - 1) x^(2k - 1)) for k = 1..8.  The next
 * term is below 2e-18 at x = 10. */
static double lgamma_stirling_rest(double x)
{
    static const double c[] = {
        1.0 / 12.0,     -1.0 / 360.0,      1.0 / 1260.0,  -1.0 / 1680.0,
        1.0 / 1188.0,   -691.0 / 360360.0, 1.0 / 156.0,   -3617.0 / 122400.0,
    };
    double x2 = 1.0 / (x * x), s = 0.0;
    for (int k = (int)(sizeof c / sizeof c[0]) - 1; k >= 0; k--)
        s = s * x2 + c[k];
    return s / x;
}

/* ln B(a, b) = ln Gamma(a) + ln Gamma(b) - ln Gamma(a + b) for a, b > 0
 * with min(a, b) < 10 (the t tail has b = 1/2).  When the larger one, q,
 * is large, Stirling's formula for ln Gamma(q) - ln Gamma(p + q) is
 * simplified by hand so that the large terms cancel before evaluation. */
static double lbeta(double a, double b)
{
    double p = a < b ? a : b, q = a < b ? b : a;
    if (q >= 10.0) {
        double corr = lgamma_stirling_rest(q) - lgamma_stirling_rest(p + q);
        return lgamma(p) + corr + p - p * log(p + q) + (q - 0.5) * log1p(-p / (p + q));
    }
    return lgamma(p) + lgamma(q) - lgamma(p + q);
}

/* The continued fraction K with I_x(a, b) = x^a (1-x)^b / (a B(a, b) K),
 *     K = 1 + d1 / (1 + d2 / (1 + d3 / ...)),
 *     d(2m+1) = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)),
 *     d(2m)   = m (b - m) x / ((a + 2m - 1)(a + 2m)),
 * by modified Lentz: the convergents as a running product of C/D ratios,
 * with 0 nudged to a tiny value.  Converges fast for x < (a+1)/(a+b+2). */
static double beta_cf(double a, double b, double x)
{
    const double tiny = 1e-300;
    double f = 1.0, c = 1.0, d = 0.0;
    for (int j = 1; j <= 2000; j++) {
        double m = (double)(j / 2), dj;
        if (j & 1) /* (as ratios, which stay finite when a is huge) */
            dj = -(a + m) / (a + 2 * m) * ((a + b + m) / (a + 2 * m + 1)) * x;
        else
            dj = m / (a + 2 * m - 1) * ((b - m) / (a + 2 * m)) * x;
        d = 1.0 + dj * d;
        if (fabs(d) < tiny)
            d = tiny;
        c = 1.0 + dj / c;
        if (fabs(c) < tiny)
            c = tiny;
        d = 1.0 / d;
        double delta = c * d;
        f *= delta;
        if (fabs(delta - 1.0) < 1e-15)
            break;
    }
    return f;
}

/* I_x(a, 1/2) for large a (T = a - 1/4 >= 14.75) and x = e^-xi near 1
 * (xi <= 1), where the continued fraction loses about log10(2a) digits to
 * cancellation.  The asymptotic expansion of DiDonato and Morris (1992,
 * "BGRAT"; Temme's uniform expansion): with s = e^-z,
 *     I_x(a, b) B(a, b) = integral over z > xi of e^(-az) (1 - e^-z)^(b-1) dz
 *                       = integral over z > xi of z^(b-1) e^(-Tz) S(z)^(b-1) dz,
 * T = a + (b - 1)/2, S(z) = sinh(z/2) / (z/2) = sum s_k z^2k with
 * s_k = 1 / (4^k (2k+1)!).  Expanding S^(b-1) = sum p_n z^2n and
 * integrating term by term,
 *     I_x(a, b) = T^-b / B(a, b) * sum p_n J_n,
 *     J_n = Gamma(b + 2n, u) / T^2n,   u = T xi.
 * With b = 1/2, J_0 = sqrt(pi) erfc(sqrt(u)), and two steps of
 * Gamma(s + 1, u) = s Gamma(s, u) + u^s e^-u give
 *     J_(n+1) = ((b+2n)(b+2n+1) J_n + (b+2n+1+u) u^b e^-u xi^2n) / T^2.
 * The J_n are positive and the p_n alternate in sign, |p_n| ~ (2 pi)^-2n.
 * The terms fall like (xi / 2 pi)^2n while 2n is small against u; the
 * series is only asymptotic, its terms stopping to fall near
 * 2n ~ 2 pi T, but they are below e^(-2 pi T) < 1e-40 by then (and below
 * 1e-37 at the 30th). */
#define BGRAT_TERMS 30

static double t_tail_large_df(double a, double xi)
{
    const double b = 0.5, beta = b - 1.0;
    double T = a + beta / 2.0, u = T * xi;

    /* p_n by J. C. P. Miller's recurrence for a power of a series:
     * n p_n = sum over k = 1..n of (b k - n) s_k p_(n-k). */
    double s[BGRAT_TERMS], p[BGRAT_TERMS];
    s[0] = p[0] = 1.0;
    for (int k = 1; k < BGRAT_TERMS; k++)
        s[k] = s[k - 1] / (4.0 * (2 * k) * (2 * k + 1));
    for (int n = 1; n < BGRAT_TERMS; n++) {
        double acc = 0.0;
        for (int k = 1; k <= n; k++)
            acc += ((beta + 1.0) * k - n) * s[k] * p[n - k];
        p[n] = acc / n;
    }

    double eb = sqrt(u) * exp(-u); /* u^b e^-u */
    double j = sqrt(M_PI) * erfc(sqrt(u));
    double xi2 = xi * xi, xi2n = 1.0, T2 = T * T;
    double sum = j; /* p_0 J_0 */
    for (int n = 0; n + 1 < BGRAT_TERMS; n++) {
        double c = b + 2 * n;
        j = (c * (c + 1.0) * j + (c + 1.0 + u) * eb * xi2n) / T2;
        xi2n *= xi2;
        double term = p[n + 1] * j;
        sum += term;
        if (fabs(term) <= 1e-17 * sum)
            break;
    }
    return exp(-b * log(T) - lbeta(a, b)) * sum;
}

double stats_t_two_sided(double t, double df)
{
    if (isnan(t) || isnan(df) || df <= 0.0)
        return NAN;
    t = fabs(t);
    if (t == 0.0)
        return 1.0;
    if (isinf(t))
        return 0.0;
    if (isinf(df))
        return erfc(t / sqrt(2.0));

    double a = 0.5 * df, b = 0.5;
    if (a == 0.0)
        return 1.0; /* df below 2^-1074: the limit as df -> 0 */

    /* x = 1 / (1 + u^2) and y = 1 - x = u^2 / (1 + u^2), u = t / sqrt(df),
     * with their logarithms, each without subtracting from 1. */
    double u = t / sqrt(df), u2 = u * u;
    double x, y, lx, ly;
    if (isinf(u2) || u2 == 0.0) {
        double lu = isfinite(u) && u > 0.0 ? log(u) : log(t) - 0.5 * log(df);
        if (lu > 0.0) {
            x = exp(-2.0 * lu);
            y = 1.0;
            lx = -2.0 * lu;
            ly = -x;
        } else {
            x = 1.0;
            y = exp(2.0 * lu);
            lx = -y;
            ly = 2.0 * lu;
        }
    } else {
        x = 1.0 / (1.0 + u2);
        y = u2 / (1.0 + u2);
        lx = -log1p(u2);
        ly = u2 >= 1.0 ? -log1p(1.0 / u2) : 2.0 * log(u) - log1p(u2);
    }

    if (a >= 15.0 && lx >= -1.0)
        return t_tail_large_df(a, -lx);
    double front = exp(a * lx + b * ly - lbeta(a, b)); /* x^a y^b / B(a, b) */
    if (x < (a + 1.0) / (a + b + 2.0))
        return front / (a * beta_cf(a, b, x));
    return 1.0 - front / (b * beta_cf(b, a, y));
}
