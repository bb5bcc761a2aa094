/*
 * findings_spike: transient spikes.  See findings_spike.h; the equations
 * in docs/findings.md.
 */
#include "analyzer/consume/findings_spike.h"

#include <stdio.h>

#include "lib/units.h"


size_t findings_spikes(const findings_config_t *c, const summary_t *s, const series_t *x,
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
                 findings_series_words(x->which), units_format_bytes(f->bytes, a1, sizeof a1),
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
