/*
 * caching_policy: the sizes of the segment-caching pool (PyTorch's CUDA
 * caching allocator, c10/cuda/CUDACachingAllocator.cpp), one definition
 * for its device form (sim/strategy_caching.c) and its lean form
 * (sim/lean_caching.c), whose placements must stay the same.
 */
#ifndef MEMSIM_SIM_CACHING_POLICY_H
#define MEMSIM_SIM_CACHING_POLICY_H

#include <stdint.h>

#define CACHING_MB (1024ull * 1024ull)
#define CACHING_ROUND 512ull                       /* kMinBlockSize: requests round up to it */
#define CACHING_SMALL_SIZE (1 * CACHING_MB)        /* kSmallSize: largest small-pool request */
#define CACHING_SMALL_SEGMENT (2 * CACHING_MB)     /* kSmallBuffer */
#define CACHING_LARGE_SEGMENT (20 * CACHING_MB)    /* kLargeBuffer */
#define CACHING_MIN_LARGE_ALLOC (10 * CACHING_MB)  /* kMinLargeAlloc */
#define CACHING_ROUND_LARGE (2 * CACHING_MB)       /* kRoundLarge; segments' alignment */
#define CACHING_VIRTUAL_SPAN (1ull << 46)          /* where segments are placed, above the base */

/* Size of the segment a rounded request of `need` bytes reserves: 2 MiB
 * for the small pool, 20 MiB below kMinLargeAlloc, else the request
 * rounded up to 2 MiB (0 when that overflows). */
static inline uint64_t caching_segment_size(uint64_t need)
{
    if (need <= CACHING_SMALL_SIZE)
        return CACHING_SMALL_SEGMENT;
    if (need < CACHING_MIN_LARGE_ALLOC)
        return CACHING_LARGE_SEGMENT;
    uint64_t s = (need + CACHING_ROUND_LARGE - 1) & ~(CACHING_ROUND_LARGE - 1);
    return s < need ? 0 : s;
}

#endif
