/*
 * stacks: call stacks of the program's allocations, captured with
 * libunwind and deduplicated into small ids.
 *
 * libunwind is loaded privately (dlopen with RTLD_LOCAL, then dlsym into
 * function pointers), so memsim's copy never clashes with a program that
 * links another unwinder (LLVM's libunwind, an older libunwind): their
 * symbols are not resolved through ours and ours not through theirs.
 * Per-thread caching is switched on.  Frames inside libmemsim itself are
 * dropped, so a stack starts at the program's call.
 *
 * Ids start at 1 (0: no stack).  A new stack's record is written by the
 * caller-supplied function while the table is locked, so no thread can
 * use an id before its record is in the trace.  Lookups of stacks a
 * thread has seen recently skip the lock (a per-thread cache).
 */
#ifndef MEMSIM_PRELOAD_STACKS_H
#define MEMSIM_PRELOAD_STACKS_H

#include <stdbool.h>
#include <stdint.h>

#define STACKS_MAX_DEPTH 256

/* Load the unwinder; depth 0 turns stacks off.  0, or -1 with a reason
 * in *why (stacks then stay off). */
int stacks_init(unsigned depth, const char **why);

/* Capturing, in an entry point itself.  The unwinder costs about 6 ns a
 * frame, and three frames of memsim's own (recorder, capture, this
 * module) cost as much as the program's frames of a shallow stack: an
 * entry point (malloc, free, ...) calls stacks_grab, which is inlined, so
 * the walk starts at the entry point.  stacks_frames then gives the
 * program's frames of it. */
#define STACKS_SELF_MAX 16 /* memsim frames a capture may start with */
typedef struct stacks_raw_s {
    int n;
    uintptr_t pc[STACKS_MAX_DEPTH + STACKS_SELF_MAX];
} stacks_raw_t;

/* Set by stacks_init; not to be used directly. */
extern int (*stacks_backtrace_)(void **buffer, int size);
extern int stacks_want_; /* frames to ask for: depth + STACKS_SELF_MAX, 0: off */

static inline __attribute__((always_inline)) void stacks_grab(stacks_raw_t *r)
{
    r->n = stacks_want_ ? stacks_backtrace_((void **)r->pc, stacks_want_) : 0;
}

/* The program's frames of r (memsim's skipped), innermost first, at most
 * max of them: their number, and where they start in *frames. */
unsigned stacks_frames(const stacks_raw_t *r, unsigned max, const uintptr_t **frames);

typedef void (*stacks_write_fn)(uint64_t id, const uintptr_t *frames, unsigned n, void *ctx);

/* The id of this stack; a stack never seen before gets the next id,
 * write() is called for it under the table's lock, and *is_new is set.
 * 0 when n is 0 or the table is out of memory. */
uint64_t stacks_intern(const uintptr_t *frames, unsigned n, stacks_write_fn write, void *ctx,
                       bool *is_new);

/* Distinct stacks so far. */
uint64_t stacks_count(void);

void stacks_lock(void);
void stacks_unlock(void);
/* Forget every id (a forked child's trace starts over).  Single-threaded. */
void stacks_reset(void);

#endif
