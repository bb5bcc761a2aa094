/*
 * ring: the queue from the traced process to its recorder.  See ring.h.
 */
#include "preload/ring.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/single_threaded.h>

#include "preload/arena.h"
#include "preload/clock.h"
#include "preload/seccomp.h"

#define SPINS 128                 /* looks at the tail before a producer sleeps */
#define ROOM_NAP_NS 10000000ull   /* a producer waiting for room looks again this often */
#define ACK_NAP_NS 10000000ull
#define STARTING_MAX_NS 30000000000ull /* a recorder not attached after this long is gone */

/* This thread's post in progress: a signal's handler that ends the
 * process publishes it (ring_settle); one that posts on its own does not
 * wait for room (the recorder stops at this claim until it is done). */
typedef struct pending_s {
    region_t *r;
    uint64_t seq;           /* the claim (CLAIMING: the head just before it) */
    uint16_t n;             /* its slots */
    uint8_t state;          /* PEND_* */
    const ring_slot_t *m;   /* the message, once built (NULL between ring_begin and ring_end) */
    const void *bytes;
    size_t len;
} pending_t;

/* pending_t.state.  The steps of a post, each noted before it is taken,
 * so that a handler that interrupts it knows where it stands. */
enum {
    PEND_NONE,
    PEND_CLAIMING, /* about to take head: whether it did is seq vs head */
    PEND_ROOM,     /* claimed, waiting for room */
    PEND_OURS,     /* claimed with room: filling, or published already */
};

static __thread pending_t pend __attribute__((tls_model("initial-exec")));
static __thread uint64_t seen_tail __attribute__((tls_model("initial-exec")));

static inline void cpu_relax(void) { __builtin_ia32_pause(); }

/* A slot just published goes to the cache the recorder's core reads
 * from, out of this core's: CLDEMOTE, a hint (a no-op where the CPU
 * lacks it: its encoding is a reserved NOP). */
static inline void demote(const ring_slot_t *h)
{
#if defined(__x86_64__)
    __asm__ volatile(".byte 0x0f, 0x1c, 0x00" : : "a"(h) : "memory");
#else
    (void)h;
#endif
}

bool ring_posting(void) { return pend.state != PEND_NONE; }

void ring_forget_thread(void)
{
    memset(&pend, 0, sizeof pend);
    seen_tail = 0;
}

/* ---- the recorder's health ------------------------------------------------------ */

static void drop(region_t *r) { atomic_fetch_add_explicit(&r->ring.dropped, 1, memory_order_relaxed); }

/* Whether the recorder is gone for good (then the ring closes). */
static bool recorder_gone(region_t *r, uint64_t now, uint64_t waited_since)
{
    uint32_t st = atomic_load(&r->rec_state);
    if (st == REC_FAILED || st == REC_DONE)
        return true;
    if (st == REC_STARTING)
        return now - waited_since > STARTING_MAX_NS;
    uint64_t beat = atomic_load(&r->heartbeat);
    if (now < beat || now - beat < RING_DEAD_NS)
        return false;
    /* Silent, perhaps only blocked in a slow write: is it there at all?
     * A seccomp sandbox may forbid asking: then silence ten times as
     * long means gone. */
    int32_t pid = atomic_load(&r->rec_pid);
    if (pid <= 0)
        return true;
    if (!seccomp_allows(SYS_kill, pid, 0, 0, 0, 0, 0))
        return now - beat >= 10 * RING_DEAD_NS;
    return kill(pid, 0) && errno == ESRCH;
}

static void wake_recorder(region_t *r)
{
    if (atomic_load_explicit(&r->ring.sleeping, memory_order_relaxed) &&
        atomic_exchange(&r->ring.sleeping, 0))
        region_wake(&r->ring.work);
}

/* Put claim [s, s + n) on the abandoned list; false when it is full. */
static bool abandon(region_t *r, uint64_t s, unsigned n)
{
    uint64_t v = ((s << 16) | n) + 1;
    for (unsigned i = 0; i < RING_ABANDON_MAX; i++) {
        uint64_t zero = 0;
        if (atomic_compare_exchange_strong(&r->ring.abandoned[i], &zero, v))
            return true;
    }
    return false;
}

/* Wait until claim [s, s + n) has its slots.  False when the claim was
 * given up (counted): the ring closed, or the recorder is stuck at
 * another claim (the abandoned list tells it to skip this one). */
static bool room(region_t *r, uint64_t s, unsigned n)
{
    ring_ctl_t *c = &r->ring;
    if (s + n - seen_tail <= c->slots)
        return true;
    seen_tail = atomic_load_explicit(&c->tail, memory_order_acquire);
    if (s + n - seen_tail <= c->slots)
        return true;
    uint64_t since = 0, last = seen_tail;
    for (unsigned i = 0;; i++) {
        wake_recorder(r);
        if (i < SPINS) {
            cpu_relax();
        } else {
            uint64_t now = clock_ns();
            if (!since)
                since = now;
            if (atomic_load(&c->closed) || recorder_gone(r, now, since)) {
                atomic_store(&c->closed, 1);
                drop(r);
                return false;
            }
            uint64_t hole = atomic_load(&c->hole_since);
            if (hole && now > hole && now - hole > RING_STALL_NS && abandon(r, s, n)) {
                drop(r);
                return false;
            }
            uint32_t w = atomic_load(&c->room);
            atomic_fetch_add(&c->room_waiters, 1);
            seen_tail = atomic_load_explicit(&c->tail, memory_order_acquire);
            if (s + n - seen_tail > c->slots)
                region_wait(&c->room, w, ROOM_NAP_NS);
            atomic_fetch_sub(&c->room_waiters, 1);
        }
        seen_tail = atomic_load_explicit(&c->tail, memory_order_acquire);
        if (s + n - seen_tail <= c->slots)
            return true;
        if (seen_tail != last)
            last = seen_tail;
    }
}

/* ---- posting ------------------------------------------------------------------------ */

/* Slots for n bytes after a head slot, as cut to RING_MSG_MAX. */
static unsigned slots_for(size_t *n)
{
    size_t cont = (*n + RING_CONT_BYTES - 1) / RING_CONT_BYTES;
    if (cont > RING_MSG_MAX - 1) {
        cont = RING_MSG_MAX - 1;
        *n = cont * RING_CONT_BYTES;
    }
    return (unsigned)(1 + cont);
}

/* Claim n slots: waiting for room, or (nowait) only if there is room now. */
static uint64_t claim(region_t *r, unsigned n, bool nowait, uint64_t *s)
{
    ring_ctl_t *c = &r->ring;
    if (atomic_load_explicit(&c->closed, memory_order_relaxed)) {
        drop(r);
        return 0;
    }
    pend = (pending_t){.r = r, .n = (uint16_t)n,
                       .seq = atomic_load_explicit(&c->head, memory_order_relaxed),
                       .state = PEND_CLAIMING};
    atomic_signal_fence(memory_order_seq_cst);
    if (nowait) {
        uint64_t h = pend.seq;
        do {
            if (h + n - atomic_load_explicit(&c->tail, memory_order_acquire) > c->slots) {
                pend.state = PEND_NONE;
                drop(r);
                return 0;
            }
            pend.seq = h;
            atomic_signal_fence(memory_order_seq_cst);
        } while (!atomic_compare_exchange_weak(&c->head, &h, h + n));
        *s = h;
        atomic_signal_fence(memory_order_seq_cst);
        pend.state = PEND_OURS;
        return 1;
    }
    *s = atomic_fetch_add_explicit(&c->head, n, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    pend.seq = *s;
    pend.state = PEND_ROOM;
    if (!room(r, *s, n)) {
        pend.state = PEND_NONE;
        return 0;
    }
    pend.state = PEND_OURS;
    return 1;
}

static void fill(region_t *r, uint64_t s, unsigned n, const ring_slot_t *m, const void *bytes,
                 size_t len)
{
    ring_slot_t *slots = region_slots(r);
    uint64_t mask = r->ring.slots - 1;
    ring_slot_t *h = &slots[s & mask];
    memcpy((char *)h + sizeof h->seq, (const char *)m + sizeof m->seq, sizeof *h - sizeof h->seq);
    h->nslots = (uint16_t)n;
    if (len)
        h->e = len;
    const char *b = bytes;
    for (unsigned i = 1; i < n; i++) {
        ring_slot_t *cs = &slots[(s + i) & mask];
        size_t k = len > RING_CONT_BYTES ? RING_CONT_BYTES : len;
        atomic_store_explicit(&cs->seq, ~(uint32_t)(s + i + 1), memory_order_relaxed);
        memcpy((char *)cs + sizeof cs->seq, b, k);
        b += k;
        len -= k;
    }
}

static inline uint64_t publish(region_t *r, uint64_t s, unsigned n, unsigned flags)
{
    uint32_t slots = r->ring.slots;
    atomic_store_explicit(&region_slots(r)[s & (slots - 1)].seq, (uint32_t)(s + 1),
                          memory_order_release);
    if (flags & RING_SYNC) {
        wake_recorder(r);
    } else if (s - seen_tail >= slots / RING_WAKE_DIV &&
               atomic_load_explicit(&r->ring.sleeping, memory_order_relaxed)) {
        seen_tail = atomic_load_explicit(&r->ring.tail, memory_order_acquire);
        if (s - seen_tail >= slots / RING_WAKE_DIV)
            wake_recorder(r);
    }
    return s + n;
}

/* ring_post of a one-slot message by a thread with no post in progress
 * (every heap event): claim's, fill's and publish's steps for one slot,
 * in the same order, each noted before it is taken. */
static __attribute__((noinline)) uint64_t post_one(region_t *r, const ring_slot_t *m,
                                                   unsigned flags)
{
    ring_ctl_t *c = &r->ring;
    if (atomic_load_explicit(&c->closed, memory_order_relaxed)) {
        drop(r);
        return 0;
    }
    pend.r = r;
    pend.n = 1;
    pend.m = NULL;
    pend.seq = atomic_load_explicit(&c->head, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    pend.state = PEND_CLAIMING;
    atomic_signal_fence(memory_order_seq_cst);
    uint64_t s = atomic_fetch_add_explicit(&c->head, 1, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    pend.seq = s;
    pend.state = PEND_ROOM;
    if (__builtin_expect(s + 1 - seen_tail > c->slots, 0) && !room(r, s, 1)) {
        atomic_signal_fence(memory_order_seq_cst);
        pend.state = PEND_NONE;
        return 0;
    }
    pend.bytes = NULL;
    pend.len = 0;
    pend.m = m;
    atomic_signal_fence(memory_order_seq_cst);
    pend.state = PEND_OURS;
    ring_slot_t *h = &region_slots(r)[s & (c->slots - 1)];
    memcpy((char *)h + sizeof h->seq, (const char *)m + sizeof m->seq, sizeof *h - sizeof h->seq);
    h->nslots = 1;
    uint64_t end = publish(r, s, 1, flags);
    demote(h);
    atomic_signal_fence(memory_order_seq_cst);
    pend.state = PEND_NONE;
    return end;
}

/* Any post: with bytes, without waiting, or inside a handler that
 * interrupted one of this thread's. */
static __attribute__((noinline)) uint64_t post_any(region_t *r, const ring_slot_t *m,
                                                   const void *bytes, size_t len, unsigned flags)
{
    pending_t outer = pend;
    if (outer.state)
        flags |= RING_NOWAIT; /* inside a handler that interrupted a post */
    unsigned n = slots_for(&len);
    uint64_t s, end = 0;
    if (claim(r, n, flags & RING_NOWAIT, &s)) {
        pend.m = m;
        pend.bytes = bytes;
        pend.len = len;
        fill(r, s, n, m, bytes, len);
        end = publish(r, s, n, flags);
    }
    atomic_signal_fence(memory_order_seq_cst);
    pend = outer;
    return end;
}

uint64_t ring_post(region_t *r, const ring_slot_t *m, const void *bytes, size_t len,
                   unsigned flags)
{
    if (__builtin_expect(pend.state == PEND_NONE && !len && !(flags & RING_NOWAIT), 1))
        return post_one(r, m, flags);
    return post_any(r, m, bytes, len, flags);
}

uint64_t ring_begin(region_t *r, unsigned flags)
{
    if (pend.state)
        flags |= RING_NOWAIT;
    uint64_t s;
    /* The claim stays this thread's pending post until ring_end; a
     * handler nested in between sees it (and restores it, ring_post). */
    return claim(r, 1, flags & RING_NOWAIT, &s) ? s + 1 : 0;
}

uint64_t ring_end(region_t *r, uint64_t claim1, const ring_slot_t *m, unsigned flags)
{
    if (!claim1)
        return 0;
    uint64_t s = claim1 - 1;
    if (pend.state == PEND_OURS && pend.seq == s && pend.r == r) {
        pend.m = m;
        fill(r, s, 1, m, NULL, 0);
    } else {
        /* A handler settled it already (it then ended the process; we
         * only get here if it did not): nothing more to do. */
        return 0;
    }
    uint64_t end = publish(r, s, 1, flags);
    atomic_signal_fence(memory_order_seq_cst);
    memset(&pend, 0, sizeof pend);
    return end;
}

/* The recorder acks every 256 messages; it makes a wake call only while
 * ack_waiters says someone waits (the count is raised before acked is
 * read, and the recorder reads it after storing acked: one of the two
 * sees the other's). */
int ring_wait_acked(region_t *r, uint64_t end, uint64_t max_ns)
{
    if (!end || pend.state)
        return -1; /* our own hole is before it: no ack can come */
    uint64_t start = clock_ns(), since = start;
    int rc;
    atomic_fetch_add(&r->ack_waiters, 1);
    for (;;) {
        uint32_t w = atomic_load(&r->rec_futex);
        if (atomic_load(&r->acked) >= end) {
            rc = 0;
            break;
        }
        wake_recorder(r);
        uint64_t now = clock_ns();
        if (now - start > max_ns || recorder_gone(r, now, since)) {
            rc = atomic_load(&r->acked) >= end ? 0 : -1; /* it may have acked meanwhile */
            break;
        }
        region_wait(&r->rec_futex, w, ACK_NAP_NS);
    }
    atomic_fetch_sub(&r->ack_waiters, 1);
    return rc;
}

/* Whether claim s's head slot is published (now, or once and reused). */
static bool published_once(region_t *r, uint64_t s)
{
    uint32_t seq = atomic_load(&region_slots(r)[s & (r->ring.slots - 1)].seq);
    return (int32_t)(seq - (uint32_t)(s + 1)) >= 0;
}

int ring_settle(region_t *r)
{
    if (!pend.state || pend.r != r)
        return 0;
    if (pend.state == PEND_CLAIMING) {
        /* Interrupted around taking head: in a process of one thread only
         * this thread moves head, so head tells whether it did; in
         * another, nothing does. */
        if (!__libc_single_threaded) {
            memset(&pend, 0, sizeof pend);
            return -1;
        }
        if (atomic_load(&r->ring.head) < pend.seq + pend.n) {
            memset(&pend, 0, sizeof pend);
            return 0; /* it did not: nothing to fill */
        }
        pend.state = PEND_ROOM;
    }
    if (pend.state == PEND_ROOM && !room(r, pend.seq, pend.n)) {
        memset(&pend, 0, sizeof pend);
        return 0; /* given up: the recorder skips it */
    }
    if (pend.state == PEND_OURS && published_once(r, pend.seq)) {
        memset(&pend, 0, sizeof pend);
        return 0; /* interrupted after its publish */
    }
    if (pend.m) {
        fill(r, pend.seq, pend.n, pend.m, pend.bytes, pend.len);
    } else {
        /* ring_begin's claim, its call interrupted by the end of the
         * process: no event (it never returned) */
        ring_slot_t lost = {.kind = 0, .a = 1}; /* MSG_LOST, an interrupted call */
        fill(r, pend.seq, pend.n, &lost, NULL, 0);
    }
    publish(r, pend.seq, pend.n, RING_SYNC);
    memset(&pend, 0, sizeof pend);
    return 0;
}

/* ---- the recorder's side ---------------------------------------------------------- */

ring_slot_t *ring_next(region_t *r)
{
    uint64_t t = atomic_load_explicit(&r->ring.tail, memory_order_relaxed);
    ring_slot_t *s = &region_slots(r)[t & (r->ring.slots - 1)];
    if (atomic_load_explicit(&s->seq, memory_order_acquire) != (uint32_t)(t + 1))
        return NULL;
    /* A message's length is the producer's word: keep it in bounds. */
    if (s->nslots == 0 || s->nslots > RING_MSG_MAX)
        s->nslots = 1;
    return s;
}

const ring_slot_t *ring_peek(region_t *r, unsigned ahead)
{
    uint64_t t = atomic_load_explicit(&r->ring.tail, memory_order_relaxed) + ahead;
    const ring_slot_t *s = &region_slots(r)[t & (r->ring.slots - 1)];
    if (atomic_load_explicit(&s->seq, memory_order_acquire) != (uint32_t)(t + 1))
        return NULL;
    return s;
}

size_t ring_bytes(region_t *r, const ring_slot_t *m, void *out, size_t n)
{
    ring_slot_t *slots = region_slots(r);
    uint64_t t = atomic_load_explicit(&r->ring.tail, memory_order_relaxed);
    size_t room_ = (size_t)(m->nslots - 1) * RING_CONT_BYTES, done = 0;
    if (n > room_)
        n = room_;
    for (unsigned i = 1; done < n; i++) {
        const ring_slot_t *cs = &slots[(t + i) & (r->ring.slots - 1)];
        size_t k = n - done > RING_CONT_BYTES ? RING_CONT_BYTES : n - done;
        memcpy((char *)out + done, (const char *)cs + sizeof cs->seq, k);
        done += k;
    }
    return done;
}

void ring_consume(region_t *r, const ring_slot_t *m)
{
    uint64_t t = atomic_load_explicit(&r->ring.tail, memory_order_relaxed);
    atomic_store_explicit(&r->ring.tail, t + m->nslots, memory_order_release);
}

unsigned ring_skip_abandoned(region_t *r)
{
    ring_ctl_t *c = &r->ring;
    uint64_t t = atomic_load_explicit(&c->tail, memory_order_relaxed);
    for (unsigned i = 0; i < RING_ABANDON_MAX; i++) {
        uint64_t v = atomic_load(&c->abandoned[i]);
        if (!v || ((v - 1) >> 16) != t)
            continue;
        unsigned n = (unsigned)((v - 1) & 0xffff);
        atomic_store(&c->abandoned[i], 0);
        atomic_store_explicit(&c->tail, t + n, memory_order_release);
        return n;
    }
    return 0;
}

unsigned ring_skip_lost(region_t *r)
{
    uint64_t t = atomic_load_explicit(&r->ring.tail, memory_order_relaxed);
    atomic_store_explicit(&r->ring.tail, t + 1, memory_order_release);
    return 1;
}

uint64_t ring_backlog(const region_t *r)
{
    return atomic_load(&r->ring.head) - atomic_load(&r->ring.tail);
}

void ring_wake_producers(region_t *r)
{
    if (atomic_load_explicit(&r->ring.room_waiters, memory_order_relaxed))
        region_wake(&r->ring.room);
}

void ring_sleep(region_t *r, uint64_t max_ns)
{
    ring_ctl_t *c = &r->ring;
    uint32_t w = atomic_load(&c->work);
    atomic_store(&c->sleeping, 1);
    atomic_thread_fence(memory_order_seq_cst);
    if (!ring_next(r))
        region_wait(&c->work, w, max_ns);
    atomic_store(&c->sleeping, 0);
}

bool ring_nap(region_t *r, uint64_t max_ns)
{
    ring_ctl_t *c = &r->ring;
    /* A batch is there (behind a hole, say): no nap, and sleeping is
     * left alone: producers that saw it set would make wake calls. */
    if (ring_backlog(r) >= c->slots / RING_WAKE_DIV)
        return false;
    uint32_t w = atomic_load(&c->work);
    atomic_store(&c->sleeping, 1);
    atomic_thread_fence(memory_order_seq_cst);
    /* Producers that looked at sleeping before it was set look again at
     * each post while they are a wake's worth ahead: past this check, a
     * wake is not missed, only delayed to their next post (or max_ns). */
    bool nap = ring_backlog(r) < c->slots / RING_WAKE_DIV;
    if (nap)
        region_wait(&c->work, w, max_ns);
    atomic_store(&c->sleeping, 0);
    return nap;
}
