/*
 * cancel: asynchronous cancellation held off inside memsim.  See
 * cancel.h.
 */
#include "preload/cancel.h"

#include <pthread.h>
#include <stdatomic.h>

#include "preload/guard.h"
#include "preload/real.h"

__thread bool cancel_async_ __attribute__((tls_model("initial-exec")));
static __thread unsigned depth __attribute__((tls_model("initial-exec")));

/* holds: times this thread's asynchronous cancellation was held off. */
static __thread unsigned holds __attribute__((tls_model("initial-exec")));

int cancel_settype(int type, int *old)
{
    unsigned seen = holds;
    int rc = REAL(pthread_setcanceltype)(type, old);
    if (rc == 0) {
        cancel_async_ = type == PTHREAD_CANCEL_ASYNCHRONOUS;
        atomic_signal_fence(memory_order_seq_cst); /* the flag, then the count */
        if (depth) /* a signal handler's, inside memsim's work: still held */
            REAL(pthread_setcanceltype)(PTHREAD_CANCEL_DEFERRED, NULL);
        else if (holds != seen)
            /* A signal handler's hook held it off and set back what the
             * flag said before it was set (turning asynchronous
             * cancellation on again just after the program turned it
             * off): the program's type again. */
            REAL(pthread_setcanceltype)(type, NULL);
    }
    return rc;
}

bool cancel_hold_slow(void)
{
    if (depth++ == 0) {
        holds++;
        REAL(pthread_setcanceltype)(PTHREAD_CANCEL_DEFERRED, NULL);
    }
    return true;
}

void cancel_release_slow(void)
{
    if (--depth || !cancel_async_)
        return;
    /* Memsim's work is done: a cancel that acts now unwinds the thread
     * as if from the program's own call, with the guard down (the hook's
     * scope does not end on that path: its cleanup runs only when it
     * returns; events are recorded only from an unguarded hook). */
    int guard = memsim_guard;
    memsim_guard = 0;
    REAL(pthread_setcanceltype)(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
    memsim_guard = guard;
}
