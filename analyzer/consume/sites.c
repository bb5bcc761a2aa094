/*
 * sites: per-stack figures in one pass.  See sites.h.
 *
 * Live blocks are the summary's (analyzer/consume/summary.h): each block's tag is
 * the site it counts on.  Invariants between events, on a trace where no
 * address is allocated twice without a free in between (memsim's never
 * are):
 *   heap == sum over sites of live == the summary's heap
 *   live_blocks of a site == the live blocks whose tag is that site
 */
#include "analyzer/consume/sites.h"

#include <stdlib.h>
#include <string.h>

#define MAX_FRAMES 4096 /* a stack record with more is refused (memsim writes at most 256) */

int sites_init(sites_t *s, symbols_space_t *space)
{
    memset(s, 0, sizeof *s);
    s->space = space;
    s->cap = 64;
    s->v = calloc(s->cap, sizeof *s->v);
    return s->v ? 0 : -1;
}

void sites_finish(sites_t *s)
{
    if (s->own) {
        summary_fini(s->own);
        free(s->own);
        s->own = NULL;
    }
}

void sites_fini(sites_t *s)
{
    sites_finish(s);
    for (size_t i = 0; i < s->cap; i++) {
        free(s->v[i].frames);
        free(s->v[i].modules);
    }
    free(s->v);
    free(s->halves);
    memset(s, 0, sizeof *s);
}

/* v has an entry for id; 0, or -1 out of memory. */
static int ensure(sites_t *s, uint64_t id)
{
    if (id < s->cap)
        return 0;
    size_t cap = s->cap;
    while (cap <= id)
        cap *= 2;
    site_t *v = realloc(s->v, cap * sizeof *v);
    if (!v)
        return -1;
    memset(v + s->cap, 0, (cap - s->cap) * sizeof *v);
    s->v = v;
    if (s->halves) {
        site_halves_t *h = realloc(s->halves, cap * sizeof *h);
        if (!h)
            return -1; /* s->cap unchanged: grown again next time */
        memset(h + s->cap, 0, (cap - s->cap) * sizeof *h);
        s->halves = h;
    }
    s->cap = cap;
    return 0;
}

/* The site an event's stack id counts on: the id itself, or 0 (no stack)
 * when it is far beyond the records read or out of memory; *problem says
 * why, and that a used id has no record (the first time). */
static uint64_t site_of(sites_t *s, uint64_t id, int *problem)
{
    if (id < s->cap && (s->v[id].defined || s->v[id].reported || !id))
        return id;
    if (id > s->records + SITES_MAX_ID_GAP) {
        *problem = SITES_E_RANGE;
        s->problem_id = id;
        return 0;
    }
    if (ensure(s, id)) {
        *problem = SITES_E_NOMEM;
        return 0;
    }
    if (id > s->max_id)
        s->max_id = id;
    if (!s->v[id].defined && !s->v[id].reported) {
        s->v[id].reported = true;
        *problem = SITES_E_UNDEFINED;
        s->problem_id = id;
    }
    return id;
}

/* Each frame's module, from the address space as it is now. */
static int resolve(sites_t *s, site_t *st)
{
    st->resolved = true;
    if (!s->space || !st->nframes)
        return 0;
    st->modules = malloc(st->nframes * sizeof *st->modules);
    if (!st->modules)
        return SITES_E_NOMEM;
    for (uint32_t i = 0; i < st->nframes; i++) {
        st->modules[i] = symbols_space_find(s->space, st->frames[i]);
        /* The reports will resolve frames: their modules' debug
         * information loads meanwhile, on another core. */
        symbols_prewarm(s->space->store, st->modules[i]);
    }
    return 0;
}

/* Before a site's live bytes change: keep what they were at the current
 * peak, unless that is kept already. */
static inline void snapshot(const sites_t *s, site_t *st)
{
    if (st->snap_epoch != s->peak_epoch) {
        st->snap = st->live;
        st->snap_blocks = st->live_blocks;
        st->var_snap = st->var_live;
        st->snap_epoch = s->peak_epoch;
    }
}

static inline void peak_check(sites_t *s)
{
    if (s->heap > s->peak) {
        s->peak = s->heap;
        s->peak_epoch++;
    }
}

/* A sampled trace's block at addr (size, var, stack as the summary keeps
 * it) made live on site id (sign 1) or ended there (-1), in the halves. */
static void halves_move(sites_t *s, const summary_t *sum, uint64_t id, uint64_t addr,
                        uint64_t size, float var, uint64_t stack, int sign)
{
    summary_halves_t h = summary_halves(sum, addr, size, var, stack);
    site_halves_t *sh = &s->halves[id];
    for (int k = 0; k < 2; k++) /* the snapshots first: before live changes */
        if (sh->snap_epoch[k] != s->half_epoch[k]) {
            sh->snap[k] = sh->live[1 - k];
            sh->var_snap[k] = sh->var_live[1 - k];
            sh->snap_epoch[k] = s->half_epoch[k];
        }
    for (int k = 0; k < 2; k++) {
        if (!(h.in & (1u << k)))
            continue;
        sh->live[k] += sign > 0 ? h.w : -h.w;
        sh->var_live[k] += sign * h.v;
        s->half_heap[k] += sign > 0 ? h.w : -h.w;
    }
    for (int k = 0; sign > 0 && k < 2; k++)
        if (s->half_heap[k] > s->half_peak[k]) {
            s->half_peak[k] = s->half_heap[k];
            s->half_epoch[k]++;
        }
}

/* Sampled traces keep halves: made at the first heap event that needs
 * them.  0, or -1 out of memory. */
static int halves_ready(sites_t *s, const summary_t *sum)
{
    if (!sum->sample_bytes || s->halves)
        return 0;
    s->halves = calloc(s->cap, sizeof *s->halves);
    return s->halves ? 0 : -1;
}

static int stack_record(sites_t *s, const json_t *o)
{
    const json_t *jid = json_object_get(o, "id"), *jframes = json_object_get(o, "frames");
    if (!json_is_integer(jid) || json_integer_value(jid) < 1 || !json_is_array(jframes) ||
        json_array_size(jframes) > MAX_FRAMES)
        return SITES_E_RECORD;
    uint64_t id = (uint64_t)json_integer_value(jid);
    s->problem_id = id;
    if (id > s->records + SITES_MAX_ID_GAP)
        return SITES_E_RANGE;
    if (ensure(s, id))
        return SITES_E_NOMEM;
    site_t *st = &s->v[id];
    if (st->defined)
        return SITES_E_DUPLICATE;
    size_t n = json_array_size(jframes);
    uint64_t *frames = n ? malloc(n * sizeof *frames) : NULL;
    if (n && !frames)
        return SITES_E_NOMEM;
    for (size_t i = 0; i < n; i++) {
        const json_t *f = json_array_get(jframes, i);
        if (!json_is_integer(f) || json_integer_value(f) < 0) {
            free(frames);
            return SITES_E_RECORD;
        }
        frames[i] = (uint64_t)json_integer_value(f);
    }
    if (id > s->max_id)
        s->max_id = id;
    s->records++;
    st->frames = frames;
    st->nframes = (uint32_t)n;
    st->defined = true;
    /* Used before its record (a broken trace): its modules are today's. */
    if (st->resolved) {
        free(st->modules);
        st->modules = NULL;
        return resolve(s, st);
    }
    return 0;
}

/* Stack and module records: the same with or without a summary. */
static int other(sites_t *s, const event_t *e)
{
    switch (e->type) {
    case EV_STACK:
        return e->json ? stack_record(s, e->json) : SITES_E_RECORD;
    case EV_MODULE:
        if (!s->space || !e->json)
            return 0;
        switch (symbols_space_add(s->space, e)) {
        case 0: return 0;
        case -1: return SITES_E_MODULE;
        default: return SITES_E_NOMEM;
        }
    case EV_MMAP:
    case EV_MREMAP: { /* a mapping's stack: its frames' modules as loaded now */
        if (!e->stack)
            return 0;
        int problem = 0;
        uint64_t id = site_of(s, e->stack, &problem); /* may move s->v: first */
        site_t *st = &s->v[id];
        if (!st->resolved) {
            int rc = resolve(s, st);
            if (rc)
                problem = rc;
        }
        return problem;
    }
    default:
        return 0;
    }
}

/* ---- with a summary's live blocks ----------------------------------------- */

/* The block the summary just ended (its freed, freed_stack). */
static void known_remove(sites_t *s, const summary_t *sum, uint64_t addr)
{
    const summary_block_t *b = &sum->freed;
    if (b->tag >= s->cap)
        return; /* not one of ours (cannot happen when every event came here) */
    if (s->halves)
        halves_move(s, sum, b->tag, addr, b->size, b->var, sum->freed_stack, -1);
    site_t *st = &s->v[b->tag];
    snapshot(s, st);
    st->live -= b->size;
    st->var_live -= b->var;
    st->live_blocks--;
    s->heap -= b->size;
}

static int allocation_with(sites_t *s, summary_t *sum, const event_t *e)
{
    int problem = 0;
    uint64_t id = site_of(s, e->stack, &problem);
    site_t *st = &s->v[id];
    if (!st->resolved) {
        int rc = resolve(s, st);
        if (rc)
            problem = rc;
    }
    double var = sum->sample_bytes ? e->var : 0;
    st->calls++;
    if (sum->sample_bytes)
        st->est_calls += e->request ? (double)e->size / (double)e->request : 1;
    st->allocated += e->size;
    st->var_allocated += var;
    if (e->type == EV_REALLOC && sum->has_freed)
        known_remove(s, sum, e->old_addr);
    summary_block_t *b = summary_added(sum);
    if (b)
        b->tag = id;
    if (halves_ready(s, sum))
        problem = SITES_E_NOMEM;
    else if (s->halves)
        halves_move(s, sum, id, e->addr, e->size, (float)var, e->stack, 1);
    st = &s->v[id];
    snapshot(s, st);
    st->live += e->size;
    st->var_live += var;
    st->live_blocks++;
    s->heap += e->size;
    peak_check(s);
    return problem;
}

/* A free (or a realloc's) that the summary just counted as a temporary:
 * on the stack of the block it ended. */
static inline void temporary_check(sites_t *s, const summary_t *sum)
{
    if (__builtin_expect(sum->temporaries != s->temporaries, 0)) {
        s->temporaries = sum->temporaries;
        if (sum->has_freed && sum->freed.tag < s->cap)
            s->v[sum->freed.tag].temporaries++;
    }
}

int sites_add_with(sites_t *s, const event_t *e, summary_t *sum)
{
    if (e->type == EV_FREE || e->type == EV_REALLOC)
        temporary_check(s, sum);
    switch (e->type) {
    case EV_ALLOC:
    case EV_REALLOC:
        return allocation_with(s, sum, e);
    case EV_FREE:
        if (sum->has_freed)
            known_remove(s, sum, e->addr);
        return 0;
    default:
        return other(s, e);
    }
}

int sites_add(sites_t *s, const event_t *e)
{
    if (e->type != EV_ALLOC && e->type != EV_FREE && e->type != EV_REALLOC)
        return other(s, e);
    if (!s->own) {
        s->own = malloc(sizeof *s->own);
        if (!s->own || summary_init(s->own)) {
            free(s->own);
            s->own = NULL;
            return SITES_E_NOMEM;
        }
    }
    summary_add(s->own, e);
    return sites_add_with(s, e, s->own);
}

/* A sampled site's figure in the halves at half k's peak. */
static inline uint64_t half_snap(const sites_t *s, uint64_t id, int k)
{
    const site_halves_t *h = &s->halves[id];
    return h->snap_epoch[k] == s->half_epoch[k] ? h->snap[k] : h->live[1 - k];
}

static inline double half_var_snap(const sites_t *s, uint64_t id, int k)
{
    const site_halves_t *h = &s->halves[id];
    return h->snap_epoch[k] == s->half_epoch[k] ? h->var_snap[k] : h->var_live[1 - k];
}

uint64_t sites_peak_bytes(const sites_t *s, uint64_t id)
{
    if (id >= s->cap)
        return 0;
    if (s->halves)
        return (half_snap(s, id, 0) + half_snap(s, id, 1) + 1) / 2;
    const site_t *st = &s->v[id];
    return st->snap_epoch == s->peak_epoch ? st->snap : st->live;
}

uint64_t sites_peak_blocks(const sites_t *s, uint64_t id)
{
    if (id >= s->cap)
        return 0;
    const site_t *st = &s->v[id];
    return st->snap_epoch == s->peak_epoch ? st->snap_blocks : st->live_blocks;
}

uint64_t sites_key(const sites_t *s, uint64_t id, sites_key_t key)
{
    if (id >= s->cap)
        return 0;
    switch (key) {
    case SITES_BY_PEAK: return sites_peak_bytes(s, id);
    case SITES_BY_CALLS: return sites_calls(&s->v[id]);
    case SITES_BY_LEAKED: return s->v[id].suppressed ? 0 : s->v[id].live;
    case SITES_BY_TEMPORARIES: return s->v[id].temporaries;
    case SITES_BY_ALLOCATED: return s->v[id].allocated;
    }
    return 0;
}

double sites_key_var(const sites_t *s, uint64_t id, sites_key_t key)
{
    if (id >= s->cap)
        return 0;
    const site_t *st = &s->v[id];
    switch (key) {
    case SITES_BY_PEAK:
        if (s->halves)
            return (half_var_snap(s, id, 0) + half_var_snap(s, id, 1)) / 4;
        return st->snap_epoch == s->peak_epoch ? st->var_snap : st->var_live;
    case SITES_BY_CALLS: return 0;
    case SITES_BY_LEAKED: return st->suppressed ? 0 : st->var_live;
    case SITES_BY_TEMPORARIES: return 0;
    case SITES_BY_ALLOCATED: return st->var_allocated;
    }
    return 0;
}

typedef struct ranked_s {
    uint64_t key, id;
} ranked_t;

static int by_key(const void *a, const void *b)
{
    const ranked_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key > y->key ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

size_t sites_top(const sites_t *s, sites_key_t key, size_t max, uint64_t **ids)
{
    *ids = NULL;
    size_t n = 0, count = sites_count(s);
    ranked_t *r = max ? malloc(count * sizeof *r) : NULL;
    if (!r)
        return 0;
    for (uint64_t id = 0; id < count; id++) {
        uint64_t k = sites_key(s, id, key);
        if (k)
            r[n++] = (ranked_t){.key = k, .id = id};
    }
    qsort(r, n, sizeof *r, by_key);
    if (n > max)
        n = max;
    *ids = n ? malloc(n * sizeof **ids) : NULL;
    if (n && !*ids)
        n = 0;
    for (size_t i = 0; i < n; i++)
        (*ids)[i] = r[i].id;
    free(r);
    return n;
}
