/*
 * downsample: a series cut to about one point per pixel for a plot,
 * without losing a spike.  The time span is split into `buckets` equal
 * buckets; each non-empty bucket keeps its minimum and its maximum (one
 * point when they are the same sample), in time order.  A series that
 * already fits (n <= 2 * buckets) is kept as it is.
 */
#ifndef MEMSIM_ANALYZER_DOWNSAMPLE_H
#define MEMSIM_ANALYZER_DOWNSAMPLE_H

#include <stddef.h>

/* t (non-decreasing) and v, n points, into out_t and out_v (room for
 * 2 * buckets points, or n); the number of points written. */
size_t downsample_minmax(const double *t, const double *v, size_t n, size_t buckets,
                         double *out_t, double *out_v);

#endif
