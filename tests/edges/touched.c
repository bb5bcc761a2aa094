/*
 * touched: large blocks of which the program writes a few pages.
 *
 *   touched          a 1 MiB block written on 7 of its whole pages and
 *                    kept to the end; a 1 MiB block written on 3, then
 *                    freed; a 16 KiB block written in full and freed
 *                    (under the 64 KiB below which nothing is counted)
 *   touched realloc  a 1 MiB block written on 5, grown to 4 MiB by
 *                    reallocarray (which jemalloc, preloaded ahead of
 *                    memsim, leaves to memsim's hook: with its block),
 *                    written on 6 of the new block's, freed
 *
 * Each block is the first of its size, so that glibc maps it afresh
 * (only what the program wrote is resident).  Prints the sum of what it
 * read back.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB (1u << 20)
#define PAGE 4096u

/* The first whole page of block p. */
static char *first_page(char *p)
{
    return (char *)(((uintptr_t)p + PAGE - 1) & ~(uintptr_t)(PAGE - 1));
}

/* Write one byte in each of the first n whole pages of block p. */
static void touch(char *p, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        first_page(p)[(size_t)i * PAGE] = (char)(i + 1);
}

static unsigned sum(char *p, unsigned n)
{
    unsigned s = 0;
    for (unsigned i = 0; i < n; i++)
        s += (unsigned char)first_page(p)[(size_t)i * PAGE];
    return s;
}

int main(int argc, char **argv)
{
    unsigned s = 0;
    if (argc > 1 && !strcmp(argv[1], "realloc")) {
        char *b = malloc(MIB);
        if (!b)
            return 1;
        touch(b, 5);
        char *c = reallocarray(b, 4, MIB);
        if (!c)
            return 1;
        touch(c, 6);
        s += sum(c, 6);
        free(c);
    } else {
        char *kept = malloc(MIB), *a = malloc(MIB);
        if (!kept || !a)
            return 1;
        touch(kept, 7);
        touch(a, 3);
        s += sum(a, 3);
        free(a);
        char *d = malloc(16384);
        if (!d)
            return 1;
        memset(d, 1, 16384);
        s += (unsigned char)d[16383];
        free(d);
        s += sum(kept, 7);
    }
    printf("sum %u\n", s);
    return 0;
}
