/*
 * async_phase: threads that turned asynchronous cancellation on,
 * cancelled while they mark phases.
 *
 *   async_phase ROUNDS THREADS
 *
 * Each round starts THREADS threads; each allocates once and marks a
 * phase (memsim sets up its part of the thread then) before it turns
 * PTHREAD_CANCEL_ASYNCHRONOUS on, then marks phases begun and ended
 * (include/memsim.h; nothing without memsim) until main cancels it.
 * Main cancels and joins them all, and at the end prints "rounds R
 * threads T" and exits 0.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "include/memsim.h"

static atomic_int ready;

static void *spin(void *arg)
{
    (void)arg;
    void *volatile first = malloc(64); /* volatile: not dropped as dead */
    free(first);
    MEMSIM_PHASE_BEGIN("ready");
    MEMSIM_PHASE_END();
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
    atomic_fetch_add(&ready, 1);
    for (;;) {
        MEMSIM_PHASE_BEGIN("spin");
        MEMSIM_PHASE_END();
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    int rounds = atoi(argv[1]), threads = atoi(argv[2]);
    pthread_t *t = calloc((size_t)threads, sizeof *t);
    if (!t)
        return 1;
    for (int r = 0; r < rounds; r++) {
        atomic_store(&ready, 0);
        for (int i = 0; i < threads; i++)
            if (pthread_create(&t[i], NULL, spin, NULL))
                return 1;
        while (atomic_load(&ready) < threads)
            sched_yield();
        struct timespec ms = {0, 3000000};
        nanosleep(&ms, NULL);
        for (int i = 0; i < threads; i++)
            pthread_cancel(t[i]);
        for (int i = 0; i < threads; i++) {
            void *res;
            pthread_join(t[i], &res);
            if (res != PTHREAD_CANCELED)
                return 1;
        }
    }
    free(t);
    printf("rounds %d threads %d\n", rounds, threads);
    return 0;
}
