/*
 * findings: the classifiers, their significance and composition.  See
 * findings.h; the equations and the defaults' reasons in docs/findings.md.
 */
#include "analyzer/consume/findings.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/consume/stats.h"
#include "lib/units.h"

static const char *const class_names[] = {
    [FINDING_SPIKE] = "transient_spike",
    [FINDING_DRIFT] = "persistent_drift",
    [FINDING_FRAGMENTATION] = "fragmentation_like",
};
/* The same, for people (the text and HTML reports); JSON and
 * --remediation keep the names above. */
static const char *const class_words[] = {
    [FINDING_SPIKE] = "transient spike",
    [FINDING_DRIFT] = "persistent drift",
    [FINDING_FRAGMENTATION] = "fragmentation",
};
static const char *const series_names[] = {
    [SERIES_GAP] = "gap", [SERIES_HEAP] = "heap_live", [SERIES_MAPPED] = "mapped"};
static const char *const series_words_long[] = {
    [SERIES_GAP] = "the gap between RSS and the allocator",
    [SERIES_HEAP] = "the live heap",
    [SERIES_MAPPED] = "the program's mappings"};
static const char *const severity_names[] = {
    [SEVERITY_INFO] = "info", [SEVERITY_WARNING] = "warning", [SEVERITY_CRITICAL] = "critical"};
static const char *const kind_names[] = {
    [ATTRIBUTION_MAPPING] = "mapping", [ATTRIBUTION_ALLOCATOR] = "allocator",
    [ATTRIBUTION_OTHER] = "other", [ATTRIBUTION_FILE] = "file_pages"};

const char *findings_class_name(finding_class_t c) { return class_names[c]; }
const char *findings_series_name(finding_series_t s) { return series_names[s]; }
const char *findings_class_words(finding_class_t c) { return class_words[c]; }
const char *findings_series_words(finding_series_t s) { return series_words_long[s]; }
const char *findings_severity_name(severity_t s) { return severity_names[s]; }
const char *findings_kind_name(attribution_kind_t k) { return kind_names[k]; }

int findings_severity_rank(const char *severity)
{
    for (int i = SEVERITY_INFO; severity && i <= SEVERITY_CRITICAL; i++)
        if (!strcmp(severity, severity_names[i]))
            return i;
    return -1;
}

int findings_worst(const findings_t *f)
{
    int worst = -1;
    for (size_t i = 0; i < f->n; i++)
        if ((int)f->v[i].severity > worst)
            worst = (int)f->v[i].severity;
    return worst;
}

/* ---- remediation: by class and by what the bytes at stake are made of ----------------- */

typedef struct remedy_s {
    finding_class_t c;
    attribution_kind_t kind; /* the largest part of the bytes at stake */
    const char *text[2];
} remedy_t;

static const remedy_t remedies[] = {
    {FINDING_SPIKE, ATTRIBUTION_ALLOCATOR,
     {"Look at what the program does at the spike's time and phase: a burst of short-lived "
      "allocations or a large temporary buffer.",
      "Reuse buffers across iterations, or cap the size of the burst."}},
    {FINDING_SPIKE, ATTRIBUTION_MAPPING,
     {"The spike is the program's own mappings (the mapping sites below): unmap a region as "
      "soon as it is done with.",
      "Map and touch less at once, or reuse one region instead of mapping new ones."}},
    {FINDING_DRIFT, ATTRIBUTION_ALLOCATOR,
     {"The footprint grows steadily: look for caches without a bound, lists that only grow, "
      "or allocations never freed (the leaks and sites).",
      "Compare two runs of different lengths: a leak grows with the run."}},
    {FINDING_DRIFT, ATTRIBUTION_MAPPING,
     {"The program maps memory and does not unmap it (the mapping sites below): munmap the "
      "regions it no longer uses.",
      "Reuse a region instead of mapping a new one each time, or bound how many stay mapped."}},
    {FINDING_FRAGMENTATION, ATTRIBUTION_ALLOCATOR,
     {"The allocator holds much more than it hands out: freed memory is not returned or not "
      "reusable.",
      "Try malloc_trim, another allocator, or the strategies ranked by the replay."}},
    /* the gap's other parts: the same advice whatever the class */
    {FINDING_SPIKE, ATTRIBUTION_FILE,
     {"Most of it is file pages: the program's code, its libraries and the files it reads, "
      "paged in as they are used; not the heap, not a leak.",
      "Read large files in pieces (or map them and drop the pages with madvise), and load "
      "fewer or smaller libraries."}},
    {FINDING_SPIKE, ATTRIBUTION_OTHER,
     {"Most of it is memory outside the heap and the program's recorded mappings: thread "
      "stacks, another allocator's or a runtime's own memory, shared memory.",
      "Look at the threads the program starts (their stack size) and at the libraries that "
      "manage memory themselves."}},
};

static const char *kind_key[] = {
    [ATTRIBUTION_MAPPING] = "mapping", [ATTRIBUTION_ALLOCATOR] = "allocator",
    [ATTRIBUTION_OTHER] = "other", [ATTRIBUTION_FILE] = "file_pages"};

static const char no_rollup[] = "not in the recorded mappings (the trace has no smaps_rollup)";

/* The largest kind in the finding's composition (a part of unknown make
 * counts as the heap's: the class's general advice). */
static attribution_kind_t main_kind(const finding_t *f)
{
    uint64_t by[4] = {0};
    for (size_t i = 0; i < f->nattribution; i++)
        by[f->attribution[i].what == no_rollup ? ATTRIBUTION_ALLOCATOR : f->attribution[i].kind] +=
            f->attribution[i].bytes;
    attribution_kind_t best = f->series == SERIES_MAPPED ? ATTRIBUTION_MAPPING
                                                         : ATTRIBUTION_ALLOCATOR;
    for (int k = 0; k < 4; k++)
        if (by[k] > by[best])
            best = (attribution_kind_t)k;
    return best;
}

static void remediate(const findings_config_t *c, finding_t *f)
{
    attribution_kind_t kind = main_kind(f);
    const char *name = class_names[f->classification];
    char key[64];
    snprintf(key, sizeof key, "%s/%s", name, kind_key[kind]);
    json_t *custom = NULL;
    if (c->remediation) {
        custom = json_object_get(c->remediation, key);
        if (!json_is_array(custom))
            custom = json_object_get(c->remediation, name);
    }
    f->nremediation = 0;
    if (json_is_array(custom)) {
        for (size_t i = 0; i < json_array_size(custom) && f->nremediation < FINDING_MAX_REMEDIATION; i++) {
            const char *t = json_string_value(json_array_get(custom, i));
            if (t)
                f->remediation[f->nremediation++] = t;
        }
        return;
    }
    /* The class's own text for the kind; for file pages and other memory
     * the same text whatever the class; else the class's heap text. */
    const remedy_t *pick = NULL;
    for (size_t i = 0; i < sizeof remedies / sizeof remedies[0] && !pick; i++)
        if (remedies[i].c == f->classification && remedies[i].kind == kind)
            pick = &remedies[i];
    for (size_t i = 0; i < sizeof remedies / sizeof remedies[0] && !pick; i++)
        if (remedies[i].kind == kind &&
            (kind == ATTRIBUTION_FILE || kind == ATTRIBUTION_OTHER))
            pick = &remedies[i];
    for (size_t i = 0; i < sizeof remedies / sizeof remedies[0] && !pick; i++)
        if (remedies[i].c == f->classification)
            pick = &remedies[i];
    if (pick) {
        f->remediation[f->nremediation++] = pick->text[0];
        f->remediation[f->nremediation++] = pick->text[1];
    }
}

/* ---- small helpers -------------------------------------------------------------------- */

static double round_to(double v, int digits)
{
    double f = pow(10.0, digits);
    return round(v * f) / f;
}

static void evidence(finding_t *f, const char *name, double v, bool integer)
{
    if (f->nevidence < FINDING_MAX_EVIDENCE)
        f->evidence[f->nevidence++] = (finding_evidence_t){.name = name, .value = v,
                                                           .integer = integer};
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of x[0..n) (n > 0), sorting scratch (room for n). */
static double median(const double *x, size_t n, double *scratch)
{
    memcpy(scratch, x, n * sizeof *x);
    qsort(scratch, n, sizeof *scratch, cmp_double);
    return n % 2 ? scratch[n / 2] : (scratch[n / 2 - 1] + scratch[n / 2]) / 2;
}

static double secs(const summary_t *s, uint64_t t)
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
static double diff_se(const series_t *x, size_t i, double se_j)
{
    return x->se ? sqrt(x->se[i] * x->se[i] + se_j * se_j) : 0;
}

/* A drift's fitted line, clamped to its range: the trend spikes are
 * measured against. */
typedef struct trend_s {
    bool on;
    double t0, t1, v0, v1; /* seconds from the series' first sample; fitted values */
} trend_t;

static double trend_at(const trend_t *d, double t)
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
static size_t exit_tail(const series_t *x)
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

/* ---- spikes --------------------------------------------------------------------------- */

#define SPIKES_PER_SERIES 5
#define NOISE_FLOOR 65536.0 /* bytes: the spread is never taken below this */

/* The spikes of x (against trend d) into found[], at most max; their number. */
static size_t spikes(const findings_config_t *c, const summary_t *s, const series_t *x,
                     const trend_t *d, finding_t *found, size_t max)
{
    size_t n = x->n;
    if (n < 5 || max == 0)
        return 0;
    double *r = malloc(n * sizeof *r), *scratch = malloc(n * sizeof *scratch);
    size_t nfound = 0;
    if (!r || !scratch)
        goto out;
    double t0 = (double)x->t[0];
    for (size_t i = 0; i < n; i++)
        r[i] = x->v[i] - trend_at(d, ((double)x->t[i] - t0) / 1e9);
    double m = median(r, n, scratch);
    for (size_t i = 0; i < n; i++)
        scratch[i] = fabs(r[i] - m);
    double *dev = malloc(n * sizeof *dev);
    if (!dev)
        goto out;
    memcpy(dev, scratch, n * sizeof *dev);
    double sigma = 1.4826 * median(dev, n, scratch);
    free(dev);
    double level = median(x->v, n, scratch);
    double floor = fmax(NOISE_FLOOR, 0.005 * fabs(level));
    if (sigma < floor)
        sigma = floor;
    double trigger = m + c->spike_z * sigma;
    size_t tail = exit_tail(x);
    /* a sampled heap: the baseline's error, the median of the values' */
    double base_se = x->se ? median(x->se, n, scratch) : 0;
    for (size_t i = 0; i < n;) {
        if (!(r[i] > trigger)) {
            i++;
            continue;
        }
        /* the excursion: the samples around i above half the trigger */
        double low = m + c->spike_z * sigma / 2;
        size_t a = i, b = i;
        while (a > 0 && r[a - 1] > low)
            a--;
        while (b + 1 < n && r[b + 1] > low)
            b++;
        size_t p = a;
        for (size_t k = a; k <= b; k++)
            if (r[k] > r[p])
                p = k;
        double h = r[p] - m;
        /* its extent: above a tenth of its height too (no long shallow tails) */
        double edge = fmax(low, m + 0.1 * h);
        size_t ea = a, eb = b;
        while (ea < p && !(r[ea] > edge))
            ea++;
        while (eb > p && !(r[eb] > edge))
            eb--;
        i = b + 1;
        /* It must come back down before the exit's frees (they are no
         * return): else it is a step held to the end. */
        if (b + 1 >= tail || nfound >= max)
            continue;
        /* A sampled heap's excursion within the estimate's error is none:
         * one temporary block sampled stands for the whole interval. */
        if (x->se && !(h > SE_Z * diff_se(x, p, base_se)))
            continue;
        finding_t *f = &found[nfound++];
        double base = x->v[p] - h;
        char a1[32], a2[32];
        *f = (finding_t){.classification = FINDING_SPIKE, .series = x->which,
                         .confidence = round_to(fmin(1.0, h / sigma / (3 * c->spike_z)), 3),
                         .bytes = h > 0 ? (uint64_t)h : 0, .t = x->t[p],
                         .start = x->t[ea], .end = x->t[eb], .t0 = x->t[ea], .t1 = x->t[eb],
                         .v0 = base, .v1 = x->v[p]};
        snprintf(f->description, sizeof f->description,
                 "A transient spike of %s: %s above its baseline of %s, from %.3f s to %.3f s.",
                 series_words_long[x->which], units_format_bytes(f->bytes, a1, sizeof a1),
                 units_format_bytes(base > 0 ? (uint64_t)base : 0, a2, sizeof a2),
                 secs(s, f->start), secs(s, f->end));
        evidence(f, "height_bytes", round_to(h, 0), false);
        evidence(f, "baseline_bytes", round_to(base, 0), false);
        evidence(f, "peak_bytes", x->v[p], false);
        evidence(f, "spread_bytes", round_to(sigma, 0), false);
        evidence(f, "robust_z", round_to(h / sigma, 3), false);
        evidence(f, "start_s", round_to(secs(s, f->start), 6), false);
        evidence(f, "end_s", round_to(secs(s, f->end), 6), false);
        evidence(f, "samples", (double)(eb - ea + 1), true);
    }
out:
    free(r);
    free(scratch);
    return nfound;
}

/* ---- drift ------------------------------------------------------------------------------ */

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

/* The drift of x, if any, into *f and its trend into *d. */
static bool drift(const findings_config_t *c, const summary_t *s, const series_t *x,
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

/* The drift within the stretch [ba, bb] of the bucket means, if its
 * growth is sustained. */
static bool drift_at(const findings_config_t *c, const summary_t *s, const series_t *x,
                     double min_growth, const double *T, const double *V, size_t M, size_t ba,
                     size_t bb, finding_t *f, trend_t *d)
{
    size_t n = x->n;
    double run = (double)(x->t[n - 1] - x->t[0]) / 1e9, span = c->drift_span * run;
    /* where the growth is within it: flat, then the line (after a step,
     * maybe), then flat */
    /* (a knot must pay for itself: each one must cut the residual sum of
     * squares by more than a quarter; the samples' noise is not
     * independent enough, temporaries lasting several samples, for an
     * information criterion's milder price) */
    double u1 = T[ba], u2 = T[bb], least = INFINITY;
    int jumped = 0, knots = 0;
    bool knot_a = false, knot_b = false;
    for (size_t i = ba; i + 1 <= bb; i++)
        for (size_t j = i + 1; j <= bb; j++) {
            for (int jump = 0; jump <= (i > ba); jump++) {
                double score = clamped_sse(T, V, ba, bb, T[i], T[j], jump);
                score /= pow(KNOT_PRICE, (double)((i > ba) + (j < bb) + jump));
                if (score < least * (1 - 1e-9)) {
                    least = score;
                    u1 = T[i], u2 = T[j], jumped = jump;
                    knots = (i > ba) + (j < bb);
                    knot_a = i > ba, knot_b = j < bb;
                }
            }
        }
    /* the samples from u1 to u2 (bucket means sit inside their buckets:
     * widen by half a bucket, then keep the samples' own times) */
    double half = run / (double)M / 2;
    size_t ia = 0, ib = n - 1;
    while (ia < n && (double)(x->t[ia] - x->t[0]) / 1e9 < u1 - half)
        ia++;
    while (ib > ia && (double)(x->t[ib] - x->t[0]) / 1e9 > u2 + half)
        ib--;
    if (ia >= n || ib < ia + 3)
        return false;
    if (knots && M < n) {
        /* the knots at the samples' own resolution: the same model over the
         * samples of the stretch, each knot moved within its bucket */
        size_t lo = 0, hi = n - 1;
        while (lo < n && (double)(x->t[lo] - x->t[0]) / 1e9 < T[ba] - half)
            lo++;
        while (hi > lo && (double)(x->t[hi] - x->t[0]) / 1e9 > T[bb] + half)
            hi--;
        double *tr = lo + 3 <= hi ? malloc((hi - lo + 1) * sizeof *tr) : NULL;
        if (tr) {
            for (size_t i = lo; i <= hi; i++)
                tr[i - lo] = (double)(x->t[i] - x->t[0]) / 1e9;
            double best = INFINITY, b1 = u1, b2 = u2;
            for (size_t i = 0; i <= hi - lo; i++) {
                if (fabs(tr[i] - u1) > 2 * half)
                    continue;
                for (size_t j = i + 1; j <= hi - lo; j++) {
                    if (fabs(tr[j] - u2) > 2 * half)
                        continue;
                    double sse = clamped_sse(tr, x->v + lo, 0, hi - lo, tr[i], tr[j], jumped);
                    if (sse < best * (1 - 1e-9))
                        best = sse, b1 = tr[i], b2 = tr[j];
                }
            }
            free(tr);
            ia = lo, ib = hi;
            while (ia < hi && (double)(x->t[ia] - x->t[0]) / 1e9 < b1)
                ia++;
            while (ib > ia && (double)(x->t[ib] - x->t[0]) / 1e9 > b2)
                ib--;
            if (ib < ia + 3)
                return false;
        }
    }
    size_t len = ib - ia + 1;
    double *t = calloc(len, sizeof *t);
    if (!t)
        return false;
    for (size_t i = 0; i < len; i++)
        t[i] = (double)(x->t[ia + i] - x->t[0]) / 1e9;
    stats_linregress_t lr;
    int rc = stats_linregress(t, x->v + ia, len, &lr);
    double resid = 0;
    for (size_t i = ia; !rc && i <= ib; i++) {
        double e = x->v[i] - (lr.intercept + lr.slope * t[i - ia]);
        resid += e * e;
    }
    double step = best_step(x->v, ia, ib);
    free(t);
    double ta = (double)(x->t[ia] - x->t[0]) / 1e9, tb = (double)(x->t[ib] - x->t[0]) / 1e9;
    if (rc || !(lr.slope > 0) || lr.r_squared < c->drift_r2 || !(resid < step))
        return false;
    /* the slope: Theil-Sen's median of the pairwise slopes of the bucket
     * means in the range (a lone sample, such as the process's first,
     * does not tilt it); the line through the median point */
    double slopes[DRIFT_POINTS * (DRIFT_POINTS - 1) / 2], ts = lr.slope;
    size_t ns = 0, k0 = M, k1 = 0;
    for (size_t k = 0; k < M; k++)
        if (T[k] >= ta - half && T[k] <= tb + half) {
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
    if (!(ts > 0))
        return false;
    double mid_v = 0;
    {
        size_t cnt = ib - ia + 1;
        double *vv = malloc(cnt * sizeof *vv), *sc = malloc(cnt * sizeof *sc);
        if (!vv || !sc) {
            free(vv), free(sc);
            return false;
        }
        for (size_t i = ia; i <= ib; i++)
            vv[i - ia] = x->v[i] - ts * (double)(x->t[i] - x->t[0]) / 1e9;
        mid_v = median(vv, cnt, sc); /* the intercept: the median of v - ts * t */
        free(vv), free(sc);
    }
    /* an end that is no knot is a bucket's edge: it takes the samples of
     * the bucket beyond that lie on the line as closely as those inside */
    {
        size_t cnt = ib - ia + 1;
        double *e = malloc(cnt * sizeof *e), *sc = malloc(cnt * sizeof *sc);
        if (!e || !sc) {
            free(e), free(sc);
            return false;
        }
        for (size_t i = ia; i <= ib; i++)
            e[i - ia] = fabs(x->v[i] - (mid_v + ts * (double)(x->t[i] - x->t[0]) / 1e9));
        double close = 3 * fmax(1.4826 * median(e, cnt, sc), NOISE_FLOOR);
        free(e), free(sc);
        double edge_a = (double)(x->t[ia] - x->t[0]) / 1e9, edge_b = (double)(x->t[ib] - x->t[0]) / 1e9;
        size_t tail = exit_tail(x);
#define ON_LINE(i) (fabs(x->v[i] - (mid_v + ts * (double)(x->t[i] - x->t[0]) / 1e9)) <= close)
        while (!knot_a && ia > 0 && edge_a - (double)(x->t[ia - 1] - x->t[0]) / 1e9 <= 2 * half &&
               ON_LINE(ia - 1))
            ia--;
        while (!knot_b && ib + 1 < tail &&
               (double)(x->t[ib + 1] - x->t[0]) / 1e9 - edge_b <= 2 * half && ON_LINE(ib + 1))
            ib++;
#undef ON_LINE
        ta = (double)(x->t[ia] - x->t[0]) / 1e9, tb = (double)(x->t[ib] - x->t[0]) / 1e9;
    }
    /* the range starts and ends at samples on the line: a lone sample off
     * it at either end (the process's start-up, the last one before a
     * fall) is not part of the growth */
    {
        size_t cnt = ib - ia + 1;
        double *e = malloc(cnt * sizeof *e), *sc = malloc(cnt * sizeof *sc);
        if (!e || !sc) {
            free(e), free(sc);
            return false;
        }
        for (size_t i = ia; i <= ib; i++)
            e[i - ia] = fabs(x->v[i] - (mid_v + ts * (double)(x->t[i] - x->t[0]) / 1e9));
        double far = 4 * fmax(1.4826 * median(e, cnt, sc), fmax(NOISE_FLOOR, 0.02 * ts * (tb - ta)));
        free(sc);
        size_t ja = ia, jb = ib;
        while (ja + 3 < jb && e[ja - ia] > far)
            ja++;
        while (jb > ja + 3 && e[jb - ia] > far)
            jb--;
        free(e);
        ia = ja, ib = jb;
        ta = (double)(x->t[ia] - x->t[0]) / 1e9, tb = (double)(x->t[ib] - x->t[0]) / 1e9;
    }
    double rise = ts * (tb - ta), va = mid_v + ts * ta, vb = va + rise;
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
    double per_s = ts, sd = sqrt(resid / (double)(ib - ia + 1));
    char a1[32], a2[32];
    *f = (finding_t){.classification = FINDING_DRIFT, .series = x->which,
                     .confidence = round_to(fmin(1.0, lr.r_squared), 3),
                     .bytes = (uint64_t)rise, .t = x->t[ib], .start = x->t[ia], .end = x->t[ib],
                     .t0 = x->t[ia], .t1 = x->t[ib], .v0 = va, .v1 = vb};
    snprintf(f->description, sizeof f->description,
             "%s grow%s at %s/s from %.3f s to %.3f s: %s in all (R²=%.2f).",
             x->which == SERIES_GAP ? "The gap between RSS and the allocator" :
             x->which == SERIES_HEAP ? "The live heap" : "The program's mappings",
             x->which == SERIES_MAPPED ? "" : "s",
             units_format_bytes((uint64_t)per_s, a1, sizeof a1), secs(s, f->start),
             secs(s, f->end), units_format_bytes(f->bytes, a2, sizeof a2), lr.r_squared);
    evidence(f, "slope_bytes_per_sec", round_to(per_s, 1), false);
    evidence(f, "r_squared", round_to(lr.r_squared, 4), false);
    evidence(f, "p_value", round_to(lr.p_value, 6), false);
    evidence(f, "residual_std_bytes", round_to(sd, 0), false);
    evidence(f, "start_bytes", round_to(va, 0), false);
    evidence(f, "end_bytes", round_to(vb, 0), false);
    evidence(f, "start_s", round_to(secs(s, f->start), 6), false);
    evidence(f, "end_s", round_to(secs(s, f->end), 6), false);
    evidence(f, "samples", (double)(ib - ia + 1), true);
    *d = (trend_t){.on = true, .t0 = ta, .t1 = tb, .v0 = va, .v1 = vb};
    return true;
}

/* ---- fragmentation ---------------------------------------------------------------------- */

/* The allocator's free memory that stays resident: reserved − in use, no
 * more than the RSS has room for beside what is in use and the mappings
 * (those count no more than the gap holds: a mapping being read in is
 * not all resident yet), and none when that room is under half of it
 * (the figures are of memory already returned, or never touched). */
static double held(const summary_point_t *p)
{
    if (!p->reserved || p->reserved <= p->allocated)
        return 0;
    double free_b = (double)(p->reserved - p->allocated);
    double gap = p->used > p->reserved ? (double)(p->used - p->reserved) : 0;
    double room = (double)p->used - (double)p->allocated - fmin((double)p->mapped, gap);
    if (room < free_b / 2)
        return 0;
    return fmin(free_b, room);
}

static bool fragmentation(const findings_config_t *c, const summary_t *s, finding_t *f)
{
    size_t n = s->npoints;
    if (n < 3 || s->points[n - 1].t <= s->points[0].t)
        return false;
    double run = (double)(s->points[n - 1].t - s->points[0].t) / 1e9;
    /* the longest stretch of consecutive fragmented samples */
    size_t ba = 0, bn = 0;
    for (size_t i = 0; i < n;) {
        size_t k = i;
        while (k < n) {
            const summary_point_t *p = &s->points[k];
            double h = held(p);
            if (!(h >= (double)c->min_bytes && h / (h + (double)p->allocated) >= c->frag_ratio))
                break;
            k++;
        }
        if (k - i > bn)
            ba = i, bn = k - i;
        i = k > i ? k : i + 1;
    }
    if (bn < 3)
        return false;
    uint64_t ta = s->points[ba].t, tb = s->points[ba + bn - 1].t;
    if ((double)(tb - ta) / 1e9 < c->frag_span * run)
        return false;
    double *h = malloc(bn * sizeof *h), *r = malloc(bn * sizeof *r), *scratch = malloc(bn * sizeof *scratch);
    if (!h || !r || !scratch) {
        free(h), free(r), free(scratch);
        return false;
    }
    size_t top = ba; /* the most held (evidence); the finding's time is when it set in */
    for (size_t i = 0; i < bn; i++) {
        const summary_point_t *p = &s->points[ba + i];
        h[i] = held(p);
        r[i] = h[i] / (h[i] + (double)p->allocated);
        if (h[i] > held(&s->points[top]))
            top = ba + i;
    }
    double mh = median(h, bn, scratch), mr = median(r, bn, scratch);
    free(h), free(r), free(scratch);
    char a1[32];
    *f = (finding_t){.classification = FINDING_FRAGMENTATION, .series = SERIES_HEAP,
                     .confidence = round_to(fmin(1.0, mr / 0.6), 3), .bytes = (uint64_t)mh,
                     .t = ta, .start = ta, .end = tb, .t0 = ta, .t1 = tb,
                     .v0 = 0, .v1 = mh};
    snprintf(f->description, sizeof f->description,
             "The allocator holds %s free that it does not return (%.0f%% of its resident "
             "memory), from %.3f s to %.3f s.",
             units_format_bytes(f->bytes, a1, sizeof a1), 100 * mr, secs(s, ta), secs(s, tb));
    evidence(f, "held_bytes", round_to(mh, 0), false);
    evidence(f, "held_ratio", round_to(mr, 4), false);
    evidence(f, "max_held_bytes", round_to(held(&s->points[top]), 0), false);
    evidence(f, "start_s", round_to(secs(s, ta), 6), false);
    evidence(f, "end_s", round_to(secs(s, tb), 6), false);
    evidence(f, "samples", (double)bn, true);
    return true;
}

/* ---- composition ---------------------------------------------------------------------- */

static void attribute(finding_t *f, attribution_kind_t kind, uint64_t bytes, const char *what)
{
    if (!bytes || f->nattribution >= FINDING_MAX_ATTRIBUTION)
        return;
    f->attribution[f->nattribution++] = (finding_attribution_t){
        .kind = kind, .bytes = bytes, .share = f->bytes ? (double)bytes / (double)f->bytes : 0,
        .what = what};
}

#define SHOWN_MAPPING_SITES 32 /* (the reports merge those that read the same) */

/* `bytes` of mappings over the mapping sites: in proportion to their
 * bytes at the mapped peak or at the end, whichever total is nearer the
 * mappings live at the time (`mapped`). */
static void attribute_mappings(finding_t *f, const mappings_t *m, uint64_t mapped, uint64_t bytes)
{
    if (!bytes)
        return;
    if (!m) {
        attribute(f, ATTRIBUTION_MAPPING, bytes, "the program's mappings");
        return;
    }
    uint64_t d_peak = m->peak > mapped ? m->peak - mapped : mapped - m->peak;
    uint64_t d_end = m->live > mapped ? m->live - mapped : mapped - m->live;
    mappings_key_t key = d_peak <= d_end ? MAPPINGS_BY_PEAK : MAPPINGS_BY_END;
    uint64_t total = key == MAPPINGS_BY_PEAK ? m->peak : m->live;
    uint64_t *ids = NULL;
    size_t n = total ? mappings_top(m, key, SHOWN_MAPPING_SITES, &ids) : 0;
    uint64_t given = 0;
    for (size_t i = 0; i < n && f->nattribution < FINDING_MAX_ATTRIBUTION; i++) {
        uint64_t file = 0;
        uint64_t k = key == MAPPINGS_BY_PEAK ? mappings_site_peak(m, ids[i], &file)
                                             : m->sites[ids[i]].live;
        if (key == MAPPINGS_BY_END)
            file = m->sites[ids[i]].live_file;
        uint64_t b = (uint64_t)((double)bytes * ((double)k / (double)total));
        if (b > bytes - given)
            b = bytes - given;
        if (!b)
            continue;
        f->attribution[f->nattribution++] = (finding_attribution_t){
            .kind = ATTRIBUTION_MAPPING, .bytes = b,
            .share = f->bytes ? (double)b / (double)f->bytes : 0, .has_site = true,
            .site = ids[i], .file = file * 2 > k};
        given += b;
    }
    free(ids);
    if (given < bytes)
        attribute(f, ATTRIBUTION_MAPPING, bytes - given, "other mapping sites");
}

/* The clean file pages near point i: the latest smaps_rollup at or before
 * it, else the first after; 0 when none. */
static uint64_t clean_near(const summary_t *s, size_t i)
{
    for (size_t k = i + 1; k-- > 0;)
        if (s->points[k].rollup_rss)
            return s->points[k].rollup_clean;
    for (size_t k = i + 1; k < s->npoints; k++)
        if (s->points[k].rollup_rss)
            return s->points[k].rollup_clean;
    return 0;
}

static bool has_rollup(const summary_t *s)
{
    for (size_t i = 0; i < s->npoints; i++)
        if (s->points[i].rollup_rss)
            return true;
    return false;
}

/* What a gap finding's bytes are made of: what grew between its base
 * (point b) and its peak (point p).  Returns the clean file pages' part. */
static uint64_t explain_gap(finding_t *f, const summary_t *s, const mappings_t *m, size_t b,
                            size_t p)
{
    const summary_point_t *P = &s->points[p], *B = &s->points[b];
    uint64_t left = f->bytes;
    uint64_t mapped = P->mapped > B->mapped ? P->mapped - B->mapped : 0;
    if (mapped > left)
        mapped = left;
    attribute_mappings(f, m, P->mapped, mapped);
    f->mapping_share = f->bytes ? (double)mapped / (double)f->bytes : 0;
    left -= mapped;
    if (!P->reserved && left) { /* no allocator figures: the heap is in the gap */
        uint64_t heap = P->heap_max > B->heap_max ? P->heap_max - B->heap_max : 0;
        heap = heap < left ? heap : left;
        attribute(f, ATTRIBUTION_ALLOCATOR, heap,
                  "the heap's blocks (the allocator's own figures are unknown)");
        left -= heap;
    }
    if (!left)
        return 0;
    if (!has_rollup(s)) {
        attribute(f, ATTRIBUTION_OTHER, left, no_rollup);
        return 0;
    }
    uint64_t cp = clean_near(s, p), cb = clean_near(s, b);
    uint64_t file = cp > cb ? cp - cb : 0;
    if (file > left)
        file = left;
    attribute(f, ATTRIBUTION_FILE, file,
              "file pages: code, libraries and files read, not in recorded mappings");
    left -= file;
    attribute(f, ATTRIBUTION_OTHER, left,
              "memory outside the heap and the recorded mappings: thread stacks, another "
              "allocator's or a runtime's memory, shared memory");
    return file;
}

/* Appends the composition's gist to a gap finding's description. */
static void describe_gap(finding_t *f, const mappings_t *m)
{
    if (f->mapping_share < 0.01)
        return;
    size_t len = strlen(f->description);
    uint64_t anon = 0, all = 0;
    for (size_t i = 0; i < f->nattribution; i++)
        if (f->attribution[i].kind == ATTRIBUTION_MAPPING) {
            all += f->attribution[i].bytes;
            anon += f->attribution[i].file ? 0 : f->attribution[i].bytes;
        }
    const char *what = anon == all ? "anonymous mappings" : anon == 0 ? "file mappings"
                                                                        : "mappings";
    uint64_t calls = m ? m->calls : 0;
    snprintf(f->description + len, sizeof f->description - len,
             " %.0f%% of it is the program's own %s (%" PRIu64 " mmap call%s).",
             100 * f->mapping_share, what, calls, calls == 1 ? "" : "s");
}

/* ---- the analysis ---------------------------------------------------------------------- */

static int by_severity(const void *a, const void *b)
{
    const finding_t *x = a, *y = b;
    if (x->severity != y->severity)
        return (int)y->severity - (int)x->severity;
    if (x->bytes != y->bytes)
        return (y->bytes > x->bytes) - (y->bytes < x->bytes);
    return (x->start > y->start) - (x->start < y->start);
}

static size_t point_at(const summary_t *s, uint64_t t)
{
    for (size_t i = 0; i < s->npoints; i++)
        if (s->points[i].t == t)
            return i;
    return s->npoints ? s->npoints - 1 : 0;
}

/* Keeps f when it is significant: its severity, composition, remediation. */
static void keep(findings_t *out, finding_t *f, const summary_t *s, const mappings_t *m,
                 const findings_config_t *c, uint64_t max_total)
{
    /* the process's peak footprint: its peak RSS, or the series' own peak
     * when higher (heap or mappings requested and not all touched) */
    uint64_t rss = summary_peak_rss(s);
    if (f->series == SERIES_HEAP && s->peak_heap > rss)
        rss = s->peak_heap;
    if (f->series == SERIES_MAPPED && m && m->peak > rss)
        rss = m->peak;
    f->share_of_rss = rss ? (double)f->bytes / (double)rss : 0;
    bool machine = f->series == SERIES_GAP && max_total &&
                   (double)f->bytes >= c->gap_ratio * (double)max_total;
    if (f->bytes < c->min_bytes || (f->share_of_rss < c->min_share && !machine))
        return;
    f->phase = summary_phase_at(s, f->t);
    if (f->classification == FINDING_FRAGMENTATION) {
        attribute(f, ATTRIBUTION_ALLOCATOR, f->bytes,
                  "free memory the allocator holds and does not return");
    } else if (f->series == SERIES_GAP) {
        size_t p = point_at(s, f->t);
        size_t b = f->classification == FINDING_DRIFT ? point_at(s, f->start)
                   : point_at(s, f->start) > 0        ? point_at(s, f->start) - 1
                                                      : point_at(s, f->end) + 1;
        if (b >= s->npoints)
            b = p;
        uint64_t file = explain_gap(f, s, m, b, p);
        /* no finding rests on the program's code and files read */
        uint64_t rest = f->bytes - file;
        if (rest < c->min_bytes || (rss && (double)rest / (double)rss < c->min_share && !machine) ||
            file * 2 > f->bytes)
            return;
        describe_gap(f, m);
    } else if (f->series == SERIES_MAPPED) {
        attribute_mappings(f, m, s->points[point_at(s, f->t)].mapped, f->bytes);
        f->mapping_share = 1;
    } else {
        attribute(f, ATTRIBUTION_ALLOCATOR, f->bytes, "the live heap's blocks");
    }
    severity_t by_share = f->share_of_rss >= c->critical_share ? SEVERITY_CRITICAL
                          : f->share_of_rss >= c->warn_share   ? SEVERITY_WARNING
                                                               : SEVERITY_INFO;
    severity_t by_bytes = f->bytes >= c->critical_bytes ? SEVERITY_CRITICAL
                          : f->bytes >= c->warn_bytes   ? SEVERITY_WARNING
                                                        : SEVERITY_INFO;
    f->severity = by_share < by_bytes ? by_share : by_bytes;
    remediate(c, f);
    if (out->n < FINDINGS_MAX)
        out->v[out->n++] = *f;
}

static bool overlap(const finding_t *a, const finding_t *b)
{
    return a->classification == b->classification && a->start <= b->end && b->start <= a->end;
}

/* The samples' RSS rose by at least half of f's bytes within its range
 * (mappings nobody touched cost no memory), or the range is too short
 * for the samples to tell (under two samples inside it). */
static bool resident(const summary_t *s, const finding_t *f)
{
    size_t a = point_at(s, f->start), b = point_at(s, f->end), inside = 0;
    uint64_t before = a > 0 ? s->points[a - 1].used : s->points[a].used, top = 0;
    for (size_t i = a; i <= b && i < s->npoints; i++) {
        inside++;
        if (s->points[i].used > top)
            top = s->points[i].used;
    }
    return inside < 2 || (double)top - (double)before >= (double)f->bytes / 2;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* A spike of the gap is memory the process gained: the RSS at its top
 * stands above the median RSS of the gap's samples outside it (the ones
 * its baseline comes from).  Where the allocator holds memory nobody
 * touched, RSS − reserved is only a lower bound of the memory outside
 * it, the lower the more untouched memory it holds: a stretch with less
 * of it (a heap still being built, before big blocks it never touches)
 * then looks like a spike of the gap while the RSS is lower than around
 * it.  True also when there is nothing to compare or no memory to. */
static bool gap_spike_resident(const summary_t *s, const series_t *gap, const finding_t *f)
{
    if (f->classification != FINDING_SPIKE || !gap->n)
        return true;
    uint64_t *out = malloc(gap->n * sizeof *out), top = 0;
    if (!out)
        return true;
    size_t n = 0;
    for (size_t i = 0; i < gap->n; i++) {
        uint64_t used = s->points[gap->at[i]].used;
        if (gap->t[i] >= f->start && gap->t[i] <= f->end) {
            if (used > top)
                top = used;
        } else {
            out[n++] = used;
        }
    }
    bool above = true;
    if (n && top) {
        qsort(out, n, sizeof *out, cmp_u64);
        above = top > out[n / 2];
    }
    free(out);
    return above;
}

/* The series of the samples into x (values malloc'd); false when out of
 * memory.  instant: the heap live at the sample itself, not the most
 * since the sample before (a drift's fit wants where the heap is; a spike
 * its top). */
static bool series_make(const summary_t *s, finding_series_t which, bool instant, series_t *x)
{
    size_t n = s->npoints;
    *x = (series_t){.which = which};
    x->v = malloc((n + 1) * sizeof *x->v);
    x->t = malloc((n + 1) * sizeof *x->t);
    x->at = malloc((n + 1) * sizeof *x->at);
    if (!x->v || !x->t || !x->at)
        return false;
    if (which == SERIES_HEAP && s->sample_bytes && !(x->se = malloc((n + 1) * sizeof *x->se)))
        return false;
    bool allocator = false; /* the trace has glibc's figures */
    for (size_t i = 0; i < n && !allocator; i++)
        allocator = s->points[i].reserved > 0;
    for (size_t i = 0; i < n; i++) {
        const summary_point_t *p = &s->points[i];
        double v;
        if (which == SERIES_HEAP)
            v = (double)(instant ? p->heap_live : p->heap_max);
        else if (which == SERIES_MAPPED)
            v = (double)p->mapped;
        else if (!p->total || (allocator && (!p->reserved || p->used <= p->reserved)))
            continue; /* before the allocator's first figures, or while it counts memory
                         never touched (the gap is unknown then, not 0) */
        else
            v = (double)(p->used - p->reserved);
        if (x->se)
            x->se[x->n] = instant ? p->heap_se : p->heap_max_se;
        x->v[x->n] = v;
        x->t[x->n] = p->t;
        x->at[x->n++] = i;
    }
    return true;
}

static void series_free(series_t *x)
{
    free(x->v);
    free(x->t);
    free(x->at);
    free(x->se);
}

/* The drift of one series (fitted on x) and its spikes (found in y, the
 * same samples, against the drift) into cand[] (room for max); their number. */
static size_t classify(const findings_config_t *c, const summary_t *s, const series_t *x,
                       const series_t *y, double min_growth, finding_t *cand, size_t max)
{
    size_t k = 0;
    trend_t d;
    if (max && drift(c, s, x, min_growth, &cand[k], &d))
        k++;
    k += spikes(c, s, y, &d, cand + k, max - k < SPIKES_PER_SERIES ? max - k : SPIKES_PER_SERIES);
    return k;
}

#define CANDIDATES (3 * (1 + SPIKES_PER_SERIES) + 1)

void findings_analyze(const summary_t *s, const mappings_t *m, const findings_config_t *c,
                      findings_t *out)
{
    out->n = 0;
    series_t gap = {0}, heap = {0}, heap_now = {0}, mapped = {0};
    finding_t *cand = malloc(CANDIDATES * sizeof *cand);
    bool ok = cand && series_make(s, SERIES_GAP, false, &gap) &&
              series_make(s, SERIES_HEAP, false, &heap) &&
              series_make(s, SERIES_HEAP, true, &heap_now) &&
              series_make(s, SERIES_MAPPED, false, &mapped);
    if (ok) {
        uint64_t max_total = 0;
        double heap_sum = 0;
        for (size_t i = 0; i < s->npoints; i++)
            if (s->points[i].total > max_total)
                max_total = s->points[i].total;
        for (size_t i = 0; i < heap.n; i++)
            heap_sum += heap.v[i];
        size_t ng = 0, nm = 0, nh = 0, nf = 0;
        finding_t *g = cand, *mp, *h;
        if (gap.n >= 5)
            ng = classify(c, s, &gap, &gap, 0, g, 1 + SPIKES_PER_SERIES);
        mp = g + ng;
        if (m && m->calls && mapped.n >= 5)
            nm = classify(c, s, &mapped, &mapped, 0, mp, 1 + SPIKES_PER_SERIES);
        h = mp + nm;
        if (heap.n >= 5)
            nh = classify(c, s, &heap_now, &heap, fmax(65536.0, 0.1 * heap_sum / (double)heap.n),
                          h, 1 + SPIKES_PER_SERIES);
        if (fragmentation(c, s, h + nh))
            nf = 1;
        /* A gap finding and a mappings finding of the same class at the
         * same time are one: the mappings' when they make half of it. */
        bool drop_g[1 + SPIKES_PER_SERIES] = {0}, drop_m[1 + SPIKES_PER_SERIES] = {0};
        for (size_t j = 0; j < nm; j++) {
            bool paired = false;
            for (size_t i = 0; i < ng; i++)
                if (overlap(&g[i], &mp[j])) {
                    paired = true;
                    if ((double)mp[j].bytes * 2 >= (double)g[i].bytes)
                        drop_g[i] = true;
                    else
                        drop_m[j] = true;
                }
            if (!paired && !resident(s, &mp[j]))
                drop_m[j] = true;
        }
        for (size_t i = 0; i < ng; i++)
            if (!drop_g[i] && gap_spike_resident(s, &gap, &g[i]))
                keep(out, &g[i], s, m, c, max_total);
        for (size_t j = 0; j < nm; j++)
            if (!drop_m[j])
                keep(out, &mp[j], s, m, c, max_total);
        /* A burst of the heap whose memory the allocator then keeps is
         * the fragmentation's story, not a spike of the footprint: the
         * RSS did not come back down. */
        bool told[1 + SPIKES_PER_SERIES] = {0};
        for (size_t i = 0; nf && i < nh; i++) {
            finding_t *fr = &h[nh];
            size_t after = point_at(s, h[i].end) + 1;
            uint64_t next = after < s->npoints ? s->points[after].t : h[i].end;
            if (h[i].classification != FINDING_SPIKE || fr->start < h[i].start ||
                fr->start > next || (double)fr->bytes * 2 < (double)h[i].bytes)
                continue;
            size_t len = strlen(fr->description);
            char a1[32];
            snprintf(fr->description + len, sizeof fr->description - len,
                     " It is what is left of a burst of %s of the live heap, from %.3f s to %.3f s.",
                     units_format_bytes(h[i].bytes, a1, sizeof a1), secs(s, h[i].start),
                     secs(s, h[i].end));
            told[i] = true;
        }
        for (size_t i = 0; i < nh + nf; i++)
            if (i >= nh || !told[i])
                keep(out, &h[i], s, m, c, 0);
    }
    series_free(&gap);
    series_free(&heap);
    series_free(&heap_now);
    series_free(&mapped);
    free(cand);
    qsort(out->v, out->n, sizeof out->v[0], by_severity);
}
