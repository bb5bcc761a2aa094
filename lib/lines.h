/*
 * lines: host memory in whole cache lines of its own.
 *
 * memsim-analyze replays several strategies at once on several threads
 * (analyzer/consume/replay.h), and each device is written at every operation:
 * its pool's totals, its strategy's state, its segments, its statistics.
 * Small objects of two devices side by side on the heap share cache
 * lines, and two threads writing them take those lines from each other
 * at every operation (false sharing: the statistics' update in
 * device_alloc_handle cost two thirds of that function's time).  Memory
 * from lines_calloc starts on a line and ends on one, so no other
 * object shares its lines.
 *
 * From calloc, not aligned_alloc: the unit tests make calloc fail on
 * purpose (tests/unit/failmalloc.h), and these must be places it can.
 * The start of the allocation is kept in the word before the memory.
 */
#ifndef MEMSIM_LIB_LINES_H
#define MEMSIM_LIB_LINES_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define LINES_SIZE 64 /* bytes in a cache line (x86-64, arm64's usual) */

/* size bytes, zeroed, on lines of their own; NULL when the host has none.
 * Free with lines_free. */
static inline void *lines_calloc(size_t size)
{
    size_t n = (size + LINES_SIZE - 1) / LINES_SIZE * LINES_SIZE;
    if (n < size || n > SIZE_MAX - 2 * LINES_SIZE)
        return NULL;
    char *raw = calloc(1, n + 2 * LINES_SIZE);
    if (!raw)
        return NULL;
    void **p = (void **)(((uintptr_t)raw + sizeof(void *) + LINES_SIZE - 1) &
                         ~(uintptr_t)(LINES_SIZE - 1));
    p[-1] = raw;
    return p;
}

static inline void lines_free(void *p)
{
    if (p)
        free(((void **)p)[-1]);
}

#endif
