/*
 * alloc_heavy: the workload of bench-preload.  Each of T threads runs N
 * seeded operations over 1024 private slots: free the slot's block if
 * any, then allocate 16..4096 bytes and touch it; a realistic share of
 * the time goes to the program's own work (touching memory), as in a
 * real allocation-heavy program.  Prints a checksum.
 *
 *   alloc_heavy THREADS OPS_PER_THREAD
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 1024

static long ops;

static void *work(void *arg)
{
    uint64_t x = 0x9E3779B97F4A7C15ull * ((uintptr_t)arg + 1), sum = 0;
    char *slot[SLOTS] = {0};
    for (long i = 0; i < ops; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        size_t k = x % SLOTS, size = 16 + (x >> 20) % 4081;
        free(slot[k]);
        slot[k] = malloc(size);
        memset(slot[k], (int)i, size < 64 ? size : 64);
        sum += (unsigned char)slot[k][size / 2 < 64 ? size / 2 : 0];
    }
    for (size_t k = 0; k < SLOTS; k++)
        free(slot[k]);
    return (void *)(uintptr_t)sum;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    ops = argc > 2 ? atol(argv[2]) : 1000000;
    if (threads < 1 || threads > 64 || ops < 1) {
        fprintf(stderr, "usage: alloc_heavy THREADS OPS_PER_THREAD\n");
        return 2;
    }
    pthread_t t[64];
    uint64_t total = 0;
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, work, (void *)(uintptr_t)i);
    for (int i = 0; i < threads; i++) {
        void *r;
        pthread_join(t[i], &r);
        total += (uintptr_t)r;
    }
    printf("checksum %llu\n", (unsigned long long)total);
    return 0;
}
