/*
 * phases: the memsim phase markers in a program that must build and run
 * without memsim.  Allocates tagged blocks (size % 4096 == 777) inside a
 * "load" phase, then some outside, and prints what it did.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/memsim.h"

static unsigned long fill(char **blocks, int n, unsigned k0)
{
    unsigned long sum = 0;
    for (int i = 0; i < n; i++) {
        size_t size = (size_t)4096 * ((k0 + (unsigned)i) % 16) + 777;
        blocks[i] = malloc(size);
        if (!blocks[i])
            exit(1);
        memset(blocks[i], 'a' + i % 26, size);
        sum += (unsigned char)blocks[i][size - 1];
    }
    return sum;
}

int main(void)
{
    char *load[10], *work[5];
    MEMSIM_PHASE_BEGIN("load");
    unsigned long a = fill(load, 10, 0);
    MEMSIM_PHASE_END();
    unsigned long b = fill(work, 5, 3);
    for (int i = 0; i < 10; i++)
        free(load[i]);
    for (int i = 0; i < 5; i++)
        free(work[i]);
    printf("phases: load=%lu work=%lu\n", a, b);
    return 0;
}
