/*
 * sites: allocation sites — what each call stack of a trace allocated,
 * computed in the main streaming pass, O(1) per event.
 *
 * A site is one stack id (docs/trace-format.md: `stack` records); id 0
 * gathers the allocations recorded without a stack.  Per site:
 *   calls       alloc and realloc records with that stack
 *   allocated   the bytes they requested
 *   leaked      bytes and blocks still live at the end, each block
 *               counted on the stack of the allocation that created it; a
 *               realloc moves its block to the realloc's stack
 *   peak        the site's live bytes (and blocks) at the moment of the
 *               global peak heap (the most requested bytes live at once,
 *               as analyzer/consume/summary.h defines it: the first time it is
 *               reached); the sites' peaks add up to the peak heap.  In a
 *               sampled trace the bytes are cross-fitted as the summary's
 *               peak is (analyzer/consume/summary.h); the blocks are the sampled
 *               ones live at the peak of the whole sample
 *   temporaries the summary's temporary allocations (heaptrack's rule,
 *               analyzer/consume/summary.h) made on this stack; they add up to
 *               the summary's count
 *
 * The peak is kept with a lazy epoch snapshot: peak_epoch counts the
 * times a new global peak was reached; before a site's live bytes
 * change, a site whose snapshot is older than the current peak takes one
 * (snap = live: it has not changed since that peak), so at the end
 *     peak(site) = snap_epoch == peak_epoch ? snap : live.
 *
 * Stacks are kept with their frames and, from their first use, the
 * module each frame lay in then (symbols_space_t): memory grows with the
 * distinct stacks and with the blocks live at once, not with the trace.
 * Ids are small dense integers from 1, so sites live in an array indexed
 * by id.
 */
#ifndef MEMSIM_ANALYZER_SITES_H
#define MEMSIM_ANALYZER_SITES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzer/read/reader.h"
#include "analyzer/consume/summary.h"
#include "analyzer/read/symbols.h"

/* How far beyond the number of stack records read a stack id may be
 * before it is taken for garbage (and counted as "no stack"): ids are
 * dense from 1, so the array of sites grows with the records, however
 * absurd the ids of a broken trace. */
#define SITES_MAX_ID_GAP 65536

/* What sites_add found wrong (negative; 0 is fine). */
enum {
    SITES_E_NOMEM = -1,     /* the host is out of memory: the event is dropped */
    SITES_E_RECORD = -2,    /* a stack record without a valid id and frames */
    SITES_E_DUPLICATE = -3, /* a second record for a stack id: the first is kept */
    SITES_E_UNDEFINED = -4, /* a stack id used with no stack record before it */
    SITES_E_RANGE = -5,     /* a stack id far beyond every other: counted as no stack */
    SITES_E_MODULE = -6,    /* a module record without a valid op, path, base or size */
};

typedef struct site_s {
    uint64_t calls;       /* alloc + realloc records */
    uint64_t allocated;   /* bytes they requested */
    uint64_t live;        /* bytes live now: at the end, the leaked bytes */
    uint64_t live_blocks; /* blocks live now: at the end, the leaked blocks */
    uint64_t snap;        /* live at the peak number snap_epoch */
    uint64_t snap_blocks; /* live_blocks then */
    uint64_t snap_epoch;
    uint64_t temporaries; /* temporary allocations made here */
    bool suppressed;      /* its leaks match a leak suppression (analyzer/report/suppress.h):
                             not counted as leaked (sites_key, the groups) */
    /* A sampled trace's (analyzer/consume/summary.h): allocated, live and snap are
     * estimates, and these their variances. */
    double var_allocated, var_live, var_snap;
    double est_calls;     /* a sampled trace's estimated calls (the sum of 1 / p) */
    uint64_t *frames;     /* return addresses, innermost first; NULL without a record */
    int32_t *modules;     /* each frame's module (symbols.h), once resolved */
    uint32_t nframes;
    bool defined;         /* its stack record was read */
    bool resolved;        /* modules[] is set (at the first use) */
    bool reported;        /* SITES_E_UNDEFINED was returned for it */
} site_t;

/* A site's figures in the halves of a sampled trace's cross-fitted peak
 * (analyzer/consume/summary.h): its live bytes in each half, and in half 1 - k
 * at half k's latest peak (a lazy snapshot, as snap). */
typedef struct site_halves_s {
    uint64_t live[2], snap[2], snap_epoch[2];
    double var_live[2], var_snap[2];
} site_halves_t;

typedef struct sites_s {
    site_t *v;                /* index = stack id; v[0]: no stack */
    size_t cap;               /* entries of v */
    uint64_t max_id;          /* highest id seen */
    uint64_t records;         /* stack records taken */
    summary_t *own;           /* sites_add's live blocks (a summary of its own), or NULL */
    uint64_t heap, peak;      /* live bytes, the most ever (as summary_t) */
    uint64_t peak_epoch;      /* new peaks reached so far */
    /* A sampled trace's: the halves' heap, most and new peaks (as the
     * summary's), and each site's figures there (index = stack id, cap
     * entries; NULL in a full trace).  A site's peak is then the mean of
     * its figures at the two halves' peaks, each from the other half. */
    site_halves_t *halves;
    uint64_t half_heap[2], half_peak[2], half_epoch[2];
    symbols_space_t *space;   /* the trace's modules; NULL: frames stay without one */
    uint64_t problem_id;      /* the stack id of the last problem returned */
    uint64_t temporaries;     /* the summary's count when sites last looked */
} sites_t;

/* 0, or -1 when the host is out of memory.  space may be NULL. */
int sites_init(sites_t *s, symbols_space_t *space);
void sites_fini(sites_t *s);

/* One event of the trace (stack, module, alloc, free, realloc; others are
 * ignored), called after summary_add(sum, e) with the same event: the
 * sites keep no map of live blocks but read which block the summary ended
 * or added (and note their site in it).  0, or a SITES_E_* code: the event
 * was taken as far as it could be. */
int sites_add_with(sites_t *s, const event_t *e, summary_t *sum);
/* The same for a caller without a summary: the sites feed one of their
 * own (made at the first heap event). */
int sites_add(sites_t *s, const event_t *e);

/* After the last event: drop sites_add's live blocks (the figures stay). */
void sites_finish(sites_t *s);

/* Number of ids (sites_get accepts 0 .. sites_count - 1). */
static inline size_t sites_count(const sites_t *s) { return s->max_id + 1; }
/* The site of id, or NULL when it has none. */
static inline const site_t *sites_get(const sites_t *s, uint64_t id)
{
    return id < s->cap ? &s->v[id] : NULL;
}

/* The site's live bytes, and blocks, at the global peak. */
uint64_t sites_peak_bytes(const sites_t *s, uint64_t id);
uint64_t sites_peak_blocks(const sites_t *s, uint64_t id);

typedef enum sites_key_e {
    SITES_BY_PEAK,
    SITES_BY_CALLS,
    SITES_BY_LEAKED,
    SITES_BY_TEMPORARIES,
    SITES_BY_ALLOCATED,
} sites_key_t;

/* The site's figure for key (peak bytes, calls, leaked bytes: 0 when
 * suppressed, temporary allocations, allocated bytes). */
uint64_t sites_key(const sites_t *s, uint64_t id, sites_key_t key);
/* A site's calls: the alloc and realloc records, or in a sampled trace
 * their estimated number (each stands for 1 / p calls). */
static inline uint64_t sites_calls(const site_t *st)
{
    return st->est_calls > 0 ? (uint64_t)(st->est_calls + 0.5) : st->calls;
}
/* The variance of that figure's estimate in a sampled trace (0 for
 * calls, and in a full trace). */
double sites_key_var(const sites_t *s, uint64_t id, sites_key_t key);

/* The ids of the (at most) max sites with the largest key, key > 0,
 * largest first, ties by id; returns their number.  *ids is malloc'd
 * (the caller frees it; NULL when the result is 0). */
size_t sites_top(const sites_t *s, sites_key_t key, size_t max, uint64_t **ids);

#endif
