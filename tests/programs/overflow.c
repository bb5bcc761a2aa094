/*
 * overflow: a stack overflow after some allocations.
 *
 * Allocates 8 tagged blocks (size % 4096 == 777, one freed), prints
 * "overflow: recursing" (flushed), then recurses without bound: each
 * frame holds a volatile array and uses it after the call, so the
 * compiler can neither drop the frames nor make the call a jump.  The
 * stack's guard page ends it with SIGSEGV (a shell sees status 139).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile unsigned long never = ~0ul; /* the compiler cannot see the recursion is endless */

static unsigned long deeper(unsigned long n)
{
    volatile char pad[256];
    pad[0] = (char)n;
    pad[255] = (char)(n >> 8);
    unsigned long r = n == never ? 0 : deeper(n + 1);
    return r + (unsigned char)pad[0] + (unsigned char)pad[255];
}

int main(void)
{
    void *keep[8];
    for (int i = 0; i < 8; i++) {
        keep[i] = malloc((size_t)4096 * i + 777);
        if (!keep[i])
            return 1;
        memset(keep[i], i, 777);
    }
    free(keep[3]);
    printf("overflow: recursing\n");
    fflush(stdout);
    unsigned long r = deeper(0);
    printf("overflow: returned %lu\n", r);
    return 99;
}
