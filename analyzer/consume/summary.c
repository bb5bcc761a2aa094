/*
 * summary: one pass over a trace.  See summary.h.
 */
#include "analyzer/consume/summary.h"

#include "analyzer/escape.h"
#include "lib/grow.h"
#include "lib/sampling.h"

#include <math.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int summary_init(summary_t *s)
{
    memset(s, 0, sizeof *s);
    s->end_status = -1;
    s->added = s->replaced = SIZE_MAX;
    s->free_head = SUMMARY_NO_SLOT;
    if (slotmap_init(&s->live))
        return -1;
    if (addrmap_init(&s->big_stacks, 16)) {
        slotmap_fini(&s->live);
        return -1;
    }
    return 0;
}

void summary_fini(summary_t *s)
{
    slotmap_fini(&s->live);
    addrmap_fini(&s->big_stacks);
    free(s->blocks);
    free(s->points);
    free(s->phases);
}

/* Room for one more sample, phase or block (lib/grow.h). */
static bool room(void **v, size_t *cap, size_t n, size_t each)
{
    return grow_room(v, cap, n, each, 256);
}

const char *summary_phase_at(const summary_t *s, uint64_t t)
{
    const char *name = NULL;
    uint64_t latest = 0;
    for (size_t i = 0; i < s->nphases; i++) {
        const summary_phase_t *p = &s->phases[i];
        if (p->begin <= t && t < p->end && (!name || p->begin >= latest)) {
            name = p->name;
            latest = p->begin;
        }
    }
    return name;
}

summary_halves_t summary_halves(const summary_t *s, uint64_t addr, uint64_t size, float var,
                                uint64_t stack)
{
    uint64_t req = sampling_size_of(size, var);
    return (summary_halves_t){
        .in = sampling_halves(addr ^ (size * 0x9E3779B97F4A7C15ull) ^ (stack << 32), req,
                              s->sample_bytes),
        .w = (uint64_t)llround(sampling_weight(req, 2 * s->sample_bytes)),
        .v = sampling_var(req, 2 * s->sample_bytes)};
}

/* A sampled trace's block made live (sign 1) or ended (-1), in the
 * halves of the cross-fitted peak (summary.h). */
static void halves_move(summary_t *s, uint64_t addr, uint64_t size, float var, uint64_t stack,
                        int sign)
{
    summary_halves_t h = summary_halves(s, addr, size, var, stack);
    uint64_t w = h.w;
    double v = h.v;
    unsigned in = h.in;
    bool moved = false;
    for (int k = 0; k < 2; k++) {
        if (!(in & (1u << k)))
            continue;
        s->half_heap[k] += sign > 0 ? w : -w;
        s->half_var[k] += sign * v;
    }
    for (int k = 0; sign > 0 && k < 2; k++)
        if (s->half_heap[k] > s->half_peak[k]) {
            s->half_peak[k] = s->half_heap[k];
            s->half_peak_t[k] = s->last_t;
            s->other_at_peak[k] = s->half_heap[1 - k];
            s->other_var_at_peak[k] = s->half_var[1 - k];
            moved = true;
        }
    if (moved) {
        s->peak_heap = (s->other_at_peak[0] + s->other_at_peak[1] + 1) / 2;
        s->var_peak_heap = (s->other_var_at_peak[0] + s->other_var_at_peak[1]) / 4;
        s->peak_heap_t = s->half_peak_t[0];
    }
}

/* A free slot of blocks, or SUMMARY_NO_SLOT when there is no memory
 * for one (or 2^32 - 1 are in use). */
static uint32_t slot_take(summary_t *s)
{
    uint32_t slot = s->free_head;
    if (slot != SUMMARY_NO_SLOT) {
        s->free_head = s->blocks[slot].next_free;
        /* The next allocation's slot: a slot freed long ago is cold by
         * the time it is taken again. */
        if (s->free_head != SUMMARY_NO_SLOT)
            __builtin_prefetch(&s->blocks[s->free_head], 1);
        return slot;
    }
    if (s->nblocks >= SUMMARY_NO_SLOT ||
        !room((void **)&s->blocks, &s->blocks_cap, s->nblocks, sizeof *s->blocks))
        return SUMMARY_NO_SLOT;
    return (uint32_t)s->nblocks++;
}

static void slot_give(summary_t *s, uint32_t slot)
{
    s->blocks[slot].next_free = s->free_head;
    s->free_head = slot;
}

/* Block b at slot: in the map by addr, its stack id kept.  0, or -1
 * when there is no memory for it (nothing changed). */
static int slot_fill(summary_t *s, uint32_t slot, uint64_t addr, summary_block_t b,
                     uint64_t stack)
{
    if (__builtin_expect(stack >= SUMMARY_BIG_STACK, 0) &&
        addrmap_put(&s->big_stacks, slot, (void *)(uintptr_t)stack))
        return -1;
    s->blocks[slot] = b;
    /* An address allocated again without a free (a broken trace)
     * leaves its first block's slot, and bytes, counted. */
    uint32_t old;
    if (slotmap_exchange(&s->live, addr, slot + 1, &old)) {
        if (b.stack == SUMMARY_BIG_STACK)
            addrmap_remove(&s->big_stacks, slot);
        return -1;
    }
    s->added = slot;
    if (old)
        s->replaced = (size_t)old - 1;
    return 0;
}

static void live_add(summary_t *s, uint64_t addr, uint64_t size, uint64_t stack, double var)
{
    uint32_t slot = slot_take(s);
    summary_block_t b = {.size = size,
                         .stack = stack < SUMMARY_BIG_STACK ? (uint32_t)stack : SUMMARY_BIG_STACK,
                         .rec = UINT32_MAX,
                         .var = (float)var};
    if (slot == SUMMARY_NO_SLOT) {
        s->lost_blocks++; /* out of memory: counted in the heap, not tracked */
    } else if (slot_fill(s, slot, addr, b, stack)) {
        slot_give(s, slot);
        s->lost_blocks++;
    }
    s->heap += size;
    s->var_heap += var;
    if (s->heap > s->heap_since_max) {
        s->heap_since_max = s->heap;
        s->var_since_max = s->var_heap;
    }
    if (s->sample_bytes)
        halves_move(s, addr, size, (float)var, stack, 1);
    else if (s->heap > s->peak_heap) {
        s->peak_heap = s->heap;
        s->peak_heap_t = s->last_t;
        s->var_peak_heap = s->var_heap;
    }
}

/* Remove addr; false when it was not live. */
static bool live_remove(summary_t *s, uint64_t addr)
{
    uint32_t v = slotmap_remove(&s->live, addr);
    if (!v)
        return false;
    uint32_t slot = v - 1;
    s->freed = s->blocks[slot];
    s->freed_stack = s->freed.stack;
    if (__builtin_expect(s->freed.stack == SUMMARY_BIG_STACK, 0))
        s->freed_stack = (uint64_t)(uintptr_t)addrmap_remove(&s->big_stacks, slot);
    s->has_freed = true;
    if (s->sample_bytes)
        halves_move(s, addr, s->freed.size, s->freed.var, s->freed_stack, -1);
    s->heap -= s->freed.size;
    s->var_heap -= s->freed.var;
    slot_give(s, slot);
    return true;
}

/* After a free of a live block: a temporary when the heap event before
 * was an allocation of its size and stack (heaptrack's rule). */
static void freed_now(summary_t *s)
{
    if (s->last_was_alloc && s->freed.size == s->last_size && s->freed_stack == s->last_stack)
        s->temporaries++;
    s->last_was_alloc = false;
}

static void allocated_now(summary_t *s, const event_t *e)
{
    uint64_t size = s->sample_bytes ? e->request : e->size;
    s->size_hist[size ? 64 - __builtin_clzll(size) : 0]++;
    if (s->sample_bytes) {
        s->var_allocated += e->var;
        s->est_allocations += e->request ? (double)e->size / (double)e->request : 1;
    }
    s->last_was_alloc = true;
    s->last_size = e->size;
    s->last_stack = e->stack;
}

void summary_prefetch_slots(const summary_t *s, const event_t *e)
{
    if (e->type == EV_ALLOC || e->type == EV_FREE || e->type == EV_REALLOC)
        slotmap_prefetch(&s->live, e->addr);
    if (e->type == EV_REALLOC)
        slotmap_prefetch(&s->live, e->old_addr);
}

void summary_prefetch_block(const summary_t *s, const event_t *e)
{
    uint64_t addr = e->type == EV_FREE ? e->addr : e->type == EV_REALLOC ? e->old_addr : 0;
    uint32_t v = addr ? slotmap_get(&s->live, addr) : 0;
    if (v && v - 1 < s->nblocks)
        __builtin_prefetch(&s->blocks[v - 1], 1);
}

summary_block_t *summary_added(summary_t *s)
{
    return s->added == SIZE_MAX ? NULL : &s->blocks[s->added];
}

/* A meta record: the process, its command, its parent, its sampling. */
static void meta_record(summary_t *s, const json_t *o)
{
    const json_t *pid = json_object_get(o, "pid"), *dev = json_object_get(o, "device_size");
    const char *exe = json_string_value(json_object_get(o, "exe"));
    s->pid = json_is_integer(pid) ? json_integer_value(pid) : 0;
    s->device_size = json_is_integer(dev) ? (uint64_t)json_integer_value(dev) : 0;
    escape_copy(s->exe, sizeof s->exe, exe ? exe : "");
    const json_t *av = json_object_get(o, "argv");
    size_t used = 0;
    s->argv[0] = '\0';
    for (size_t i = 0; json_is_array(av) && i < json_array_size(av) && used + 2 < sizeof s->argv; i++) {
        const char *a = json_string_value(json_array_get(av, i));
        if (!a)
            continue;
        if (used)
            s->argv[used++] = ' ';
        escape_copy(s->argv + used, sizeof s->argv - used, a);
        used += strlen(s->argv + used);
    }
    const json_t *ppid = json_object_get(o, "ppid"), *start = json_object_get(o, "start_unix_ns");
    const char *parent = json_string_value(json_object_get(o, "parent_trace"));
    s->ppid = json_is_integer(ppid) ? json_integer_value(ppid) : 0;
    s->start_unix_ns = json_is_integer(start) ? (uint64_t)json_integer_value(start) : 0;
    s->forked = parent != NULL;
    s->sample_bytes = reader_count(o, "sample_bytes");
}

/* A sample record: a point of the series, and the peaks. */
static void sample_record(summary_t *s, const event_t *e)
{
    const json_t *o = e->json;
    s->samples++;
    if (room((void **)&s->points, &s->points_cap, s->npoints, sizeof *s->points)) {
        summary_point_t *p = &s->points[s->npoints++];
        *p = (summary_point_t){
            .t = e->t, .used = e->rss, .reserved = e->malloc_reserved,
            .allocated = e->malloc_in_use, .total = e->device_total,
            .heap_live = e->heap_live, .tree_rss = e->tree_rss,
            .heap_max = s->heap_since_max > s->heap ? s->heap_since_max : s->heap};
        if (s->sample_bytes) {
            double se = summary_se(s->var_heap), rse = (double)e->heap_live_se;
            p->heap_se = rse > se ? rse : se;
            p->heap_max_se = s->heap_since_max > s->heap ? summary_se(s->var_since_max)
                                                         : summary_se(s->var_heap);
        }
        if (e->heap_live > p->heap_max) { /* the recorder's count, when it saw more */
            p->heap_max = e->heap_live;
            p->heap_max_se = p->heap_se;
        }
        const json_t *r = json_object_get(o, "rollup");
        const json_t *rr = json_object_get(r, "rss"), *ra = json_object_get(r, "anonymous");
        if (json_is_integer(rr) && json_is_integer(ra) && json_integer_value(ra) >= 0 &&
            json_integer_value(rr) >= json_integer_value(ra)) {
            p->rollup_rss = (uint64_t)json_integer_value(rr);
            p->rollup_anon = (uint64_t)json_integer_value(ra);
            const json_t *pc = json_object_get(r, "private_clean");
            const json_t *sc = json_object_get(r, "shared_clean");
            int64_t clean = (json_is_integer(pc) ? json_integer_value(pc) : 0) +
                            (json_is_integer(sc) ? json_integer_value(sc) : 0);
            if (clean > 0)
                p->rollup_clean = (uint64_t)clean < p->rollup_rss - p->rollup_anon
                                      ? (uint64_t)clean
                                      : p->rollup_rss - p->rollup_anon;
        }
    }
    s->heap_since_max = s->heap;
    s->var_since_max = s->var_heap;
    if (e->rss > s->peak_rss)
        s->peak_rss = e->rss;
    if (e->hwm > s->peak_hwm)
        s->peak_hwm = e->hwm;
    if (e->tree_rss > s->peak_tree_rss)
        s->peak_tree_rss = e->tree_rss;
}

/* The end record: how the process ended, what was lost. */
static void end_record(summary_t *s, const json_t *o)
{
    const char *r = json_string_value(json_object_get(o, "reason"));
    const json_t *st = json_object_get(o, "status");
    escape_copy(s->end_reason, sizeof s->end_reason, r ? r : "?");
    s->end_status = json_is_integer(st) ? json_integer_value(st) : -1;
    s->dropped = reader_count(o, "dropped");
    s->untracked = reader_count(o, "untracked");
    s->stackless = reader_count(o, "stackless");
    s->threadless = reader_count(o, "threadless");
}

/* A phase marker: a phase begins, or the innermost open one ends. */
static void phase_record(summary_t *s, const event_t *e)
{
    const json_t *o = e->json;
    const char *op = json_string_value(json_object_get(o, "op"));
    if (op && !strcmp(op, "begin")) {
        if (room((void **)&s->phases, &s->phases_cap, s->nphases, sizeof *s->phases)) {
            summary_phase_t *p = &s->phases[s->nphases++];
            const char *name = json_string_value(json_object_get(o, "name"));
            escape_copy(p->name, sizeof p->name, name ? name : "");
            p->begin = e->t;
            p->end = UINT64_MAX;
        }
    } else if (op && !strcmp(op, "end")) {
        for (size_t i = s->nphases; i-- > 0;) /* the innermost open one */
            if (s->phases[i].end == UINT64_MAX) {
                s->phases[i].end = e->t;
                break;
            }
    }
}

/* A sandbox record: the first says where the process's sandbox began. */
static void sandbox_record(summary_t *s, const event_t *e)
{
    const json_t *o = e->json;
    if (s->sandboxed)
        return; /* the first says where it began */
    const char *mode = json_string_value(json_object_get(o, "mode"));
    s->sandboxed = true;
    s->sandbox_traced = json_is_true(json_object_get(o, "traced"));
    escape_copy(s->sandbox_mode, sizeof s->sandbox_mode, mode ? mode : "?");
    s->sandbox_t = e->t;
    s->sandbox_tid = e->tid;
    char joined[160] = "";
    const json_t *w = json_object_get(o, "without");
    size_t i, at = 0;
    const json_t *v;
    json_array_foreach(w, i, v)
    {
        const char *name = json_string_value(v);
        if (name && at + strlen(name) + 3 < sizeof joined)
            at += (size_t)snprintf(joined + at, sizeof joined - at, "%s%s", at ? ", " : "",
                                   name);
    }
    escape_copy(s->sandbox_without, sizeof s->sandbox_without, joined);
}

void summary_add(summary_t *s, const event_t *e)
{
    s->has_freed = false;
    s->added = s->replaced = SIZE_MAX;
    if (!s->have_t || e->t < s->first_t)
        s->first_t = e->t;
    s->have_t = true;
    if (e->t > s->last_t)
        s->last_t = e->t;
    const json_t *o = e->json;
    switch (e->type) {
    case EV_META:
        meta_record(s, o);
        break;
    case EV_ALLOC:
        s->allocations++;
        s->bytes_allocated += e->size;
        live_add(s, e->addr, e->size, e->stack, s->sample_bytes ? e->var : 0);
        allocated_now(s, e);
        break;
    case EV_FREE:
        s->frees++;
        if (live_remove(s, e->addr))
            freed_now(s);
        else if (!e->inherited)
            s->unknown_frees++;
        break;
    case EV_REALLOC:
        s->allocations++;
        s->reallocs++;
        s->bytes_allocated += e->size;
        /* heaptrack sees a free of the old block, then an allocation. */
        if (live_remove(s, e->old_addr))
            freed_now(s);
        else if (e->has_old_size && !e->inherited)
            s->unknown_frees++;
        live_add(s, e->addr, e->size, e->stack, s->sample_bytes ? e->var : 0);
        allocated_now(s, e);
        break;
    case EV_SAMPLE:
        sample_record(s, e);
        break;
    case EV_END:
        end_record(s, o);
        break;
    case EV_PHASE:
        phase_record(s, e);
        break;
    case EV_EXEC_FAILED:
        s->end_reason[0] = '\0'; /* the trace goes on after its end record */
        break;
    case EV_SANDBOX:
        sandbox_record(s, e);
        break;
    default:
        break;
    }
}

void summary_finish(summary_t *s)
{
    s->leaked_allocations = s->live.count;
    s->leaked_bytes = s->heap;
}
