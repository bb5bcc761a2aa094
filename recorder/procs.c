/*
 * procs: one recorder for a process tree.  See procs.h.
 */
#include "recorder/procs.h"

#include <errno.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ipc/clock.h"
#include "ipc/ring.h"
#include "recorder/intake.h"
#include "recorder/recorder.h"

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449 /* Linux 5.16 */
#endif

#define ATTACH_WAIT_NS 30000000000ull /* a region whose process never publishes it */
#define NAP_NS 1000000ull             /* a nap while caught up, at most */
/* ...when every running trace is sampled: its messages come a few
 * thousand a second at most, a batch's wake costs more than taking it,
 * and the producers still wake the recorder a wake's worth ahead. */
#define SAMPLED_NAP_NS 10000000ull
#define HOLE_SPINS 64
#define HOLE_PAUSE_NS 20000ull  /* a pause at a hole, once spinning did not see it filled */
#define IDLE_SPINS 64
#define EXEC_LOOK_NS 1000000ull /* an exec under way is looked at this often, idle */
#define GONE_LOOK_NS 50000000ull /* an ended process is looked for this often */

enum { WAITING, RUNNING, ENDED };

typedef struct trace_s {
    rec_t rc;
    int phase;      /* WAITING, RUNNING, ENDED */
    uint64_t since; /* when it began waiting (ns) */
} trace_t;

typedef struct procs_s {
    void *arena;
    int memfd;
    trace_t *traces[ARENA_REGIONS]; /* by region; NULL: none */
    unsigned count;
    uint32_t joins_seen;            /* arena_t.joins at the last look */
    unsigned waiting;               /* traces waiting at the last look */
} procs_t;

static arena_t *hdr(const procs_t *t) { return t->arena; }

static uint64_t ms_ns(uint64_t now, uint64_t due) { return due > now ? due - now : 0; }

/* ---- traces ----------------------------------------------------------------------------- */

static void on_fork(rec_t *parent, unsigned k, void *ctx);

static trace_t *trace_new(procs_t *t, unsigned k, int phase)
{
    trace_t *tr = calloc(1, sizeof *tr);
    if (!tr)
        return NULL;
    tr->phase = phase;
    tr->since = clock_ns();
    tr->rc.watch = true;
    tr->rc.out.fd = -1; /* no trace file, no watch until it is opened */
    tr->rc.smp.pidfd = -1;
    tr->rc.on_fork = on_fork;
    tr->rc.on_fork_ctx = t;
    t->traces[k] = tr;
    t->count++;
    return tr;
}

/* The region is given back and the trace forgotten. */
static void trace_drop(procs_t *t, unsigned k)
{
    trace_t *tr = t->traces[k];
    rec_release(&tr->rc);
    free(tr);
    t->traces[k] = NULL;
    t->count--;
}

/* A region that was never opened (its process never published it, or
 * the fork failed): back to the arena, with the state copied for it. */
static void trace_abandon(procs_t *t, unsigned k)
{
    trace_t *tr = t->traces[k];
    tr->rc.r = arena_region(t->arena, k);
    tr->rc.arena = t->arena;
    tr->rc.memfd = t->memfd;
    trace_drop(t, k);
}

/* The fork message of parent's process: the child's trace waits for its
 * pid, with parent's state as of now. */
static void on_fork(rec_t *parent, unsigned k, void *ctx)
{
    procs_t *t = ctx;
    if (k >= hdr(t)->nregions || t->traces[k])
        return;
    trace_t *tr = trace_new(t, k, WAITING);
    if (!tr)
        return; /* no memory: the child's region times out below */
    t->waiting++;
    rec_fork(parent, &tr->rc, k);
}

/* Open a published region's trace; on failure (r->error says why) the
 * process, which may be posting already, sees REC_FAILED and drops. */
static void trace_open(procs_t *t, unsigned k)
{
    trace_t *tr = t->traces[k];
    region_t *r = arena_region(t->arena, k);
    if (rec_open(&tr->rc, t->arena, r, t->memfd) == 0) {
        tr->phase = RUNNING;
        return;
    }
    tr->phase = ENDED; /* released once the process is gone */
    tr->rc.done = true;
}

/* Whether region k (published, not opened) must wait for another region
 * of the same pid: a fork's child not opened yet, or an image that joined
 * before it.  The traces of one pid are numbered in order of its images. */
static bool older_image(const procs_t *t, unsigned k)
{
    region_t *r = arena_region(t->arena, k);
    int32_t pid = atomic_load(&r->pid);
    for (unsigned i = 0; i < hdr(t)->nregions; i++) {
        if (i == k || (t->traces[i] && t->traces[i]->phase != WAITING))
            continue;
        region_t *o = arena_region(t->arena, i);
        if (atomic_load(&o->pid) != pid || atomic_load(&o->state) != REGION_LIVE)
            continue;
        if (!(o->flags & REGION_JOINED) || o->ticket < r->ticket)
            return true;
    }
    return false;
}

/* Every region that changed since the last look: children that published
 * their pid, new images that joined, forks that failed.  Returns the
 * traces still waiting (looked at again at the next turn). */
static unsigned look_at_regions(procs_t *t, uint64_t now)
{
    arena_t *a = hdr(t);
    unsigned waiting = 0;
    t->joins_seen = atomic_load(&a->joins);
    for (unsigned k = 0; k < a->nregions; k++) {
        if (!(atomic_load(&a->used[k / 64]) & (1ull << (k % 64))))
            continue;
        region_t *r = arena_region(t->arena, k);
        trace_t *tr = t->traces[k];
        uint32_t st = atomic_load(&r->state);
        if (!tr) {
            if (st != REGION_LIVE || !(r->flags & REGION_JOINED))
                continue; /* a fork's region before its message, or being filled */
            if (!(tr = trace_new(t, k, WAITING)))
                continue;
        }
        if (tr->phase != WAITING)
            continue;
        if (st == REGION_LIVE && atomic_load(&r->pid) > 0 && !older_image(t, k))
            trace_open(t, k);
        else if (st == REGION_FORK_FAILED || (now > tr->since && now - tr->since > ATTACH_WAIT_NS))
            trace_abandon(t, k);
        else
            waiting++;
    }
    return waiting;
}

/* ---- sleeping on every ring at once -------------------------------------------------- */

/* Wait until a producer wakes the recorder, a region is published, or
 * ns pass.  nap: while a batch gathers (the producers wake the recorder
 * once they are a wake's worth ahead), else idle (a message published at
 * any tail is enough).  As intake_nap and intake_sleep do for one ring,
 * in their steps (recorder/intake.h). */
static void wait_all(procs_t *t, uint64_t ns, bool nap)
{
    struct futex_waitv w[ARENA_REGIONS + 1];
    intake_t *set[ARENA_REGIONS];
    unsigned n = 0, nset = 0;
    bool go = false;
    w[n++] = (struct futex_waitv){.val = atomic_load(&hdr(t)->joins),
                                  .uaddr = (uintptr_t)&hdr(t)->joins,
                                  .flags = FUTEX_32};
    for (unsigned k = 0; k < ARENA_REGIONS; k++) {
        trace_t *tr = t->traces[k];
        if (!tr || tr->phase != RUNNING)
            continue;
        intake_t *in = &tr->rc.in;
        if (nap && intake_batch(in)) {
            go = true; /* a batch is there: sleeping is left alone */
            break;
        }
        w[n++] = (struct futex_waitv){.val = intake_sleep_arm(in),
                                      .uaddr = (uintptr_t)&in->r->ring.work,
                                      .flags = FUTEX_32};
        set[nset++] = in;
    }
    atomic_thread_fence(memory_order_seq_cst);
    /* Producers that looked at sleeping before it was set look again at
     * each post while they are a wake's worth ahead (nap), or wake at a
     * sync post; past these checks a wake is not missed. */
    for (unsigned i = 0; !go && i < nset; i++)
        go = !intake_sleep_may(set[i], nap);
    if (!go && atomic_load(&hdr(t)->joins) == t->joins_seen && ns) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += (time_t)(ns / 1000000000ull);
        until.tv_nsec += (long)(ns % 1000000000ull);
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        if (syscall(SYS_futex_waitv, w, n, 0, &until, CLOCK_MONOTONIC) < 0 && errno == ENOSYS) {
            /* Linux before 5.16: the first ring's futex, or the join word */
            struct timespec rel = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
            unsigned i = n > 1 ? 1 : 0;
            syscall(SYS_futex, (uint32_t *)(uintptr_t)w[i].uaddr, FUTEX_WAIT, (uint32_t)w[i].val,
                    &rel, NULL, 0);
        }
    }
    for (unsigned i = 0; i < nset; i++)
        intake_sleep_disarm(set[i]);
}

/* ---- the loop ------------------------------------------------------------------------ */

/* How long a nap may last while caught up: SAMPLED_NAP_NS when every
 * running trace is sampled, else NAP_NS. */
static uint64_t nap_ns(const procs_t *t)
{
    for (unsigned k = 0; k < ARENA_REGIONS; k++) {
        const trace_t *tr = t->traces[k];
        if (tr && tr->phase == RUNNING && !tr->rc.r->cfg.sample_bytes)
            return NAP_NS;
    }
    return SAMPLED_NAP_NS;
}

/* How long the loop may sleep: until the first sample or flush due, an
 * exec under way looked at, an ended process looked for. */
static uint64_t sleep_ns(const procs_t *t, uint64_t now, uint64_t most)
{
    uint64_t ns = most;
    for (unsigned k = 0; k < ARENA_REGIONS; k++) {
        const trace_t *tr = t->traces[k];
        if (!tr)
            continue;
        uint64_t d = most;
        if (tr->phase == RUNNING) {
            const rec_t *rc = &tr->rc;
            d = ms_ns(now, rc->sample_due ? rc->sample_due : rc->next_sample);
            if (rc->exec_pending && d > EXEC_LOOK_NS)
                d = EXEC_LOOK_NS;
        } else if (tr->phase == ENDED) {
            d = ms_ns(now, tr->rc.gone_look + GONE_LOOK_NS);
        } else {
            d = NAP_NS; /* waiting: for a pid, or an older image (nobody wakes us then) */
        }
        if (d < ns)
            ns = d;
    }
    return ns;
}

/* Ended traces whose process is gone or exec'd: their regions back. */
static void release_ended(procs_t *t, uint64_t now, bool look)
{
    for (unsigned k = 0; k < ARENA_REGIONS; k++) {
        trace_t *tr = t->traces[k];
        if (!tr || tr->phase != ENDED)
            continue;
        rec_t *rc = &tr->rc;
        if (rc->exec_pending || !rc->watch || rc->smp.pid <= 0) {
            trace_drop(t, k); /* exec'd: the old image can post no more */
            continue;
        }
        if (!look && now - rc->gone_look < GONE_LOOK_NS)
            continue;
        rc->gone_look = now;
        if (sampler_gone(&rc->smp))
            trace_drop(t, k);
    }
}

/* Running traces whose process vanished: their end written. */
static void look_for_vanished(procs_t *t, uint64_t now)
{
    for (unsigned k = 0; k < ARENA_REGIONS; k++) {
        trace_t *tr = t->traces[k];
        if (tr && tr->phase == RUNNING && rec_gone(&tr->rc)) {
            tr->phase = ENDED;
            rec_ended(&tr->rc);
            tr->rc.gone_look = now - GONE_LOOK_NS; /* gone: released at once */
        }
    }
}

/* No region is left: close the arena to new images, unless one reserved
 * a region meanwhile.  True when closed. */
static bool close_arena(procs_t *t)
{
    arena_t *a = hdr(t);
    atomic_store(&a->open, 0);
    atomic_thread_fence(memory_order_seq_cst);
    for (unsigned w = 0; w * 64 < a->nregions; w++)
        if (atomic_load(&a->used[w])) {
            atomic_store(&a->open, 1);
            return false;
        }
    return true;
}

int procs_run(void *arena, int memfd, unsigned first)
{
    static procs_t t;
    t.arena = arena;
    t.memfd = memfd;
    atomic_store(&hdr(&t)->rec_pid, getpid());
    trace_t *tr = trace_new(&t, first, RUNNING);
    if (!tr || rec_attach(&tr->rc, arena, arena_region(arena, first), memfd))
        return -1;
    unsigned idle = 0, holes = 0;
    for (;;) {
        uint64_t now = clock_ns();
        if (t.waiting || atomic_load(&hdr(&t)->joins) != t.joins_seen)
            t.waiting = look_at_regions(&t, now);
        rec_turn_t sum = {0};
        for (unsigned k = 0; k < ARENA_REGIONS; k++) {
            trace_t *x = t.traces[k];
            if (!x || x->phase != RUNNING)
                continue;
            rec_turn_t turn = rec_turn(&x->rc, now);
            sum.taken += turn.taken;
            sum.full |= turn.full;
            sum.hole |= turn.hole;
            if (x->rc.done) {
                x->phase = ENDED;
                rec_ended(&x->rc);
                x->rc.gone_look = now;
                sum.taken++; /* the end of a trace is progress: look again at once */
            }
        }
        release_ended(&t, now, false);
        if (!t.count) {
            t.waiting = look_at_regions(&t, now);
            if (!t.count && close_arena(&t))
                return 0;
            continue;
        }
        if (sum.full)
            continue;
        if (sum.taken) {
            idle = holes = 0;
            wait_all(&t, sleep_ns(&t, now, nap_ns(&t)), true); /* caught up: let a batch gather */
            continue;
        }
        if (sum.hole) {
            /* A message may not pass a claim still being filled: spin a
             * little, then pause.  Its producer is inside a call or was
             * preempted, or waits for a core the recorder holds; nobody
             * wakes the recorder early (a wake at each post while the
             * hole lasts would cost the producers a call each). */
            if (++holes < HOLE_SPINS) {
                __builtin_ia32_pause();
                continue;
            }
            holes = 0;
            look_for_vanished(&t, now);
            struct timespec ts = {0, (long)HOLE_PAUSE_NS};
            nanosleep(&ts, NULL);
            continue;
        }
        if (++idle < IDLE_SPINS) {
            __builtin_ia32_pause();
            continue;
        }
        idle = 0;
        look_for_vanished(&t, now);
        release_ended(&t, now, true);
        if (!t.count)
            continue;
        wait_all(&t, sleep_ns(&t, now, REC_FLUSH_NS), false);
    }
}
