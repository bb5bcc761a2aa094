/*
 * sampled: a heap whose sampled trace has parts known exactly.
 *
 *   sampled THREADS SMALL
 *
 * Each of THREADS threads makes SMALL allocations of 64 bytes, freeing
 * each at once, and among them 50 of 4 MiB (malloc, calloc,
 * posix_memalign, aligned_alloc and realloc's kinds); the blocks of 4
 * MiB are freed by the main thread, all but 3 of the first thread's,
 * which stay (12 MiB leaked).  Prints a sum of what it read back and
 * exits 0.  Under MEMSIM_SAMPLE_BYTES=64K every block of 4 MiB (64
 * times the interval) is sampled, and each of 64 bytes with probability
 * 1 - e^(-64/65536).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIG (4u << 20)
#define BIGS 50u
#define KEPT 3u

static unsigned long small;
static void *big[64][BIGS];

static void *work(void *arg)
{
    void **mine = arg;
    unsigned long sum = 0;
    for (unsigned long i = 0; i < small; i++) {
        unsigned char *p = malloc(64);
        if (!p)
            return NULL;
        p[i % 64] = (unsigned char)i;
        sum += p[i % 64];
        free(p);
        if (i % (small / BIGS + 1) == 0) {
            unsigned k = (unsigned)(i / (small / BIGS + 1));
            void *b = NULL;
            switch (k % 5) {
            case 0: b = malloc(BIG); break;
            case 1: b = calloc(BIG / 16, 16); break;
            case 2: if (posix_memalign(&b, 64, BIG)) b = NULL; break;
            case 3: b = aligned_alloc(4096, BIG); break;
            case 4: b = realloc(NULL, BIG); break;
            }
            if (!b)
                return NULL;
            memset(b, 1, 4096);
            mine[k] = b;
        }
    }
    return (void *)(sum + 1);
}

int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 1;
    small = argc > 2 ? strtoul(argv[2], NULL, 10) : 100000;
    if (n < 1 || n > 64 || small < BIGS)
        return 2;
    pthread_t th[64];
    for (unsigned t = 0; t < n; t++)
        if (pthread_create(&th[t], NULL, work, big[t]))
            return 1;
    unsigned long sum = 0;
    for (unsigned t = 0; t < n; t++) {
        void *r;
        pthread_join(th[t], &r);
        if (!r)
            return 1;
        sum += (unsigned long)r;
    }
    /* Frees across threads; the first thread's first block grown in
     * place or moved (a realloc of two sampled blocks). */
    big[0][0] = realloc(big[0][0], 2 * BIG);
    for (unsigned t = 0; t < n; t++)
        for (unsigned k = 0; k < BIGS; k++) {
            sum += ((unsigned char *)big[t][k])[7];
            if (t || k >= KEPT)
                free(big[t][k]);
        }
    printf("%lu\n", sum);
    return 0;
}
