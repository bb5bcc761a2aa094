/*
 * timeline: extremes per time bucket.  See timeline.h.
 */
#include "analyzer/consume/timeline.h"

#include <string.h>

void timeline_init(timeline_t *tl)
{
    memset(tl, 0, sizeof *tl);
    tl->width = 1000;
}

static void merge_into(timeline_bucket_t *a, const timeline_bucket_t *b)
{
    if (!b->used)
        return;
    if (!a->used) {
        *a = *b;
        return;
    }
#define LO(f) a->f = b->f < a->f ? b->f : a->f
#define HI(f) a->f = b->f > a->f ? b->f : a->f
    LO(heap_min);
    HI(heap_max);
    LO(mapped_min);
    HI(mapped_max);
    LO(sum_min);
    HI(sum_max);
#undef LO
#undef HI
}

/* Halve the resolution: bucket i takes 2i and 2i + 1. */
static void coarsen(timeline_t *tl)
{
    for (size_t i = 0; i < TIMELINE_BUCKETS / 2; i++) {
        timeline_bucket_t m = tl->v[2 * i];
        merge_into(&m, &tl->v[2 * i + 1]);
        tl->v[i] = m;
    }
    memset(&tl->v[TIMELINE_BUCKETS / 2], 0, TIMELINE_BUCKETS / 2 * sizeof tl->v[0]);
    tl->n = (tl->n + 1) / 2;
    tl->width *= 2;
}

void timeline_add(timeline_t *tl, uint64_t t, uint64_t heap, uint64_t mapped)
{
    if (!tl->started) {
        tl->started = true;
        tl->t0 = t;
    }
    uint64_t off = t > tl->t0 ? t - tl->t0 : 0;
    while (off / tl->width >= TIMELINE_BUCKETS)
        coarsen(tl);
    size_t i = (size_t)(off / tl->width);
    timeline_bucket_t one = {.used = true, .heap_min = heap, .heap_max = heap, .mapped_min = mapped,
                             .mapped_max = mapped, .sum_min = heap + mapped, .sum_max = heap + mapped};
    merge_into(&tl->v[i], &one);
    if (i + 1 > tl->n)
        tl->n = i + 1;
}
