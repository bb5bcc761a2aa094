/*
 * hundreds_of_threads: a server's shape, hundreds of threads that all
 * allocate at once.
 *
 *   hundreds_of_threads THREADS ROUNDS
 *
 * Thread i keeps 8 live blocks; each round it mallocs a block of
 * 20000 + i bytes into the next place (freeing what was there), and
 * reallocs it to 20500 + i: so the trace holds exactly ROUNDS
 * allocations and ROUNDS reallocs of each thread's two sizes.  Prints
 * "threads T rounds R sum S" (S from the blocks' contents) and exits 0.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rounds;

static void *work(void *arg)
{
    uintptr_t i = (uintptr_t)arg;
    char *keep[8] = {0};
    uint64_t sum = 0;
    for (int k = 0; k < rounds; k++) {
        char **at = &keep[k % 8];
        if (*at)
            sum += (unsigned char)(*at)[1];
        free(*at);
        char *p = malloc(20000 + i);
        if (!p)
            abort();
        memset(p, (int)(k & 0x7f), 64);
        char *q = realloc(p, 20500 + i);
        if (!q)
            abort();
        *at = q;
    }
    for (int k = 0; k < 8; k++)
        free(keep[k]);
    return (void *)(uintptr_t)sum;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    int n = atoi(argv[1]);
    rounds = atoi(argv[2]);
    pthread_t *t = calloc((size_t)n, sizeof *t);
    if (!t)
        return 1;
    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, work, (void *)(uintptr_t)i))
            return 1;
    uint64_t sum = 0;
    for (int i = 0; i < n; i++) {
        void *s;
        pthread_join(t[i], &s);
        sum += (uintptr_t)s;
    }
    free(t);
    printf("threads %d rounds %d sum %llu\n", n, rounds, (unsigned long long)sum);
    return 0;
}
