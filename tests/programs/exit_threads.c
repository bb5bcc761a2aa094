/*
 * exit_threads: exit() while other threads are still allocating.
 *
 *   exit_threads [THREADS [MS]]      defaults 4, 30
 *
 * THREADS threads allocate and free tagged blocks (size % 4096 == 777)
 * in a tight loop; after MS milliseconds the main thread prints
 * "exiting" and calls exit(0) with them still running, as many real
 * programs do.  The trace must still be complete: an end record that is
 * the last line, whose record count matches the file, with no hole of
 * NUL bytes from a record some thread had reserved but not yet written.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KEEP 8

static void *spin(void *arg)
{
    uint64_t x = (uintptr_t)arg * 0x9e3779b97f4a7c15ull + 1;
    void *keep[KEEP] = {0};
    for (unsigned long n = 0;; n++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        unsigned i = (unsigned)(n % KEEP);
        free(keep[i]);
        keep[i] = malloc((size_t)4096 * (x % 16) + 777);
        if (keep[i])
            memset(keep[i], (int)n, 16);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 4;
    long ms = argc > 2 ? atol(argv[2]) : 30;
    if (threads < 1 || threads > 256 || ms < 0) {
        fprintf(stderr, "usage: exit_threads [THREADS [MS]]\n");
        return 2;
    }
    for (int i = 0; i < threads; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, spin, (void *)(uintptr_t)i)) {
            fprintf(stderr, "exit_threads: pthread_create failed\n");
            return 1;
        }
    }
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
    printf("exiting\n");
    exit(0);
}
