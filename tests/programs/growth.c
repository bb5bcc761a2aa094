/*
 * growth: one program built twice for memsim-analyze --diff
 * (test_diff.sh): grow_here() allocates GROWN blocks of 1,000 bytes and
 * keeps them (500 by default; the second build asks 2,000: the planted
 * growth), steady() makes and frees 1,000 blocks of 64 bytes in both.
 * The builds differ in their addresses, not in their lines.  Prints
 * nothing.
 */
#include <stdlib.h>

#ifndef GROWN
#define GROWN 500
#endif

static void *volatile keep[GROWN];

__attribute__((noinline)) static void grow_here(void)
{
    for (int i = 0; i < GROWN; i++)
        keep[i] = malloc(1000); /* growth: the planted site */
}

__attribute__((noinline)) static void steady(void)
{
    for (int i = 0; i < 1000; i++) {
        void *volatile p = malloc(64);
        free(p);
    }
}

int main(void)
{
    steady();
    grow_here();
    return 0;
}
