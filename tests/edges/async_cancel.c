/*
 * async_cancel: threads that turned asynchronous cancellation on,
 * cancelled while they allocate.
 *
 *   async_cancel ROUNDS THREADS
 *
 * Each round starts THREADS threads; each makes its first allocation
 * (glibc sets up its cache then, under locks) before it turns
 * PTHREAD_CANCEL_ASYNCHRONOUS on, then mallocs and frees small blocks
 * (glibc's per-thread cache: no lock) with a little work between, until
 * main cancels it.  Main cancels and joins them all, allocates itself,
 * and at the end prints "rounds R threads T" and exits 0.
 *
 * The first allocation goes through a volatile pointer: gcc -O2 drops
 * free(malloc(n)) as dead, and the thread's heap was then set up in the
 * loop, cancellable.  A cancel landing there left glibc's arena lock or
 * free-list lock held, and the next thread to need it, natively or
 * traced, waited forever (tests/edges/plugins/firstalloc.c checks the
 * order).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static atomic_int ready;

static void *spin(void *arg)
{
    size_t n = 32 + 16 * ((size_t)(uintptr_t)arg % 32);
    void *volatile first = malloc(n);
    free(first);
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
    atomic_fetch_add(&ready, 1);
    for (;;) {
        volatile char *p = malloc(n);
        if (p)
            p[0] = 1;
        for (volatile int w = 0; w < 50; w++)
            ;
        free((void *)p);
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
            if (pthread_create(&t[i], NULL, spin, (void *)(uintptr_t)i))
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
        free(malloc(100));
    }
    free(t);
    printf("rounds %d threads %d\n", rounds, threads);
    return 0;
}
