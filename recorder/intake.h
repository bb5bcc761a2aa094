/*
 * intake: which of a ring's messages the recorder takes next.
 *
 * The ring's order is the order of its claims (ipc/ring.h).  A claim
 * whose producer has not published it yet is a hole: the thread was
 * preempted between its claim and its publish, a signal handler runs on
 * top of it, or it is a realloc's, whose message is filled after the
 * real call.  Taken strictly in claim order, every message waits behind
 * the oldest hole, and with hundreds of threads on a few cores some
 * thread is nearly always preempted inside a post: the ring filled
 * behind it and every thread waited for room.
 *
 * So the recorder takes a published message past holes, when it may:
 *
 *   - a message is taken past a hole only if, after its word was read
 *     (an acquire), the hole was seen still unpublished.  Then the hole
 *     was not published before it: whatever the program did after the
 *     hole's post returned (handing its block to another thread,
 *     freeing it, getting its address back from malloc) did not happen
 *     before this message's post either;
 *   - and a message is only ever about an address after the hole's event
 *     happened: an allocation is claimed after the real call returned and
 *     published before the block is handed to the program, a free is
 *     claimed before the real free.  So nothing taken past a hole names
 *     the hole's block;
 *   - but for a two-step post (realloc, mremap: claimed before the real
 *     call, filled after).  Inside the call the old block is given back,
 *     and another thread may get it and publish before the realloc's
 *     message is.  Its slot is OPEN, with its kind and old address, from
 *     before the call: a heap message that names that address waits for
 *     a realloc's hole, every mapping event for an mremap's;
 *   - a message that is not a heap or mapping event (the end, a fork, a
 *     spawn, an exec, a module's load or unload, a phase) passes no
 *     hole, and nothing passes it;
 *   - a message held back holds back what comes after it of its thread
 *     or naming one of its addresses (a mapping event, every mapping
 *     event), and nothing else: what passes it cannot have happened
 *     after it (a block is named only once the event that made it the
 *     program's happened), so a realloc inside its call holds up only
 *     its own block's history, not every thread.
 *
 * The messages of one thread stay in their order (a thread claims its
 * next post after it published the last), a stack's record comes before
 * its first use (posted under the stack table's lock before any thread
 * can find the stack there), and a realloc that moved still waits for
 * its done in recorder/reorder.h, which takes messages in this order.
 *
 * A producer whose slot is still held by the last lap's hole moves its
 * claim and puts the old one on the ring's abandoned list; the intake
 * drops such a claim when it meets it.  If the slot is still held then,
 * the claim's lap is one the slot skips once the hole's message is
 * taken: gone[] counts, per slot, the laps right after the one holding
 * it that were given up (a claim given up after a live one, which waits
 * for the slot, stays on the list until the slot reaches it).
 *
 * Invariants: tail <= every hole and ready entry < scan <= head; holes
 * and ready are sorted and disjoint; every position in [tail, scan) is
 * a hole, inside a ready message, or consumed; an unpublished claim's
 * slots are holes from its head on (so a continuation slot found as a
 * hole with no hole right before it, inside no ready message, is left
 * from a message taken already: it is freed, not waited for).
 */
#ifndef MEMSIM_RECORDER_INTAKE_H
#define MEMSIM_RECORDER_INTAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ipc/arena.h"
#include "ipc/ring.h"

#define INTAKE_HOLES 1024 /* unpublished claims passed at once, at most */
#define INTAKE_AHEAD 256  /* published messages one look ahead finds, at most */
/* Published messages found and not taken: a look ahead's, and the holes
 * found published since. */
#define INTAKE_READY (INTAKE_HOLES + INTAKE_AHEAD)

typedef struct intake_hole_s {
    uint64_t pos;  /* the claim (or a slot inside an unpublished message) */
    uint64_t addr; /* an OPEN two-step post's old address */
    uint8_t kind;  /* its kind (MSG_REALLOC, MSG_MREMAP); 0: not seen OPEN */
} intake_hole_t;

typedef struct intake_ready_s {
    uint64_t pos;  /* a published message's head */
    uint32_t seen; /* intake.looks when its word was read */
} intake_ready_t;

typedef struct intake_s {
    region_t *r;
    uint64_t tail;    /* claims below are consumed (the ring's tail) */
    uint64_t scan;    /* claims below were looked at */
    uint64_t cur;     /* the head of the message intake_next returned last */
    uint32_t looks;   /* times the holes were looked at again */
    bool dead;        /* the process is gone: holes are never filled, pass them all */
    bool held;        /* intake_next found a message it may not take yet */
    uint32_t freed;   /* slots freed since producers waiting for room were last woken */
    unsigned nholes;
    unsigned r0, nready;                /* ready[r0, r0 + nready) */
    unsigned pick;                      /* ready's index of the message returned last */
    intake_hole_t holes[INTAKE_HOLES];  /* sorted */
    intake_ready_t ready[INTAKE_READY]; /* sorted */
    uint32_t gone[RING_SLOTS];          /* per slot: laps after the holding one given up */
} intake_t;

/* Start taking region r's ring (a fresh one, or one taken this far by
 * nobody else). */
void intake_init(intake_t *in, region_t *r);

/* The next message to take, or NULL: none published, or the next may
 * not pass a hole yet (held says so). */
ring_slot_t *intake_next(intake_t *in);

/* The message intake_next returned is taken: its slots are free.  m is
 * not read once its head slot is (the next lap's producer may be
 * writing it): the caller copies what it needs after (its kind) first. */
void intake_consume(intake_t *in, const ring_slot_t *m);

/* The published head slot `ahead` positions past the last one
 * intake_next returned, or NULL: a look at what comes, to start loading
 * what its event will touch.  Nothing is taken. */
const ring_slot_t *intake_peek(const intake_t *in, unsigned ahead);

/* The n bytes after head slot m (across the wrap), into out; returns
 * what was copied (the message's bytes may have been cut). */
size_t intake_bytes(const intake_t *in, const ring_slot_t *m, void *out, size_t n);

/* Claims below this are all consumed (what an ack says). */
static inline uint64_t intake_tail(const intake_t *in) { return in->tail; }

/* Whether published messages may wait: claims not looked at yet, or
 * looked at and not taken. */
bool intake_behind(const intake_t *in);

/* Whether every message published below upto (a head read before) is
 * taken: all were looked at, and none waits. */
static inline bool intake_taken_upto(const intake_t *in, uint64_t upto)
{
    return in->scan >= upto && !in->nready;
}

/* Claims taken (head) and not consumed: holes, and what is behind. */
uint64_t intake_backlog(const intake_t *in);

/* The process is gone and nothing more will be published: take what
 * was, pass every hole.  Then intake_next returns every published
 * message left, and NULL once there are none. */
void intake_dead(intake_t *in);

/* Wake producers waiting for room, once a quarter of the ring was freed
 * since they were last woken, or (all) if any was. */
void intake_wake_producers(intake_t *in, bool all);

/* Sleep until a producer wakes the recorder or max_ns pass, unless
 * something is there to look at. */
void intake_sleep(intake_t *in, uint64_t max_ns);

/* Caught up with the producers: let a batch gather.  Sleep until they
 * are a wake's worth (slots / RING_WAKE_DIV) past what was looked at, a
 * RING_SYNC post wakes the recorder, or max_ns pass, even with messages
 * published: taken one at a time as they come, each costs the recorder
 * a turn of its loop and moves a slot's line between the cores while it
 * is being written, and nothing lies ahead to prefetch.  False, at
 * once, when the producers are a wake's worth ahead already. */
bool intake_nap(intake_t *in, uint64_t max_ns);

/* intake_sleep and intake_nap in steps, for a recorder that sleeps on
 * several rings at once (recorder/procs.h):
 *   - intake_batch: a batch is there already (a nap would not be taken);
 *   - intake_sleep_arm: the producers are told the recorder is going to
 *     sleep (the ring's sleeping and scan); returns the futex word's
 *     value (ring.work) to wait on;
 *   - then, after a full fence (atomic_thread_fence, seq_cst) made once
 *     for every ring armed, intake_sleep_may: nothing was published that
 *     a sleep would miss (for a nap, the producers are less than a
 *     wake's worth ahead; else nothing at all is there to look at);
 *   - intake_sleep_disarm once awake. */
bool intake_batch(const intake_t *in);
uint32_t intake_sleep_arm(intake_t *in);
bool intake_sleep_may(const intake_t *in, bool nap);
void intake_sleep_disarm(intake_t *in);

#endif
