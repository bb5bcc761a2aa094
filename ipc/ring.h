/*
 * ring: the queue from a traced process's threads to its recorder, in
 * the region they share (ipc/arena.h).
 *
 * A sequenced multi-producer, single-consumer queue.  A producer takes
 * the next n positions with one atomic add on head (a claim), waits until
 * its slots are free for this lap, fills them and publishes the first by
 * storing its word.  Each slot's word says which lap of the ring it is
 * at and what it holds then (ring_word): FREE (the recorder gave it to
 * this lap's claim; nothing written yet), OPEN (claimed by a two-step
 * post whose call is under way: its kind and old address are set), HEAD
 * (a published message's first slot) or CONT (a continuation slot).  So
 * slots are freed one by one, as the recorder takes their messages, not
 * behind a single tail: a claim whose producer was preempted (a hole)
 * holds up only its own slot, and the recorder may take what was
 * published after it (recorder/intake.h says when: a hole's message can
 * never be about an address a later message names, but for a two-step
 * post's old address, which its OPEN word shows).  The order of claims
 * is the trace's order otherwise: a free claimed before the real free()
 * is ahead of an allocation, in any thread, that reuses the address.
 *
 * A message is one head slot (ring_slot_t: kind, thread, time, stack and
 * five words) and, for one with bytes (a stack's frames, a path, argv),
 * the CONT slots after it.
 *
 * Nothing here takes a lock or allocates, so it is safe in a signal
 * handler, around fork and in a vfork child.  A full ring makes a
 * producer wait on a futex, which the recorder wakes once it has freed a
 * quarter of the ring (or has nothing left to take): with hundreds of
 * threads, waking them as each slot came free cost each event a wait
 * and a wake, and left the recorder a sliver of the cores; a slot still held by the last lap's hole makes a short
 * claim move instead: the producer puts it on the abandoned list (the
 * recorder skips it) and claims again, so a preempted thread never holds
 * another up.  Two rules keep a signal from wedging the queue:
 *   - a thread interrupted between claim and publish leaves a hole.  The
 *     handler may post only without waiting for room (RING_NOWAIT:
 *     dropped and counted if the ring is full); a handler that ends the
 *     process settles the hole first (ring_settle), publishing the
 *     interrupted message whole or as lost;
 *   - a producer that waits for room while the recorder is alive but held
 *     at a hole for RING_STALL_NS (a message that may not pass it: the
 *     end, a fork) gives its claim up: the claim goes on the abandoned
 *     list, and the event is counted in dropped.
 * A recorder that stops beating for RING_DEAD_NS is taken for dead: the
 * ring closes and producers drop what they post.
 *
 * Invariants: tail <= every unconsumed claim < head; a claim at p is
 * written only while its slots' words are at p's lap (FREE first); the
 * recorder frees a slot (FREE, next lap) only after taking the message
 * that held it; a word HEAD at p's lap holds a whole message claimed at p.
 */
#ifndef MEMSIM_IPC_RING_H
#define MEMSIM_IPC_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RING_SLOTS 16384u             /* slots of a ring, a power of two: 1 MiB */
#define RING_SLOTS_MIN 1024u          /* fewer only under a low ulimit -f */
#define RING_MSG_MAX 4096u            /* slots of the largest message (256 KiB) */
#define RING_CONT_BYTES 60u           /* bytes a continuation slot carries */
#define RING_ABANDON_MAX 64u          /* claims given up at once, at most */
#define RING_SKIP_MAX 64u             /* a claim of up to this many slots moves past a hole */
#define RING_ROOM_DIV 4u              /* producers waiting for room are woken a quarter ring on, */
#define RING_ROOM_PER 256u            /* ...one per this many slots freed */
#define RING_STALL_NS 1000000000ull   /* a recorder stuck this long: give the claim up */
#define RING_DEAD_NS 3000000000ull    /* a recorder silent this long: it is gone */
#define RING_WAKE_DIV 8u              /* a sleeping recorder is woken 1/8 of a ring behind */

/* What a slot holds at its lap (a word's low two bits). */
enum { RING_FREE, RING_OPEN, RING_HEAD, RING_CONT };

/* The word of the slot of position pos (of a ring of 2^shift slots) at
 * pos's lap, holding tag.  Laps count modulo 2^30: a slot is never left
 * that many laps behind. */
static inline uint32_t ring_word(uint64_t pos, unsigned shift, unsigned tag)
{
    return (uint32_t)((pos >> shift) << 2) | tag;
}

typedef struct ring_slot_s {
    _Atomic uint32_t word; /* ring_word: the lap and RING_FREE/OPEN/HEAD/CONT */
    uint8_t kind;         /* what the message is (ipc/msg.h) */
    uint8_t fn;           /* the function, for heap and mapping events */
    uint16_t nslots;      /* slots the message takes, >= 1 */
    int32_t tid;          /* the thread that posted it */
    uint32_t stack;       /* stack id, 0: none */
    uint64_t t;           /* time: ticks of ipc/clock.h */
    uint64_t a, b, c, d, e; /* the kind's fields */
} __attribute__((aligned(64))) ring_slot_t;

_Static_assert(sizeof(ring_slot_t) == 64, "a slot is one cache line");

typedef struct ring_ctl_s {
    uint32_t slots __attribute__((aligned(64)));        /* a power of two, set once */
    uint32_t shift;                                     /* log2(slots) */
    _Atomic uint64_t head __attribute__((aligned(64))); /* next claim */
    _Atomic uint64_t tail __attribute__((aligned(64))); /* claims below are consumed: their
                                                           slots free for the next lap */
    _Atomic uint64_t scan;                              /* claims below were looked at by the
                                                           recorder (tail <= scan <= head) */
    _Atomic uint32_t work __attribute__((aligned(64))); /* futex the recorder sleeps on */
    _Atomic uint32_t sleeping;                          /* the recorder is (going) asleep */
    _Atomic uint32_t closed;                            /* the recorder is gone: drop */
    _Atomic uint64_t hole_since;                        /* ns the recorder has been held at an
                                                           unpublished claim it may not pass,
                                                           0: it is not */
    _Atomic uint64_t dropped;                           /* events producers gave up */
    _Atomic uint32_t nabandoned;                        /* abandoned[]'s entries in use */
    _Atomic uint64_t abandoned[RING_ABANDON_MAX];       /* (claim << 16 | nslots) + 1, or 0 */
    _Atomic uint32_t room __attribute__((aligned(64))); /* futex: bumped as room is freed */
    _Atomic uint32_t room_waiters;                      /* producers waiting for room */
} ring_ctl_t;

struct region_s;

/* ---- the producer's side (the traced process) ---------------------------------- */

/* ring_post flags */
#define RING_SYNC 1u   /* wake the recorder now (it acks when done: ring_wait_acked) */
#define RING_NOWAIT 2u /* never wait for room: drop the message if there is none */

/* Post the message m (all but seq and nslots) with n bytes after it (a
 * message with bytes carries their number in e).
 * Returns the sequence just past the message (what ring_wait_acked
 * waits for), or 0 when it was dropped (counted in dropped).  Messages
 * longer than RING_MSG_MAX slots are cut to fit (the caller's fields
 * should say so).  Inside a signal handler that interrupted a post of
 * this thread, RING_NOWAIT is implied. */
uint64_t ring_post(struct region_s *r, const ring_slot_t *m, const void *bytes, size_t n,
                   unsigned flags);

/* A one-slot message in two steps, for an event whose place in the
 * order must be taken before the real call that completes it (realloc,
 * mremap: the old block is freed inside the call): ring_begin claims (and
 * waits for room) and marks the slot OPEN with the event's kind and old
 * address (what a message taken past it must not name), ring_end fills
 * and publishes.  ring_begin returns the claim + 1, or 0 when dropped;
 * ring_end takes that value and returns what ring_post would. */
uint64_t ring_begin(struct region_s *r, uint8_t kind, uint64_t old, unsigned flags);
uint64_t ring_end(struct region_s *r, uint64_t claim, const ring_slot_t *m, unsigned flags);

/* Wait until the recorder has done everything before sequence end, at
 * most max_ns, as long as it is alive and moving.  0 when done, -1
 * otherwise. */
int ring_wait_acked(struct region_s *r, uint64_t end, uint64_t max_ns);

/* For a thread about to end the process (from a handler that may have
 * interrupted one of its own posts): publish that post, whole if its
 * content was built, as an interrupted call otherwise.  0, or -1 when it
 * cannot tell whether it had claimed (other threads move the head too):
 * the recorder may then be stuck at a claim that will never be filled,
 * until the process is gone. */
int ring_settle(struct region_s *r);

/* Whether this thread is between the claim and the publish of a post
 * (a signal handler interrupted it there). */
bool ring_posting(void);

/* Forget this thread's post in progress (a fork child: the claim was in
 * the parent's ring). */
void ring_forget_thread(void);

/* The consumer's side is the recorder's: recorder/intake.h. */

#endif
