/*
 * unwind_clash: a program linked against LLVM's libunwind, which
 * exports the same _Unwind_* names as the unwinder memsim loads.
 *
 * Recurses a few levels, allocating tagged blocks (size % 4096 == 777)
 * on the way down; at the bottom walks its own stack with
 * _Unwind_Backtrace, allocating in the callback too, and prints the
 * number of frames.  Under memsim the output must not change.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unwind.h>

#define DEPTH 12

static _Unwind_Reason_Code count_frame(struct _Unwind_Context *ctx, void *arg)
{
    unsigned *n = arg;
    if (_Unwind_GetIP(ctx) == 0)
        return _URC_END_OF_STACK;
    char *p = malloc(4096 + 777); /* allocate while inside the unwinder */
    if (!p)
        return _URC_FATAL_PHASE1_ERROR;
    memset(p, (int)*n, 777);
    free(p);
    (*n)++;
    return _URC_NO_REASON;
}

__attribute__((noinline)) static unsigned descend(int level, unsigned long *sum)
{
    char *p = malloc((size_t)4096 * (level % 16) + 777);
    if (!p)
        exit(1);
    memset(p, level, 777);
    *sum += (unsigned char)p[776];
    unsigned frames;
    if (level == 0) {
        frames = 0;
        _Unwind_Backtrace(count_frame, &frames);
    } else {
        frames = descend(level - 1, sum);
    }
    free(p);
    __asm__ volatile("" ::: "memory"); /* keep the call from becoming a jump */
    return frames;
}

int main(void)
{
    unsigned long sum = 0;
    unsigned first = descend(DEPTH, &sum);
    unsigned again = descend(DEPTH / 2, &sum);
    printf("frames=%u shallower=%u diff=%u sum=%lu\n", first, again, first - again, sum);
    return first - again == DEPTH / 2 ? 0 : 1;
}
