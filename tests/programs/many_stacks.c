/*
 * many_stacks: one allocating function reached by 512 different stacks,
 * for memsim-analyze's per-function totals.  step() allocates 16 bytes
 * at the end of 9 calls, each through left() or right() by one bit of a
 * number 0 to 511: 512 stacks of one call each.  The blocks of even
 * numbers are kept (256 leaks, 4 KiB), those of odd numbers freed at
 * once (256 temporary allocations).  Then other() allocates and frees 1000
 * blocks of 8 bytes from one stack.  Prints nothing.
 */
#include <stdlib.h>

static void *volatile keep[512]; /* the leaks, kept so the compiler cannot drop them */
static volatile int lefts, rights; /* make left and right differ (no identical-code folding) */

static void *step(unsigned bits, int depth);

__attribute__((noinline)) static void *left(unsigned bits, int depth)
{
    void *p = step(bits, depth);
    lefts++; /* after the call: no tail call, the frame stays */
    return p;
}

__attribute__((noinline)) static void *right(unsigned bits, int depth)
{
    void *p = step(bits, depth);
    rights += 2;
    return p;
}

__attribute__((noinline)) static void *step(unsigned bits, int depth)
{
    if (!depth) {
        void *p = malloc(16); /* many_stacks: the one function */
        lefts += 0;           /* after the call: no tail call */
        return p;
    }
    return bits & 1 ? left(bits >> 1, depth - 1) : right(bits >> 1, depth - 1);
}

__attribute__((noinline)) static void other(void)
{
    void *volatile p = malloc(8);
    free(p);
}

int main(void)
{
    for (unsigned i = 0; i < 512; i++) {
        void *p = step(i, 9);
        if (i % 2)
            free(p);
        else
            keep[i] = p;
    }
    for (int i = 0; i < 1000; i++)
        other();
    return 0;
}
