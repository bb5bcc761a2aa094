/*
 * findings_drift: persistent drifts.  See findings_drift.h; the equations
 * in docs/findings.md.
 */
#include "analyzer/consume/findings_drift.h"

#include <stdio.h>

#include "analyzer/consume/stats.h"
#include "lib/units.h"

#define DRIFT_POINTS 96 /* the range search runs on at most this many bucket means */
#define DRIFT_SAMPLES 10 /* fewer cannot tell a trend from a few steps */
#define KNOT_PRICE 0.75 /* a knot must leave less than this of the residuals */

/* Sums of a stretch of points for least squares, shifted to its first. */
typedef struct sums_s {
    double n, st, sv, stt, stv, svv;
} sums_t;

static sums_t sums_range(const double *t, const double *v, size_t a, size_t b)
{
    sums_t z = {0};
    for (size_t i = a; i <= b; i++) {
        double dt = t[i] - t[a], dv = v[i] - v[a];
        z.n += 1, z.st += dt, z.sv += dv, z.stt += dt * dt, z.stv += dt * dv, z.svv += dv * dv;
    }
    return z;
}

/* Least squares of v on t over a stretch: slope, R², residual sum of
 * squares, and the sum of squares about the mean. */
static bool line(const sums_t *z, double *slope, double *r2, double *sse, double *sst)
{
    double sxx = z->stt - z->st * z->st / z->n, sxy = z->stv - z->st * z->sv / z->n;
    double syy = z->svv - z->sv * z->sv / z->n;
    if (!(sxx > 0))
        return false;
    *slope = sxy / sxx;
    *sst = syy > 0 ? syy : 0;
    *sse = syy - sxy * sxy / sxx;
    if (*sse < 0)
        *sse = 0;
    *r2 = syy > 0 ? 1 - *sse / syy : 0;
    return true;
}

/* The least residual sum of squares of two flat levels split anywhere
 * in [a, b]: how well a single step explains the stretch. */
static double best_step(const double *v, size_t a, size_t b)
{
    double best = INFINITY, ls = 0, lss = 0, rs = 0, rss = 0;
    for (size_t i = a; i <= b; i++)
        rs += v[i] - v[a], rss += (v[i] - v[a]) * (v[i] - v[a]);
    for (size_t c = a; c < b; c++) { /* left [a, c], right [c + 1, b] */
        double dv = v[c] - v[a];
        ls += dv, lss += dv * dv, rs -= dv, rss -= dv * dv;
        double nl = (double)(c - a + 1), nr = (double)(b - c);
        double sse = (lss - ls * ls / nl) + (rss - rs * rs / nr);
        if (sse < best)
            best = sse;
    }
    return best;
}

/* The clamped-line model v = c + s * clamp(t, u1, u2), with jump: plus
 * J * [t >= u1] (a step where the growth starts, such as a program's
 * start-up load before a leak), over [a, b]: its residual sum of squares. */
static double clamped_sse(const double *t, const double *v, size_t a, size_t b, double u1,
                          double u2, bool jump)
{
    double n = 0, sx = 0, sd = 0, sy = 0, sxx = 0, sxd = 0, sdd = 0, sxy = 0, sdy = 0, syy = 0;
    for (size_t i = a; i <= b; i++) {
        double x = (t[i] < u1 ? u1 : t[i] > u2 ? u2 : t[i]) - u1, y = v[i] - v[a];
        double d = jump && t[i] >= u1 ? 1 : 0;
        n += 1, sx += x, sd += d, sy += y;
        sxx += x * x, sxd += x * d, sdd += d * d, sxy += x * y, sdy += d * y, syy += y * y;
    }
    double vxx = sxx - sx * sx / n, vxd = sxd - sx * sd / n, vdd = sdd - sd * sd / n;
    double vxy = sxy - sx * sy / n, vdy = sdy - sd * sy / n, vyy = syy - sy * sy / n;
    if (!(vxx > 0))
        return INFINITY;
    double fit;
    double det = vxx * vdd - vxd * vxd;
    if (jump && vdd > 0 && det > 1e-12 * vxx * vdd) {
        double k = (vxy * vdd - vdy * vxd) / det, J = (vdy * vxx - vxy * vxd) / det;
        fit = k * vxy + J * vdy;
    } else {
        fit = vxy * vxy / vxx;
    }
    double sse = vyy - fit;
    return sse > 0 ? sse : 0;
}

/* A candidate stretch of bucket means for a drift. */
typedef struct stretch_s {
    double rise;
    size_t a, b;
} stretch_t;

static int by_rise(const void *x, const void *y)
{
    const stretch_t *p = x, *q = y;
    return (q->rise > p->rise) - (q->rise < p->rise);
}

static bool drift_at(const findings_config_t *c, const summary_t *s, const series_t *x,
                     double min_growth, const double *T, const double *V, size_t M, size_t ba,
                     size_t bb, finding_t *f, trend_t *d);

#define DRIFT_TRIES 16 /* stretches tried, the largest rises first */

bool findings_drift(const findings_config_t *c, const summary_t *s, const series_t *x,
                    double min_growth, finding_t *f, trend_t *d)
{
    d->on = false;
    size_t n = x->n;
    if (n < DRIFT_SAMPLES || x->t[n - 1] <= x->t[0])
        return false;
    double run = (double)(x->t[n - 1] - x->t[0]) / 1e9, span = c->drift_span * run;
    /* bucket means: M points */
    size_t M = n < DRIFT_POINTS ? n : DRIFT_POINTS;
    double T[DRIFT_POINTS], V[DRIFT_POINTS];
    for (size_t k = 0; k < M; k++) {
        size_t lo = k * n / M, hi = (k + 1) * n / M;
        double st = 0, sv = 0;
        for (size_t i = lo; i < hi; i++)
            st += (double)(x->t[i] - x->t[0]) / 1e9, sv += x->v[i];
        T[k] = st / (double)(hi - lo);
        V[k] = sv / (double)(hi - lo);
    }
    /* the stretches that qualify, the most fitted rise first: the first
     * whose growth is sustained is the drift (a warm-up's hump may rise
     * more, and fall back) */
    stretch_t *cand = malloc(M * M * sizeof *cand);
    if (!cand)
        return false;
    size_t nc = 0;
    for (size_t a = 0; a + 3 < M; a++)
        for (size_t b = a + 3; b < M; b++) {
            if (T[b] - T[a] < span)
                continue;
            sums_t z = sums_range(T, V, a, b);
            double slope, r2, sse, sst;
            if (!line(&z, &slope, &r2, &sse, &sst) || !(slope > 0) || r2 < c->drift_r2)
                continue;
            if (!(sse < best_step(V, a, b)))
                continue;
            cand[nc++] = (stretch_t){.rise = slope * (T[b] - T[a]), .a = a, .b = b};
        }
    qsort(cand, nc, sizeof *cand, by_rise);
    bool found = false;
    for (size_t k = 0, tried = 0; k < nc && tried < DRIFT_TRIES && !found; k++) {
        bool seen = false; /* one try per start: its longest stretch comes first mostly */
        for (size_t j = 0; j < k && !seen; j++)
            seen = cand[j].a == cand[k].a;
        if (seen)
            continue;
        tried++;
        found = drift_at(c, s, x, min_growth, T, V, M, cand[k].a, cand[k].b, f, d);
    }
    free(cand);
    return found;
}

/* A drift being fitted within a stretch [ba, bb] of the bucket means
 * (T, V: M of them), step by step. */
typedef struct fit_s {
    const series_t *x;
    const double *T, *V;
    size_t M, ba, bb;
    double half;          /* half a bucket, in seconds */
    double u1, u2;        /* the knots: flat before u1 and after u2 */
    int jumped;           /* a step at u1 */
    int knots;            /* how many of u1, u2 are knots (not the stretch's ends) */
    bool knot_a, knot_b;  /* u1, u2 is a knot */
    size_t ia, ib;        /* the samples of the growth */
    stats_linregress_t lr; /* least squares over them */
    double resid;         /* its residual sum of squares */
    double ts, mid_v;     /* the slope (Theil-Sen's) and the intercept */
} fit_t;

/* Where the growth is within the stretch: flat, then the line (after a
 * step, maybe), then flat.  (A knot must pay for itself: each one must
 * cut the residual sum of squares by more than a quarter; the samples'
 * noise is not independent enough, temporaries lasting several samples,
 * for an information criterion's milder price.) */
static void fit_knots(fit_t *F)
{
    const double *T = F->T, *V = F->V;
    size_t ba = F->ba, bb = F->bb;
    double least = INFINITY;
    F->u1 = T[ba], F->u2 = T[bb];
    F->jumped = 0, F->knots = 0;
    F->knot_a = false, F->knot_b = false;
    for (size_t i = ba; i + 1 <= bb; i++)
        for (size_t j = i + 1; j <= bb; j++) {
            for (int jump = 0; jump <= (i > ba); jump++) {
                double score = clamped_sse(T, V, ba, bb, T[i], T[j], jump);
                score /= pow(KNOT_PRICE, (double)((i > ba) + (j < bb) + jump));
                if (score < least * (1 - 1e-9)) {
                    least = score;
                    F->u1 = T[i], F->u2 = T[j], F->jumped = jump;
                    F->knots = (i > ba) + (j < bb);
                    F->knot_a = i > ba, F->knot_b = j < bb;
                }
            }
        }
}

/* The knots at the samples' own resolution: the same model over the
 * samples of the stretch, each knot moved within its bucket; F->ia, ib
 * the samples between them.  false when fewer than four are left. */
static bool fit_refine(fit_t *F)
{
    const series_t *x = F->x;
    size_t n = x->n;
    double half = F->half, u1 = F->u1, u2 = F->u2;
    size_t lo = 0, hi = n - 1;
    while (lo < n && (double)(x->t[lo] - x->t[0]) / 1e9 < F->T[F->ba] - half)
        lo++;
    while (hi > lo && (double)(x->t[hi] - x->t[0]) / 1e9 > F->T[F->bb] + half)
        hi--;
    double *tr = lo + 3 <= hi ? malloc((hi - lo + 1) * sizeof *tr) : NULL;
    if (!tr)
        return true;
    for (size_t i = lo; i <= hi; i++)
        tr[i - lo] = (double)(x->t[i] - x->t[0]) / 1e9;
    double best = INFINITY, b1 = u1, b2 = u2;
    for (size_t i = 0; i <= hi - lo; i++) {
        if (fabs(tr[i] - u1) > 2 * half)
            continue;
        for (size_t j = i + 1; j <= hi - lo; j++) {
            if (fabs(tr[j] - u2) > 2 * half)
                continue;
            double sse = clamped_sse(tr, x->v + lo, 0, hi - lo, tr[i], tr[j], F->jumped);
            if (sse < best * (1 - 1e-9))
                best = sse, b1 = tr[i], b2 = tr[j];
        }
    }
    free(tr);
    size_t ia = lo, ib = hi;
    while (ia < hi && (double)(x->t[ia] - x->t[0]) / 1e9 < b1)
        ia++;
    while (ib > ia && (double)(x->t[ib] - x->t[0]) / 1e9 > b2)
        ib--;
    F->ia = ia, F->ib = ib;
    return ib >= ia + 3;
}

/* The samples from u1 to u2 into F->ia, ib (bucket means sit inside
 * their buckets: widen by half a bucket, then keep the samples' own
 * times); false when fewer than four. */
static bool fit_samples(fit_t *F)
{
    const series_t *x = F->x;
    size_t n = x->n, ia = 0, ib = n - 1;
    while (ia < n && (double)(x->t[ia] - x->t[0]) / 1e9 < F->u1 - F->half)
        ia++;
    while (ib > ia && (double)(x->t[ib] - x->t[0]) / 1e9 > F->u2 + F->half)
        ib--;
    if (ia >= n || ib < ia + 3)
        return false;
    F->ia = ia, F->ib = ib;
    return !(F->knots && F->M < n) || fit_refine(F);
}

/* Least squares over the samples: a rise, with R² at least
 * --drift-r2, that fits better than a single step does. */
static bool fit_line(fit_t *F, const findings_config_t *c)
{
    const series_t *x = F->x;
    size_t ia = F->ia, ib = F->ib, len = ib - ia + 1;
    double *t = calloc(len, sizeof *t);
    if (!t)
        return false;
    for (size_t i = 0; i < len; i++)
        t[i] = (double)(x->t[ia + i] - x->t[0]) / 1e9;
    int rc = stats_linregress(t, x->v + ia, len, &F->lr);
    double resid = 0;
    for (size_t i = ia; !rc && i <= ib; i++) {
        double e = x->v[i] - (F->lr.intercept + F->lr.slope * t[i - ia]);
        resid += e * e;
    }
    double step = best_step(x->v, ia, ib);
    free(t);
    F->resid = resid;
    return !(rc || !(F->lr.slope > 0) || F->lr.r_squared < c->drift_r2 || !(resid < step));
}

/* The slope: Theil-Sen's median of the pairwise slopes of the bucket
 * means in the range (a lone sample, such as the process's first, does
 * not tilt it); false when it is no rise. */
static bool fit_slope(fit_t *F)
{
    const series_t *x = F->x;
    const double *T = F->T, *V = F->V;
    size_t M = F->M;
    double ta = (double)(x->t[F->ia] - x->t[0]) / 1e9, tb = (double)(x->t[F->ib] - x->t[0]) / 1e9;
    double slopes[DRIFT_POINTS * (DRIFT_POINTS - 1) / 2], ts = F->lr.slope;
    size_t ns = 0, k0 = M, k1 = 0;
    for (size_t k = 0; k < M; k++)
        if (T[k] >= ta - F->half && T[k] <= tb + F->half) {
            k0 = k < k0 ? k : k0;
            k1 = k;
        }
    for (size_t i = k0; k1 < M && i <= k1; i++)
        for (size_t j = i + 1; j <= k1; j++)
            if (T[j] > T[i])
                slopes[ns++] = (V[j] - V[i]) / (T[j] - T[i]);
    if (ns) {
        qsort(slopes, ns, sizeof slopes[0], cmp_double);
        ts = ns % 2 ? slopes[ns / 2] : (slopes[ns / 2 - 1] + slopes[ns / 2]) / 2;
    }
    F->ts = ts;
    return ts > 0;
}

/* The line through the median point: the intercept, the median of
 * v - ts * t; false when out of memory. */
static bool fit_intercept(fit_t *F)
{
    const series_t *x = F->x;
    size_t ia = F->ia, ib = F->ib, cnt = ib - ia + 1;
    double *vv = malloc(cnt * sizeof *vv), *sc = malloc(cnt * sizeof *sc);
    if (!vv || !sc) {
        free(vv), free(sc);
        return false;
    }
    for (size_t i = ia; i <= ib; i++)
        vv[i - ia] = x->v[i] - F->ts * (double)(x->t[i] - x->t[0]) / 1e9;
    F->mid_v = median(vv, cnt, sc);
    free(vv), free(sc);
    return true;
}

/* How far each sample of the range lies from the line, into e[] (malloc'd);
 * the median of them (scaled to a spread, 1.4826 x) into *spread.  NULL
 * when out of memory. */
static double *fit_offsets(const fit_t *F, double *spread)
{
    const series_t *x = F->x;
    size_t ia = F->ia, ib = F->ib, cnt = ib - ia + 1;
    double *e = malloc(cnt * sizeof *e), *sc = malloc(cnt * sizeof *sc);
    if (!e || !sc) {
        free(e), free(sc);
        return NULL;
    }
    for (size_t i = ia; i <= ib; i++)
        e[i - ia] = fabs(x->v[i] - (F->mid_v + F->ts * (double)(x->t[i] - x->t[0]) / 1e9));
    *spread = 1.4826 * median(e, cnt, sc);
    free(sc);
    return e;
}

/* An end that is no knot is a bucket's edge: it takes the samples of the
 * bucket beyond that lie on the line as closely as those inside. */
static bool fit_widen(fit_t *F)
{
    const series_t *x = F->x;
    double spread, mid_v = F->mid_v, ts = F->ts, half = F->half;
    double *e = fit_offsets(F, &spread);
    if (!e)
        return false;
    free(e);
    double close = 3 * fmax(spread, NOISE_FLOOR);
    size_t ia = F->ia, ib = F->ib;
    double edge_a = (double)(x->t[ia] - x->t[0]) / 1e9, edge_b = (double)(x->t[ib] - x->t[0]) / 1e9;
    size_t tail = exit_tail(x);
#define ON_LINE(i) (fabs(x->v[i] - (mid_v + ts * (double)(x->t[i] - x->t[0]) / 1e9)) <= close)
    while (!F->knot_a && ia > 0 && edge_a - (double)(x->t[ia - 1] - x->t[0]) / 1e9 <= 2 * half &&
           ON_LINE(ia - 1))
        ia--;
    while (!F->knot_b && ib + 1 < tail &&
           (double)(x->t[ib + 1] - x->t[0]) / 1e9 - edge_b <= 2 * half && ON_LINE(ib + 1))
        ib++;
#undef ON_LINE
    F->ia = ia, F->ib = ib;
    return true;
}

/* The range starts and ends at samples on the line: a lone sample off it
 * at either end (the process's start-up, the last one before a fall) is
 * not part of the growth. */
static bool fit_trim(fit_t *F)
{
    const series_t *x = F->x;
    double ta = (double)(x->t[F->ia] - x->t[0]) / 1e9, tb = (double)(x->t[F->ib] - x->t[0]) / 1e9;
    double spread;
    double *e = fit_offsets(F, &spread);
    if (!e)
        return false;
    double far = 4 * fmax(spread, fmax(NOISE_FLOOR, 0.02 * F->ts * (tb - ta)));
    size_t ia = F->ia, ja = F->ia, jb = F->ib;
    while (ja + 3 < jb && e[ja - ia] > far)
        ja++;
    while (jb > ja + 3 && e[jb - ia] > far)
        jb--;
    free(e);
    F->ia = ja, F->ib = jb;
    return true;
}

/* The finding of a fitted drift, rising from va by rise. */
static void drift_describe(finding_t *f, const summary_t *s, const fit_t *F, double va,
                           double rise)
{
    const series_t *x = F->x;
    size_t ia = F->ia, ib = F->ib;
    double vb = va + rise;
    double per_s = F->ts, sd = sqrt(F->resid / (double)(ib - ia + 1));
    char a1[32], a2[32];
    *f = (finding_t){.classification = FINDING_DRIFT, .series = x->which,
                     .confidence = round_to(fmin(1.0, F->lr.r_squared), 3),
                     .bytes = (uint64_t)rise, .t = x->t[ib], .start = x->t[ia], .end = x->t[ib],
                     .t0 = x->t[ia], .t1 = x->t[ib], .v0 = va, .v1 = vb};
    snprintf(f->description, sizeof f->description,
             "%s grow%s at %s/s from %.3f s to %.3f s: %s in all (R²=%.2f).",
             x->which == SERIES_GAP ? "The gap between RSS and the allocator" :
             x->which == SERIES_HEAP ? "The live heap" : "The program's mappings",
             x->which == SERIES_MAPPED ? "" : "s",
             units_format_bytes((uint64_t)per_s, a1, sizeof a1), secs(s, f->start),
             secs(s, f->end), units_format_bytes(f->bytes, a2, sizeof a2), F->lr.r_squared);
    evidence(f, "slope_bytes_per_sec", round_to(per_s, 1), false);
    evidence(f, "r_squared", round_to(F->lr.r_squared, 4), false);
    evidence(f, "p_value", round_to(F->lr.p_value, 6), false);
    evidence(f, "residual_std_bytes", round_to(sd, 0), false);
    evidence(f, "start_bytes", round_to(va, 0), false);
    evidence(f, "end_bytes", round_to(vb, 0), false);
    evidence(f, "start_s", round_to(secs(s, f->start), 6), false);
    evidence(f, "end_s", round_to(secs(s, f->end), 6), false);
    evidence(f, "samples", (double)(ib - ia + 1), true);
}

/* The drift within the stretch [ba, bb] of the bucket means, if its
 * growth is sustained. */
static bool drift_at(const findings_config_t *c, const summary_t *s, const series_t *x,
                     double min_growth, const double *T, const double *V, size_t M, size_t ba,
                     size_t bb, finding_t *f, trend_t *d)
{
    size_t n = x->n;
    double run = (double)(x->t[n - 1] - x->t[0]) / 1e9, span = c->drift_span * run;
    fit_t F = {.x = x, .T = T, .V = V, .M = M, .ba = ba, .bb = bb,
               .half = run / (double)M / 2};
    fit_knots(&F);
    if (!fit_samples(&F) || !fit_line(&F, c) || !fit_slope(&F) || !fit_intercept(&F) ||
        !fit_widen(&F) || !fit_trim(&F))
        return false;
    size_t ia = F.ia, ib = F.ib;
    double ta = (double)(x->t[ia] - x->t[0]) / 1e9, tb = (double)(x->t[ib] - x->t[0]) / 1e9;
    double rise = F.ts * (tb - ta), va = F.mid_v + F.ts * ta, vb = va + rise;
    /* sustained: long enough, longer than what follows it, and never back
     * below a quarter of its rise (the exit's frees aside): a hump or a
     * sawtooth's tooth falls back to where it started */
    if (tb - ta < span || tb - ta < run - tb || rise < min_growth || ib - ia + 1 < DRIFT_SAMPLES)
        return false;
    /* a sampled heap's rise within the estimate's error is none */
    if (x->se && !(rise > SE_Z * diff_se(x, ia, x->se[ib])))
        return false;
    for (size_t i = ib + 1, tail = exit_tail(x); i < tail; i++)
        if (x->v[i] < va + rise / 4)
            return false;
    drift_describe(f, s, &F, va, rise);
    *d = (trend_t){.on = true, .t0 = ta, .t1 = tb, .v0 = va, .v1 = vb};
    return true;
}
