/*
 * realloc_race: threads whose reallocs move blocks onto addresses the
 * other threads free at that moment.  THREADS threads (default 4) each
 * make OPS operations (default 200,000) on 64 slots of their own:
 * malloc into an empty slot (16..271 bytes), and on a full one a
 * realloc to a fresh size (which mostly moves it) or a free.  Run with
 * one arena and no tcache (GLIBC_TUNABLES=glibc.malloc.arena_max=1:
 * glibc.malloc.tcache_count=0) a block one thread frees is at once
 * another's.  Prints the number of calls; exits 0.
 *
 *   realloc_race [THREADS [OPS]]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define SLOTS 64

static long ops = 200000;

static void *work(void *arg)
{
    uint64_t x = 0x9e3779b97f4a7c15ull * (uintptr_t)arg + 1;
    char *slot[SLOTS] = {0};
    long calls = 0;
    for (long i = 0; i < ops; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        unsigned k = (unsigned)(x % SLOTS);
        size_t n = 16 + (size_t)(x >> 32) % 256;
        if (!slot[k]) {
            slot[k] = malloc(n);
        } else if (x >> 63) {
            char *p = realloc(slot[k], n);
            if (p)
                slot[k] = p;
        } else {
            free(slot[k]);
            slot[k] = NULL;
        }
        if (slot[k])
            slot[k][0] = (char)i;
        calls++;
    }
    for (unsigned k = 0; k < SLOTS; k++)
        if (slot[k]) {
            free(slot[k]);
            calls++;
        }
    return (void *)calls;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 4;
    if (argc > 2)
        ops = atol(argv[2]);
    if (threads < 1 || threads > 64 || ops < 1)
        return 2;
    pthread_t t[64];
    for (int i = 0; i < threads; i++)
        if (pthread_create(&t[i], NULL, work, (void *)(uintptr_t)(i + 1)))
            return 1;
    long calls = 0;
    for (int i = 0; i < threads; i++) {
        void *r;
        pthread_join(t[i], &r);
        calls += (long)r;
    }
    printf("realloc_race: %ld calls\n", calls);
    return 0;
}
