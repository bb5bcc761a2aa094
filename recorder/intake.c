/*
 * intake: the recorder takes a ring's messages past its holes.  See
 * intake.h.
 */
#include "recorder/intake.h"

#include <limits.h>
#include <string.h>

#include "ipc/msg.h"

static inline ring_slot_t *slot_at(const intake_t *in, uint64_t pos)
{
    return &region_slots(in->r)[pos & (in->r->ring.slots - 1)];
}

static inline uint32_t word_at(const intake_t *in, uint64_t pos)
{
    return atomic_load_explicit(&slot_at(in, pos)->word, memory_order_acquire);
}

static inline uint32_t word_for(const intake_t *in, uint64_t pos, unsigned tag)
{
    return ring_word(pos, in->r->ring.shift, tag);
}

/* A message's length is the producer's word: keep it in bounds. */
static unsigned length_of(ring_slot_t *s)
{
    if (s->nslots == 0 || s->nslots > RING_MSG_MAX)
        s->nslots = 1;
    return s->nslots;
}

void intake_init(intake_t *in, region_t *r)
{
    in->r = r;
    in->tail = in->scan = in->cur = atomic_load(&r->ring.tail);
    in->looks = 1;
    in->dead = in->held = false;
    in->freed = 0;
    in->nholes = in->r0 = in->nready = in->pick = 0;
    memset(in->gone, 0, sizeof in->gone);
}

/* ---- slots ------------------------------------------------------------------------------ */

/* Claim pos is done with (taken, or given up by its producer): its slot
 * is free for the next lap, or for a later one when the producers of
 * the laps between gave their claims up while it was held. */
static void free_slot(intake_t *in, uint64_t pos)
{
    const ring_ctl_t *c = &in->r->ring;
    size_t i = pos & (c->slots - 1);
    uint32_t lap = (uint32_t)(pos >> c->shift) + 1 + in->gone[i];
    in->gone[i] = 0;
    atomic_store_explicit(&region_slots(in->r)[i].word, (lap << 2) | RING_FREE,
                          memory_order_release);
    in->freed++;
}

/* The tail: the oldest claim not consumed. */
static void advance_tail(intake_t *in)
{
    uint64_t t = in->scan;
    if (in->nholes && in->holes[0].pos < t)
        t = in->holes[0].pos;
    if (in->nready && in->ready[in->r0].pos < t)
        t = in->ready[in->r0].pos;
    if (t != in->tail) {
        in->tail = t;
        atomic_store_explicit(&in->r->ring.tail, t, memory_order_release);
    }
}

/* ---- holes and what is found ahead ---------------------------------------------------- */

static void hole_add(intake_t *in, uint64_t pos)
{
    ring_slot_t *s = slot_at(in, pos);
    intake_hole_t *h = &in->holes[in->nholes++];
    h->pos = pos;
    h->kind = 0;
    if (word_at(in, pos) == word_for(in, pos, RING_OPEN)) {
        h->kind = s->kind;
        h->addr = s->a;
    }
}

/* Insert a ready message at its place. */
static void ready_insert(intake_t *in, uint64_t pos, uint32_t seen)
{
    if (in->r0 + in->nready == INTAKE_READY) { /* at the end: move down */
        memmove(&in->ready[0], &in->ready[in->r0], in->nready * sizeof in->ready[0]);
        in->r0 = 0;
    }
    intake_ready_t *r = &in->ready[in->r0];
    unsigned i = in->nready;
    while (i > 0 && r[i - 1].pos > pos)
        i--;
    memmove(&r[i + 1], &r[i], (in->nready - i) * sizeof r[0]);
    r[i] = (intake_ready_t){pos, seen};
    in->nready++;
}

/* Look at the claims not looked at yet, up to the head: published ones
 * are ready, the others holes. */
static void extend(intake_t *in)
{
    uint64_t head = atomic_load_explicit(&in->r->ring.head, memory_order_acquire);
    uint64_t p = in->scan;
    unsigned found = 0;
    while (p < head && found < INTAKE_AHEAD) {
        if (word_at(in, p) == word_for(in, p, RING_HEAD)) {
            ready_insert(in, p, in->looks);
            p += length_of(slot_at(in, p));
            found++;
            continue;
        }
        if (!in->dead) { /* a dead process's holes are never filled */
            if (in->nholes == INTAKE_HOLES)
                break;
            hole_add(in, p);
        }
        p++;
    }
    in->scan = p;
}

/* Whether claim q, given up, can go now: its slot is at its lap (free:
 * nobody writes it), or held by a lap whose given-up successors end
 * right before q's. */
static bool abandoned_fits(const intake_t *in, uint64_t q)
{
    const ring_ctl_t *c = &in->r->ring;
    uint32_t w = word_at(in, q), lap = (uint32_t)(q >> c->shift) & 0x3fffffffu;
    if (w == word_for(in, q, RING_FREE))
        return true;
    return ((w >> 2) + 1 + in->gone[q & (c->slots - 1)]) % 0x40000000u == lap;
}

/* Claim [pos, pos + n) was given up by its producer: nothing to take.
 * Its slots are freed at once if this lap holds them, else skipped when
 * the lap that holds them is taken. */
static void abandoned_drop(intake_t *in, uint64_t pos, unsigned n)
{
    const ring_ctl_t *c = &in->r->ring;
    if (pos + n > in->scan)
        in->scan = pos + n;
    for (uint64_t q = pos; q < pos + n; q++) {
        if (word_at(in, q) == word_for(in, q, RING_FREE))
            free_slot(in, q);
        else
            in->gone[q & (c->slots - 1)]++;
    }
}

/* The abandoned list's entry for a claim at pos, taken off it if it can
 * go now (abandoned_fits); 0 if none or not yet. */
static unsigned abandoned_take(intake_t *in, uint64_t pos)
{
    ring_ctl_t *c = &in->r->ring;
    for (unsigned i = 0; i < RING_ABANDON_MAX; i++) {
        uint64_t v = atomic_load(&c->abandoned[i]);
        if (!v || ((v - 1) >> 16) != pos)
            continue;
        unsigned n = (unsigned)((v - 1) & 0xffff);
        for (uint64_t q = pos; q < pos + n; q++)
            if (!abandoned_fits(in, q))
                return 0;
        atomic_store(&c->abandoned[i], 0);
        atomic_fetch_sub(&c->nabandoned, 1);
        return n;
    }
    return 0;
}

/* Whether position pos is a continuation slot of a message found ready. */
static bool inside_ready(const intake_t *in, uint64_t pos)
{
    for (unsigned j = in->r0; j < in->r0 + in->nready; j++) {
        uint64_t h = in->ready[j].pos;
        if (h < pos && pos < h + slot_at(in, h)->nslots)
            return true;
    }
    return false;
}

/* Whether hole h, a continuation slot at its lap, belongs to no claim
 * the intake still waits for.  A claim's slots are holes from its head
 * on (extend steps one position at a time past what is not published),
 * and they go together once the head is published or given up: a
 * continuation hole with no hole right before it, and inside no message
 * found ready, is left from a message taken already.  Freeing it keeps
 * an accounting slip from holding the tail, and a lap later every
 * producer, for good. */
static bool orphan(const intake_t *in, const intake_hole_t *h, uint32_t w, uint64_t prev)
{
    return w == word_for(in, h->pos, RING_CONT) && prev + 1 != h->pos && !inside_ready(in, h->pos - 1);
}

/* Look at every hole again: published ones are ready (the holes after
 * them that are their slots go), OPEN ones say what they hold, given-up
 * ones go, and continuation slots of messages taken already go (orphan).
 * What is found ready here was read after the holes before it were
 * looked at: only the next look lets it pass them. */
static void look_again(intake_t *in)
{
    uint32_t now = ++in->looks;
    bool abandoned = atomic_load_explicit(&in->r->ring.nabandoned, memory_order_acquire) != 0;
    uint64_t gone_below = 0; /* holes below this are slots of a claim just handled */
    uint64_t prev = UINT64_MAX; /* the hole kept last */
    unsigned j = 0;
    for (unsigned i = 0; i < in->nholes; i++) {
        intake_hole_t h = in->holes[i];
        if (h.pos < gone_below)
            continue;
        uint32_t w = word_at(in, h.pos);
        if (orphan(in, &h, w, prev)) {
            free_slot(in, h.pos);
            continue;
        }
        if (w == word_for(in, h.pos, RING_HEAD)) {
            gone_below = h.pos + length_of(slot_at(in, h.pos));
            if (gone_below > in->scan)
                in->scan = gone_below;
            ready_insert(in, h.pos, now);
            continue;
        }
        unsigned n;
        if (abandoned && (n = abandoned_take(in, h.pos)) != 0) {
            gone_below = h.pos + n;
            abandoned_drop(in, h.pos, n);
            continue;
        }
        if (!h.kind && w == word_for(in, h.pos, RING_OPEN)) {
            ring_slot_t *s = slot_at(in, h.pos);
            h.kind = s->kind;
            h.addr = s->a;
        }
        prev = h.pos;
        in->holes[j++] = h;
    }
    in->nholes = j;
    advance_tail(in);
}

/* ---- what may pass what ---------------------------------------------------------------------- */

/* Heap and mapping events: what may be taken past a hole. */
static bool may_pass(uint8_t kind)
{
    switch (kind) {
    case MSG_LOST:
    case MSG_ALLOC:
    case MSG_FREE:
    case MSG_REALLOC:
    case MSG_REALLOC_DONE:
    case MSG_QUIET:
    case MSG_MMAP:
    case MSG_MUNMAP:
    case MSG_MREMAP:
    case MSG_STACK:
    case MSG_MALLINFO:
        return true;
    default:
        return false;
    }
}

static bool is_mapping(uint8_t kind)
{
    return kind == MSG_MMAP || kind == MSG_MUNMAP || kind == MSG_MREMAP;
}

/* Whether m must wait for OPEN hole h: it names the old block a realloc
 * may have given back inside its call, or it is a mapping event while an
 * mremap is under way. */
static bool must_wait(const intake_hole_t *h, const ring_slot_t *m)
{
    if (h->kind == MSG_MREMAP)
        return is_mapping(m->kind);
    if (h->kind != MSG_REALLOC || !h->addr)
        return false;
    switch (m->kind) {
    case MSG_ALLOC:
    case MSG_FREE:
    case MSG_QUIET:
        return m->a == h->addr;
    case MSG_REALLOC:
    case MSG_REALLOC_DONE:
        return m->a == h->addr || m->b == h->addr;
    default:
        return false;
    }
}

/* Whether ready message m at pos may be taken with the holes before it. */
static bool may_take(const intake_t *in, const ring_slot_t *m, uint64_t pos)
{
    if (!in->nholes || in->holes[0].pos > pos)
        return true;
    if (!may_pass(m->kind))
        return false;
    for (unsigned i = 0; i < in->nholes && in->holes[i].pos < pos; i++)
        if (in->holes[i].kind && must_wait(&in->holes[i], m))
            return false;
    return true;
}

/* A ready message that may not be taken yet: what comes after it waits
 * if it is of its thread or names one of its addresses (a mapping event
 * after a mapping event). */
typedef struct blocked_s {
    int32_t tid;
    bool mapping;
    uint64_t a, b;
} blocked_t;

#define BLOCKED_MAX 64 /* messages held back at once; then everything waits */

static bool names(uint64_t x, const blocked_t *b) { return x && (x == b->a || x == b->b); }

static bool after_blocked(const ring_slot_t *m, const blocked_t *b, unsigned n)
{
    bool mapping = is_mapping(m->kind);
    for (unsigned i = 0; i < n; i++)
        if (m->tid == b[i].tid || (mapping && b[i].mapping) || names(m->a, &b[i]) ||
            ((m->kind == MSG_REALLOC || m->kind == MSG_REALLOC_DONE) && names(m->b, &b[i])))
            return true;
    return false;
}

enum { PICK_HELD = -1, PICK_LOOK = -2 };

/* The first ready message that may be taken now: past holes as may_take
 * says, past messages held back as after_blocked says; PICK_LOOK when
 * the holes must be looked at again first. */
static int pick(const intake_t *in)
{
    blocked_t b[BLOCKED_MAX];
    unsigned nb = 0;
    for (unsigned j = in->r0; j < in->r0 + in->nready; j++) {
        const intake_ready_t *e = &in->ready[j];
        ring_slot_t *m = slot_at(in, e->pos);
        if (in->dead)
            return (int)j;
        bool behind_holes = in->nholes && in->holes[0].pos < e->pos;
        /* It passes holes only once they were looked at after its word
         * was read. */
        if (behind_holes && e->seen >= in->looks)
            return PICK_LOOK;
        if (may_take(in, m, e->pos) && !after_blocked(m, b, nb))
            return (int)j;
        if (!may_pass(m->kind) || nb == BLOCKED_MAX)
            return PICK_HELD; /* nothing passes it */
        b[nb++] = (blocked_t){m->tid, is_mapping(m->kind), m->a,
                              m->kind == MSG_REALLOC || m->kind == MSG_REALLOC_DONE ? m->b : 0};
    }
    return PICK_HELD;
}

/* ---- taking --------------------------------------------------------------------------------- */

static ring_slot_t *next_slow(intake_t *in)
{
    if (!in->nready)
        extend(in);
    bool looked = false;
    for (;;) {
        if (!in->nready) {
            if (looked || !in->nholes || in->dead) {
                in->held = in->nholes == INTAKE_HOLES; /* no more room to pass holes */
                return NULL;
            }
            look_again(in); /* a hole may be published by now */
            looked = true;
            continue;
        }
        int j = pick(in);
        if (j >= 0) {
            in->pick = (unsigned)j;
            in->cur = in->ready[j].pos;
            return slot_at(in, in->cur);
        }
        if (j == PICK_HELD && looked) {
            in->held = true;
            return NULL;
        }
        look_again(in); /* what holds it back may be published by now */
        looked = true;
    }
}

ring_slot_t *intake_next(intake_t *in)
{
    in->held = false;
    if (__builtin_expect(!in->nholes && !in->nready, 1)) {
        /* Nothing passed: the claim at the tail, as it comes. */
        uint64_t p = in->scan;
        ring_slot_t *s = slot_at(in, p);
        if (atomic_load_explicit(&s->word, memory_order_acquire) == word_for(in, p, RING_HEAD)) {
            length_of(s);
            in->cur = p;
            return s;
        }
        if (p == atomic_load_explicit(&in->r->ring.head, memory_order_relaxed))
            return NULL;
    }
    return next_slow(in);
}

void intake_consume(intake_t *in, const ring_slot_t *m)
{
    uint64_t p = in->cur;
    /* The length is read once, before a slot is freed: a freed slot is
     * the next lap's, and its producer may write it at once (a one-slot
     * post sets nslots to 1).  Read after the head was freed, it cut the
     * message short: its continuation slots stayed unfreed, scan stopped
     * inside it, and they were taken for holes that never fill, holding
     * the tail and, a lap later, every producer.  The head goes last, so
     * m is the message until the end. */
    unsigned n = m->nslots;
    for (unsigned i = n; i-- > 1;)
        free_slot(in, p + i);
    free_slot(in, p);
    if (in->nready && in->ready[in->pick].pos == p) {
        if (in->pick == in->r0) {
            in->r0++;
        } else { /* taken past messages held back */
            unsigned k = in->pick;
            memmove(&in->ready[k], &in->ready[k + 1], (in->r0 + in->nready - k - 1) * sizeof in->ready[0]);
        }
        if (!--in->nready)
            in->r0 = 0;
    } else if (p == in->scan) {
        in->scan = p + n;
    }
    advance_tail(in);
}

void intake_dead(intake_t *in)
{
    in->dead = true;
    in->nholes = 0;
    advance_tail(in);
}

const ring_slot_t *intake_peek(const intake_t *in, unsigned ahead)
{
    uint64_t p = in->cur + ahead;
    const ring_slot_t *s = slot_at(in, p);
    if (atomic_load_explicit(&s->word, memory_order_acquire) != word_for(in, p, RING_HEAD))
        return NULL;
    return s;
}

size_t intake_bytes(const intake_t *in, const ring_slot_t *m, void *out, size_t n)
{
    ring_slot_t *slots = region_slots(in->r);
    size_t at = (size_t)(m - slots), mask = in->r->ring.slots - 1;
    size_t room = (size_t)(m->nslots - 1) * RING_CONT_BYTES, done = 0;
    if (n > room)
        n = room;
    for (size_t i = 1; done < n; i++) {
        const ring_slot_t *cs = &slots[(at + i) & mask];
        size_t k = n - done > RING_CONT_BYTES ? RING_CONT_BYTES : n - done;
        memcpy((char *)out + done, (const char *)cs + sizeof cs->word, k);
        done += k;
    }
    return done;
}

bool intake_behind(const intake_t *in)
{
    return in->nready || atomic_load(&in->r->ring.head) != in->scan;
}

uint64_t intake_backlog(const intake_t *in)
{
    return atomic_load(&in->r->ring.head) - in->tail;
}

/* ---- waking and sleeping -------------------------------------------------------------------- */

void intake_wake_producers(intake_t *in, bool all)
{
    ring_ctl_t *c = &in->r->ring;
    if (!in->freed || (!all && in->freed < c->slots / RING_ROOM_DIV))
        return;
    uint32_t freed = in->freed;
    in->freed = 0;
    /* The slots' words were stored before; a producer raises the count
     * before it looks at its slot (one of the two sees the other). */
    atomic_thread_fence(memory_order_seq_cst);
    if (!atomic_load_explicit(&c->room_waiters, memory_order_relaxed))
        return;
    /* Behind: as many as the room freed takes, RING_ROOM_PER slots each
     * (a waiter holds no claim: the others can wait; woken all at once,
     * hundreds of threads left the recorder a sliver of the cores).
     * Caught up: all. */
    region_wake_n(&c->room, all ? INT32_MAX : (int)(freed / RING_ROOM_PER) + 1);
}

/* What the producers are past what was looked at. */
static uint64_t ahead(const intake_t *in)
{
    return atomic_load(&in->r->ring.head) - in->scan;
}

bool intake_batch(const intake_t *in)
{
    return in->nready || ahead(in) >= in->r->ring.slots / RING_WAKE_DIV;
}

uint32_t intake_sleep_arm(intake_t *in)
{
    ring_ctl_t *c = &in->r->ring;
    uint32_t w = atomic_load(&c->work);
    atomic_store(&c->scan, in->scan);
    atomic_store(&c->sleeping, 1);
    return w;
}

bool intake_sleep_may(const intake_t *in, bool nap)
{
    if (nap) /* producers wake us a wake's worth ahead */
        return ahead(in) < in->r->ring.slots / RING_WAKE_DIV;
    return !in->nready && !ahead(in);
}

void intake_sleep_disarm(intake_t *in) { atomic_store(&in->r->ring.sleeping, 0); }

void intake_sleep(intake_t *in, uint64_t max_ns)
{
    uint32_t w = intake_sleep_arm(in);
    atomic_thread_fence(memory_order_seq_cst);
    if (intake_sleep_may(in, false))
        region_wait(&in->r->ring.work, w, max_ns);
    intake_sleep_disarm(in);
}

bool intake_nap(intake_t *in, uint64_t max_ns)
{
    /* A batch is there: no nap, and sleeping is left alone (producers
     * that saw it set would make wake calls). */
    if (intake_batch(in))
        return false;
    uint32_t w = intake_sleep_arm(in);
    atomic_thread_fence(memory_order_seq_cst);
    /* Producers that looked at sleeping before it was set look again at
     * each post while they are a wake's worth ahead: past this check, a
     * wake is not missed, only delayed to their next post (or max_ns). */
    bool nap = intake_sleep_may(in, true);
    if (nap)
        region_wait(&in->r->ring.work, w, max_ns);
    intake_sleep_disarm(in);
    return nap;
}
