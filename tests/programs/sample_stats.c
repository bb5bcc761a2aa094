/*
 * sample_stats: a heap of known shape, for the statistics of sampled
 * traces (test_sampling.sh).  Single-threaded and deterministic: every
 * run makes the same calls in the same order.
 *
 *   sample_stats
 *   sample_stats plateau
 *
 * ring_small: 400,000 blocks of 48 bytes, the last 20,000 live;
 * ring_medium: 20,000 blocks of 3,000 bytes, the last 5,000 live (taken
 * in turns with the small ones); then burst: 100 blocks of 1 MiB live
 * together (the peak heap), freed; leak: 2,000 blocks of 500 bytes
 * never freed.  Then the rings are freed.  Prints a sum and exits 0.
 *
 * plateau: a heap that stays at its peak while it turns over, where the
 * largest of a sampled heap's estimates is biased high: ring_plateau
 * keeps 20,000 blocks of 200 bytes live (4,000,000 bytes, the peak) and
 * replaces each 40 times, one at a time (free, then malloc); then frees
 * them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SMALL 400000u
#define SMALL_LIVE 20000u
#define MEDIUM 20000u
#define MEDIUM_LIVE 5000u
#define BURST 100u
#define LEAKS 2000u
#define PLATEAU_LIVE 20000u
#define PLATEAU_TURNS 40u

static void *small_ring[SMALL_LIVE], *medium_ring[MEDIUM_LIVE], *burst_blocks[BURST];
static void *plateau_ring[PLATEAU_LIVE];
static unsigned long sum;

static void __attribute__((noinline)) ring_small(unsigned i)
{
    unsigned k = i % SMALL_LIVE;
    free(small_ring[k]);
    unsigned char *p = malloc(48);
    if (!p)
        exit(1);
    p[0] = (unsigned char)i;
    sum += p[0];
    small_ring[k] = p;
}

static void __attribute__((noinline)) ring_medium(unsigned i)
{
    unsigned k = i % MEDIUM_LIVE;
    free(medium_ring[k]);
    unsigned char *p = malloc(3000);
    if (!p)
        exit(1);
    p[0] = (unsigned char)i;
    sum += p[0];
    medium_ring[k] = p;
}

static void __attribute__((noinline)) burst(void)
{
    for (unsigned i = 0; i < BURST; i++) {
        burst_blocks[i] = malloc(1u << 20);
        if (!burst_blocks[i])
            exit(1);
        memset(burst_blocks[i], (int)i, 64);
    }
    for (unsigned i = 0; i < BURST; i++) {
        sum += ((unsigned char *)burst_blocks[i])[7];
        free(burst_blocks[i]);
    }
}

static void __attribute__((noinline)) leak(void)
{
    for (unsigned i = 0; i < LEAKS; i++) {
        unsigned char *p = malloc(500);
        if (!p)
            exit(1);
        p[0] = (unsigned char)i;
        sum += p[0];
    }
}

static void __attribute__((noinline)) ring_plateau(unsigned i)
{
    unsigned k = i % PLATEAU_LIVE;
    free(plateau_ring[k]);
    unsigned char *p = malloc(200);
    if (!p)
        exit(1);
    p[0] = (unsigned char)i;
    sum += p[0];
    plateau_ring[k] = p;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "plateau")) {
        for (unsigned i = 0; i < PLATEAU_LIVE * (PLATEAU_TURNS + 1); i++)
            ring_plateau(i);
        for (unsigned i = 0; i < PLATEAU_LIVE; i++)
            free(plateau_ring[i]);
        printf("%lu\n", sum);
        return 0;
    }
    for (unsigned i = 0; i < SMALL; i++) {
        ring_small(i);
        if (i % (SMALL / MEDIUM) == 0)
            ring_medium(i / (SMALL / MEDIUM));
    }
    burst();
    leak();
    for (unsigned i = 0; i < SMALL_LIVE; i++)
        free(small_ring[i]);
    for (unsigned i = 0; i < MEDIUM_LIVE; i++)
        free(medium_ring[i]);
    printf("%lu\n", sum);
    return 0;
}
