/*
 * take: one message of a process's ring into its trace, through a table
 * of handlers, one per message kind (ipc/msg.h), as the analyzer's
 * consumers sit behind one table.  A handler updates the live state
 * (recorder/state.h) and writes the message's record (recorder/records.h).
 *
 * Nothing here calls back into the recorder's loop: the end message,
 * which closes the pipeline, goes to the trace's on_end, and a fork to
 * the tree through its on_fork.
 */
#include "recorder/take.h"

#include <stdlib.h>
#include <string.h>

#include "trace/tracefmt.h"
#include "ipc/clock.h"
#include "ipc/msg.h"
#include "ipc/ring.h"
#include "recorder/records.h"
#include "recorder/stackids.h"
#include "recorder/state.h"

static uint64_t t_of(const rec_t *rc, uint64_t ticks)
{
    uint64_t ns = clock_ticks_ns(ticks);
    return ns > rc->r->t0 ? ns - rc->r->t0 : 0;
}

/* ---- modules, for a forked child's trace ------------------------------------------- */

void take_module_add(rec_t *rc, uint64_t base, uint64_t size, const char *path, size_t n)
{
    if (rc->nmods == rc->capmods) {
        size_t cap = rc->capmods ? 2 * rc->capmods : 64;
        rec_module_t *m = realloc(rc->mods, cap * sizeof *m);
        if (!m)
            return;
        rc->mods = m;
        rc->capmods = cap;
    }
    char *p = malloc(n + 1);
    if (!p)
        return;
    memcpy(p, path, n);
    p[n] = '\0';
    rc->mods[rc->nmods++] = (rec_module_t){base, size, p};
}

static void module_remove(rec_t *rc, uint64_t base, uint64_t size)
{
    for (size_t i = 0; i < rc->nmods; i++)
        if (rc->mods[i].base == base && rc->mods[i].size == size) {
            free(rc->mods[i].path);
            rc->mods[i] = rc->mods[--rc->nmods];
            return;
        }
}

/* The child's pid, for the fork record: the message has it (fork() told
 * the hook), else the child writes it into its region at once. */
static pid_t fork_child_pid(rec_t *rc, const ring_slot_t *m)
{
    if (m->b)
        return (pid_t)m->b;
    if (m->a >= ((arena_t *)rc->arena)->nregions)
        return 0;
    return atomic_load(&arena_region(rc->arena, (unsigned)m->a)->pid);
}

/* ---- the messages ------------------------------------------------------------------------ */

/* m's bytes, into rc->bytes (NUL-terminated); their length. */
static size_t bytes_of(rec_t *rc, const ring_slot_t *m)
{
    size_t n = (size_t)(m->nslots - 1) * RING_CONT_BYTES;
    if (m->e < n)
        n = (size_t)m->e;
    if (n + 1 > rc->bytes_cap) {
        size_t cap = n + 1 > 65536 ? n + 1 : 65536;
        char *b = realloc(rc->bytes, cap);
        if (!b)
            return 0;
        rc->bytes = b;
        rc->bytes_cap = cap;
    }
    n = intake_bytes(&rc->in, m, rc->bytes, n);
    rc->bytes[n] = '\0';
    return n;
}

/* The old block's touched pages + 1 a MSG_REALLOC carries (0: none). */
static uint64_t realloc_touched(const ring_slot_t *m)
{
    return m->e >> MSG_REALLOC_TOUCHED_SHIFT;
}

/* A free (of a, by the code at caller; touched: its pages + 1, 0: not
 * counted).  In a sampled trace one of a block the recorder does not
 * hold is of a block not sampled (the set in the process errs on the
 * side of posting): nothing to write. */
static void heap_free(rec_t *rc, const ring_slot_t *m, uint64_t t, uint64_t caller,
                      uint64_t touched)
{
    state_found_t f = state_free(m->a);
    if (f.quiet)
        return;
    if (f.known || f.unsure)
        records_free(&rc->out, t, m->tid, m->fn, m->a, f.inherited, touched);
    else if (!rc->r->cfg.sample_bytes)
        records_unknown_free(&rc->out, t, m->tid, m->fn, m->a, caller);
}

/* A realloc of a sampled trace (msg.h: which of its blocks are sampled):
 * the old block's free when the new one is not sampled, the new block's
 * allocation when the old one was not (or is not held), a realloc when
 * both are. */
static void realloc_sampled(rec_t *rc, const ring_slot_t *m, uint64_t t, uint32_t stack)
{
    out_t *o = &rc->out;
    uint64_t sim;
    if ((!m->b && !m->c) || (m->b && (m->e & MSG_REALLOC_NEW_UNSAMPLED))) {
        heap_free(rc, m, t, m->d, realloc_touched(m));
    } else if (!m->b) {
        if (!(m->e & MSG_REALLOC_OLD_UNSAMPLED))
            records_realloc_failed(o, t, m->tid, m->fn, m->a, m->c, stack);
    } else {
        state_found_t f = state_realloc(m->a, m->b, m->c, stack, &sim);
        if (f.known)
            records_realloc(o, t, m->tid, m->fn, m->a, m->b, true, m->c, stack, f.inherited,
                            realloc_touched(m));
        else
            records_alloc(o, t, m->tid, m->fn, m->b, m->c, 16, stack);
    }
}

/* ---- one handler per message kind (ipc/msg.h): t is the message's
 * time in the trace, stack its stack's id in the trace (0: none) ---- */

typedef void take_fn(rec_t *rc, const ring_slot_t *m, uint64_t t, uint32_t stack);

static void take_alloc(rec_t *rc, const ring_slot_t *m, uint64_t t, uint32_t stack)
{
    rc->heap_since++;
    state_alloc(m->a, m->b, m->c, stack);
    records_alloc(&rc->out, t, m->tid, m->fn, m->a, m->b, m->c, stack);
}

static void take_free(rec_t *rc, const ring_slot_t *m, uint64_t t, uint32_t stack)
{
    (void)stack;
    rc->heap_since++;
    heap_free(rc, m, t, m->b, m->c);
}

static void take_realloc(rec_t *rc, const ring_slot_t *m, uint64_t t, uint32_t stack)
{
    out_t *o = &rc->out;
    uint64_t sim;
    rc->heap_since++;
    if (rc->r->cfg.sample_bytes) {
        realloc_sampled(rc, m, t, stack);
    } else if (!m->b && !m->c) { /* realloc(p, 0): p freed, NULL back */
        heap_free(rc, m, t, m->d, realloc_touched(m));
    } else if (!m->b) {
        records_realloc_failed(o, t, m->tid, m->fn, m->a, m->c, stack);
    } else {
        state_found_t f = state_realloc(m->a, m->b, m->c, stack, &sim);
        records_realloc(o, t, m->tid, m->fn, m->a, m->b, f.known, m->c, stack, f.inherited,
                        realloc_touched(m));
    }
}

static void take_quiet(rec_t *rc, const ring_slot_t *m, uint64_t t, uint32_t stack)
{
    (void)rc, (void)t, (void)stack;
    state_quiet(m->a);
}

static void take_mmap(rec_t *rc, const ring_slot_t *m, uint64_t t, uint32_t stack)
{
    state_mapped(m->b);
    records_mmap(&rc->out, t, m->tid, m->fn, m->a, m->b, (int)(uint32_t)m->c, (int)(m->c >> 32),
                 (int)(int64_t)m->d, stack);
}

static void take_munmap(rec_t *rc, const ring_slot_t *m, uint64_t t, uint32_t stack)
{
    state_unmapped(m->b);
    records_munmap(&rc->out, t, m->tid, m->a, m->b, stack);
}

static void take_mremap(rec_t *rc, const ring_slot_t *m, uint64_t t, uint32_t stack)
{
    if (m->c != MSG_MAP_FAILED) {
        state_unmapped(m->b);
        state_mapped(m->d);
    }
    records_mremap(&rc->out, t, m->tid, m->a, m->b, m->c == MSG_MAP_FAILED ? UINT64_MAX : m->c,
                   m->d, (int)m->e, stack);
}

/* stack is 0 here: the message defines one. */
static void take_stack(rec_t *rc, const ring_slot_t *m, uint64_t t, uint32_t stack)
{
    size_t n = bytes_of(rc, m) / sizeof(uint64_t);
    bool fresh;
    if (m->b < n)
        n = m->b;
    const uint64_t *frames = (const uint64_t *)(void *)rc->bytes;
    stack = stackids_post(m->a, frames, (unsigned)n, &fresh);
    if (fresh) { /* else a stack the process forgot and posted again */
        records_stack(&rc->out, t, m->tid, stack, frames, (unsigned)n);
        rc->stacks++;
    }
}

static void take_module_load(rec_t *rc, const ring_slot_t *m, uint64_t t, uint32_t stack)
{
    (void)stack;
    size_t n = bytes_of(rc, m);
    take_module_add(rc, m->a, m->b, rc->bytes, n);
    records_module_load(&rc->out, t, m->tid, rc->bytes, n, m->a, m->b);
}

static void take_module_unload(rec_t *rc, const ring_slot_t *m, uint64_t t, uint32_t stack)
{
    (void)stack;
    module_remove(rc, m->a, m->b);
    stackids_forget_range(m->a, m->a + m->b);
    records_module_unload(&rc->out, t, m->tid, m->a, m->b);
}

static void take_phase(rec_t *rc, const ring_slot_t *m, uint64_t t, uint32_t stack)
{
    (void)stack;
    size_t n = bytes_of(rc, m);
    records_phase(&rc->out, t, m->tid, m->a != 0, rc->bytes, n);
}

static void take_mallinfo(rec_t *rc, const ring_slot_t *m, uint64_t t, uint32_t stack)
{
    (void)t, (void)stack;
    if (m->d > m->t) {
        rc->mallinfo_end = clock_ticks_ns(m->d);
        rc->mallinfo_took = rc->mallinfo_end - clock_ticks_ns(m->t);
        rc->mallinfo_chunks = m->e;
        rc->mallinfo_live = state_live_blocks();
    }
    rc->mallinfo_seen = true;
    rc->mallinfo_pending = false;
    rc->have_malloc = true;
    rc->malloc_reserved = m->a;
    rc->malloc_in_use = m->b;
    rc->maxrss_children = m->c;
    rc->chunks_then = state_chunk_bytes();
    state_chunk_mark();
    rc->heap_since = 0;
}

/* The process forked with region a for its child: the child's trace
 * starts from this one's state as of now (the tree makes it). */
static void take_fork(rec_t *rc, const ring_slot_t *m, uint64_t t, uint32_t stack)
{
    (void)t, (void)stack;
    if (m->a < ((arena_t *)rc->arena)->nregions && rc->on_fork)
        rc->on_fork(rc, (unsigned)m->a, rc->on_fork_ctx);
}

static void take_fork_done(rec_t *rc, const ring_slot_t *m, uint64_t t, uint32_t stack)
{
    (void)stack;
    pid_t child = fork_child_pid(rc, m);
    if (child > 0)
        records_fork(&rc->out, t, m->tid, child);
}

static void take_spawn(rec_t *rc, const ring_slot_t *m, uint64_t t, uint32_t stack)
{
    (void)stack;
    size_t n = bytes_of(rc, m);
    records_launch(&rc->out, t, m->tid, TRACEFMT_NAME(SPAWN), (pid_t)m->a, rc->bytes, n, m->c != 0);
}

static void take_exec(rec_t *rc, const ring_slot_t *m, uint64_t t, uint32_t stack)
{
    (void)stack;
    size_t n = bytes_of(rc, m);
    records_launch(&rc->out, t, m->tid, TRACEFMT_NAME(EXEC), 0, rc->bytes, n, m->c != 0);
    rc->exec_pending = true;
}

static void take_exec_failed(rec_t *rc, const ring_slot_t *m, uint64_t t, uint32_t stack)
{
    (void)stack;
    records_exec_failed(&rc->out, t, m->tid, (int)m->a);
    rc->exec_pending = false;
}

static void take_sandbox(rec_t *rc, const ring_slot_t *m, uint64_t t, uint32_t stack)
{
    (void)stack;
    records_sandbox(&rc->out, t, m->tid, m->a, m->b, m->c, m->d);
    if (m->b & MSG_SANDBOX_STOPS)
        rc->untraced = true; /* nothing more comes: its end is its vanishing */
}

static void take_end(rec_t *rc, const ring_slot_t *m, uint64_t t, uint32_t stack)
{
    (void)t, (void)stack;
    rc->on_end(rc, m);
}

static void take_lost(rec_t *rc, const ring_slot_t *m, uint64_t t, uint32_t stack)
{
    (void)t, (void)stack;
    if (!m->a) /* an event given up; a == 1: a call that never returned */
        rc->lost++;
}

/* A kind without a handler (MSG_REALLOC_DONE is the reorder stage's,
 * recorder/reorder.h) or one this recorder does not know: lost. */
static take_fn *const takers[MSG_KINDS] = {
    [MSG_LOST] = take_lost,
    [MSG_ALLOC] = take_alloc,
    [MSG_FREE] = take_free,
    [MSG_REALLOC] = take_realloc,
    [MSG_QUIET] = take_quiet,
    [MSG_MMAP] = take_mmap,
    [MSG_MUNMAP] = take_munmap,
    [MSG_MREMAP] = take_mremap,
    [MSG_STACK] = take_stack,
    [MSG_MODULE_LOAD] = take_module_load,
    [MSG_MODULE_UNLOAD] = take_module_unload,
    [MSG_PHASE] = take_phase,
    [MSG_MALLINFO] = take_mallinfo,
    [MSG_FORK] = take_fork,
    [MSG_FORK_DONE] = take_fork_done,
    [MSG_SPAWN] = take_spawn,
    [MSG_EXEC] = take_exec,
    [MSG_EXEC_FAILED] = take_exec_failed,
    [MSG_SANDBOX] = take_sandbox,
    [MSG_END] = take_end,
};

/* One message, through its kind's handler.  Its stack id is the
 * process's, as the trace's (recorder/stackids.h). */
void take(void *arg, const ring_slot_t *m)
{
    rec_t *rc = arg;
    uint32_t stack = m->kind == MSG_STACK || !m->stack ? 0 : stackids_of(m->stack);
    take_fn *fn = m->kind < MSG_KINDS ? takers[m->kind] : NULL;
    if (fn)
        fn(rc, m, t_of(rc, m->t), stack);
    else
        rc->lost++;
}
