/*
 * stackids: the trace's stack ids, from the ids the process posts.
 *
 * The process's stack table is bounded (preload/stacks.h): a stack it
 * has not seen for long is forgotten there, and seen again it is posted
 * again (MSG_STACK) under a new id.  This table keeps every stack the
 * trace has a record of, by its frames, and maps each id the process
 * posts to the trace's id of the same frames: the first post of some
 * frames gets the next trace id (1, 2, 3, ...) and a record; a later
 * post of the same frames gets theirs, and no record.  A process that
 * never forgets posts 1, 2, 3, ... in order, and the trace keeps them.
 *
 * An unloaded library's stacks are forgotten here too, as in the
 * process: the same addresses posted after the unload are new code, and
 * get a new id and record (after the new library's load record).
 *
 * Memory: the frames of every distinct stack, as differences from the
 * frame before (varints: 1-3 bytes a frame where the process held 8),
 * 8 bytes a stack more, an index of 8 bytes a slot (at most 3/4 full)
 * and 4 bytes per id the process posted: 91 bytes a stack of 24 frames.
 * Without memory for a stack's frames, its post gets a trace id and
 * record of its own (the trace stays right, the stack may then have two
 * records); without memory for an id, the events that name it go
 * without their stack, counted (stackids_unmapped).
 *
 * One table per recorder (the recorder's state is per process, and a
 * forked recorder starts over with stackids_reset).
 */
#ifndef MEMSIM_RECORDER_STACKIDS_H
#define MEMSIM_RECORDER_STACKIDS_H

#include <stdbool.h>
#include <stdint.h>

/* Forget every stack and id: a new trace. */
void stackids_reset(void);

/* A stack posted under the process's id pid, with its n frames: the
 * trace's id of those frames; *fresh when the trace has no record of
 * them yet (the caller writes one, with that id).  0 (and no record)
 * for pid 0 or past 32 bits, which no event names. */
uint32_t stackids_post(uint64_t pid, const uint64_t *frames, unsigned n, bool *fresh);

/* The trace's id for an event's stack pid (0: none).  An id never
 * posted, or one there was no memory to map, gives 0, counted. */
uint32_t stackids_of(uint32_t pid);

/* A library at [lo, hi) was unloaded: its stacks are forgotten. */
void stackids_forget_range(uint64_t lo, uint64_t hi);

/* Events stackids_of gave 0 for a stack id that was not 0. */
uint64_t stackids_unmapped(void);

/* Distinct stacks held, and the bytes the table holds (frames, index, map). */
uint64_t stackids_count(void);
uint64_t stackids_bytes(void);

#endif
