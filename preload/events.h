/*
 * events: what the hooks record, as messages to the recorder.
 *
 * Each call captures the caller's stack (on memsim's own stack,
 * preload/thread.h), interns it (preload/stacks.h: a new stack is posted
 * before its first use, and new libraries with it, preload/modules.h),
 * reads the time and posts one message (ipc/ring.h).  Nothing is
 * formatted, looked up or locked here but the stack table for a stack
 * never seen: the recorder does the rest in the ring's order.  Ordering
 * rules the hooks follow:
 *   - post a free (or munmap) before calling the real function;
 *   - post an allocation after the real function returned;
 *   - realloc and mremap take their place before the real call and fill
 *     it after (events_move_begin / events_move_end),
 * so a free is always ahead of an allocation that reuses its address,
 * whatever the threads do.
 *
 * Every function keeps errno, and does nothing unless tracing is on.
 */
#ifndef MEMSIM_PRELOAD_EVENTS_H
#define MEMSIM_PRELOAD_EVENTS_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "preload/cancel.h"
#include "ipc/msg.h"
#include "preload/process.h"
#include "preload/real.h"
#include "preload/sample.h"
#include "preload/sampleset.h"
#include "preload/thread.h"
#include "preload/touched.h"
#include "preload/unwind.h"

/* fn's name (events_fn_t is in ipc/msg.h: it crosses the ring). */
const char *events_fn_name(events_fn_t fn);

/* ---- the hooks' fast path ------------------------------------------------------------
 *
 * Inline in the hooks, so that between the program's frames and the
 * unwinder there are only the hook's frame and memsim_on_stack_bt's:
 * every frame of memsim's costs the unwinder a step. */

#define EVENTS_JOB_STACK 1u /* capture the caller's stack */
#define EVENTS_JOB_BEGIN 2u /* only take the place (ring_begin) */

/* An event, as the hook knows it, for events_job on memsim's stack. */
typedef struct events_job_s {
    uint8_t kind;       /* msg_kind_t */
    uint8_t fn;         /* events_fn_t */
    unsigned flags;     /* EVENTS_JOB_* */
    uint64_t a, b, c, d, e; /* the message's words (ipc/msg.h) */
    uint32_t stack;     /* EVENTS_JOB_BEGIN: out, the stack id */
    uint64_t t;         /* EVENTS_JOB_BEGIN: out, the time */
    uint64_t claim;     /* EVENTS_JOB_BEGIN: out, ring_begin's */
} events_job_t;

/* Read the time and post the job's message, or only take its place
 * (EVENTS_JOB_BEGIN).  arg: an events_job_t.  events_job_bt: with the
 * stack the unwinder put in pc (memsim_on_stack_bt's). */
void events_job(void *arg);
void events_job_bt(void *arg, uintptr_t *pc, int got);
/* Tracing stopped during the job (process_recorder_gone): back on the
 * program's stack, outside any post, the process may give its address
 * space back. */
void events_stopped(void) __attribute__((cold, noinline));

/* The job on memsim's stack, its stack captured there (EVENTS_JOB_STACK,
 * when stacks are on); errno kept.  Without memory for memsim's stack:
 * the event, without its stack. */
static inline void events_run(events_job_t *j)
{
    int saved = errno;
    bool held = cancel_hold(); /* no asynchronous cancel inside memsim's work */
    thread_area_t *a = thread_area();
    int want = j->flags & EVENTS_JOB_STACK ? unwind_want() : 0;
    if (__builtin_expect(a == NULL, 0))
        events_job(j);
    else if (want)
        memsim_on_stack_bt(events_job_bt, j, a->stack_top, unwind_backtrace_, want);
    else
        thread_call(a, events_job, j);
    if (__builtin_expect(!proc_tracing(), 0))
        events_stopped();
    cancel_release(held);
    errno = saved;
}

/* In a sampled trace the block goes into the set of sampled blocks first
 * (without room there it is not recorded: its free could not be told). */
static inline void events_alloc(events_fn_t fn, const void *p, size_t size, size_t align)
{
    if (!proc_tracing())
        return;
    if (memsim_sample_bytes && !sampleset_add(p))
        return;
    events_job_t j = {.kind = MSG_ALLOC, .fn = (uint8_t)fn, .flags = EVENTS_JOB_STACK,
                      .a = (uintptr_t)p, .b = size, .c = align};
    events_run(&j);
}

/* The pages of block p the program touched, plus one, for the message
 * of its free or resize (preload/touched.h); 0 when not counted: tracing
 * off, a block under TOUCHED_MIN_BYTES by the allocator's usable size,
 * no memsim stack, the thread's counts over their pace (1% of its time
 * past a burst: events.c), an allocator ahead of memsim's hooks (a hook
 * it does not define, reallocarray say, then hands memsim its blocks,
 * which the real allocator's malloc_usable_size must not be asked
 * about).  Before the real call, with the guard held.  With glibc's
 * malloc a small block costs a load of its chunk's size word (just
 * before it; the chunk holds the block: never smaller), with another
 * allocator a call of its malloc_usable_size. */
extern bool events_touched_on; /* the real allocator is the program's (events_start) */
extern bool events_heap_glibc; /* ...and it is glibc's */
uint64_t events_touched_count(const void *p, size_t usable);
static inline uint64_t events_touched(const void *p)
{
    if (!events_touched_on || !proc_tracing() || !real.malloc_usable_size)
        return 0;
    if (events_heap_glibc && (((const size_t *)p)[-1] & ~(size_t)7) < TOUCHED_MIN_BYTES)
        return 0;
    size_t usable = real.malloc_usable_size((void *)p);
    if (__builtin_expect(usable < TOUCHED_MIN_BYTES, 1))
        return 0;
    return events_touched_count(p, usable);
}

/* A free costs no unwinding: its caller (the hook's return address) is
 * all that is kept, for the error record of a free of no live block.
 * Still on memsim's stack: the program's pays the hook's frame only. */
static inline void events_free(events_fn_t fn, const void *p, const void *caller)
{
    if (!proc_tracing())
        return;
    events_job_t j = {.kind = MSG_FREE, .fn = (uint8_t)fn, .a = (uintptr_t)p,
                      .b = (uintptr_t)caller, .c = events_touched(p)};
    events_run(&j);
}

/* ---- the rest ------------------------------------------------------------------------ */

/* realloc, reallocarray (old != NULL) in a process of one thread
 * (proc_one_thread), after the real call (flags: MSG_REALLOC_*_UNSAMPLED
 * in a sampled trace; a new block not sampled costs no unwinding): no other thread can take the
 * old block or give back the new one meanwhile, so one message posted
 * now is in order (MSG_REALLOC_IN_ORDER). */
static inline void events_realloc_now(events_fn_t fn, const void *old, const void *p,
                                      size_t size, const void *caller, uint64_t flags)
{
    if (!proc_tracing())
        return;
    events_job_t j = {.kind = MSG_REALLOC, .fn = (uint8_t)fn,
                      .flags = flags & MSG_REALLOC_NEW_UNSAMPLED ? 0 : EVENTS_JOB_STACK,
                      .a = (uintptr_t)old, .b = (uintptr_t)p, .c = size,
                      .d = (uintptr_t)caller, .e = MSG_REALLOC_IN_ORDER | flags};
    events_run(&j);
}

/* realloc, reallocarray (old != NULL), mremap, with other threads: the
 * place is taken with the stack before the real call (kind and old: what
 * the recorder must not take past it meanwhile, recorder/intake.h); end
 * says what it did. */
typedef struct events_move_s {
    uint64_t claim;  /* ring_begin's, 0: nothing to fill */
    uint32_t stack;
    uint64_t t;
    bool held;       /* cancel_hold's: the claim is held across the real call */
    uint64_t flags;  /* MSG_REALLOC_*_UNSAMPLED and the old block's touched
                        pages (MSG_REALLOC_TOUCHED_SHIFT), set before
                        events_realloc_end */
} events_move_t;
static inline void events_move_begin(events_move_t *m, msg_kind_t kind, const void *old)
{
    memset(m, 0, sizeof *m);
    if (!proc_tracing())
        return;
    events_job_t j = {.kind = (uint8_t)kind, .flags = EVENTS_JOB_STACK | EVENTS_JOB_BEGIN,
                      .a = (uintptr_t)old};
    m->held = cancel_hold();
    events_run(&j);
    m->claim = j.claim;
    m->stack = j.stack;
    m->t = j.t;
}
void events_realloc_end(events_move_t *m, events_fn_t fn, const void *old, const void *p,
                        size_t size, const void *caller);
void events_mremap_end(events_move_t *m, const void *old, size_t old_len, const void *p,
                       size_t len, int flags);

void events_mmap(events_fn_t fn, const void *p, size_t len, int prot, int flags, int fd);
void events_munmap(const void *p, size_t len);

/* A block memsim's own work got from the allocator (the guard was held):
 * its free, later, is no error of the program's. */
void events_quiet(const void *p);

void events_phase(const char *name, bool begin);

/* Tracing has just started: tell the recorder of the blocks memsim got
 * before it could (events_quiet kept them). */
void events_start(void);

#endif
