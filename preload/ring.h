/*
 * ring: the queue between the program's threads and memsim's writer.
 *
 * A heap event costs the program's thread only what must happen there:
 * its stack, its time, and a 64-byte slot in this ring.  Everything else
 * is done in the ring's order by two stages, each with its own thread so
 * that they run in parallel: the state stage (the live map, the shadow
 * device: its results go back into the slot) and, behind it, the write
 * stage (the JSON, the file).
 *
 * The ring is a sequenced multi-producer queue (the LMAX disruptor's
 * scheme): a producer takes the next sequence number with one atomic add
 * (ring_claim), fills the slot seq % RING_SLOTS and publishes it by
 * storing seq + 1 into the slot (ring_publish).  The consumer takes slots
 * strictly in sequence order, so the order of claims is the order of the
 * trace: a free claimed before the real free() is always ahead of an
 * allocation that reuses the address, claimed after malloc() returned.
 *
 * Each stage has a lock its thread holds batch by batch.  ring_lock
 * takes both — the consumer role: a thread that needs the trace to be up
 * to date (a sample, a phase, fork, the end) takes it and runs both
 * stages over everything claimed before (ring_flush_locked).  A producer
 * that finds the ring full and its tail standing still drains a batch
 * itself, so the program never depends on the stage threads to make
 * progress (a fork child before they start, threads that could not be
 * created).  A producer that publishes a quarter of the ring ahead of the
 * write stage writes a batch itself (if the write lock is free): the
 * stage thread is behind, and the work is shared instead of waited for.
 *
 * Invariants: tail <= state_tail <= every unpublished claim < head; a slot
 * with seq + 1 stored is complete; slots below state_tail carry the state
 * stage's results; head - tail <= RING_SLOTS once a claim returned.
 */
#ifndef MEMSIM_PRELOAD_RING_H
#define MEMSIM_PRELOAD_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define RING_SLOTS 16384u /* a power of two: 1 MiB of slots */

typedef enum ring_kind_e {
    RING_ALLOC,
    RING_FREE,
    RING_REALLOC, /* addr 0: the realloc failed and old stays */
    RING_LOST     /* claimed, never filled (its thread died in between) */
} ring_kind_t;

typedef struct ring_slot_s {
    _Atomic uint32_t seq; /* (claim + 1) mod 2^32 once published */
    uint8_t kind;         /* ring_kind_t */
    uint8_t fn;           /* recorder_fn_t */
    uint8_t flags;        /* the state stage's, for the write stage */
    uint8_t spare;
    int32_t tid;
    uint32_t stack; /* stack id, 0: none */
    uint64_t t;     /* time: ticks of preload/clock.h */
    uint64_t addr;  /* the block (realloc: the new block, 0 when failed) */
    uint64_t size;  /* requested bytes (free: set by the state stage) */
    uint64_t aux;   /* alloc: alignment; realloc: the old block */
    uint64_t sim;   /* state stage: the simulated address */
    uint64_t old_size; /* state stage: realloc's old block's size */
} __attribute__((aligned(64))) ring_slot_t;

/* What a stage does with one slot (called with its lock held). */
typedef void (*ring_stage_fn)(ring_slot_t *s);

/* Map the slots and set the stages; 0 or -1 (no memory). */
int ring_init(ring_stage_fn state, ring_stage_fn write);
bool ring_ready(void);

/* Claim the next slot, waiting (and helping to drain) while the ring is
 * full.  Fill it, then ring_publish.  Until then the claim is this
 * thread's pending slot (ring_abandon_pending). */
ring_slot_t *ring_claim(void);
void ring_publish(ring_slot_t *s);

/* Claim, fill with content (all but seq) and publish.  If a signal's
 * handler ends the trace while this thread is in here, the content is
 * still written (ring_abandon_pending, ring_flush_locked). */
void ring_post(const ring_slot_t *content);

/* The calling thread's claimed but unpublished slot, if any, is
 * published — with ring_post's content, or as RING_LOST — for a thread
 * about to end the trace from a signal handler that interrupted it
 * between claim and publish.  A claim still waiting for room is settled
 * by the next ring_flush_locked on this thread, once the ring has
 * drained up to it. */
void ring_abandon_pending(void);

/* The consumer role (both stages' locks).  ring_lock waits;
 * ring_lock_timed gives up after max_ns (a signal handler must not wait
 * forever): 0 or -1. */
void ring_lock(void);
int ring_lock_timed(uint64_t max_ns);
void ring_unlock(void);

/* With the role held: run both stages over every slot claimed before the
 * call, waiting (at most max_ns) for claims still being filled.  Returns
 * the number of claims given up on (0 normally). */
uint64_t ring_flush_locked(uint64_t max_ns);

/* Claims made so far, and claims consumed. */
uint64_t ring_claimed(void);
uint64_t ring_consumed(void);

/* The stage threads (memsim-state, memsim-writer): they drain the ring
 * as it fills and sleep when it is empty.  enter_guard runs first in each
 * (memsim's reentrancy guard).  On a machine with fewer than four CPUs
 * one thread runs both stages (the hand-off costs more than it saves
 * there).  ring_writer_start_n chooses: threads 1 or 2 (0: by the CPUs).
 * 0 or -1. */
int ring_writer_start(void (*enter_guard)(void));
int ring_writer_start_n(void (*enter_guard)(void), unsigned threads);

/* fork: the child skips whatever the parent's threads had claimed, and
 * has no stage threads until ring_writer_start.  Call with the role held
 * by this thread (from before fork). */
void ring_fork_child(void);

#endif
