/*
 * reorder: the one place where the ring's order is not the heap's.
 *
 * A free is claimed before the real free and an allocation after the
 * real one returned, so either is ahead of any reuse of its address.  A
 * realloc claims its slot before its call (its old block may be taken
 * by another thread as soon as it is released) and fills it after; a
 * realloc that moved its block then posts MSG_REALLOC_DONE, claimed
 * after the call like an allocation.  The new block was had in between:
 * a free of the new address by another thread can be claimed after the
 * realloc's slot and still come before the realloc returned it, and so
 * can a whole life of a block at that address.
 *
 * So a realloc that moved waits, without holding up anything else,
 * until its MSG_REALLOC_DONE: the realloc is taken there, where its new
 * block is known to be had.  It is taken sooner when a message of its
 * thread comes (its done was lost), when another message names its old
 * address as a block it had (an allocation, a free, a realloc from it:
 * the old block was given back inside the call, and glibc's realloc
 * gets the new block before it frees the old one, so taking it there is
 * in order too), when a message that is not a heap or mapping event
 * comes (a module, a phase, an exec, a fork, the end), and at
 * reorder_flush.  A realloc moving onto its old address is no such sign
 * (its slot too was claimed before its call): when that one is taken,
 * the one it waits for goes first.
 *
 * Each thread inside realloc has at most one waiting, so the wait grows
 * with the threads, to REORDER_WAITING_MAX; past that, or when memory
 * runs out, the oldest is taken early (counted in early).
 */
#ifndef MEMSIM_RECORDER_REORDER_H
#define MEMSIM_RECORDER_REORDER_H

#include <stdbool.h>
#include <stdint.h>

#include "ipc/ring.h"

#define REORDER_WAITING_MIN 64        /* room for as many at first */
#define REORDER_WAITING_MAX (1u << 20) /* reallocs waiting, at most (one per thread inside realloc) */

typedef struct reorder_s {
    void (*take)(void *ctx, const ring_slot_t *m); /* the recorder's handling of one message */
    void *ctx;
    ring_slot_t *wait;    /* wait[0, n): reallocs that moved, in ring order */
    unsigned n, cap;      /* cap: room in wait */
    uint64_t early;       /* taken before their MSG_REALLOC_DONE */
} reorder_t;

/* ro is zeroed, or was set up before (its room is kept for reuse). */
void reorder_init(reorder_t *ro, void (*take)(void *, const ring_slot_t *), void *ctx);
/* The next message of the ring, in the ring's order (m may be consumed
 * from the ring as soon as this returns). */
void reorder_input(reorder_t *ro, const ring_slot_t *m);
/* Take every realloc that waits, in ring order. */
void reorder_flush(reorder_t *ro);
/* Give back the room (after reorder_flush). */
void reorder_free(reorder_t *ro);

#endif
