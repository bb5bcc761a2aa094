/*
 * ring: the queue from the traced process to its recorder.  See ring.h.
 */
#include "ipc/ring.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/single_threaded.h>

#include "lib/check.h"
#include "ipc/arena.h"
#include "ipc/clock.h"
#include "ipc/seccomp.h"

#define SPINS 128                 /* looks at the tail before a producer sleeps */
#define ROOM_NAP_NS 100000000ull  /* a producer waiting for room looks again this often */
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
    uint64_t beat = atomic_load(&r->beat.ns);
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

/* Put claim [s, s + n) on the abandoned list; false when it is full.
 * The entry is stored before the count says so: a recorder that reads
 * the count first misses it for one look at most. */
static bool abandon(region_t *r, uint64_t s, unsigned n)
{
    uint64_t v = ((s << 16) | n) + 1;
    for (unsigned i = 0; i < RING_ABANDON_MAX; i++) {
        uint64_t zero = 0;
        if (atomic_compare_exchange_strong(&r->ring.abandoned[i], &zero, v)) {
            atomic_fetch_add(&r->ring.nabandoned, 1);
            return true;
        }
    }
    return false;
}

/* ---- room ------------------------------------------------------------------------------- */

/* Whether slot word w, seen for position p, is held by a claim of an
 * earlier lap that is not published (a hole): nothing written yet, or
 * a two-step post's call under way. */
static bool held_by_hole(const ring_ctl_t *c, uint64_t p, uint32_t w)
{
    uint32_t behind = (uint32_t)((p >> c->shift) - (w >> 2)) & 0x3fffffffu;
    unsigned tag = w & 3;
    return behind >= 1 && behind < 0x20000000u && (tag == RING_FREE || tag == RING_OPEN);
}

/* Whether every slot of claim [s, s + n) is free for it; if not, the
 * first that is not, and its word. */
static bool slots_free(region_t *r, uint64_t s, unsigned n, uint64_t *p, uint32_t *w)
{
    const ring_ctl_t *c = &r->ring;
    ring_slot_t *slots = region_slots(r);
    for (uint64_t q = s; q < s + n; q++) {
        uint32_t v = atomic_load_explicit(&slots[q & (c->slots - 1)].word, memory_order_acquire);
        if (v != ring_word(q, c->shift, RING_FREE)) {
            *p = q;
            *w = v;
            return false;
        }
    }
    return true;
}

/* Give claim *s up for a new one at the head (its slot is held by a
 * hole): noted step by step, as a claim is (post_one). */
static bool move_claim(region_t *r, uint64_t *s, unsigned n)
{
    if (!abandon(r, *s, n))
        return false;
    ring_ctl_t *c = &r->ring;
    pend.seq = atomic_load_explicit(&c->head, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    pend.state = PEND_CLAIMING;
    atomic_signal_fence(memory_order_seq_cst);
    *s = atomic_fetch_add_explicit(&c->head, n, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    pend.seq = *s;
    pend.state = PEND_ROOM;
    return true;
}

/* Whether the slot of position p is held by a message of an earlier lap
 * not yet taken (a full ring), as word w says. */
static bool held_by_message(const ring_ctl_t *c, uint64_t p, uint32_t w)
{
    uint32_t behind = (uint32_t)((p >> c->shift) - (w >> 2)) & 0x3fffffffu;
    return behind >= 1 && behind < 0x20000000u && ((w & 3) == RING_HEAD || (w & 3) == RING_CONT);
}

/* Whether the recorder is gone (the ring closes) or held at a hole for
 * RING_STALL_NS while this producer waited as long: then its event is
 * given up (counted). */
static bool give_up(region_t *r, uint64_t now, uint64_t since)
{
    ring_ctl_t *c = &r->ring;
    if (atomic_load(&c->closed) || recorder_gone(r, now, since)) {
        atomic_store(&c->closed, 1);
        return true;
    }
    uint64_t hole = atomic_load(&c->hole_since);
    return hole && now > hole && now - hole > RING_STALL_NS && now - since > RING_STALL_NS;
}

/* The ring is full: give claim *s up (the recorder skips it), sleep
 * until the slot at the head is taken, and claim again.  A waiter that
 * holds no claim holds nobody up, so the recorder wakes only as many as
 * the room it freed can take, not every thread at once.  1: claimed
 * again; 0: the abandoned list is full (wait holding the claim); -1:
 * given up (give_up; counted). */
static int wait_unclaimed(region_t *r, uint64_t *s, unsigned n, uint64_t since)
{
    ring_ctl_t *c = &r->ring;
    if (!abandon(r, *s, n))
        return 0;
    atomic_signal_fence(memory_order_seq_cst);
    pend.state = PEND_NONE; /* nothing of ours in the ring meanwhile */
    atomic_signal_fence(memory_order_seq_cst);
    ring_slot_t *slots = region_slots(r);
    for (;;) {
        uint32_t seen = atomic_load(&c->room);
        atomic_fetch_add(&c->room_waiters, 1);
        uint64_t h = atomic_load(&c->head);
        bool full = held_by_message(c, h, atomic_load(&slots[h & (c->slots - 1)].word));
        if (full)
            region_wait(&c->room, seen, ROOM_NAP_NS);
        atomic_fetch_sub(&c->room_waiters, 1);
        if (!full)
            break;
        if (give_up(r, clock_ns(), since)) {
            drop(r);
            return -1;
        }
    }
    seen_tail = atomic_load_explicit(&c->tail, memory_order_acquire);
    pend.seq = atomic_load_explicit(&c->head, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    pend.state = PEND_CLAIMING;
    atomic_signal_fence(memory_order_seq_cst);
    *s = atomic_fetch_add_explicit(&c->head, n, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    pend.seq = *s;
    pend.state = PEND_ROOM;
    return 1;
}

/* Wait until claim *s, of n slots, has its slots.  A slot held by the
 * last lap's hole (a preempted producer, a realloc under way) moves a
 * short claim instead (*s changes).  False when the claim was given up
 * (counted): the ring closed, or the recorder is held at a hole it may
 * not pass (the abandoned list tells it to skip this one). */
static bool room(region_t *r, uint64_t *sp, unsigned n)
{
    ring_ctl_t *c = &r->ring;
    uint64_t s = *sp;
    if (s + n - seen_tail <= c->slots)
        return true;
    seen_tail = atomic_load_explicit(&c->tail, memory_order_acquire);
    if (s + n - seen_tail <= c->slots)
        return true;
    uint64_t since = 0;
    for (unsigned i = 0;; i++) {
        uint64_t p;
        uint32_t w;
        if (slots_free(r, s, n, &p, &w))
            return true;
        if (n <= RING_SKIP_MAX && held_by_hole(c, p, w) && move_claim(r, &s, n)) {
            *sp = s;
            i = 0;
            continue;
        }
        wake_recorder(r);
        /* Held by a hole: it is being filled, or will move.  Held by a
         * message not yet taken: the ring is full, and room comes a
         * quarter ring later: no spinning. */
        bool full = held_by_message(c, p, w);
        if (i < SPINS && !full) {
            cpu_relax();
            continue;
        }
        uint64_t now = clock_ns();
        if (!since)
            since = now;
        int again = full && n <= RING_SKIP_MAX ? wait_unclaimed(r, &s, n, since) : 0;
        if (again < 0)
            return false;
        if (again > 0) {
            *sp = s;
            i = 0;
            continue;
        }
        /* Given up: the recorder skips the claim (gone, it takes none). */
        if (give_up(r, now, since) && (atomic_load(&c->closed) || abandon(r, s, n))) {
            drop(r);
            return false;
        }
        /* The recorder bumps room after freeing slots and looks at the
         * waiters after (one of the two sees the other's). */
        uint32_t seen = atomic_load(&c->room);
        atomic_fetch_add(&c->room_waiters, 1);
        if (atomic_load(&region_slots(r)[p & (c->slots - 1)].word) == w)
            region_wait(&c->room, seen, ROOM_NAP_NS);
        atomic_fetch_sub(&c->room_waiters, 1);
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
        uint64_t h = pend.seq, p;
        uint32_t w;
        do {
            if (h + n - atomic_load_explicit(&c->tail, memory_order_acquire) > c->slots &&
                !slots_free(r, h, n, &p, &w)) {
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
        CHECK(pend.seq == *s && pend.n == n && *s + n <= atomic_load(&c->head));
        return 1;
    }
    *s = atomic_fetch_add_explicit(&c->head, n, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    pend.seq = *s;
    pend.state = PEND_ROOM;
    if (!room(r, s, n)) {
        pend.state = PEND_NONE;
        return 0;
    }
    pend.state = PEND_OURS;
    /* The claim is this thread's: noted where a handler finds it, and
     * taken (head is past it). */
    CHECK(pend.seq == *s && pend.n == n && *s + n <= atomic_load(&c->head));
    return 1;
}

static void fill(region_t *r, uint64_t s, unsigned n, const ring_slot_t *m, const void *bytes,
                 size_t len)
{
    ring_slot_t *slots = region_slots(r);
    const ring_ctl_t *c = &r->ring;
    uint64_t mask = c->slots - 1;
    ring_slot_t *h = &slots[s & mask];
    memcpy((char *)h + sizeof h->word, (const char *)m + sizeof m->word, sizeof *h - sizeof h->word);
    h->nslots = (uint16_t)n;
    if (len)
        h->e = len;
    const char *b = bytes;
    for (unsigned i = 1; i < n; i++) {
        ring_slot_t *cs = &slots[(s + i) & mask];
        size_t k = len > RING_CONT_BYTES ? RING_CONT_BYTES : len;
        atomic_store_explicit(&cs->word, ring_word(s + i, c->shift, RING_CONT), memory_order_relaxed);
        memcpy((char *)cs + sizeof cs->word, b, k);
        b += k;
        len -= k;
    }
}

static inline uint64_t publish(region_t *r, uint64_t s, unsigned n, unsigned flags)
{
    ring_ctl_t *c = &r->ring;
    uint32_t slots = c->slots;
    /* A claim taken (head is past it), filled (a continuation slot has
     * its word), and not published before. */
    CHECK(n >= 1 && n <= RING_MSG_MAX && s + n <= atomic_load(&c->head));
    CHECK(atomic_load(&region_slots(r)[s & (slots - 1)].word) != ring_word(s, c->shift, RING_HEAD));
    CHECK(n == 1 || atomic_load(&region_slots(r)[(s + 1) & (slots - 1)].word) ==
                        ring_word(s + 1, c->shift, RING_CONT));
    atomic_store_explicit(&region_slots(r)[s & (slots - 1)].word, ring_word(s, c->shift, RING_HEAD),
                          memory_order_release);
    if (flags & RING_SYNC) {
        wake_recorder(r);
    } else if (s - seen_tail >= slots / RING_WAKE_DIV &&
               atomic_load_explicit(&c->sleeping, memory_order_relaxed)) {
        /* A wake's worth past what the recorder has looked at (its scan
         * passes holes; the tail stays at the oldest). */
        seen_tail = atomic_load_explicit(&c->tail, memory_order_acquire);
        if (s - atomic_load_explicit(&c->scan, memory_order_relaxed) >= slots / RING_WAKE_DIV)
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
    if (__builtin_expect(s + 1 - seen_tail > c->slots, 0) && !room(r, &s, 1)) {
        atomic_signal_fence(memory_order_seq_cst);
        pend.state = PEND_NONE;
        return 0;
    }
    pend.bytes = NULL;
    pend.len = 0;
    pend.m = m;
    atomic_signal_fence(memory_order_seq_cst);
    pend.state = PEND_OURS;
    CHECK(pend.seq == s && s + 1 <= atomic_load(&c->head));
    ring_slot_t *h = &region_slots(r)[s & (c->slots - 1)];
    memcpy((char *)h + sizeof h->word, (const char *)m + sizeof m->word, sizeof *h - sizeof h->word);
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

uint64_t ring_begin(region_t *r, uint8_t kind, uint64_t old, unsigned flags)
{
    if (pend.state)
        flags |= RING_NOWAIT;
    uint64_t s;
    /* The claim stays this thread's pending post until ring_end; a
     * handler nested in between sees it (and restores it, ring_post). */
    if (!claim(r, 1, flags & RING_NOWAIT, &s))
        return 0;
    /* OPEN, with what a message taken past it must not name. */
    ring_slot_t *h = &region_slots(r)[s & (r->ring.slots - 1)];
    h->kind = kind;
    h->a = old;
    atomic_store_explicit(&h->word, ring_word(s, r->ring.shift, RING_OPEN), memory_order_release);
    return s + 1;
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

/* Whether claim s's head slot is published (now, or once and taken). */
static bool published_once(region_t *r, uint64_t s)
{
    const ring_ctl_t *c = &r->ring;
    uint32_t w = atomic_load(&region_slots(r)[s & (c->slots - 1)].word);
    uint32_t ahead = (uint32_t)((w >> 2) - (s >> c->shift)) & 0x3fffffffu;
    return w == ring_word(s, c->shift, RING_HEAD) || (ahead >= 1 && ahead < 0x20000000u);
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
    if (pend.state == PEND_ROOM) {
        uint64_t s = pend.seq;
        if (!room(r, &s, pend.n)) {
            memset(&pend, 0, sizeof pend);
            return 0; /* given up: the recorder skips it */
        }
        pend.seq = s;
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
