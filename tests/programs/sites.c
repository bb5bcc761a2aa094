/*
 * sites: two allocation sites with known counts, for memsim-analyze's
 * sites and collapsed stacks: leak_here() makes 300 blocks of 100 bytes
 * and never frees them; churn() makes 1000 blocks of 64 bytes and frees
 * each at once.  Prints nothing.
 */
#include <stdlib.h>

static void *volatile keep[300]; /* the leaks, kept so the compiler cannot drop them */

__attribute__((noinline)) static void leak_here(int i)
{
    keep[i] = malloc(100); /* sites: the leak */
}

__attribute__((noinline)) static void churn(void)
{
    void *volatile p = malloc(64); /* sites: the churn */
    free(p);
}

int main(void)
{
    for (int i = 0; i < 300; i++)
        leak_here(i);
    for (int i = 0; i < 1000; i++)
        churn();
    return 0;
}
