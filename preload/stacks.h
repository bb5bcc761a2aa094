/*
 * stacks: call stacks deduplicated into small ids.
 *
 * Ids start at 1 (0: no stack) and are never given twice.  A new
 * stack's record is handed to the caller-supplied function while the
 * table is locked, so no thread can use an id before its record is
 * queued ahead of the use.  Lookups of stacks a thread has seen recently
 * skip the lock (a per-thread cache).  Capturing is preload/unwind.h's.
 *
 * The table's memory is bounded (STACKS_MEMORY_MAX, whatever the number
 * of stacks): a stack not seen for a long while is forgotten, and seen
 * again it is new, with a new id and record.  The recorder gives the
 * same frames the same id in the trace (recorder/stackids.h).
 */
#ifndef MEMSIM_PRELOAD_STACKS_H
#define MEMSIM_PRELOAD_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef void (*stacks_write_fn)(uint64_t id, const uintptr_t *frames, unsigned n, void *ctx);

/* The id of this stack; a stack never seen before gets the next id,
 * write() is called for it under the table's lock, and *is_new is set.
 * 0 when n is 0 or the table is out of memory.  write NULL: only the
 * calling thread's cache is looked at, without the lock (0 on a miss):
 * for a thread that may not wait for a lock (preload/sandbox.h). */
uint64_t stacks_intern(const uintptr_t *frames, unsigned n, stacks_write_fn write, void *ctx,
                       bool *is_new);

/* The most memory the table maps, in bytes: two generations of 6 MiB
 * of stacks and a 1 MiB index each, and 0.5 MiB while an index doubles. */
#define STACKS_MEMORY_MAX (29u << 19)

/* Ids given so far (the last one). */
uint64_t stacks_count(void);

/* The memory the table maps now, in bytes. */
size_t stacks_memory(void);

/* A library was unloaded from [lo, hi): the stacks with a frame there
 * are forgotten.  The next use of the same frames (code loaded at that
 * address since) gets a new id and record, written after the library's
 * load is posted, so the analyzer names its frames from the new one. */
void stacks_forget_range(uintptr_t lo, uintptr_t hi);

/* Forget every id (a forked child's trace starts over).  Single-threaded. */
void stacks_reset(void);

#endif
