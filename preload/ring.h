/*
 * ring: the queue from a traced process's threads to its recorder, in
 * the region they share (preload/arena.h).
 *
 * A sequenced multi-producer, single-consumer queue (the LMAX
 * disruptor's scheme).  A producer takes the next n sequence numbers with
 * one atomic add on head (a claim), waits until the recorder has freed
 * their slots, fills them and publishes the first one by storing its
 * sequence number + 1 into it.  The recorder takes messages strictly in
 * claim order, so the order of claims is the order of the trace: a free
 * claimed before the real free() is ahead of an allocation, in any
 * thread, that reuses the address.
 *
 * A message is one head slot (ring_slot_t: kind, thread, time, stack and
 * five words) and, for one with bytes (a stack's frames, a path, argv),
 * the slots after it, each of which starts with the complement of its
 * own sequence number + 1, so that no continuation slot ever looks
 * published.
 *
 * Nothing here takes a lock or allocates, so it is safe in a signal
 * handler, around fork and in a vfork child.  Two rules keep a signal
 * from wedging the queue:
 *   - a thread interrupted between claim and publish leaves a hole the
 *     recorder waits at.  The handler may post only without waiting for
 *     room (RING_NOWAIT: dropped and counted if the ring is full), since
 *     room past the hole is freed only once the handler returns; a
 *     handler that ends the process settles the hole first
 *     (ring_settle), publishing the interrupted message whole or as lost;
 *   - a producer that waits for room while the recorder is alive but has
 *     not moved for RING_STALL_NS (stuck at another thread's hole) gives
 *     its claim up: the claim goes on the abandoned list, which the
 *     recorder skips, and the event is counted in dropped.
 * A recorder that stops beating for RING_DEAD_NS is taken for dead: the
 * ring closes and producers drop what they post.
 *
 * Invariants: tail <= every unpublished claim < head; head - tail <=
 * slots once a claim has its room; a slot with seq == s + 1 holds a
 * whole message claimed at s.
 */
#ifndef MEMSIM_PRELOAD_RING_H
#define MEMSIM_PRELOAD_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RING_SLOTS 16384u             /* slots of a ring, a power of two: 1 MiB */
#define RING_SLOTS_MIN 1024u          /* fewer only under a low ulimit -f */
#define RING_MSG_MAX 4096u            /* slots of the largest message (256 KiB) */
#define RING_CONT_BYTES 60u           /* bytes a continuation slot carries */
#define RING_ABANDON_MAX 64u          /* claims given up at once, at most */
#define RING_STALL_NS 1000000000ull   /* a recorder stuck this long: give the claim up */
#define RING_DEAD_NS 3000000000ull    /* a recorder silent this long: it is gone */
#define RING_WAKE_DIV 8u              /* a sleeping recorder is woken 1/8 of a ring behind */

typedef struct ring_slot_s {
    _Atomic uint32_t seq; /* (claim + 1) mod 2^32 once published */
    uint8_t kind;         /* what the message is (preload/msg.h) */
    uint8_t fn;           /* the function, for heap and mapping events */
    uint16_t nslots;      /* slots the message takes, >= 1 */
    int32_t tid;          /* the thread that posted it */
    uint32_t stack;       /* stack id, 0: none */
    uint64_t t;           /* time: ticks of preload/clock.h */
    uint64_t a, b, c, d, e; /* the kind's fields */
} __attribute__((aligned(64))) ring_slot_t;

_Static_assert(sizeof(ring_slot_t) == 64, "a slot is one cache line");

typedef struct ring_ctl_s {
    uint32_t slots __attribute__((aligned(64)));        /* a power of two, set once */
    _Atomic uint64_t head __attribute__((aligned(64))); /* next claim */
    _Atomic uint64_t tail __attribute__((aligned(64))); /* slots below are consumed: free */
    _Atomic uint32_t room __attribute__((aligned(64))); /* futex: bumped as room is freed */
    _Atomic uint32_t room_waiters;                      /* producers waiting for room */
    _Atomic uint32_t work;                              /* futex the recorder sleeps on */
    _Atomic uint32_t sleeping;                          /* the recorder is (going) asleep */
    _Atomic uint32_t closed;                            /* the recorder is gone: drop */
    _Atomic uint64_t hole_since;                        /* ns the recorder has waited at an
                                                           unpublished claim, 0: it is not */
    _Atomic uint64_t dropped;                           /* events producers gave up */
    _Atomic uint64_t abandoned[RING_ABANDON_MAX];       /* (claim << 16 | nslots) + 1, or 0 */
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
 * waits for room), ring_end fills and publishes.  ring_begin returns the
 * claim + 1, or 0 when dropped; ring_end takes that value and returns
 * what ring_post would. */
uint64_t ring_begin(struct region_s *r, unsigned flags);
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

/* ---- the consumer's side (the recorder) ------------------------------------------- */

/* The published message at the tail, or NULL if the next claim is not
 * published yet. */
ring_slot_t *ring_next(struct region_s *r);

/* The published head slot `ahead` slots past the tail, or NULL (not
 * published yet, or a continuation slot of a longer message): a look at
 * what comes, to start loading what its event will touch.  Nothing is
 * consumed. */
const ring_slot_t *ring_peek(struct region_s *r, unsigned ahead);

/* The n bytes after head slot m (across the wrap), into out; returns
 * what was copied (the message's bytes may have been cut). */
size_t ring_bytes(struct region_s *r, const ring_slot_t *m, void *out, size_t n);

/* Consume the message at the tail (m, from ring_next). */
void ring_consume(struct region_s *r, const ring_slot_t *m);

/* The claim at the tail is unpublished: if a producer gave it up, skip
 * it and return its slots; else 0. */
unsigned ring_skip_abandoned(struct region_s *r);

/* The process is gone (no late writer is possible): skip the slot at the
 * tail, unpublished, as lost.  Returns 1. */
unsigned ring_skip_lost(struct region_s *r);

/* Slots claimed but not yet consumed. */
uint64_t ring_backlog(const struct region_s *r);

/* Wake producers waiting for room (after consuming a batch). */
void ring_wake_producers(struct region_s *r);

/* Sleep until a producer wakes the recorder or max_ns pass, unless a
 * message is already published at the tail. */
void ring_sleep(struct region_s *r, uint64_t max_ns);

/* Caught up with the producers: let a batch gather.  Sleep until they
 * are a wake's worth (slots / RING_WAKE_DIV) ahead, a RING_SYNC post
 * wakes the recorder, or max_ns pass, even with messages published:
 * taken one at a time as they come, each costs the recorder a turn of
 * its loop and moves a slot's line between the cores while it is being
 * written, and nothing lies ahead to prefetch.  False, at once, when the
 * producers are a wake's worth ahead already (at a hole, say: the
 * recorder then waits for it to be filled). */
bool ring_nap(struct region_s *r, uint64_t max_ns);

#endif
