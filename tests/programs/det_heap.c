/*
 * det_heap: a deterministic single-threaded heap workload for comparing
 * memsim's counts with heaptrack's: 20 rounds of 1000 mallocs of
 * 16..2015 bytes (touched), 500 reallocs to 3000 bytes, and 1000 frees;
 * one block is leaked.  Prints the bytes it allocated.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *volatile keep; /* the leak, kept so the compiler cannot drop it */

int main(void)
{
    void *p[1000];
    unsigned x = 12345;
    size_t total = 0;
    for (int r = 0; r < 20; r++) {
        for (int i = 0; i < 1000; i++) {
            x = x * 1103515245u + 12345u;
            size_t n = 16 + (x >> 16) % 2000;
            p[i] = malloc(n);
            memset(p[i], 1, n);
            total += n;
        }
        for (int i = 0; i < 1000; i += 2)
            p[i] = realloc(p[i], 3000);
        for (int i = 0; i < 1000; i++)
            free(p[i]);
    }
    keep = malloc(12345);
    printf("%zu\n", total);
    return 0;
}
