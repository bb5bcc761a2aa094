/*
 * findings_frag: fragmentation.  See findings_frag.h; the equations in
 * docs/findings.md.
 */
#include "analyzer/consume/findings_frag.h"

#include <stdio.h>

#include "lib/units.h"

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

bool findings_fragmentation(const findings_config_t *c, const summary_t *s, finding_t *f)
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
