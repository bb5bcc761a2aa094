/*
 * recorder: one traced process's pipeline.  See recorder.h.
 */
#include "recorder/recorder.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "trace/tracefmt.h"
#include "ipc/clock.h"
#include "ipc/msg.h"
#include "ipc/ring.h"
#include "recorder/records.h"
#include "recorder/stackids.h"
#include "recorder/state.h"
#include "recorder/take.h"
#include "recorder/touched.h"

#define ATTACH_WAIT_NS 30000000000ull /* a process that never publishes its region */
#define REC_STEP_MAX 4096u   /* messages a turn of the loop takes at most */
#define MALLINFO_WAIT_NS 5000000ull
#define MALLINFO_ASK_NS 10000000ull /* glibc's figures asked for this often, while busy */
/* ...but no sooner after the last call returned than this many times what
 * the next may cost (rec_mallinfo_cost): mallinfo2 walks every free chunk
 * of every arena (on a heap of a million free chunks, tens of
 * milliseconds a call), and the program must spend at most 1% of its
 * time in it.  The last call's own cost is not enough: a burst of frees
 * between two calls (frag_heap: half its million blocks) made the next
 * one 25-80 times dearer, 5-7% of a one-second run. */
#define MALLINFO_PACE 100
/* A call's cost apart from the chunks it walks (128 bins and the fast
 * bins of each arena), in chunks' worth. */
#define MALLINFO_BASE_CHUNKS 64
#define MALLINFO_LOST_NS 1000000000ull /* an ask unanswered this long is asked again */

static uint64_t now_t(const rec_t *rc)
{
    uint64_t ns = clock_ns();
    return ns > rc->r->t0 ? ns - rc->r->t0 : 0;
}

static void fail(region_t *r, const char *why)
{
    snprintf(r->error, sizeof r->error, "%.500s", why);
    atomic_store(&r->rec_state, REC_FAILED);
    region_wake(&r->rec_futex);
}

/* ---- attaching --------------------------------------------------------------------- */

/* The process's argv, from /proc (NUL-separated), into rc->bytes. */
static size_t read_cmdline(rec_t *rc, pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/cmdline", (long)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    size_t n = 0;
    for (;;) {
        if (n + 4096 > rc->bytes_cap) {
            size_t cap = rc->bytes_cap ? 2 * rc->bytes_cap : 65536;
            char *b = realloc(rc->bytes, cap);
            if (!b)
                break;
            rc->bytes = b;
            rc->bytes_cap = cap;
        }
        ssize_t k = read(fd, rc->bytes + n, rc->bytes_cap - n);
        if (k <= 0)
            break;
        n += (size_t)k;
    }
    close(fd);
    while (n && rc->bytes[n - 1] == '\0')
        n--; /* the last argument's NUL */
    return n;
}

static void sample_tick(rec_t *rc, uint64_t now);

/* Wait until r is published by its process (or its fork failed). */
static int wait_published(region_t *r)
{
    uint64_t start = clock_ns();
    for (;;) {
        uint32_t w = atomic_load(&r->pid_futex);
        uint32_t st = atomic_load(&r->state);
        if (st == REGION_LIVE && atomic_load(&r->pid) > 0)
            return 0;
        if (st == REGION_FORK_FAILED || clock_ns() - start > ATTACH_WAIT_NS)
            return -1;
        region_wait(&r->pid_futex, w, 100000000ull);
    }
}

static void end_message(rec_t *rc, const ring_slot_t *m);

/* The trace the state and records modules work on now; every other
 * keeps its own in its rec_t (st, rs), and the current one's are empty
 * there. */
static rec_t *current;

void rec_use(rec_t *rc)
{
    if (current == rc)
        return;
    if (current) {
        state_swap(&current->st);
        records_swap(&current->rs);
        stackids_swap(&current->ids);
    }
    state_swap(&rc->st);
    records_swap(&rc->rs);
    stackids_swap(&rc->ids);
    current = rc;
}

int rec_attach(rec_t *rc, void *arena, region_t *r, int memfd)
{
    if (wait_published(r)) {
        fail(r, "memsim: the traced process never started its trace; tracing is off");
        return -1;
    }
    return rec_open(rc, arena, r, memfd);
}

int rec_open(rec_t *rc, void *arena, region_t *r, int memfd)
{
    static int clock_tsc = -1; /* the clock's mode, once set: one machine, one calibration */
    rec_use(rc);
    rc->arena = arena;
    rc->memfd = memfd;
    rc->r = r;
    rc->done = false;
    rc->exec_pending = false;
    rc->stacks = rc->lost = 0;
    rc->have_malloc = false;
    stackids_reset();
    rc->on_end = end_message;
    reorder_init(&rc->ro, take, rc);
    intake_init(&rc->in, r);
    bool inherited = r->flags & REGION_INHERITED;
    rc->pid = atomic_load(&r->pid);
    rc->ppid = r->parent_pid;
    const char *slash = strrchr(r->exe, '/');
    snprintf(rc->exe_base, sizeof rc->exe_base, "%.255s", slash ? slash + 1 : r->exe);
    if (clock_tsc != !!(r->flags & REGION_TSC)) {
        clock_tsc = !!(r->flags & REGION_TSC);
        clock_init(clock_tsc);
    }
    records_reset();
    atomic_store(&r->rec_pid, getpid());
    atomic_store(&r->beat.ns, clock_ns());
    atomic_store(&r->beat.ticks, clock_ticks());
    if (rc->watch && sampler_init(&rc->smp, rc->pid)) {
        fail(r, "memsim: the traced process is gone");
        return -1;
    }
    if (inherited)
        state_set_pid(rc->pid);
    else
        state_init(r->cfg.strategy, r->cfg.device_size, rc->pid);
    state_set_sampled(r->cfg.sample_bytes);
    char err[PATH_MAX + 256];
    if (out_create(&rc->out, &r->cfg, rc->exe_base, rc->pid, err, sizeof err)) {
        fail(r, err);
        return -1;
    }
    snprintf(r->trace_path, sizeof r->trace_path, "%s", rc->out.path);
    size_t argv_len = read_cmdline(rc, rc->pid);
    records_meta_t meta = {.pid = rc->pid,
                           .ppid = rc->ppid,
                           .exe = r->exe,
                           .argv = rc->bytes ? rc->bytes : "",
                           .argv_len = argv_len,
                           .start_unix_ns = r->start_unix_ns ? r->start_unix_ns : clock_unix_ns(),
                           .strategy = state_has_device() ? r->cfg.strategy : "none",
                           .device_size = r->cfg.device_size,
                           .stack_depth = r->cfg.stack_depth,
                           .mmap = r->cfg.mmap,
                           .sample_bytes = r->cfg.sample_bytes,
                           .parent_trace = inherited && rc->parent_trace[0] ? rc->parent_trace
                                                                             : NULL,
                           .note = r->note};
    records_meta(&rc->out, 0, rc->pid, &meta);
    /* A forked child's objects are its parent's: listed again, as the
     * child's trace must stand alone. */
    for (size_t i = 0; inherited && i < rc->nmods; i++)
        records_module_load(&rc->out, 0, rc->pid, rc->mods[i].path, strlen(rc->mods[i].path),
                            rc->mods[i].base, rc->mods[i].size);
    atomic_store(&r->rec_state, REC_RUNNING);
    region_wake(&r->rec_futex);
    uint64_t now = clock_ns();
    rc->next_sample = now + REC_FIRST_SAMPLE_NS;
    rc->last_flush = now; /* written within REC_FLUSH_MAX_NS, or with the end */
    return 0;
}

/* ---- the end ------------------------------------------------------------------------ */

static const char *const end_reasons[END_REASONS] = {
    [END_EXIT] = "exit",
    [END__EXIT] = "_exit",
    [END_QUICK_EXIT] = "quick_exit",
    [END_SIGNAL] = "signal",
};

static void sample(rec_t *rc, bool drain);

static void ack(rec_t *rc, uint64_t upto)
{
    atomic_store(&rc->r->acked, upto);
    /* A wake call only for a waiter (ring_wait_acked): unasked, one every
     * 256 messages was most of the recorder's system calls.  (finish's
     * last ack is followed by a wake of its own, with DONE.) */
    if (atomic_load(&rc->r->ack_waiters))
        region_wake(&rc->r->rec_futex);
}

/* Write the end record, close the trace, let every waiter go.  at_end:
 * the end message is the one at the tail (not consumed yet). */
static void finish(rec_t *rc, const char *reason, int status, int sig, bool at_end)
{
    reorder_flush(&rc->ro); /* the reallocs still waiting for their done */
    region_t *r = rc->r;
    uint64_t after = intake_backlog(&rc->in);
    if (at_end && after)
        after -= 1;
    uint64_t dropped = rc->lost + atomic_load(&r->ring.dropped);
    records_end_t e = {.reason = reason,
                       .status = status,
                       .signal = sig,
                       .dropped = dropped,
                       .after_end = after,
                       .unknown_frees = state_unknown_frees(),
                       .untracked = state_untracked(),
                       .stackless = atomic_load(&r->stackless) + stackids_unmapped(),
                       .threadless = records_threadless(),
                       .live_allocations = state_live_blocks(),
                       .live_bytes = state_live_bytes(),
                       .stacks = rc->stacks};
    records_end(&rc->out, now_t(rc), rc->pid, &e);
    atomic_store(&r->end_untracked, state_untracked());
    atomic_store(&r->end_threadless, records_threadless());
    atomic_store(&r->end_dropped, rc->out.dropped + dropped);
    r->write_errno = rc->out.err;
    rc->done = true;
    /* The ack first: a process waiting for its end to be written must
     * never see DONE without it (it would say its trace may be
     * incomplete).  Every record, the end's included, is written
     * (records_end wrote it: the file has its whole content and its
     * size): the process goes on while the file gives back the room it
     * had ahead (an ftruncate, which waits for the filesystem's journal:
     * milliseconds on a busy disk) and is closed.  A reader that must
     * know the recorder is done with a file takes its lock (out.h). */
    ack(rc, UINT64_MAX);
    out_close(&rc->out);
    atomic_store(&r->rec_state, REC_DONE);
    region_wake(&r->rec_futex);
}

void rec_ended(rec_t *rc)
{
    rec_use(rc);
    state_init(NULL, 0, 0);
    stackids_reset();
}

/* The region is nobody's once its process can no longer write to it. */
void rec_release(rec_t *rc)
{
    region_t *r = rc->r;
    bool zeroed = false;
    /* The next user's ring starts at claim 0 and must find zeros.  A
     * short process wrote a few slots: zeroed by hand; a ring gone round
     * once is punched out of the memfd, its memory given back. */
    uint64_t used = atomic_load(&r->ring.head);
    if (used < r->ring.slots / 8) {
        memset(region_slots(r), 0, (size_t)used * sizeof(ring_slot_t));
        zeroed = true;
    } else if (rc->memfd >= 0) {
        off_t at = (off_t)((char *)region_slots(r) - (char *)rc->arena);
        zeroed = fallocate(rc->memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, at,
                           (off_t)((size_t)r->ring.slots * sizeof(ring_slot_t))) == 0;
    }
    arena_release(rc->arena, r, zeroed);
    rec_use(rc);
    state_init(NULL, 0, 0); /* its state freed */
    records_reset();
    stackids_reset();
    reorder_free(&rc->ro);
    current = NULL;
    if (rc->smp.pid > 0)
        sampler_fini(&rc->smp);
    out_close(&rc->out);
    for (size_t i = 0; i < rc->nmods; i++)
        free(rc->mods[i].path);
    free(rc->mods);
    free(rc->bytes);
    rc->mods = NULL;
    rc->bytes = NULL;
    rc->nmods = rc->capmods = rc->bytes_cap = 0;
}

/* Every published message.  The claims left unpublished (holes) are
 * not lost records: their threads were cut inside a post, by the end of
 * the process (a raw exit_group, SIGKILL) or their own end, so each is
 * the event of a call that never returned to the program, as MSG_LOST
 * with a == 1 is.  A post a producer gave up is counted by the producer
 * (ring.dropped) or published as MSG_LOST. */
static void drain_dead(rec_t *rc)
{
    intake_dead(&rc->in);
    while (!rc->done && rec_step(rc, 4096))
        ;
}

void rec_vanished(rec_t *rc)
{
    drain_dead(rc);
    if (rc->done)
        return;
    int status = -1, sig = 0;
    if (sampler_exit(&rc->smp, &status, &sig))
        status = -1, sig = 0;
    finish(rc, rc->untraced ? "untraced" : "vanished", status, sig, false);
}

/* The exec went through: the old image is gone with whatever it had
 * not published. */
static void exec_done(rec_t *rc)
{
    drain_dead(rc);
    if (!rc->done)
        finish(rc, "exec", -1, 0, false);
}

/* Whether the exec under way is over: its thread let the lock go (it
 * failed; exec_failed follows in the ring) or lost its memory holding it
 * (the lock is held only across the real exec: the exec went through,
 * and the new image may even be gone already). */
static void check_exec(rec_t *rc)
{
    region_t *r = rc->r;
    int rc_ = pthread_mutex_trylock(&r->exec_lock);
    if (rc_ == EBUSY)
        return;
    if (rc_ == EOWNERDEAD) {
        pthread_mutex_consistent(&r->exec_lock);
        pthread_mutex_unlock(&r->exec_lock);
        exec_done(rc);
        return;
    }
    if (rc_ == 0)
        pthread_mutex_unlock(&r->exec_lock);
}

/* ---- fork ---------------------------------------------------------------------------- */

void rec_fork(rec_t *parent, rec_t *child, unsigned k)
{
    rec_use(parent);
    child->arena = parent->arena;
    child->memfd = parent->memfd;
    child->r = arena_region(parent->arena, k);
    child->watch = parent->watch;
    child->on_fork = parent->on_fork;
    child->on_fork_ctx = parent->on_fork_ctx;
    snprintf(child->parent_trace, sizeof child->parent_trace, "%s", parent->out.path);
    for (size_t i = 0; i < parent->nmods; i++)
        take_module_add(child, parent->mods[i].base, parent->mods[i].size,
                        parent->mods[i].path, strlen(parent->mods[i].path));
    const config_t *c = &parent->r->cfg;
    state_fork(&child->st, c->strategy, c->device_size);
}

/* The end message closes the pipeline: the sample before it, then the
 * end record. */
static void end_message(rec_t *rc, const ring_slot_t *m)
{
    sample(rc, false); /* everything before the end is taken already */
    touched_at_end(&rc->out, now_t(rc), rc->pid); /* the process waits: its memory is whole */
    finish(rc, m->a < END_REASONS ? end_reasons[m->a] : "exit",
           (int64_t)m->b >= 0 ? (int)m->b : -1, (int)m->c, true);
}

/* The live map's slots of the heap event PREFETCH_AHEAD slots on, loaded
 * while the ones before it are taken: the map of a program with a million
 * live blocks is far larger than the caches (lua5.4: 23% of the
 * recorder's time was these misses; 7% less CPU with this).  A slot
 * inside a longer message is no head (intake_peek), and skipped. */
#define PREFETCH_AHEAD 8

static void prefetch_ahead(const intake_t *in)
{
    if (!state_map_is_large())
        return; /* in the caches: a look ahead would only cost */
    const ring_slot_t *s = intake_peek(in, PREFETCH_AHEAD);
    if (!s)
        return;
    if (s->kind == MSG_ALLOC || s->kind == MSG_FREE || s->kind == MSG_REALLOC)
        state_prefetch(s->a); /* a realloc's old address, taken */
    if (s->kind == MSG_REALLOC)
        state_prefetch(s->b);
}

unsigned rec_step(rec_t *rc, unsigned max)
{
    rec_use(rc);
    intake_t *in = &rc->in;
    unsigned done = 0;
    while (done < max && !rc->done) {
        ring_slot_t *m = intake_next(in);
        if (!m)
            break;
        prefetch_ahead(in);
        reorder_input(&rc->ro, m);
        uint8_t kind = m->kind; /* m is the next lap's once consumed */
        intake_consume(in, m);
        done++;
        if (kind == MSG_EXEC || kind == MSG_FORK || (done & 255) == 0) {
            intake_wake_producers(in, false);
            ack(rc, intake_tail(in));
        }
    }
    if (done && !rc->done) {
        intake_wake_producers(in, done < max); /* all, once there is nothing more to take */
        ack(rc, intake_tail(in));
    }
    return done;
}

/* ---- samples and the loop -------------------------------------------------------------- */

/* Takes what was published up to upto (the ring's head when asked);
 * false when the trace is done meanwhile. */
static bool drain_to(rec_t *rc, uint64_t upto)
{
    for (int spins = 0; !intake_taken_upto(&rc->in, upto) && spins < 1000 && !rc->done;) {
        if (!rec_step(rc, 4096))
            spins++, sched_yield();
    }
    return !rc->done;
}

/* glibc's reserved bytes as of the heap event that reported them, or
 * more: the most in use since (glibc keeps what it took, bar trims). */
static uint64_t reserved_now(const rec_t *rc)
{
    uint64_t peak = rc->malloc_in_use + (state_chunk_peak() - rc->chunks_then);
    return rc->malloc_reserved > peak ? rc->malloc_reserved : peak;
}

static bool read_proc(void *ctx, records_sample_t *s) { return sampler_read(ctx, s); }

static void sample(rec_t *rc, bool drain)
{
    if (!rc->done && rc->watch)
        rec_sample(rc, drain, read_proc, &rc->smp);
}

/* A sample: what /proc says, and the live figures as of then.  The
 * program runs on while /proc is read, so the events are taken on both
 * sides of the read: everything published before it first, then what
 * was published by its end.  The heap and the mappings are those after
 * the read (the RSS read holds nothing they lack), and glibc's reserved
 * bytes the larger of the two: RSS − reserved, the gap, is then never
 * memory the heap took during the read (a program touching its heap fast
 * on a loaded machine, where the read can take milliseconds, showed it
 * as a spike of the gap), nor memory a trim just after it gave back. */
void rec_sample(rec_t *rc, bool drain, rec_read_fn read, void *ctx)
{
    region_t *r = rc->r;
    if (drain && !drain_to(rc, atomic_load(&r->ring.head)))
        return;
    if (rc->exec_pending)
        return; /* /proc/<pid> may be the next image's already */
    uint64_t reserved_before = reserved_now(rc);
    records_sample_t s = {0};
    if (!read(ctx, &s))
        return;
    if (drain && (!drain_to(rc, atomic_load(&r->ring.head)) || rc->exec_pending))
        return; /* ...the exec was posted during the read */
    device_metrics_t dm;
    state_metrics(&dm);
    s.maxrss_children = rc->maxrss_children;
    /* glibc's figures as of the heap event that reported them, brought up
     * to date with the chunks allocated and freed since (a program that
     * frees a lot and then idles reports nothing more). */
    s.have_malloc = rc->have_malloc;
    int64_t moved = (int64_t)(state_chunk_bytes() - rc->chunks_then);
    s.malloc_in_use = (int64_t)rc->malloc_in_use + moved > 0 ? rc->malloc_in_use + (uint64_t)moved : 0;
    uint64_t reserved_after = reserved_now(rc);
    s.malloc_reserved = reserved_before > reserved_after ? reserved_before : reserved_after;
    s.heap_live = state_live_bytes();
    s.heap_blocks = state_live_blocks();
    s.sampled = r->cfg.sample_bytes != 0;
    s.heap_live_se = state_live_bytes_se();
    s.mmap_live = state_mmap_live();
    s.have_sim = state_has_device();
    s.sim_live = dm.live_allocated;
    s.sim_reserved = dm.reserved;
    s.sim_largest_free = dm.largest_free;
    s.memsim_vm = arena_bytes(rc->arena);
    /* The recorder's own record: its thread is not one of the program's. */
    records_sample(&rc->out, now_t(rc), getpid(), &s);
}

/* A sample is due: unless nothing moved the heap since the program's
 * malloc figures came, ask for them (its next heap event posts them:
 * they change only with heap events), and write the sample when they
 * came, or after MALLINFO_WAIT_NS (an idle program: what came, brought
 * up to date, still holds).  Ticks are at a fixed rate; those missed
 * while the recorder was held up are skipped. */
uint64_t rec_mallinfo_cost(uint64_t took, uint64_t chunks, uint64_t live_then, uint64_t live_now)
{
    double freed = live_then > live_now ? (double)(live_then - live_now) : 0;
    double base = (double)chunks + MALLINFO_BASE_CHUNKS;
    double cost = (double)took * (base + freed) / base;
    return cost < (double)(UINT64_MAX / (2 * MALLINFO_PACE)) ? (uint64_t)cost
                                                           : UINT64_MAX / (2 * MALLINFO_PACE);
}

/* An unanswered ask waits: the recorder may be behind the ring, and the
 * answer in it already. */
bool rec_mallinfo_may_ask(const rec_t *rc, uint64_t now)
{
    if (rc->mallinfo_pending && now - rc->mallinfo_asked < MALLINFO_LOST_NS)
        return false;
    uint64_t cost = rec_mallinfo_cost(rc->mallinfo_took, rc->mallinfo_chunks,
                                      rc->mallinfo_live, state_live_blocks());
    return now >= rc->mallinfo_end && now - rc->mallinfo_end >= cost * MALLINFO_PACE;
}

static void mallinfo_ask(rec_t *rc, uint64_t now)
{
    atomic_store(&rc->r->want_mallinfo, 1);
    rc->mallinfo_asked = now;
    rc->mallinfo_pending = true;
}

static void sample_tick(rec_t *rc, uint64_t now)
{
    region_t *r = rc->r;
    bool glibc = r->flags & REGION_GLIBC_MALLOC;
    if (!rc->sample_due && now >= rc->next_sample) {
        bool ask = glibc && rc->heap_since && rec_mallinfo_may_ask(rc, now);
        rc->sample_due = ask ? now + MALLINFO_WAIT_NS : now;
        rc->mallinfo_seen = false;
        if (ask)
            mallinfo_ask(rc, now);
    }
    /* Also in between: a burst of frees followed by idleness (the
     * fragmentation the figures are for) is then reported from its end. */
    if (glibc && now - rc->mallinfo_asked >= MALLINFO_ASK_NS && rec_mallinfo_may_ask(rc, now))
        mallinfo_ask(rc, now);
    if (rc->sample_due && (rc->mallinfo_seen || !glibc || now >= rc->sample_due)) {
        sample(rc, true);
        rc->sample_due = 0;
        uint64_t every = (uint64_t)r->cfg.sample_ms * 1000000ull;
        rc->next_sample += every;
        if (rc->next_sample <= now)
            rc->next_sample = now + every - (now - rc->next_sample) % every;
    }
}

/* No hole at the tail.  Stored only when it changes: producers read the
 * ring's flags in the same cache line at every event (closed, sleeping),
 * and a store at every turn of the loop would take the line from them. */
static void hole_none(region_t *r)
{
    if (atomic_load_explicit(&r->ring.hole_since, memory_order_relaxed))
        atomic_store(&r->ring.hole_since, 0);
}

bool rec_gone(rec_t *rc)
{
    if (!rc->watch || !sampler_gone(&rc->smp))
        return false;
    rec_use(rc);
    if (!rc->done)
        rec_vanished(rc);
    return true;
}

rec_turn_t rec_turn(rec_t *rc, uint64_t now)
{
    rec_turn_t t = {0};
    region_t *r = rc->r;
    t.taken = rec_step(rc, REC_STEP_MAX);
    atomic_store(&r->beat.ticks, clock_ticks()); /* before ns: a reader of both is never ahead */
    atomic_store(&r->beat.ns, now);
    if (rc->done)
        return t;
    sample_tick(rc, now);
    uint64_t since = now - rc->last_flush;
    if (since >= REC_FLUSH_MAX_NS ||
        (since >= REC_FLUSH_NS && (!rc->out.zc || rc->out.len >= REC_FRAME_MIN))) {
        out_flush(&rc->out);
        rc->last_flush = now;
    }
    if (rc->exec_pending)
        check_exec(rc);
    if (rc->done)
        return t;
    t.full = t.taken == REC_STEP_MAX;
    if (t.taken || !rc->in.held) {
        hole_none(r);
        return t;
    }
    /* A message may not pass a claim still being filled: its producer
     * is inside a call (realloc's claim is taken before the real call)
     * or was preempted. */
    if (!atomic_load(&r->ring.hole_since))
        atomic_store(&r->ring.hole_since, now);
    t.hole = true;
    return t;
}
