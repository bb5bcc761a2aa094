/*
 * radixmap: a map from 64-bit addresses to non-zero 32-bit values, laid
 * out like the address space it maps (a page table).
 *
 * The analyzer's summary keeps every live block of a trace by address:
 * a million of them on a real program's recording.  A hash table puts
 * each address on a random cache line, so nearly every allocation and
 * free misses the caches, although an allocator hands out neighbouring
 * addresses one after another and programs free them in runs (a garbage
 * collector's sweep, a container torn down).  Here an address's slot is
 * next to its neighbours' slots: one 4-byte slot for every 8 bytes of
 * address space, in leaves of RADIXMAP_LEAF_BYTES of addresses (8 KiB
 * of slots each, from the host's calloc).  A directory (lib/addrmap)
 * finds the leaf of an address, and the last leaf found is kept, so
 * runs of nearby addresses skip it.
 *
 * Memory: half of the address span the live keys cover, in whole
 * leaves; a key alone in its 16 KiB of addresses (a large block, mapped
 * on its own) costs a leaf.  On lua5.4's recording of a million live
 * blocks, 64 KiB leaves were no faster than these.  A leaf is given back
 * when its last key goes (up to RADIXMAP_SPARES empty ones are kept for
 * reuse: they are zero already), so the map's memory follows the live
 * keys, not their history.
 *
 * Keys that are not a multiple of 8 (no allocator hands those out; a
 * broken trace may hold them) go to a hash map of their own, with the
 * same meaning.
 */
#ifndef MEMSIM_LIB_RADIXMAP_H
#define MEMSIM_LIB_RADIXMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/addrmap.h"

#define RADIXMAP_GRAIN_SHIFT 3  /* a slot per 8 bytes of addresses */
#define RADIXMAP_LEAF_SHIFT 14  /* a leaf per 16 KiB of addresses */
#define RADIXMAP_LEAF_BYTES ((uint64_t)1 << RADIXMAP_LEAF_SHIFT)
#define RADIXMAP_LEAF_SLOTS (1u << (RADIXMAP_LEAF_SHIFT - RADIXMAP_GRAIN_SHIFT))
#define RADIXMAP_SPARES 64

typedef struct radixmap_leaf_s {
    uint32_t slot[RADIXMAP_LEAF_SLOTS]; /* 0: no key */
    uint32_t count;                     /* slots in use */
    struct radixmap_leaf_s *next;       /* on the spare list */
} radixmap_leaf_t;

typedef struct radixmap_s {
    addrmap_t dir;           /* key >> RADIXMAP_LEAF_SHIFT -> leaf */
    addrmap_t odd;           /* keys not a multiple of 8 -> value */
    uint64_t last_page;      /* the page of last, + 1; 0: none */
    radixmap_leaf_t *last;
    radixmap_leaf_t *spares; /* empty leaves, zeroed */
    size_t nspares;
    size_t count;            /* keys in the map */
    size_t leaves;           /* leaves in the directory */
} radixmap_t;

/* 0, or -1 when the host allocator fails. */
int radixmap_init(radixmap_t *m);
void radixmap_fini(radixmap_t *m);

/* key's value, 0 when absent. */
uint32_t radixmap_get(const radixmap_t *m, uint64_t key);

/* Out of line: the leaf of page when it is not the last one (made when
 * make and there is none; NULL when there is none, or no memory). */
radixmap_leaf_t *radixmap_leaf_slow(radixmap_t *m, uint64_t page, bool make);
int radixmap_odd_exchange(radixmap_t *m, uint64_t key, uint32_t value, uint32_t *old);
uint32_t radixmap_odd_remove(radixmap_t *m, uint64_t key);
void radixmap_leaf_emptied(radixmap_t *m); /* m->last's last key went */

/* A key that is not a multiple of the grain: kept in the odd map. */
static inline bool radixmap_odd_key(uint64_t key)
{
    return key & ((1u << RADIXMAP_GRAIN_SHIFT) - 1);
}

static inline radixmap_leaf_t *radixmap_leaf_(radixmap_t *m, uint64_t key, bool make)
{
    uint64_t page = key >> RADIXMAP_LEAF_SHIFT;
    if (__builtin_expect(page + 1 == m->last_page, 1))
        return m->last;
    return radixmap_leaf_slow(m, page, make);
}

static inline uint32_t *radixmap_slot_(radixmap_leaf_t *leaf, uint64_t key)
{
    return &leaf->slot[(key >> RADIXMAP_GRAIN_SHIFT) & (RADIXMAP_LEAF_SLOTS - 1)];
}

/* Set key's value (not 0), saying in *old what it was (0: absent).
 * 0, or -1 when value is 0 or memory runs out (nothing changed). */
static inline int radixmap_exchange(radixmap_t *m, uint64_t key, uint32_t value, uint32_t *old)
{
    *old = 0;
    if (!value)
        return -1;
    if (__builtin_expect(radixmap_odd_key(key), 0))
        return radixmap_odd_exchange(m, key, value, old);
    radixmap_leaf_t *leaf = radixmap_leaf_(m, key, true);
    if (!leaf)
        return -1;
    uint32_t *s = radixmap_slot_(leaf, key);
    *old = *s;
    *s = value;
    if (!*old) {
        leaf->count++;
        m->count++;
    }
    return 0;
}

/* Remove key; its value, 0 when it was absent. */
static inline uint32_t radixmap_remove(radixmap_t *m, uint64_t key)
{
    if (__builtin_expect(radixmap_odd_key(key), 0))
        return radixmap_odd_remove(m, key);
    radixmap_leaf_t *leaf = radixmap_leaf_(m, key, false);
    if (!leaf)
        return 0;
    uint32_t *s = radixmap_slot_(leaf, key);
    uint32_t v = *s;
    if (v) {
        *s = 0;
        m->count--;
        if (--leaf->count == 0)
            radixmap_leaf_emptied(m);
    }
    return v;
}

/* Start loading key's slot, to be written, when it has a leaf: for a
 * caller that knows its next keys (a map far larger than the caches
 * misses on most of them).  No effect on the map. */
void radixmap_prefetch(const radixmap_t *m, uint64_t key);

/* The invariants: every leaf's count is its slots in use, count is
 * their sum plus the odd keys, no leaf in the directory is empty, and
 * spare leaves are zero.  0, or -1 with *why. */
int radixmap_check(const radixmap_t *m, const char **why);

#endif
