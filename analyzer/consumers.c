/*
 * consumers: the table of what reads a trace.  See consumers.h.
 */
#include "analyzer/consumers.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "analyzer/consume/allocators.h"
#include "analyzer/escape.h"
#include "lib/grow.h"

/* ---- summary ------------------------------------------------------------------- */

static int summary_on_init(process_t *pr)
{
    if (summary_init(&pr->s)) {
        fprintf(stderr, "%s: out of memory\n", ANALYZE_CMD);
        return -1;
    }
    return 0;
}

/* The first block the summary has no memory for is told where it
 * happens: the figures that follow a block's life are incomplete from
 * there on (summary_t's lost_blocks). */
static void summary_on_event(process_t *pr, const event_t *e)
{
    uint64_t lost = pr->s.lost_blocks;
    summary_add(&pr->s, e);
    if (__builtin_expect(pr->s.lost_blocks != lost, 0) && !lost)
        escape_line(stderr, "%s: %s:%ld: out of memory: live blocks from here on are not all "
                    "tracked; the live heap, its peak, the leaks and the sites are incomplete",
                    ANALYZE_CMD, pr->path, e->line);
}
static void summary_on_finish(process_t *pr) { summary_finish(&pr->s); }
static void summary_on_fini(process_t *pr) { summary_fini(&pr->s); }

static const consumer_t summary_consumer = {"summary", summary_on_init, summary_on_event,
                                            summary_on_finish, summary_on_fini};

/* ---- sites ----------------------------------------------------------------------- */

static int sites_on_init(process_t *pr)
{
    if (!pr->store)
        return 0;
    symbols_space_init(&pr->space, pr->store);
    if (sites_init(&pr->sites, &pr->space)) {
        fprintf(stderr, "%s: out of memory\n", ANALYZE_CMD);
        symbols_space_fini(&pr->space);
        return -1;
    }
    pr->have_sites = true;
    return 0;
}

/* One line for a problem sites_add found, the first of its kind in the trace. */
static void site_problem(process_t *pr, int rc, long line)
{
    unsigned bit = 1u << -rc;
    if (pr->site_problems & bit)
        return;
    pr->site_problems |= bit;
    unsigned long long id = pr->sites.problem_id;
    char what[160];
    switch (rc) {
    case SITES_E_NOMEM:
        snprintf(what, sizeof what, "out of memory: the allocation sites are incomplete");
        break;
    case SITES_E_RECORD:
        snprintf(what, sizeof what, "a stack record without a valid id and frames; skipped");
        break;
    case SITES_E_DUPLICATE:
        snprintf(what, sizeof what, "stack %llu is recorded twice; the first record is kept", id);
        break;
    case SITES_E_UNDEFINED:
        snprintf(what, sizeof what, "stack %llu is used but no stack record came before; its "
                                    "frames are unknown", id);
        break;
    case SITES_E_RANGE:
        snprintf(what, sizeof what, "stack id %llu is far beyond the others; counted as no stack",
                 id);
        break;
    default:
        snprintf(what, sizeof what, "a module record without a valid op, path, base or size; "
                                    "skipped");
        break;
    }
    escape_line(stderr, "%s: %s:%ld: %s", ANALYZE_CMD, pr->path, line, what);
}

static void sites_on_event(process_t *pr, const event_t *e)
{
    if (!pr->have_sites)
        return;
    int rc = sites_add_with(&pr->sites, e, &pr->s);
    if (rc)
        site_problem(pr, rc, e->line);
}

static void sites_on_finish(process_t *pr)
{
    if (pr->have_sites)
        sites_finish(&pr->sites);
}

static void sites_on_fini(process_t *pr)
{
    if (!pr->have_sites)
        return;
    sites_fini(&pr->sites);
    symbols_space_fini(&pr->space);
    pr->have_sites = false;
}

static const consumer_t sites_consumer = {"sites", sites_on_init, sites_on_event,
                                          sites_on_finish, sites_on_fini};

/* ---- mappings -------------------------------------------------------------------- */

static int mappings_on_init(process_t *pr) { return mappings_init(&pr->maps); }

/* A sample's mapped bytes are the most mapped since the sample before:
 * the recorder reads /proc beside the events, not between them, so a
 * mapping the sample's RSS still holds may be unmapped just before the
 * sample's place in the trace. */
static void mappings_on_event(process_t *pr, const event_t *e)
{
    mappings_t *m = &pr->maps;
    if (e->type == EV_MMAP || e->type == EV_MUNMAP || e->type == EV_MREMAP) {
        mappings_add(m, e);
        if (m->live > m->since_max) {
            m->since_max = m->live;
            m->since_max_file = m->live_file;
        }
    } else if (e->type == EV_SAMPLE && pr->s.npoints && pr->s.points[pr->s.npoints - 1].t == e->t) {
        summary_point_t *p = &pr->s.points[pr->s.npoints - 1];
        p->mapped = m->since_max > m->live ? m->since_max : m->live;
        p->mapped_file = m->since_max > m->live ? m->since_max_file : m->live_file;
        m->since_max = m->live;
        m->since_max_file = m->live_file;
    }
}

static void mappings_on_finish(process_t *pr) { (void)pr; }
static void mappings_on_fini(process_t *pr) { mappings_fini(&pr->maps); }

static const consumer_t mappings_consumer = {"mappings", mappings_on_init, mappings_on_event,
                                             mappings_on_finish, mappings_on_fini};

/* ---- timeline ------------------------------------------------------------------- */

static int timeline_on_init(process_t *pr)
{
    timeline_init(&pr->timeline);
    return 0;
}

static void timeline_on_event(process_t *pr, const event_t *e)
{
    switch (e->type) {
    case EV_ALLOC: case EV_FREE: case EV_REALLOC: case EV_MMAP: case EV_MUNMAP: case EV_MREMAP:
    case EV_SAMPLE:
        timeline_add(&pr->timeline, e->t, pr->s.heap, pr->maps.live);
        break;
    default:
        break;
    }
}

static void timeline_on_finish(process_t *pr) { (void)pr; }
static void timeline_on_fini(process_t *pr) { (void)pr; }

static const consumer_t timeline_consumer = {"timeline", timeline_on_init, timeline_on_event,
                                             timeline_on_finish, timeline_on_fini};

/* ---- replay ---------------------------------------------------------------------- */

/* Worker threads for the replay: one per processor beyond the one
 * reading the trace (which helps too when the replay falls behind). */
static unsigned replay_threads(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus > 1 ? (unsigned)(cpus - 1 < 8 ? cpus - 1 : 8) : 0;
}

/* Strategies replayed at once: the processors this process may run on
 * (the others replay after the trace, from a spool: replay_set_width).
 * MEMSIM_REPLAY_WIDTH, for tests, sets it (0: every strategy at once). */
static unsigned replay_width(void)
{
    const char *w = getenv("MEMSIM_REPLAY_WIDTH");
    if (w && *w) {
        char *end;
        unsigned long v = strtoul(w, &end, 10);
        if (!*end && v <= REPLAY_MAX_STRATEGIES)
            return (unsigned)v;
    }
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set))
        return 1;
    int n = CPU_COUNT(&set);
    return n > 1 ? (unsigned)n : 1;
}

static int replay_on_init(process_t *pr)
{
    pr->replay = NULL;
    pr->replay_started = false;
    return 0;
}

/* The set starts at the meta record, which names the trace's device. */
static void replay_start(process_t *pr)
{
    const analyze_opts_t *o = pr->o;
    pr->replay_started = true;
    if (!o->replay || !o->nstrategies || pr->s.sample_bytes) /* a sampled trace: not every request */
        return;
    uint64_t dev = o->device_size ? o->device_size
                   : pr->s.device_size ? pr->s.device_size : ANALYZE_DEFAULT_DEVICE;
    if (!(pr->replay = replay_set_create(replay_threads()))) {
        escape_line(stderr, "%s: %s: replay: out of memory", ANALYZE_CMD, pr->path);
        return;
    }
    if (o->html) /* the fragmentation maps */
        replay_set_keep_maps(pr->replay);
    replay_set_width(pr->replay, replay_width());
    for (size_t i = 0; i < o->nstrategies; i++) {
        char err[256];
        if (replay_set_add(pr->replay, o->strategies[i]->name, dev, err, sizeof err))
            escape_line(stderr, "%s: %s: replay with %s: %s", ANALYZE_CMD, pr->path,
                        o->strategies[i]->name, err);
    }
}

_Static_assert(REPLAY_NO_REC == UINT32_MAX, "a summary block's rec starts as no record");

static void replay_on_event(process_t *pr, const event_t *e)
{
    if (!pr->replay_started && e->type == EV_META)
        replay_start(pr);
    if (!pr->replay)
        return;
    if (e->type == EV_SAMPLE) { /* each strategy's footprint then, for the plots */
        if (!grow_room((void **)&pr->marks_t, &pr->cap_marks, pr->nmarks, sizeof *pr->marks_t, 256))
            return;
        pr->marks_t[pr->nmarks++] = e->t;
        replay_set_mark(pr->replay);
        return;
    }
    if (e->type != EV_ALLOC && e->type != EV_FREE && e->type != EV_REALLOC)
        return;
    /* The summary has just ended or added the event's blocks: each keeps
     * its record there (one map of live addresses for both). */
    summary_t *s = &pr->s;
    bool stopped = replay_set_out_of_memory(pr->replay); /* (a free can stop it too) */
    if (s->has_freed) /* free, realloc's old block */
        replay_set_free_rec(pr->replay, s->freed.rec);
    summary_block_t *b = e->type == EV_FREE ? NULL : summary_added(s);
    if (b) {
        uint32_t prev = s->replaced == SIZE_MAX ? REPLAY_NO_REC : s->blocks[s->replaced].rec;
        b->rec = replay_set_alloc_rec(pr->replay, prev, e->size,
                                      e->type == EV_ALLOC ? e->align : 16);
    } else if (e->type != EV_FREE) { /* the summary is out of memory: so is the replay */
        replay_set_lost(pr->replay);
    }
    if (__builtin_expect(!stopped, 1) && replay_set_out_of_memory(pr->replay))
        escape_line(stderr, "%s: %s:%ld: replay: out of memory: the strategies stop here, and "
                    "every request from here on counts as failed in each", ANALYZE_CMD,
                    pr->path, e->line);
}

/* Best first: fewest failed requests, then the smallest peak footprint. */
static int by_footprint(const void *a, const void *b)
{
    const replay_result_t *x = a, *y = b;
    if (x->failed != y->failed)
        return x->failed < y->failed ? -1 : 1;
    if (x->m.peak_footprint != y->m.peak_footprint)
        return x->m.peak_footprint < y->m.peak_footprint ? -1 : 1;
    return 0;
}

static void replay_on_finish(process_t *pr)
{
    if (!pr->replay)
        return;
    pr->nresults = replay_set_finish(pr->replay, pr->results);
    if (replay_set_note(pr->replay))
        escape_line(stderr, "%s: %s: replay: %s", ANALYZE_CMD, pr->path,
                    replay_set_note(pr->replay));
    replay_set_destroy(pr->replay);
    pr->replay = NULL;
    if (pr->s.peak_heap < ANALYZE_REPLAY_MIN_HEAP && !pr->o->strategies_given) {
        for (size_t i = 0; i < pr->nresults; i++)
            replay_result_free(&pr->results[i]);
        pr->nresults = 0; /* a small heap says nothing of the strategies */
        pr->replay_skipped = true;
    }
    /* stable: the table's order among equals */
    for (size_t i = 1; i < pr->nresults; i++)
        for (size_t k = i; k > 0 && by_footprint(&pr->results[k - 1], &pr->results[k]) > 0; k--) {
            replay_result_t t = pr->results[k];
            pr->results[k] = pr->results[k - 1];
            pr->results[k - 1] = t;
        }
}

static void replay_on_fini(process_t *pr)
{
    replay_set_destroy(pr->replay);
    pr->replay = NULL;
    for (size_t i = 0; i < pr->nresults; i++)
        replay_result_free(&pr->results[i]);
    free(pr->marks_t);
    pr->marks_t = NULL;
    pr->nmarks = pr->cap_marks = 0;
}

static const consumer_t replay_consumer = {"replay", replay_on_init, replay_on_event,
                                           replay_on_finish, replay_on_fini};

const consumer_t *const consumers[] = {&summary_consumer, &sites_consumer, &mappings_consumer,
                                       &timeline_consumer, &replay_consumer, &allocators_consumer};
const size_t nconsumers = sizeof consumers / sizeof consumers[0];
