/*
 * many_threads: 300 threads, in waves.
 *
 *   many_threads [WAVE]      default 10
 *
 * Creates WAVE threads at a time and joins them, until 300 have run.
 * Each thread allocates and frees 5 tagged blocks (size % 4096 == 777),
 * then returns.  Prints "threads=300 tagged=1500".  (Each new thread's
 * first allocation, and the end of each thread, exercise per-thread
 * set-up and clean-up; glibc reuses the stacks, and the thread-local
 * storage, of threads that were joined.)
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 300
#define EACH 5

static atomic_int tagged;

static void *work(void *arg)
{
    (void)arg;
    for (int i = 0; i < EACH; i++) {
        char *p = malloc((size_t)4096 * i + 777);
        if (!p)
            return NULL;
        memset(p, i, 777);
        free(p);
        atomic_fetch_add(&tagged, 1);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int wave = argc > 1 ? atoi(argv[1]) : 10, threads = 0;
    if (wave < 1 || wave > THREADS || THREADS % wave) {
        fprintf(stderr, "usage: many_threads [WAVE], WAVE dividing %d\n", THREADS);
        return 2;
    }
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i += wave) {
        for (int k = 0; k < wave; k++)
            if (pthread_create(&t[k], NULL, work, NULL))
                return 1;
        for (int k = 0; k < wave; k++)
            if (pthread_join(t[k], NULL))
                return 1;
        threads += wave;
    }
    printf("threads=%d tagged=%d\n", threads, atomic_load(&tagged));
    return 0;
}
