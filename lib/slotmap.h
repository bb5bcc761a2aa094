/*
 * slotmap: a map from 64-bit addresses to non-zero 32-bit values (the
 * slot of a record kept elsewhere), in 12 bytes an entry.
 *
 * The analyzer's summary keeps every live block of a trace by address:
 * a million and more on a real program's recording.  Its memory must
 * follow the live blocks, not the address span they lie in (a map laid
 * out like the address space costs a slot for every grain of it, free
 * or not: half of the heap's span at 4 bytes per 8 bytes) nor the
 * trace's length.  Here: open addressing with linear probing, an entry
 * the key and its value (packed: 12 bytes), Fibonacci hashing of the
 * key, backward-shift deletion (no tombstones: a table that has seen a
 * billion removals probes as one that has seen none).
 *
 * Capacity: a power of two; the table doubles before its load passes
 * 3/4, and halves when a removal leaves it below 1/16 (not below
 * SLOTMAP_MIN), so it holds between 12 and 16 bytes per key at its
 * fullest and at most 12 * 32 bytes per key (plus SLOTMAP_MIN entries)
 * after a shrink; the peak moment of a doubling holds both tables (36
 * bytes per key).  Expected probes at load 3/4: 2.5 for a key present,
 * 8.5 for one absent (entries side by side: two cache lines).
 *
 * Keys are any 64-bit values; value 0 means "absent" and is not stored.
 * Not thread-safe.
 */
#ifndef MEMSIM_LIB_SLOTMAP_H
#define MEMSIM_LIB_SLOTMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SLOTMAP_MIN 64 /* the smallest capacity */

typedef struct __attribute__((packed)) slotmap_entry_s {
    uint64_t key;
    uint32_t value; /* 0: an empty entry */
} slotmap_entry_t;

_Static_assert(sizeof(slotmap_entry_t) == 12, "an entry is 12 bytes");

typedef struct slotmap_s {
    slotmap_entry_t *e; /* capacity entries */
    size_t mask;        /* capacity - 1 */
    size_t count;       /* keys in the map: count <= 3/4 capacity */
    int shift;          /* 64 - log2(capacity) */
} slotmap_t;

/* 0, or -1 when the host allocator fails. */
int slotmap_init(slotmap_t *m);
void slotmap_fini(slotmap_t *m);

/* Where key's probe starts: Fibonacci hashing.  (Homes that keep
 * neighbouring addresses side by side, a hash of the key's 4 KiB plus
 * its 16-byte grain in them, made lua5.4's recording slower: pages
 * dense with small blocks make long runs to probe through.) */
static inline size_t slotmap_home(const slotmap_t *m, uint64_t key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> m->shift);
}

/* key's value, 0 when absent. */
static inline uint32_t slotmap_get(const slotmap_t *m, uint64_t key)
{
    for (size_t i = slotmap_home(m, key);; i = (i + 1) & m->mask) {
        const slotmap_entry_t *x = &m->e[i];
        if (!x->value)
            return 0;
        if (x->key == key)
            return x->value;
    }
}

/* Out of line: make room for one more key (double).  0 or -1. */
int slotmap_grow(slotmap_t *m);
/* Room for n more keys without growing (a caller that must not fail
 * halfway): 0, or -1 without memory (nothing changed).  A removal may
 * halve the table, and leaves room for 32 more keys all the same. */
int slotmap_reserve(slotmap_t *m, size_t n);
/* Out of line: the entry at i emptied, the ones after it shifted back;
 * the table halved when it is nearly empty. */
void slotmap_erase_at(slotmap_t *m, size_t i);

/* Set key's value (not 0), saying in *old what it was (0: absent).
 * 0, or -1 when value is 0 or memory runs out (nothing changed). */
static inline int slotmap_exchange(slotmap_t *m, uint64_t key, uint32_t value, uint32_t *old)
{
    *old = 0;
    if (!value)
        return -1;
    for (size_t i = slotmap_home(m, key);; i = (i + 1) & m->mask) {
        slotmap_entry_t *x = &m->e[i];
        if (x->value && x->key == key) {
            *old = x->value;
            x->value = value;
            return 0;
        }
        if (x->value)
            continue;
        if (__builtin_expect((m->count + 1) * 4 > (m->mask + 1) * 3, 0)) {
            if (slotmap_grow(m))
                return -1;
            return slotmap_exchange(m, key, value, old); /* absent: placed this time */
        }
        x->key = key;
        x->value = value;
        m->count++;
        return 0;
    }
}

/* Remove key; its value, 0 when it was absent. */
static inline uint32_t slotmap_remove(slotmap_t *m, uint64_t key)
{
    for (size_t i = slotmap_home(m, key);; i = (i + 1) & m->mask) {
        const slotmap_entry_t *x = &m->e[i];
        if (!x->value)
            return 0;
        if (x->key == key) {
            uint32_t v = x->value;
            slotmap_erase_at(m, i);
            return v;
        }
    }
}

/* Start loading where key's probe starts: for a caller that knows its
 * next keys (a map far larger than the caches misses on most of them).
 * No effect on the map. */
static inline void slotmap_prefetch(const slotmap_t *m, uint64_t key)
{
    __builtin_prefetch(&m->e[slotmap_home(m, key)], 1);
}

/* The invariants: count is the entries in use and at most 3/4 of the
 * capacity, no key is in two entries, and every key is reached from its
 * home without crossing an empty entry.  0, or -1 with *why. */
int slotmap_check(const slotmap_t *m, const char **why);

#endif
