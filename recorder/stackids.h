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
 * One table per trace.  The functions below work on the current
 * trace's; a recorder serving several processes (recorder/procs.h) keeps
 * each other trace's in a stackids_t and swaps it in, as it does the
 * live map (recorder/state.h).  A fork's child starts with an empty one:
 * its process numbers its stacks afresh (preload/stacks.h).
 */
#ifndef MEMSIM_RECORDER_STACKIDS_H
#define MEMSIM_RECORDER_STACKIDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct stackids_chunk_s {
    unsigned char *data; /* 1 MiB of entries (stackids.c) */
    size_t used;
} stackids_chunk_t;

/* A trace's table; zeroed: an empty one.  The index is open addressing,
 * linear probing, at most 3/4 full: a slot is the top half of the
 * stack's hash (the tag, which also gives its home) over its entry's
 * reference (1 + chunk << 18 + offset / 4); 0: empty. */
typedef struct stackids_s {
    uint64_t *index;
    uint64_t mask;      /* capacity - 1 */
    uint64_t count;     /* slots in use */
    int shift;          /* 32 - log2(capacity) */
    stackids_chunk_t *chunks; /* [0, nchunks): the last one is being filled */
    uint32_t nchunks, capchunks;
    uint32_t *map;      /* the process's id -> the trace's id (0: not posted) */
    uint64_t map_cap;   /* ids map holds: [0, map_cap) */
    uint32_t last_id;   /* trace ids given */
    uint64_t unmapped;  /* stackids_unmapped */
} stackids_t;

/* Forget every stack and id of the current table: a new trace. */
void stackids_reset(void);
/* Exchange the current table with *other. */
void stackids_swap(stackids_t *other);
/* Free a table that is not the current one. */
void stackids_fini(stackids_t *t);

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
