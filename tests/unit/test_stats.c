/*
 * stats: mean, std, z-scores, linregress and the Student t tail against
 * references computed independently of the code under test.
 *
 * Where the numbers come from (none from scipy, which is not installable
 * here; every table below was computed with Python's standard library
 * from the exact binary values of the inputs, at 450 decimal digits):
 *   - t tail, integer df: the finite sums of Abramowitz and Stegun
 *     26.7.3 (odd df) and 26.7.4 (even df), in Decimal.
 *   - t tail, other df: I_x(df/2, 1/2) by its hypergeometric power
 *     series, ln Gamma by Stirling's series shifted past 1000.  The two
 *     methods agree to 1e-58 where both apply.
 *   - regressions: slopes, intercepts, r^2 and residual sums exact in
 *     Fractions; square roots and the t tail (df = n - 2) in Decimal.  The
 *     same code on the exact decimals of NIST's Norris data reproduces all
 *     15 certified digits.
 *   - closed forms evaluated here: df 1 (Cauchy), df 2, the normal limit
 *     with its first-order 1/df correction, regressions with n 3 and 4.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/rng.h"
#include "analyzer/consume/stats.h"
#include "tests/unit/expect.h"
#include "tests/unit/suites.h"

/* |got - want| <= rel |want|, or both NaN; rel is absolute when want is 0. */
static int near(double got, double want, double rel)
{
    if (isnan(want))
        return isnan(got);
    if (want == 0.0)
        return fabs(got) <= rel;
    return fabs(got - want) <= rel * fabs(want);
}

#define EXPECT_NEAR(got, want, rel)                                             \
    do {                                                                        \
        double g_ = (got), w_ = (want);                                         \
        EXPECT(near(g_, w_, (rel)), "%s: %.17g, want %.17g (rel %.2g)", #got,   \
               g_, w_, fabs(g_ - w_) / fabs(w_));                               \
    } while (0)

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------- mean, std, z */

START_TEST(mean_and_std_of_small_sets)
{
    static const double x[] = {2, 4, 4, 4, 5, 5, 7, 9};
    ck_assert(stats_mean(x, N_OF(x)) == 5.0);
    EXPECT_NEAR(stats_std(x, N_OF(x)), sqrt(32.0 / 7.0), 1e-15);
    static const double neg[] = {-1.5, 2.5};
    ck_assert(stats_mean(neg, 2) == 0.5);
    EXPECT_NEAR(stats_std(neg, 2), sqrt(8.0), 1e-15);
}
END_TEST

START_TEST(too_few_values_give_nan)
{
    static const double one[] = {42.0};
    ck_assert(isnan(stats_mean(NULL, 0)));
    ck_assert(isnan(stats_std(NULL, 0)));
    ck_assert(stats_mean(one, 1) == 42.0);
    ck_assert(isnan(stats_std(one, 1)));
}
END_TEST

START_TEST(constant_arrays_are_exact)
{
    /* np.mean([0.1] * 3) is 0.10000000000000002 and np.std(ddof=1) 1.7e-17;
     * summing deviations instead gives the value back and 0. */
    static const double v[] = {0.1, 1e10 + 0.5, -3.7, 1e-300, 123456789.123};
    for (size_t k = 0; k < N_OF(v); k++) {
        double a[1000];
        for (size_t i = 0; i < N_OF(a); i++)
            a[i] = v[k];
        for (size_t n = 2; n <= N_OF(a); n = n * 3 + 1) {
            ck_assert_msg(stats_mean(a, n) == v[k], "mean of %zu x %.17g", n, v[k]);
            ck_assert_msg(stats_std(a, n) == 0.0, "std of %zu x %.17g", n, v[k]);
        }
    }
}
END_TEST

START_TEST(large_offsets_keep_precision)
{
    /* The classic failure of sum-of-squares formulas (4, 7, 13, 16 with
     * an offset; Welford 1962 and every variance page since): exact here. */
    static const double base[] = {0.0, 1e9, 1e10, 1e15};
    for (size_t k = 0; k < N_OF(base); k++) {
        double x[] = {base[k] + 4, base[k] + 7, base[k] + 13, base[k] + 16};
        ck_assert_msg(stats_mean(x, 4) == base[k] + 10, "offset %g", base[k]);
        ck_assert_msg(stats_std(x, 4) == sqrt(30.0), "offset %g: %.17g", base[k],
                      stats_std(x, 4));
    }

    /* NIST StRD univariate NumAcc1: certified mean 10000002, sd 1. */
    static const double acc1[] = {10000001, 10000003, 10000002};
    ck_assert(stats_mean(acc1, 3) == 10000002.0);
    ck_assert(stats_std(acc1, 3) == 1.0);

    /* NumAcc3 and NumAcc4 (1001 values, x.2 then x.1, x.3 alternating;
     * certified mean x.2, sd 0.1), and the same at 1e10.  The decimals are
     * not doubles: "exact" is the exact mean and sd of the doubles. */
    static const struct {
        double base, mean, sd, certified_rel;
    } acc[] = {
        {1000000.0, 1000000.2, 0.1000000000349246, 1e-9},
        {10000000.0, 10000000.2, 0.10000000055879354, 1e-8},
        {10000000000.0, 10000000000.2, 0.099999427795414694, 1e-5},
    };
    for (size_t k = 0; k < N_OF(acc); k++) {
        static double x[1001];
        char s[64];
        snprintf(s, sizeof s, "%.0f.2", acc[k].base);
        x[0] = strtod(s, NULL);
        for (size_t i = 1; i < N_OF(x); i++) {
            snprintf(s, sizeof s, "%.0f.%d", acc[k].base, i % 2 ? 1 : 3);
            x[i] = strtod(s, NULL);
        }
        EXPECT_NEAR(stats_mean(x, N_OF(x)), acc[k].mean, 1e-15);
        EXPECT_NEAR(stats_std(x, N_OF(x)), acc[k].sd, 1e-13);
        EXPECT_NEAR(stats_std(x, N_OF(x)), 0.1, acc[k].certified_rel);
    }
}
END_TEST

START_TEST(byte_sizes_against_exact_integers)
{
    /* Sizes near 10 GiB varying by a few KiB: integers, so the exact mean
     * and variance come from 128-bit sums. */
    rng_t r;
    rng_seed(&r, 20240611);
    for (int round = 0; round < 50; round++) {
        size_t n = 2 + (size_t)rng_below(&r, 2000);
        static double x[2002];
        unsigned __int128 s = 0, s2 = 0;
        for (size_t i = 0; i < n; i++) {
            uint64_t v = (10ull << 30) + rng_below(&r, 4096 << (round % 8));
            x[i] = (double)v;
            s += v;
            s2 += (unsigned __int128)v * v;
        }
        /* With d = v - 10 GiB: var = (n sum d^2 - (sum d)^2) / (n (n - 1)),
         * the numerator exact in 128 bits. */
        const unsigned __int128 base = 10ull << 30;
        unsigned __int128 d1 = s - base * n;
        unsigned __int128 d2 = s2 - 2 * base * s + base * base * n;
        unsigned __int128 num = n * d2 - d1 * d1;
        long double var = (long double)num / ((long double)n * (long double)(n - 1));
        long double mean = (long double)base + (long double)d1 / (long double)n;
        EXPECT_NEAR(stats_mean(x, n), (double)mean, 1e-15);
        EXPECT_NEAR(stats_std(x, n), (double)sqrtl(var), 1e-12);
    }
}
END_TEST

START_TEST(nan_and_inf_propagate)
{
    static const double with_nan[] = {1.0, NAN, 3.0};
    ck_assert(isnan(stats_mean(with_nan, 3)));
    ck_assert(isnan(stats_std(with_nan, 3)));
    static const double with_inf[] = {1.0, INFINITY, 3.0};
    ck_assert(stats_mean(with_inf, 3) == INFINITY);
    static const double inf_first[] = {INFINITY, 1.0};
    ck_assert(stats_mean(inf_first, 2) == INFINITY);
    static const double both[] = {INFINITY, -INFINITY};
    ck_assert(isnan(stats_mean(both, 2)));
}
END_TEST

START_TEST(zscores)
{
    ck_assert(stats_zscore(7.0, 5.0, 2.0) == 1.0);
    ck_assert(stats_zscore(1.0, 5.0, 2.0) == -2.0);
    ck_assert(stats_zscore(5.0, 5.0, 2.0) == 0.0);
    ck_assert(isnan(stats_zscore(7.0, 5.0, 0.0)));
    ck_assert(isnan(stats_zscore(7.0, 5.0, -0.0)));
    ck_assert(isnan(stats_zscore(7.0, 5.0, NAN)));
    ck_assert(isnan(stats_zscore(NAN, 5.0, 2.0)));

    /* Standardised values have mean 0 and sample deviation 1, whatever the
     * offset of the data: to within the rounding of the mean itself, an
     * ulp of 3e10 in units of the deviation. */
    rng_t r;
    rng_seed(&r, 7);
    double x[500], z[500];
    for (size_t i = 0; i < N_OF(x); i++)
        x[i] = 3e10 + 1e5 * rng_unit(&r);
    double m = stats_mean(x, N_OF(x)), s = stats_std(x, N_OF(x));
    for (size_t i = 0; i < N_OF(x); i++)
        z[i] = stats_zscore(x[i], m, s);
    ck_assert_msg(fabs(stats_mean(z, N_OF(z))) <= DBL_EPSILON * m / s, "%g",
                  stats_mean(z, N_OF(z)));
    EXPECT_NEAR(stats_std(z, N_OF(z)), 1.0, 1e-12);
}
END_TEST

/* ------------------------------------------------------------- t tail */

START_TEST(t_closed_forms_df1_df2)
{
    /* df 1 is Cauchy: p = 1 - (2/pi) atan|t| = (2/pi) atan(1/|t|).
     * df 2: p = 1 - |t| / sqrt(2 + t^2) = 2 / (s (s + |t|)), s = sqrt(2 + t^2).
     * The second forms have no cancellation. */
    for (double t = 1e-6; t < 1e12; t *= 1.37) {
        double p1 = t > 1.0 ? 2.0 / M_PI * atan(1.0 / t) : 1.0 - 2.0 / M_PI * atan(t);
        double s = sqrt(2.0 + t * t), p2 = 2.0 / (s * (s + t));
        EXPECT_NEAR(stats_t_two_sided(t, 1.0), p1, 1e-13);
        EXPECT_NEAR(stats_t_two_sided(-t, 1.0), p1, 1e-13);
        EXPECT_NEAR(stats_t_two_sided(t, 2.0), p2, 1e-13);
        EXPECT_NEAR(stats_t_two_sided(-t, 2.0), p2, 1e-13);
    }
    EXPECT_NEAR(stats_t_two_sided(1.0, 1.0), 0.5, 1e-15);
    EXPECT_NEAR(stats_t_two_sided(1.0, 2.0), 1.0 - 1.0 / sqrt(3.0), 1e-15);
}
END_TEST

/* A&S 26.7.3/26.7.4 (integer df) or the power series (the rest); p
 * below 1e-300 are listed apart. */
static const struct {
    double t, df, p;
} t_table[] = {
    {0.001, 1.0, 0.99936338043983886},
    {0.3, 1.0, 0.81445284184451527},
    {1.0, 1.0, 0.5},
    {1.96, 1.0, 0.30034289177603313},
    {2.5, 1.0, 0.24223788318168679},
    {4.0, 1.0, 0.15595826075473865},
    {7.0, 1.0, 0.090334470601733094},
    {12.0, 1.0, 0.052929352119179748},
    {40.0, 1.0, 0.015912179824051628},
    {300.0, 1.0, 0.0021220580484409717},
    {0.001, 2.0, 0.99929289339559013},
    {0.3, 2.0, 0.79248566084017757},
    {1.0, 2.0, 0.42264973081037421},
    {1.96, 2.0, 0.18905730960173228},
    {2.5, 2.0, 0.1296117202215108},
    {4.0, 2.0, 0.057190958417936637},
    {7.0, 2.0, 0.019803941180393136},
    {12.0, 2.0, 0.0068729336771584599},
    {40.0, 2.0, 0.0006244146721847406},
    {300.0, 2.0, 1.1110925929355214e-05},
    {0.001, 3.0, 0.99926489496946092},
    {0.3, 3.0, 0.78376329203991901},
    {1.0, 3.0, 0.39100221895577064},
    {1.96, 3.0, 0.14485220856485365},
    {2.5, 3.0, 0.087706647008065547},
    {4.0, 3.0, 0.028008456010146166},
    {7.0, 3.0, 0.0059862556977070989},
    {12.0, 3.0, 0.0012450158007893367},
    {40.0, 3.0, 3.4380680789158526e-05},
    {300.0, 3.0, 8.1675087859786768e-08},
    {0.001, 4.0, 0.99925000015624998},
    {0.3, 4.0, 0.77912142827745967},
    {1.0, 4.0, 0.37390096630005887},
    {1.96, 4.0, 0.12155463985018357},
    {2.5, 4.0, 0.066766544811988141},
    {4.0, 4.0, 0.016130089900092532},
    {7.0, 4.0, 0.0021921298066929391},
    {12.0, 4.0, 0.00027642854850297297},
    {40.0, 4.0, 2.3340163226012686e-06},
    {300.0, 4.0, 7.4068587425680229e-10},
    {0.001, 5.0, 0.99924078677219763},
    {0.3, 5.0, 0.77624904226327451},
    {1.0, 5.0, 0.36321746764912261},
    {1.96, 5.0, 0.10728795250529417},
    {2.5, 5.0, 0.054490099342376239},
    {4.0, 5.0, 0.010323415480831453},
    {7.0, 5.0, 0.00091674751439840439},
    {12.0, 5.0, 7.0894925171615224e-05},
    {40.0, 5.0, 1.8411962171772954e-07},
    {300.0, 5.0, 7.8099074579222075e-12},
    {0.001, 7.0, 0.99923001724499882},
    {0.3, 7.0, 0.77289005040213432},
    {1.0, 7.0, 0.35061666282020754},
    {1.96, 7.0, 0.090819695368181214},
    {2.5, 7.0, 0.040992218585752895},
    {4.0, 7.0, 0.005189913349296812},
    {7.0, 7.0, 0.00021155485194587244},
    {12.0, 7.0, 6.3583103781851003e-06},
    {40.0, 7.0, 1.590217998485037e-09},
    {300.0, 7.0, 1.2073170496429963e-15},
    {0.001, 10.0, 0.99922178337474099},
    {0.3, 10.0, 0.77032060756579857},
    {1.0, 10.0, 0.34089313230205986},
    {1.96, 10.0, 0.078436240247699712},
    {2.5, 10.0, 0.031446844236608804},
    {4.0, 10.0, 0.0025183326247366924},
    {7.0, 10.0, 3.7155922816856892e-05},
    {12.0, 10.0, 2.9214088247699871e-07},
    {40.0, 10.0, 2.2808577430857547e-12},
    {300.0, 10.0, 4.1654975234292345e-21},
    {0.001, 29.0, 0.99920896297836226},
    {0.3, 29.0, 0.7663170933289678},
    {1.0, 29.0, 0.32558198801619354},
    {1.96, 29.0, 0.059667795519591324},
    {2.5, 29.0, 0.018325344338426076},
    {4.0, 29.0, 0.00040006394565249141},
    {7.0, 29.0, 1.0700271530221398e-07},
    {12.0, 29.0, 9.0607083331371796e-13},
    {40.0, 29.0, 6.3468773297293482e-27},
    {300.0, 29.0, 3.4142012656660574e-52},
    {0.001, 30.0, 0.99920873576648506},
    {0.3, 30.0, 0.76624610528435277},
    {1.0, 30.0, 0.3253086154260299},
    {1.96, 30.0, 0.059342312896050478},
    {2.5, 30.0, 0.018115649068066696},
    {4.0, 30.0, 0.00038184563608375686},
    {7.0, 30.0, 8.8699586672206433e-08},
    {12.0, 30.0, 5.5801854151992556e-13},
    {40.0, 30.0, 1.3726045194406403e-27},
    {300.0, 30.0, 1.0019335007160199e-53},
    {0.001, 31.0, 0.99920852314649644},
    {0.3, 31.0, 0.76617967501102868},
    {1.0, 31.0, 0.32505273272353347},
    {1.96, 31.0, 0.059037994721611725},
    {2.5, 31.0, 0.01792022681338622},
    {4.0, 31.0, 0.00036530505356464481},
    {7.0, 31.0, 7.4034425718490317e-08},
    {12.0, 31.0, 3.4779268004197401e-13},
    {40.0, 31.0, 3.0181419244420544e-28},
    {300.0, 31.0, 2.9912781806155067e-55},
    {0.001, 34.0, 0.99920796001820289},
    {0.3, 34.0, 0.76600372752522572},
    {1.0, 34.0, 0.3243747105262057},
    {1.96, 34.0, 0.058233237841461609},
    {2.5, 34.0, 0.017406445493684673},
    {4.0, 34.0, 0.00032382200827150911},
    {7.0, 34.0, 4.4693172031422709e-08},
    {12.0, 34.0, 8.9997860874887464e-14},
    {40.0, 34.0, 3.5251244789176296e-30},
    {300.0, 34.0, 8.7763816759062547e-60},
    {0.001, 100.0, 0.99920410776010338},
    {0.3, 100.0, 0.76479988030030344},
    {1.0, 100.0, 0.31972415578412339},
    {1.96, 100.0, 0.052778901366229668},
    {2.5, 100.0, 0.014045789124077177},
    {4.0, 100.0, 0.00012152364430076168},
    {7.0, 100.0, 2.9835666036092025e-10},
    {12.0, 100.0, 4.3950877156043782e-21},
    {40.0, 100.0, 2.4621076021400709e-63},
    {300.0, 100.0, 1.4616762972522929e-149},
    {0.001, 1000.0, 0.99920231501845269},
    {0.3, 1000.0, 0.76423950416724407},
    {1.0, 1000.0, 0.31755241808467233},
    {1.96, 1000.0, 0.050273184955748722},
    {2.5, 1000.0, 0.012578567801090797},
    {4.0, 1000.0, 6.800991920878158e-05},
    {7.0, 1000.0, 4.6875025667714228e-12},
    {12.0, 1000.0, 4.3240573867745272e-31},
    {40.0, 1000.0, 1.0478852155173361e-209},
    {0.001, 10000.0, 0.99920213551905246},
    {0.3, 10000.0, 0.76418339122933232},
    {1.0, 10000.0, 0.31733470433042915},
    {1.96, 10000.0, 0.050023520231833048},
    {2.5, 10000.0, 0.012435219550583698},
    {4.0, 10000.0, 6.3798668823139627e-05},
    {7.0, 10000.0, 2.724031560679828e-12},
    {12.0, 10000.0, 5.979779607811325e-33},
    {0.001, 100000.0, 0.99920211756688782},
    {0.3, 100000.0, 0.76417777919033769},
    {1.0, 100000.0, 0.31731292756411},
    {1.96, 100000.0, 0.04999856319430164},
    {2.5, 100000.0, 0.012420919192559046},
    {4.0, 100000.0, 6.3387997557195344e-05},
    {7.0, 100000.0, 2.5756556678159831e-12},
    {12.0, 100000.0, 3.744505811956351e-33},
    {0.001, 1000000.0, 0.99920211577164908},
    {0.3, 1000000.0, 0.76417721797899418},
    {1.0, 1000000.0, 0.31731074983357815},
    {1.96, 1000000.0, 0.049996067585269789},
    {2.5, 1000000.0, 0.012419489502163246},
    {4.0, 1000000.0, 6.3347034010048103e-05},
    {7.0, 1000000.0, 2.561224111374079e-12},
    {12.0, 1000000.0, 3.5716851247650898e-33},
    {0.01, 0.5, 0.99460674363610446},
    {0.8, 0.5, 0.65474073566514746},
    {2.2, 0.5, 0.42604814126372398},
    {5.0, 0.5, 0.28599140315885879},
    {25.0, 0.5, 0.12826500250224998},
    {0.01, 1.5, 0.99318548966291997},
    {0.8, 1.5, 0.53066433400144275},
    {2.2, 1.5, 0.19959437808977853},
    {5.0, 1.5, 0.065375767621156239},
    {25.0, 1.5, 0.0060256200119679802},
    {0.01, 2.5, 0.9927639943579083},
    {0.8, 2.5, 0.49267400985272292},
    {2.2, 2.5, 0.13291398541966903},
    {5.0, 2.5, 0.023451189970861847},
    {25.0, 2.5, 0.00045859385474060753},
    {0.01, 7.3, 0.99228911446821844},
    {0.8, 7.3, 0.44895730396066658},
    {2.2, 7.3, 0.062169165400023624},
    {5.0, 7.3, 0.0013827743793134611},
    {25.0, 7.3, 2.4276572491701993e-08},
    {0.01, 33.3, 0.99208095836381804},
    {0.8, 33.3, 0.42938117403883158},
    {2.2, 33.3, 0.034851272042454542},
    {5.0, 33.3, 1.8050951332969837e-05},
    {25.0, 33.3, 3.7154890188356121e-23},
    {0.01, 1234.5, 0.99202290309283192},
    {0.8, 1234.5, 0.42386470989436181},
    {2.2, 1234.5, 0.027991653655928487},
    {5.0, 1234.5, 6.5600760931330374e-07},
    {25.0, 1234.5, 6.0291739271854156e-112},
    {0.01, 654321.5, 0.99202129041940745},
    {0.8, 654321.5, 0.42371108760138476},
    {2.2, 654321.5, 0.02780724331014944},
    {5.0, 654321.5, 5.7345084912600017e-07},
    {25.0, 654321.5, 7.1001232055423025e-138},
};

static const struct {
    double t, df;
} t_underflow[] = {
    {300.0, 1000.0}, /* p < 1e-320 */
    {40.0, 10000.0}, /* p < 1e-320 */
    {300.0, 10000.0}, /* p < 1e-320 */
    {40.0, 100000.0}, /* p < 1e-320 */
    {300.0, 100000.0}, /* p < 1e-320 */
    {40.0, 1000000.0}, /* p < 1e-320 */
    {300.0, 1000000.0}, /* p < 1e-320 */
};

START_TEST(t_matches_high_precision_references)
{
    for (size_t i = 0; i < N_OF(t_table); i++) {
        double p = stats_t_two_sided(t_table[i].t, t_table[i].df);
        EXPECT(near(p, t_table[i].p, 1e-12), "t %g df %g: %.17g, want %.17g (rel %.2g)",
               t_table[i].t, t_table[i].df, p, t_table[i].p,
               fabs(p - t_table[i].p) / t_table[i].p);
        EXPECT(stats_t_two_sided(-t_table[i].t, t_table[i].df) == p, "t %g df %g: odd",
               t_table[i].t, t_table[i].df);
    }
    for (size_t i = 0; i < N_OF(t_underflow); i++) {
        double p = stats_t_two_sided(t_underflow[i].t, t_underflow[i].df);
        EXPECT(p >= 0.0 && p < 1e-300, "t %g df %g: %g", t_underflow[i].t, t_underflow[i].df, p);
    }
}
END_TEST

START_TEST(t_quantiles)
{
    /* t with P(|T| >= t) = alpha, found by bisection on the closed forms
     * and rounded to the nearest double (which moves p by < 1e-15). */
    static const struct {
        double df, alpha, t;
    } q[] = {
        {10, 0.05, 2.2281388519862748},      {20, 0.05, 2.0859634472658648},
        {10, 0.01, 3.1692726726169513},      {1e6, 0.01, 2.5758342201053344},
        {1e6, 0.05, 1.959966356814107},      {1, 0.05, 12.706204736174705},
        {30, 0.001, 3.6459586350420219},
    };
    for (size_t i = 0; i < N_OF(q); i++)
        EXPECT_NEAR(stats_t_two_sided(q[i].t, q[i].df), q[i].alpha, 1e-13);
    /* As printed in every t table. */
    ck_assert(fabs(stats_t_two_sided(2.228, 10) - 0.05) < 1e-4);
    ck_assert(fabs(stats_t_two_sided(2.086, 20) - 0.05) < 1e-4);
    ck_assert(fabs(stats_t_two_sided(2.576, 1e6) - 0.01) < 1e-5);
    ck_assert(fabs(stats_t_two_sided(1.96, INFINITY) - 0.05) < 1e-4);
}
END_TEST

START_TEST(t_normal_limit)
{
    /* Infinite df is the normal distribution; at df 1e7 the difference is
     * below 1e-6, and is its first-order term phi(t) (t^3 + t) / (2 df)
     * (from F(t) = Phi(t) - phi(t) (t^3 + t) / (4 df) + O(df^-2)) to 1e-9. */
    static const double ts[] = {0.5, 1.0, 1.96, 2.576, 3.0, 4.0, 5.0};
    const double df = 1e7;
    for (size_t i = 0; i < N_OF(ts); i++) {
        double t = ts[i], pn = erfc(t / sqrt(2.0));
        double phi = exp(-t * t / 2.0) / sqrt(2.0 * M_PI);
        double p = stats_t_two_sided(t, df);
        ck_assert(stats_t_two_sided(t, INFINITY) == pn);
        ck_assert_msg(fabs(p - pn) < 1e-6, "t %g: %.17g vs %.17g", t, p, pn);
        EXPECT_NEAR(p, pn + phi * (t * t * t + t) / (2.0 * df), 1e-9);
    }
}
END_TEST

START_TEST(t_edge_cases)
{
    ck_assert(stats_t_two_sided(0.0, 5.0) == 1.0);
    ck_assert(stats_t_two_sided(-0.0, 1e6) == 1.0);
    ck_assert(stats_t_two_sided(INFINITY, 5.0) == 0.0);
    ck_assert(stats_t_two_sided(-INFINITY, 0.5) == 0.0);
    ck_assert(isnan(stats_t_two_sided(NAN, 5.0)));
    ck_assert(isnan(stats_t_two_sided(1.0, NAN)));
    ck_assert(isnan(stats_t_two_sided(1.0, 0.0)));
    ck_assert(isnan(stats_t_two_sided(1.0, -3.0)));
    /* Far outside the tested range: still a probability, and the limits. */
    ck_assert(stats_t_two_sided(1e300, 1e300) == 0.0);
    ck_assert(near(stats_t_two_sided(1e300, 1.0), 2.0 / M_PI / 1e300, 1e-13));
    ck_assert(near(stats_t_two_sided(DBL_MAX, 1.0), 2.0 / M_PI / DBL_MAX, 1e-13));
    ck_assert(near(stats_t_two_sided(1e-300, 1e300), 1.0, 1e-13));
    ck_assert(near(stats_t_two_sided(1e300, 1e-300), 1.0, 1e-13));
    ck_assert(stats_t_two_sided(1.0, DBL_TRUE_MIN) == 1.0);
    ck_assert(near(stats_t_two_sided(1.0, 1e300), erfc(1.0 / sqrt(2.0)), 1e-13));
}
END_TEST

START_TEST(t_is_monotone)
{
    /* p falls as |t| grows and rises as df shrinks (heavier tails), and
     * stays in [0, 1], across the switches between methods. */
    static const double dfs[] = {0.3, 1, 2, 3, 9.5, 29, 30, 31, 45, 100, 1e3, 1e5, 1e6, 1e9};
    for (size_t k = 0; k < N_OF(dfs); k++) {
        double prev = 1.0;
        for (double t = 1e-3; t < 1e4; t *= 1.01) {
            double p = stats_t_two_sided(t, dfs[k]);
            EXPECT(p >= 0.0 && p <= prev, "df %g t %g: %.17g after %.17g", dfs[k], t, p, prev);
            if (k > 0 && p > 1e-290) {
                double heavier = stats_t_two_sided(t, dfs[k - 1]);
                EXPECT(heavier >= p, "t %g: df %g gives %.17g, df %g %.17g", t, dfs[k - 1],
                       heavier, dfs[k], p);
            }
            prev = p;
        }
    }
}
END_TEST

/* ----------------------------------------------------------- linregress */

static stats_linregress_t regress(const double *x, const double *y, size_t n)
{
    stats_linregress_t r;
    ck_assert_msg(stats_linregress(x, y, n, &r) == 0, "refused n %zu", n);
    return r;
}

/* slope, intercept, r, r_squared, p_value, stderr_slope */
static void expect_fit(const stats_linregress_t *got, const double want[6], double rel)
{
    EXPECT_NEAR(got->slope, want[0], rel);
    EXPECT_NEAR(got->intercept, want[1], rel);
    EXPECT_NEAR(got->r, want[2], rel);
    EXPECT_NEAR(got->r_squared, want[3], rel);
    EXPECT_NEAR(got->p_value, want[4], rel);
    EXPECT_NEAR(got->stderr_slope, want[5], rel);
}

START_TEST(linregress_refuses_degenerate_input)
{
    static const double x[] = {3, 3, 3, 3, 3}, y[] = {1, 2, 3, 4, 5};
    stats_linregress_t r, before;
    memset(&r, 0x5a, sizeof r);
    before = r;
    ck_assert_int_eq(stats_linregress(NULL, NULL, 0, &r), -1);
    ck_assert_int_eq(stats_linregress(y, x, 1, &r), -1);
    ck_assert_int_eq(stats_linregress(x, y, 2, &r), -1);
    ck_assert_int_eq(stats_linregress(x, y, 5, &r), -1);
    static const double xn[] = {1, NAN, 3};
    ck_assert_int_eq(stats_linregress(xn, y, 3, &r), -1);
    ck_assert_mem_eq(&r, &before, sizeof r);
}
END_TEST

START_TEST(linregress_anscombe)
{
    /* Anscombe (1973): four sets, one line.  The paper prints y = 3 + 0.5x,
     * SE of the slope 0.118, R^2 0.667, mean x 9, mean y 7.50, for all
     * four; the sets differ a little beyond that (R^2 0.6662 to 0.6667). */
    static const double x[] = {10, 8, 13, 9, 11, 14, 6, 4, 12, 7, 5};
    static const double x4[] = {8, 8, 8, 8, 8, 8, 8, 19, 8, 8, 8};
    static const double y[4][11] = {
        {8.04, 6.95, 7.58, 8.81, 8.33, 9.96, 7.24, 4.26, 10.84, 4.82, 5.68},
        {9.14, 8.14, 8.74, 8.77, 9.26, 8.10, 6.13, 3.10, 9.13, 7.26, 4.74},
        {7.46, 6.77, 12.74, 7.11, 7.81, 8.84, 6.08, 5.39, 8.15, 6.42, 5.73},
        {6.58, 5.76, 7.71, 8.84, 8.47, 7.04, 5.25, 12.50, 5.56, 7.91, 6.89},
    };
    static const double want[4][6] = {
        {0.50009090909090914, 3.0000909090909089, 0.81642051634483981, 0.66654245950877489,
         0.0021696288730787962, 0.11790550059563409},
        {0.5, 3.000909090909091, 0.81623650600024278, 0.66624203372748425,
         0.0021788162369107997, 0.1179637459676408},
        {0.49972727272727274, 3.0024545454545453, 0.81628673948959818, 0.66632404106655918,
         0.0021763052792280247, 0.11787766222100228},
        {0.49990909090909091, 3.0017272727272726, 0.81652143688850276, 0.66670725689846533,
         0.0021646023471972213, 0.11781894172968553},
    };
    for (int k = 0; k < 4; k++) {
        const double *xs = k == 3 ? x4 : x;
        stats_linregress_t r = regress(xs, y[k], 11);
        expect_fit(&r, want[k], 1e-12);
        ck_assert(fabs(r.slope - 0.5) < 5e-4);
        ck_assert(fabs(r.intercept - 3.0) < 5e-3);
        ck_assert(fabs(r.stderr_slope - 0.118) < 5e-4);
        ck_assert(fabs(r.r_squared - 0.667) < 1e-3);
        ck_assert(stats_mean(xs, 11) == 9.0);
        ck_assert(fabs(stats_mean(y[k], 11) - 7.50) < 5e-3);
        /* scipy's own route to p, through r, agrees away from |r| = 1. */
        double t = r.r * sqrt(9.0 / ((1.0 - r.r + 1e-20) * (1.0 + r.r + 1e-20)));
        EXPECT_NEAR(r.p_value, stats_t_two_sided(t, 9.0), 1e-12);
    }
}
END_TEST

START_TEST(linregress_nist_norris)
{
    /* NIST StRD linear regression "Norris" (lower difficulty): y on x. */
    static const double y[] = {
        0.1,   338.8, 118.1, 888.0, 9.2,   228.1, 668.5, 998.5, 449.1, 778.9, 559.2, 0.3,
        0.1,   778.1, 668.8, 339.3, 448.9, 10.8,  557.7, 228.3, 998.0, 888.8, 119.6, 0.3,
        0.6,   557.6, 339.3, 888.0, 998.5, 778.9, 10.2,  117.6, 228.9, 668.4, 449.2, 0.2,
    };
    static const double x[] = {
        0.2,   337.4, 118.2, 884.6, 10.1,  226.5, 666.3, 996.3, 448.6, 777.0, 558.2, 0.4,
        0.6,   775.5, 666.9, 338.0, 447.5, 11.6,  556.0, 228.1, 995.8, 887.6, 120.2, 0.3,
        0.3,   556.8, 339.1, 887.2, 999.0, 779.0, 11.1,  118.3, 229.2, 669.1, 448.9, 0.5,
    };
    /* Exact for the stored doubles ... */
    static const double want[6] = {1.0021168180204545,  -0.26232307377402675,
                                   0.9999968729369666,  0.9999937458837117,
                                   4.6540408524739836e-90, 0.00042979684819994119};
    stats_linregress_t r = regress(x, y, N_OF(x));
    expect_fit(&r, want, 1e-12);
    /* ... and the certificate, for the decimals, which the doubles move by
     * 3e-18 in the slope and 1e-14 in the intercept and the standard
     * error.  The intercept is a difference of two numbers near 427: its
     * last ulp is 2e-13 of it.  scipy's sqrt((1 - r^2) ...) would get the
     * standard error to about 1e-11 only, 1 - r^2 being 6e-6. */
    EXPECT_NEAR(r.slope, 1.00211681802045, 1e-14);
    EXPECT_NEAR(r.intercept, -0.262323073774029, 1e-12);
    EXPECT_NEAR(r.r_squared, 0.999993745883712, 1e-14);
    EXPECT_NEAR(r.stderr_slope, 0.429796848199937e-3, 1e-13);
}
END_TEST

START_TEST(linregress_other_references)
{
    static const struct {
        const char *name;
        size_t n;
        double x[10], y[10];
        double want[6];
    } sets[] = {
        {"falling", 10, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
         {9.1, 8.3, 8.8, 6.9, 6.1, 6.6, 4.8, 4.1, 3.2, 3.9},
         {-0.67757575757575761, 9.9066666666666663, -0.96237518814156353, 0.92616600275050975,
          8.3778146240194464e-06, 0.067638915993983376}},
        {"pi digits", 8, {1, 2, 3, 4, 5, 6, 7, 8}, {3, 1, 4, 1, 5, 9, 2, 6},
         {0.5357142857142857, 1.4642857142857142, 0.47745526055942272, 0.22796352583586627,
          0.23151983207369453, 0.40247955962802301}},
        /* df 1: t = 1/sqrt 3, p = 1 - (2/pi) atan(t) = 2/3. */
        {"n 3", 3, {1, 2, 3}, {1, 3, 2}, {0.5, 1, 0.5, 0.25, 2.0 / 3.0, 0.8660254037844386}},
        /* df 2: p = 1 - |r|. */
        {"n 4", 4, {0, 1, 2, 3}, {1, 3, 2, 5},
         {1.1000000000000001, 1.1000000000000001, 0.83152184062029988, 0.69142857142857139,
          0.16847815937970009, 0.51961524227066314}},
    };
    for (size_t k = 0; k < N_OF(sets); k++) {
        stats_linregress_t r = regress(sets[k].x, sets[k].y, sets[k].n);
        expect_fit(&r, sets[k].want, 1e-12);
    }

    /* Timestamps near 1.7e9 s, sizes near 1e10 bytes, growing 8 KiB/s. */
    double x[64], y[64];
    for (int i = 0; i < 64; i++) {
        x[i] = 1.7e9 + 0.5 * i;
        y[i] = 1e10 + 4096.0 * i + ((i * 37) % 11 - 5) * 1000.0;
    }
    static const double want[6] = {8215.9926739926741,    -13957187546165.43,
                                   0.99912091013611193,   0.99824259307121266,
                                   3.9391768177986163e-87, 43.78066133112123};
    stats_linregress_t r = regress(x, y, 64);
    expect_fit(&r, want, 1e-12);
}
END_TEST

START_TEST(linregress_closed_forms_n3_n4)
{
    /* With df 1, t = r / sqrt(1 - r^2) = tan(asin r), so p = (2/pi) acos|r|;
     * with df 2, p = 1 - |r|.  Integer points: the sums are exact. */
    rng_t g;
    rng_seed(&g, 34);
    int checked = 0;
    for (int round = 0; round < 4000; round++) {
        size_t n = 3 + (size_t)(round & 1);
        double x[4], y[4];
        for (size_t i = 0; i < n; i++) {
            x[i] = (double)rng_below(&g, 10);
            y[i] = (double)rng_below(&g, 10) - 5.0;
        }
        stats_linregress_t r;
        if (stats_linregress(x, y, n, &r) != 0 || fabs(r.r) > 0.999 || r.r == 0.0)
            continue;
        double want = n == 3 ? 2.0 / M_PI * acos(fabs(r.r)) : 1.0 - fabs(r.r);
        EXPECT(near(r.p_value, want, 1e-12), "n %zu r %.17g: p %.17g, want %.17g", n, r.r,
               r.p_value, want);
        checked++;
    }
    ck_assert_int_gt(checked, 2000);
}
END_TEST

START_TEST(linregress_edge_cases)
{
    /* Constant y: the line is flat, r 0, p 1 (scipy's r = 0 branch). */
    static const double x[] = {1, 2, 4, 8, 16, 32}, c[] = {7.3, 7.3, 7.3, 7.3, 7.3, 7.3};
    stats_linregress_t r = regress(x, c, 6);
    ck_assert(r.slope == 0.0 && r.intercept == 7.3 && r.r == 0.0 && r.r_squared == 0.0);
    ck_assert(r.p_value == 1.0 && r.stderr_slope == 0.0);

    /* A perfect line: r -1, p 0, no error. */
    double px[10], py[10];
    for (int i = 0; i < 10; i++) {
        px[i] = i;
        py[i] = 3.0 - 2.0 * i;
    }
    r = regress(px, py, 10);
    ck_assert(r.slope == -2.0 && r.intercept == 3.0);
    ck_assert(fabs(r.r + 1.0) <= 2 * DBL_EPSILON && r.r >= -1.0);
    ck_assert(r.p_value == 0.0 && r.stderr_slope == 0.0);
    r = regress(px, py, 3);
    ck_assert(r.p_value == 0.0 && r.stderr_slope == 0.0);

    /* Two points: the line through them, p 0 (1 when y is flat). */
    static const double x2[] = {1, 3}, y2[] = {2, 8}, f2[] = {5, 5};
    r = regress(x2, y2, 2);
    ck_assert(r.slope == 3.0 && r.intercept == -1.0);
    ck_assert(fabs(r.r - 1.0) <= 2 * DBL_EPSILON && r.r <= 1.0);
    ck_assert(r.p_value == 0.0 && r.stderr_slope == 0.0);
    r = regress(y2, x2, 2);
    ck_assert(r.p_value == 0.0 && r.stderr_slope == 0.0);
    r = regress(x2, f2, 2);
    ck_assert(r.slope == 0.0 && r.intercept == 5.0 && r.r == 0.0 && r.p_value == 1.0);

    /* Uncorrelated but not constant: slope 0, p 1. */
    static const double xs[] = {-1, 0, 1, 0}, ys[] = {1, 0, 1, 2};
    r = regress(xs, ys, 4);
    ck_assert(r.slope == 0.0 && r.r == 0.0 && r.p_value == 1.0);
}
END_TEST

START_TEST(linregress_symmetries)
{
    /* Negating y negates slope, intercept and r, exactly; swapping x and y
     * keeps r and the p-value (the t-test of a slope is the t-test of r). */
    rng_t g;
    rng_seed(&g, 99);
    for (int round = 0; round < 200; round++) {
        size_t n = 3 + (size_t)rng_below(&g, 60);
        double x[64], y[64], ny[64];
        double b = (rng_unit(&g) - 0.5) * 4.0, noise = 0.1 + 10.0 * rng_unit(&g);
        for (size_t i = 0; i < n; i++) {
            x[i] = 100.0 * rng_unit(&g);
            y[i] = 5.0 + b * x[i] + noise * (rng_unit(&g) - 0.5) * 20.0;
            ny[i] = -y[i];
        }
        stats_linregress_t a = regress(x, y, n), m = regress(x, ny, n), s = regress(y, x, n);
        EXPECT(m.slope == -a.slope && m.intercept == -a.intercept && m.r == -a.r,
               "round %d: negation", round);
        EXPECT(m.p_value == a.p_value && m.stderr_slope == a.stderr_slope,
               "round %d: negation", round);
        EXPECT(s.r == a.r, "round %d: r %.17g vs %.17g", round, s.r, a.r);
        EXPECT(near(s.p_value, a.p_value, 1e-11), "round %d: p %.17g vs %.17g", round,
               s.p_value, a.p_value);
        EXPECT(near(a.slope * s.slope, a.r_squared, 1e-13), "round %d: b b' = r^2", round);
    }
}
END_TEST

START_TEST(linregress_r_is_clipped)
{
    /* Lines with rounding in y: |r| may compute a hair above 1 before the
     * clip; the result is a probability and a correlation all the same. */
    rng_t g;
    rng_seed(&g, 5);
    for (int round = 0; round < 3000; round++) {
        size_t n = 3 + (size_t)rng_below(&g, 40);
        double x[48], y[48];
        double a = (rng_unit(&g) - 0.5) * 1e6, b = (rng_unit(&g) - 0.5) * 1e3;
        for (size_t i = 0; i < n; i++) {
            x[i] = rng_unit(&g) * 1e4 + 1e9 * (round & 1);
            y[i] = a + b * x[i];
        }
        stats_linregress_t r = regress(x, y, n);
        EXPECT(fabs(r.r) <= 1.0 && r.r_squared <= 1.0, "round %d: r %.17g", round, r.r);
        EXPECT(fabs(r.r) > 1.0 - 1e-12, "round %d: r %.17g", round, r.r);
        EXPECT(r.p_value >= 0.0 && r.p_value < 1e-9, "round %d: p %g", round, r.p_value);
    }
}
END_TEST

/* The textbook formulas in long double, two passes: a reference that
 * shares nothing with the code under test but the t tail. */
static void regress_long_double(const double *x, const double *y, size_t n, long double out[5])
{
    long double mx = 0, my = 0, sxx = 0, sxy = 0, syy = 0;
    for (size_t i = 0; i < n; i++) {
        mx += x[i];
        my += y[i];
    }
    mx /= n;
    my /= n;
    for (size_t i = 0; i < n; i++) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
        syy += (y[i] - my) * (y[i] - my);
    }
    long double b = sxy / sxx, sse = 0;
    for (size_t i = 0; i < n; i++) {
        long double e = (y[i] - my) - b * (x[i] - mx);
        sse += e * e;
    }
    out[0] = b;
    out[1] = my - b * mx;
    out[2] = sxy / sqrtl(sxx * syy);
    out[3] = sqrtl(sse / (n - 2) / sxx);
    out[4] = b / out[3]; /* t */
}

START_TEST(linregress_random_vs_long_double)
{
    rng_t g;
    rng_seed(&g, 20250101);
    static double x[5000], y[5000];
    for (int round = 0; round < 60; round++) {
        size_t n = 3 + (size_t)rng_below(&g, round < 30 ? 50 : 5000);
        /* An hour of timestamps, 10 GB of memory, a trend that is sometimes
         * there and sometimes drowned. */
        double trend = 1e3 * (rng_unit(&g) - 0.3), noise = 1e3 + 1e6 * rng_unit(&g);
        for (size_t i = 0; i < n; i++) {
            x[i] = 1.7e9 + 3600.0 * rng_unit(&g);
            y[i] = 1e10 + trend * (x[i] - 1.7e9) + noise * (rng_unit(&g) - 0.5);
        }
        long double ref[5];
        regress_long_double(x, y, n, ref);
        stats_linregress_t r = regress(x, y, n);
        EXPECT_NEAR(r.slope, (double)ref[0], 1e-9);
        EXPECT_NEAR(r.intercept, (double)ref[1], 1e-9);
        EXPECT_NEAR(r.r, (double)ref[2], 1e-9);
        EXPECT_NEAR(r.r_squared, (double)(ref[2] * ref[2]), 1e-9);
        EXPECT_NEAR(r.stderr_slope, (double)ref[3], 1e-9);
        EXPECT_NEAR(r.p_value, stats_t_two_sided((double)ref[4], (double)(n - 2)), 1e-9);
    }
}
END_TEST

Suite *stats_suite(void)
{
    Suite *s = suite_create("stats");
    TCase *basic = tcase_create("mean-std");
    tcase_add_test(basic, mean_and_std_of_small_sets);
    tcase_add_test(basic, too_few_values_give_nan);
    tcase_add_test(basic, constant_arrays_are_exact);
    tcase_add_test(basic, large_offsets_keep_precision);
    tcase_add_test(basic, byte_sizes_against_exact_integers);
    tcase_add_test(basic, nan_and_inf_propagate);
    tcase_add_test(basic, zscores);
    suite_add_tcase(s, basic);

    TCase *t = tcase_create("t-tail");
    tcase_add_test(t, t_closed_forms_df1_df2);
    tcase_add_test(t, t_matches_high_precision_references);
    tcase_add_test(t, t_quantiles);
    tcase_add_test(t, t_normal_limit);
    tcase_add_test(t, t_edge_cases);
    tcase_add_test(t, t_is_monotone);
    suite_add_tcase(s, t);

    TCase *lr = tcase_create("linregress");
    tcase_add_test(lr, linregress_refuses_degenerate_input);
    tcase_add_test(lr, linregress_anscombe);
    tcase_add_test(lr, linregress_nist_norris);
    tcase_add_test(lr, linregress_other_references);
    tcase_add_test(lr, linregress_closed_forms_n3_n4);
    tcase_add_test(lr, linregress_edge_cases);
    tcase_add_test(lr, linregress_symmetries);
    tcase_add_test(lr, linregress_r_is_clipped);
    tcase_add_test(lr, linregress_random_vs_long_double);
    suite_add_tcase(s, lr);
    return s;
}
