/*
 * addrmap: an open-addressing hash map from 64-bit addresses to
 * pointers (linear probing, Fibonacci hashing, backward-shift deletion,
 * load factor at most 1/2).  Lookups, inserts and removals are O(1)
 * expected; the table grows by doubling.  NULL values are not stored:
 * a NULL slot value marks an empty slot.
 */
#ifndef MEMSIM_LIB_ADDRMAP_H
#define MEMSIM_LIB_ADDRMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct addrmap_slot_s {
    uint64_t key;
    void *value; /* NULL: empty slot */
} addrmap_slot_t;

typedef struct addrmap_s {
    addrmap_slot_t *slots;
    size_t mask;  /* capacity - 1; capacity is a power of two */
    size_t count; /* occupied slots */
    int shift;    /* 64 - log2(capacity) */
} addrmap_t;

/* 0, or -1 when the host allocator fails or the hint is absurd. */
int addrmap_init(addrmap_t *m, size_t capacity_hint);
void addrmap_fini(addrmap_t *m);
void addrmap_clear(addrmap_t *m);

void *addrmap_get(const addrmap_t *m, uint64_t key);
/* Insert or replace.  0, or -1 when value is NULL or growing the table
 * fails (nothing changed either way). */
int addrmap_put(addrmap_t *m, uint64_t key, void *value);
/* addrmap_put, saying what it replaced: *old is the key's value before,
 * NULL when it had none (or on failure). */
int addrmap_exchange(addrmap_t *m, uint64_t key, void *value, void **old);
/* Remove key; returns its value or NULL when absent. */
void *addrmap_remove(addrmap_t *m, uint64_t key);

#endif
