/*
 * zero_read: a program that reads memory it never writes, beside a heap
 * it does write: MB MiB (default 8) of blocks from the heap written in
 * full and kept to the end, 2*MB MiB of an anonymous mapping of its own
 * and MB MiB of its .bss only read.  A page only read is the kernel's
 * one page of zeroes: mincore counts it resident, smaps' Rss does not.
 * A heap meter that subtracts the program's own memory from the
 * anonymous Rss must count it as Rss does, or it subtracts 3*MB MiB of
 * nothing and finds no heap.  Prints a checksum; exits 0.
 *
 *   zero_read [MB]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define MAX_MB 64
#define BLOCK (32 * 1024) /* under glibc's mmap threshold: from [heap] */

static char zeroes[MAX_MB << 20];
static const char *volatile bss = zeroes; /* the loads stay */

int main(int argc, char **argv)
{
    long mb = argc > 1 ? atol(argv[1]) : 8;
    if (mb < 1 || mb > MAX_MB) {
        fprintf(stderr, "zero_read: MB must be 1 to %d\n", MAX_MB);
        return 2;
    }
    size_t own_len = (size_t)(2 * mb) << 20;
    const char *volatile own =
        mmap(NULL, own_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (own == MAP_FAILED)
        return 1;
    unsigned sum = 0;
    for (size_t at = 0; at < own_len; at += 4096)
        sum += (unsigned char)own[at];
    for (long at = 0; at < (mb << 20); at += 4096)
        sum += (unsigned char)bss[at];
    for (long i = 0; i < (mb << 20) / BLOCK; i++) { /* kept: the heap at the end is its peak */
        char *p = malloc(BLOCK);
        if (!p)
            return 1;
        memset(p, (int)(i & 0x7f) + 1, BLOCK);
        sum += (unsigned char)p[BLOCK - 1];
    }
    printf("%u\n", sum);
    return 0;
}
