/*
 * bss_touch: a program whose memory is its .bss, written after start:
 * MB MiB of static zeroes (default 8), every page written once, then a
 * few small blocks from the heap.  Its heap stays small: a heap meter
 * must not count the .bss (an anonymous mapping without a name, as the
 * heap's are).  Prints a checksum; exits 0.
 *
 *   bss_touch [MB]
 */
#include <stdio.h>
#include <stdlib.h>

#define MAX_MB 64

static char zeroes[MAX_MB << 20];
static char *volatile bss = zeroes; /* the stores stay */

int main(int argc, char **argv)
{
    long mb = argc > 1 ? atol(argv[1]) : 8;
    if (mb < 1 || mb > MAX_MB) {
        fprintf(stderr, "bss_touch: MB must be 1 to %d\n", MAX_MB);
        return 2;
    }
    unsigned sum = 0;
    for (long at = 0; at < (mb << 20); at += 4096) {
        bss[at] = (char)(at >> 12);
        sum += (unsigned char)bss[at];
    }
    for (int i = 0; i < 16; i++) {
        char *p = malloc(100);
        if (!p)
            return 1;
        p[0] = (char)i;
        sum += (unsigned char)p[0];
        free(p);
    }
    printf("%u\n", sum);
    return 0;
}
