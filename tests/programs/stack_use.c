/*
 * stack_use: how much stack one call of each malloc function takes.
 *
 * On a thread with an 8 MiB stack, paints the 128 KiB below the current
 * stack pointer with a pattern, calls malloc, free, calloc, realloc and
 * free once each (tagged sizes, size % 4096 == 777), and finds the
 * deepest byte that is no longer the pattern: the calls' stack depth.
 * Done twice on the same thread: first the thread's very first calls
 * (cold: the allocator sets up the thread's arena), then the same calls
 * again (warm).  Prints "cold=N warm=M" in bytes.  The figures are this
 * machine's and this libc's: compare runs, not constants.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define SPAN (128 * 1024) /* painted below the reference point */
#define GAP 64            /* left alone just below it: paint()'s return address */
#define PATTERN 0xa5

/* Painting and scanning through volatile pointers, in functions of
 * their own, so that no library call runs on the painted bytes. */
static __attribute__((noinline)) void paint(char *ref)
{
    volatile unsigned char *p = (volatile unsigned char *)ref - SPAN;
    for (size_t i = 0; i < SPAN - GAP; i++)
        p[i] = PATTERN;
}

static __attribute__((noinline)) size_t deepest(char *ref)
{
    volatile unsigned char *p = (volatile unsigned char *)ref - SPAN;
    for (size_t i = 0; i < SPAN - GAP; i++)
        if (p[i] != PATTERN)
            return SPAN - i;
    return 0;
}

static void *volatile sink;

static __attribute__((noinline)) void calls(void)
{
    void *p = malloc(777);
    sink = p;
    free(p);
    p = calloc(1, 4096 + 777);
    sink = p;
    p = realloc(p, 2 * 4096 + 777);
    sink = p;
    free(p);
}

static __attribute__((noinline)) size_t measure(void)
{
    char *ref = __builtin_frame_address(0);
    paint(ref);
    calls();
    return deepest(ref);
}

static void *run(void *arg)
{
    size_t *depth = arg;
    depth[0] = measure();
    depth[1] = measure();
    return NULL;
}

int main(void)
{
    size_t depth[2] = {0, 0};
    pthread_attr_t attr;
    pthread_t t;
    if (pthread_attr_init(&attr) || pthread_attr_setstacksize(&attr, 8u << 20) ||
        pthread_create(&t, &attr, run, depth) || pthread_join(t, NULL))
        return 1;
    printf("cold=%zu warm=%zu\n", depth[0], depth[1]);
    return 0;
}
