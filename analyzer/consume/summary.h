/*
 * summary: the headline figures of one trace, computed in one pass.
 *
 * Memory grows with the live allocations only: a map from address to
 * the block's slot (lib/slotmap, 12-16 bytes a live block at the map's
 * fullest) and the blocks (24 bytes each, summary_block_t), so leaks
 * are what is left at the end.  Definitions:
 *   allocations  alloc records plus realloc records (heaptrack counts a
 *                realloc as an allocation call too)
 *   peak heap    the most requested bytes live at once, and when (a
 *                sampled trace: cross-fitted, below)
 *   temporary    heaptrack's count: a free (or a realloc's freeing of
 *                its old block) that is the very next heap event after
 *                an allocation of the same size and stack (heaptrack
 *                compares its allocation records, so a block replaced
 *                by a twin freed right after it counts too); a free of
 *                a block the trace never allocated is no event here
 *   leaks        blocks still live at the end of the trace
 */
#ifndef MEMSIM_ANALYZER_SUMMARY_H
#define MEMSIM_ANALYZER_SUMMARY_H

#include <stdbool.h>
#include <stdint.h>

#include "analyzer/read/reader.h"
#include "lib/addrmap.h"
#include "lib/slotmap.h"

/* One sample, as the findings read it. */
typedef struct summary_point_s {
    uint64_t t;
    uint64_t used;      /* rss: what the OS charges */
    uint64_t reserved;  /* allocator reserved (mallinfo2) */
    uint64_t allocated; /* allocator in use */
    uint64_t total;     /* device total */
    uint64_t heap_live; /* memsim's live requested bytes */
    uint64_t heap_max;  /* the most requested bytes live since the sample before, from the
                           events (the analyzer's own count) */
    uint64_t mapped, mapped_file; /* the program's mappings live (analyzer/consume/mappings.h) */
    uint64_t tree_rss;  /* the process and its descendants */
    uint64_t rollup_rss, rollup_anon; /* smaps_rollup's Rss and Anonymous; 0: none */
    uint64_t rollup_clean; /* its Private_Clean + Shared_Clean: file pages read, not written */
    /* A sampled trace's standard errors of heap_live and heap_max (the
     * larger of the recorder's heap_live_se and the analyzer's own); 0 in
     * a full trace, whose figures are exact. */
    double heap_se, heap_max_se;
} summary_point_t;

/* A phase the program marked. */
typedef struct summary_phase_s {
    char name[64];       /* cut at a character's start when longer (escape_copy) */
    uint64_t begin, end; /* end: UINT64_MAX while open */
} summary_phase_t;

/* A live block: its requested size, and words companions keep with it
 * (analyzer/consume/sites: the block's site; the replay: its record), so that
 * they need not keep second maps of the same addresses.  24 bytes: a
 * million live blocks take 24 MB. */
typedef struct summary_block_s {
    uint64_t size;
    uint32_t stack;         /* the allocation's stack id; SUMMARY_BIG_STACK: one of 32 bits
                               or more, kept in the summary's big_stacks */
    uint32_t tag;           /* the companion's */
    union {
        uint32_t rec;       /* the replay's record of the block; UINT32_MAX until it sets one */
        uint32_t next_free; /* a free slot: the next free one, SUMMARY_NO_SLOT: none */
    };
    float var;              /* a sampled trace's: the variance of its weight (its size) */
} summary_block_t;

#define SUMMARY_BIG_STACK UINT32_MAX
#define SUMMARY_NO_SLOT UINT32_MAX

typedef struct summary_s {
    int64_t pid, ppid;       /* from meta; 0 when unknown */
    uint64_t start_unix_ns;  /* from meta: wall clock at the trace's start */
    bool forked;             /* meta names a parent trace: a fork child */
    char exe[512];           /* from meta; cut like phase names */
    char argv[1024];         /* from meta, joined by blanks; cut like phase names */
    char end_reason[32];     /* "" when the trace is truncated */
    int64_t end_status;      /* -1 when unknown */
    uint64_t dropped;        /* the end record's: events recorded but not written */
    uint64_t untracked;      /* the end record's: live blocks the recorder had no memory
                                for, left out of the samples' heap figures */
    uint64_t stackless;      /* the end record's: events recorded without their stack
                                (no memory for the stack table) */
    uint64_t threadless;     /* the end record's: events recorded without their thread
                                (no memory for the recorder's thread table) */
    uint64_t lost_blocks;    /* blocks this analysis had no memory to track: from the
                                first, the live heap, its peak, the leaks and the
                                temporaries are incomplete (their frees go unmatched) */
    bool sandboxed;          /* a sandbox record: the process locked itself in seccomp */
    bool sandbox_traced;     /* ...and tracing went on (false: it stopped there) */
    char sandbox_mode[16];   /* "strict" or "filter" */
    char sandbox_without[160]; /* its "without", joined by ", " */
    uint64_t sandbox_t;      /* when (ns since the trace started) */
    int64_t sandbox_tid;
    uint64_t device_size;    /* from meta, for replay */
    uint64_t first_t, last_t;
    bool have_t;             /* first_t is set */
    uint64_t allocations, frees, reallocs;
    uint64_t bytes_allocated;
    uint64_t heap, peak_heap, peak_heap_t;
    /* A sampled trace (meta's sample_bytes, its mean interval; 0: every
     * allocation is in the trace): the byte figures above and below are
     * estimates (lib/sampling.h), and these their variances, with the
     * allocations' estimated number. */
    uint64_t sample_bytes;
    double var_allocated, var_heap, var_peak_heap;
    double est_allocations;
    /* A sampled trace's peak heap is cross-fitted (lib/sampling.h): the
     * blocks are drawn into two halves, independent samples at twice the
     * interval; each half's heap estimate chooses its moment of most,
     * and the other half's estimate then is an unbiased estimate of the
     * heap at that moment (not biased high by the noise that chose it).
     * peak_heap is the mean of the two, var_peak_heap its variance,
     * peak_heap_t half A's moment.  The heap at the moment chosen is at
     * most the true peak: where the halves choose moments off it (a
     * plateau whose noise is larger than its slope), the estimate is a
     * little low. */
    uint64_t half_heap[2], half_peak[2], half_peak_t[2], other_at_peak[2];
    double half_var[2], other_var_at_peak[2];
    uint64_t heap_since_max; /* the most heap live since the last sample */
    double var_since_max;    /* var_heap then */
    uint64_t temporaries;
    uint64_t size_hist[65];  /* allocations by request size: [k] holds sizes in [2^(k-1), 2^k) ([0]: 0) */
    uint64_t peak_rss, peak_hwm, peak_tree_rss;
    uint64_t samples;
    uint64_t unknown_frees;  /* frees of blocks the trace never allocated */
    uint64_t leaked_bytes, leaked_allocations; /* set by summary_finish */
    slotmap_t live;          /* address -> slot in blocks + 1 */
    summary_block_t *blocks; /* the live blocks, and free slots */
    size_t nblocks, blocks_cap;
    uint32_t free_head;      /* the free slots of blocks, a stack linked through
                                next_free; SUMMARY_NO_SLOT: none */
    addrmap_t big_stacks;    /* slot -> the stack id of a live block whose id does not
                                fit in 32 bits (a broken trace's) */
    /* What the last summary_add did to the live blocks (for a companion):
     * the block it ended (free, realloc's old block) and its stack id, the
     * one it added (alloc, realloc), SIZE_MAX when none. */
    bool has_freed;
    summary_block_t freed;
    uint64_t freed_stack;
    size_t added;
    size_t replaced;         /* the slot the added block's address had, still live (an
                                address allocated twice without a free: the older block
                                stays counted, out of the map), SIZE_MAX when none */
    summary_point_t *points; /* the samples: memory grows with them, not the trace */
    size_t npoints, points_cap;
    summary_phase_t *phases;
    size_t nphases, phases_cap;
    /* The latest heap event, when it was an allocation: its size and
     * stack (temporaries). */
    bool last_was_alloc;
    uint64_t last_size, last_stack;
} summary_t;

int summary_init(summary_t *s);
/* The block the last summary_add made live, or NULL; valid until the
 * next summary_add. */
summary_block_t *summary_added(summary_t *s);
void summary_add(summary_t *s, const event_t *e);
/* For a caller that reads ahead (analyzer/process): start loading what
 * summary_add(e) will touch, in two steps, as far apart as a few
 * events: the map slots of e's addresses, then the block e frees (found
 * through its slot, loaded by then).  A million live blocks miss the
 * caches at every event otherwise.  No effect on the figures. */
void summary_prefetch_slots(const summary_t *s, const event_t *e);
void summary_prefetch_block(const summary_t *s, const event_t *e);
void summary_finish(summary_t *s);

/* A sampled trace's block in the halves of the cross-fitted peak
 * (lib/sampling.h): in, bit 0 half A, bit 1 half B; w and v its weight
 * and variance in a half.  Drawn from what the block keeps (its address,
 * weight, variance and stack), so that its end takes out exactly what
 * its allocation put in, and every reader draws the same halves. */
typedef struct summary_halves_s {
    unsigned in;
    uint64_t w;
    double v;
} summary_halves_t;
summary_halves_t summary_halves(const summary_t *s, uint64_t addr, uint64_t size, float var,
                                uint64_t stack);

/* The standard error of an estimate of variance var (0 in a full trace). */
static inline double summary_se(double var) { return var > 0 ? __builtin_sqrt(var) : 0; }
void summary_fini(summary_t *s);

/* The peak RSS: VmHWM, or the highest VmRSS sampled when higher. */
static inline uint64_t summary_peak_rss(const summary_t *s)
{
    return s->peak_hwm > s->peak_rss ? s->peak_hwm : s->peak_rss;
}

/* Seconds from the trace's first record to t (0 before it). */
static inline double summary_secs(const summary_t *s, uint64_t t)
{
    return t >= s->first_t ? (double)(t - s->first_t) / 1e9 : 0;
}

/* The innermost phase open at time t, or NULL. */
const char *summary_phase_at(const summary_t *s, uint64_t t);

#endif
