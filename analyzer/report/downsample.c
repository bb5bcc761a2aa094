/*
 * downsample: min and max per bucket.  See downsample.h.
 */
#include "analyzer/report/downsample.h"

#include <string.h>

size_t downsample_minmax(const double *t, const double *v, size_t n, size_t buckets,
                         double *out_t, double *out_v)
{
    if (!n)
        return 0;
    if (!buckets || n <= 2 * buckets) {
        memcpy(out_t, t, n * sizeof *t);
        memcpy(out_v, v, n * sizeof *v);
        return n;
    }
    double t0 = t[0], span = t[n - 1] - t[0];
    size_t out = 0, i = 0;
    for (size_t b = 0; b < buckets && i < n; b++) {
        /* the bucket's end; the last takes everything left */
        double end = b + 1 == buckets ? t[n - 1] : t0 + span * (double)(b + 1) / (double)buckets;
        size_t lo = i, hi = i; /* indices of the bucket's min and max */
        for (; i < n && (t[i] < end || b + 1 == buckets); i++) {
            if (v[i] < v[lo])
                lo = i;
            if (v[i] > v[hi])
                hi = i;
        }
        if (i == lo && i == hi) /* an empty bucket (no sample in its span) */
            continue;
        size_t first = lo < hi ? lo : hi, second = lo < hi ? hi : lo;
        out_t[out] = t[first];
        out_v[out++] = v[first];
        if (second != first) {
            out_t[out] = t[second];
            out_v[out++] = v[second];
        }
    }
    return out;
}
