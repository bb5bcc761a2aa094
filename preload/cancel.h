/*
 * cancel: asynchronous cancellation held off while memsim works inside
 * a hook.
 *
 * A thread that turned asynchronous cancellation on can be cancelled at
 * any instruction.  Inside memsim's part of a hook that would end it
 * between a ring claim and its publish (the recorder and every thread
 * whose slot it holds would wait on a post that never comes), or holding
 * the stack table's lock.  So memsim knows which threads turned it on
 * (it stands in front of pthread_setcanceltype), and while such a thread
 * is inside memsim's work (cancel_hold .. cancel_release, nested) its
 * cancellation type is deferred; a cancel that came meanwhile acts as
 * the type is set back, at the end of the hook: inside the call, as
 * natively, with memsim's post done.  Other threads pay one
 * thread-local test per event.
 */
#ifndef MEMSIM_PRELOAD_CANCEL_H
#define MEMSIM_PRELOAD_CANCEL_H

#include <stdbool.h>

/* The calling thread set PTHREAD_CANCEL_ASYNCHRONOUS (through the hook). */
extern __thread bool cancel_async_ __attribute__((tls_model("initial-exec")));

/* pthread_setcanceltype, noting what the thread asked for. */
int cancel_settype(int type, int *old);

/* Hold asynchronous cancellation off on this thread until the matching
 * cancel_release; returns whether it did (only for a thread that turned
 * it on).  Nests. */
bool cancel_hold_slow(void);
void cancel_release_slow(void);

static inline bool cancel_hold(void)
{
    return __builtin_expect(cancel_async_, 0) && cancel_hold_slow();
}

/* held: cancel_hold's result.  A cancel that came meanwhile acts here. */
static inline void cancel_release(bool held)
{
    if (__builtin_expect(held, 0))
        cancel_release_slow();
}

#endif
