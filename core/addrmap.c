/*
 * addrmap: open addressing with linear probing.  Deletion shifts later
 * members of the probe run back so that no tombstones are needed.
 */
#include "core/addrmap.h"

#include <stdlib.h>

#define ADDRMAP_MIN_CAPACITY 64

static inline size_t slot_of(const addrmap_t *m, uint64_t key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> m->shift);
}

static int table_alloc(addrmap_t *m, size_t capacity)
{
    addrmap_slot_t *slots = calloc(capacity, sizeof *slots);
    if (!slots)
        return -1;
    int bits = 0;
    while (((size_t)1 << bits) < capacity)
        bits++;
    m->slots = slots;
    m->mask = capacity - 1;
    m->shift = 64 - bits;
    m->count = 0;
    return 0;
}

int addrmap_init(addrmap_t *m, size_t hint)
{
    /* Refuse hints whose table could not be addressed (this also keeps
     * hint * 2 and the doubling below from wrapping). */
    if (hint > SIZE_MAX / 4 / sizeof(addrmap_slot_t))
        return -1;
    size_t cap = ADDRMAP_MIN_CAPACITY;
    while (cap < hint * 2)
        cap <<= 1;
    return table_alloc(m, cap);
}

void addrmap_fini(addrmap_t *m)
{
    free(m->slots);
    m->slots = NULL;
    m->count = 0;
}

void addrmap_clear(addrmap_t *m)
{
    for (size_t i = 0; i <= m->mask; i++)
        m->slots[i].value = NULL;
    m->count = 0;
}

void *addrmap_get(const addrmap_t *m, uint64_t key)
{
    for (size_t i = slot_of(m, key);; i = (i + 1) & m->mask) {
        const addrmap_slot_t *s = &m->slots[i];
        if (!s->value)
            return NULL;
        if (s->key == key)
            return s->value;
    }
}

static void put_fresh(addrmap_t *m, uint64_t key, void *value)
{
    size_t i = slot_of(m, key);
    while (m->slots[i].value)
        i = (i + 1) & m->mask;
    m->slots[i].key = key;
    m->slots[i].value = value;
    m->count++;
}

static int grow(addrmap_t *m)
{
    addrmap_t bigger;
    if (m->mask + 1 > SIZE_MAX / 2 / sizeof(addrmap_slot_t) ||
        table_alloc(&bigger, (m->mask + 1) * 2))
        return -1;
    for (size_t i = 0; i <= m->mask; i++)
        if (m->slots[i].value)
            put_fresh(&bigger, m->slots[i].key, m->slots[i].value);
    free(m->slots);
    *m = bigger;
    return 0;
}

int addrmap_put(addrmap_t *m, uint64_t key, void *value)
{
    if (!value)
        return -1; /* NULL marks empty slots: not storable */
    for (size_t i = slot_of(m, key);; i = (i + 1) & m->mask) {
        addrmap_slot_t *s = &m->slots[i];
        if (!s->value)
            break;
        if (s->key == key) {
            s->value = value;
            return 0;
        }
    }
    if ((m->count + 1) * 2 > m->mask + 1 && grow(m))
        return -1;
    put_fresh(m, key, value);
    return 0;
}

void *addrmap_remove(addrmap_t *m, uint64_t key)
{
    size_t i = slot_of(m, key);
    for (;; i = (i + 1) & m->mask) {
        if (!m->slots[i].value)
            return NULL;
        if (m->slots[i].key == key)
            break;
    }
    void *value = m->slots[i].value;
    /* Backward shift: move later run members whose home is at or before
     * the hole into it, until the run ends. */
    size_t hole = i;
    for (size_t j = (i + 1) & m->mask; m->slots[j].value; j = (j + 1) & m->mask) {
        size_t home = slot_of(m, m->slots[j].key);
        /* Distance from home to j versus from home to hole, cyclically. */
        if (((j - home) & m->mask) >= ((j - hole) & m->mask)) {
            m->slots[hole] = m->slots[j];
            hole = j;
        }
    }
    m->slots[hole].value = NULL;
    m->count--;
    return value;
}
