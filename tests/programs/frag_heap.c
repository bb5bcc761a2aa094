/*
 * frag_heap: a heap of many free chunks, then steady work that leaves it
 * so.  600,000 blocks of 48..208 bytes, every other one freed (about
 * 300,000 free chunks glibc's mallinfo2 walks at each call), then
 * OPS malloc/free pairs of sizes tcache serves (default 4,000,000).
 * Prints a checksum; exits 0.
 *
 *   frag_heap [OPS]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEPT 600000

int main(int argc, char **argv)
{
    long ops = argc > 1 ? atol(argv[1]) : 4000000;
    char **b = malloc(KEPT * sizeof *b);
    if (!b)
        return 1;
    uint64_t x = 88172645463325252ull, sum = 0;
    for (long i = 0; i < KEPT; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        b[i] = malloc(48 + x % 161);
        if (!b[i])
            return 1;
        b[i][0] = (char)i;
    }
    for (long i = 0; i < KEPT; i += 2)
        free(b[i]);
    for (long i = 0; i < ops; i++) {
        char *p = malloc(16 + (size_t)(i & 7) * 8);
        if (!p)
            return 1;
        p[0] = (char)i;
        sum += (unsigned char)p[0];
        free(p);
    }
    for (long i = 1; i < KEPT; i += 2)
        free(b[i]);
    free(b);
    printf("frag_heap: %llu\n", (unsigned long long)sum);
    return 0;
}
