/*
 * timeline: the heap live and the program's mappings live over time,
 * from every event (not only the samples, 100 ms apart, between which a
 * short mapping or a burst of allocations would vanish), in a fixed
 * number of buckets: each keeps the minimum and maximum of heap live,
 * mapped live and their sum.  The buckets start 1 µs wide; when the
 * trace outgrows them, neighbours merge in pairs and the width doubles,
 * so memory stays fixed and no peak is lost.
 */
#ifndef MEMSIM_ANALYZER_TIMELINE_H
#define MEMSIM_ANALYZER_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TIMELINE_BUCKETS 1024

typedef struct timeline_bucket_s {
    bool used;
    uint64_t heap_min, heap_max, mapped_min, mapped_max, sum_min, sum_max;
} timeline_bucket_t;

typedef struct timeline_s {
    bool started;
    uint64_t t0;     /* the first event's time */
    uint64_t width;  /* ns per bucket */
    size_t n;        /* buckets in use: [0, n) */
    timeline_bucket_t v[TIMELINE_BUCKETS];
} timeline_t;

void timeline_init(timeline_t *tl);
/* The state after an event at time t (non-decreasing mostly; an earlier
 * one counts in the first bucket). */
void timeline_add(timeline_t *tl, uint64_t t, uint64_t heap, uint64_t mapped);

#endif
