/*
 * lean_index: what the indexes of free runs of the lean forms share
 * (sim/lean_ext.h's extents, sim/lean_caching_ext.h's runs), whatever
 * their runs' layout: a treap node's priority, and the bitmap of the
 * size bins that hold runs.  Their heaps and treaps are
 * sim/lean_links.h's.
 */
#ifndef MEMSIM_SIM_LEAN_INDEX_H
#define MEMSIM_SIM_LEAN_INDEX_H

#include <stdint.h>

/* A treap node's priority: a hash of its slot (murmur3's finalizer). */
static inline uint32_t prio(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x85ebca6bu;
    x ^= x >> 13;
    x *= 0xc2b2ae35u;
    x ^= x >> 16;
    return x;
}

/* The lowest bin at or above from (< nbins, a multiple of 64) whose bit
 * is set in nonempty, 0 when none. */
static inline uint32_t bins_first_from(const uint64_t *nonempty, unsigned nbins, uint64_t from)
{
    for (uint64_t w = from / 64; w < nbins / 64; w++) {
        uint64_t m = nonempty[w] & (w == from / 64 ? ~0ull << (from % 64) : ~0ull);
        if (m)
            return (uint32_t)(w * 64 + (uint64_t)__builtin_ctzll(m));
    }
    return 0;
}

/* The highest bin whose bit is set, 0 when none. */
static inline uint32_t bins_last(const uint64_t *nonempty, unsigned nbins)
{
    for (uint64_t w = nbins / 64; w-- > 0;)
        if (nonempty[w])
            return (uint32_t)(w * 64 + 63 - (uint64_t)__builtin_clzll(nonempty[w]));
    return 0;
}

#endif
