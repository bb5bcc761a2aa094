/*
 * slotmap: resizing, removal, the invariants.  The hot paths are inline
 * in slotmap.h.
 */
#include "lib/slotmap.h"

#include <stdlib.h>
#include <string.h>

/* A table of cap entries (a power of two >= SLOTMAP_MIN), empty. */
static int table_new(slotmap_t *m, size_t cap)
{
    slotmap_entry_t *e = calloc(cap, sizeof *e);
    if (!e)
        return -1;
    m->e = e;
    m->mask = cap - 1;
    m->shift = 64 - __builtin_ctzll(cap);
    return 0;
}

int slotmap_init(slotmap_t *m)
{
    memset(m, 0, sizeof *m);
    return table_new(m, SLOTMAP_MIN);
}

void slotmap_fini(slotmap_t *m)
{
    free(m->e);
    memset(m, 0, sizeof *m);
}

/* Every key into a new table of cap entries.  0, or -1 (no memory:
 * nothing changed). */
static int rehash(slotmap_t *m, size_t cap)
{
    slotmap_t n = {.count = m->count};
    if (table_new(&n, cap))
        return -1;
    for (size_t j = 0; j <= m->mask; j++) {
        const slotmap_entry_t *x = &m->e[j];
        if (!x->value)
            continue;
        size_t i = slotmap_home(&n, x->key);
        while (n.e[i].value)
            i = (i + 1) & n.mask;
        n.e[i] = *x;
    }
    free(m->e);
    *m = n;
    return 0;
}

int slotmap_grow(slotmap_t *m)
{
    size_t cap = (m->mask + 1) * 2;
    if (cap > SIZE_MAX / sizeof *m->e)
        return -1;
    return rehash(m, cap);
}

int slotmap_reserve(slotmap_t *m, size_t n)
{
    size_t cap = m->mask + 1;
    while ((m->count + n) * 4 > cap * 3) {
        if (cap > SIZE_MAX / 2 / sizeof *m->e)
            return -1;
        cap *= 2;
    }
    return cap == m->mask + 1 ? 0 : rehash(m, cap);
}

void slotmap_erase_at(slotmap_t *m, size_t i)
{
    /* Backward shift: each entry after i, up to the next empty one,
     * moves into the hole when its home is not between the hole and it
     * (cyclically), so that no probe crosses an empty entry. */
    size_t mask = m->mask;
    for (size_t j = (i + 1) & mask; m->e[j].value; j = (j + 1) & mask) {
        size_t home = slotmap_home(m, m->e[j].key);
        if (((j - home) & mask) >= ((j - i) & mask)) {
            m->e[i] = m->e[j];
            i = j;
        }
    }
    m->e[i].value = 0;
    m->count--;
    if (m->mask + 1 > SLOTMAP_MIN && m->count * 16 < m->mask + 1)
        rehash(m, (m->mask + 1) / 2); /* no memory: it stays as large */
}

int slotmap_check(const slotmap_t *m, const char **why)
{
    size_t used = 0, cap = m->mask + 1;
    if (cap < SLOTMAP_MIN || (cap & m->mask) || m->shift != 64 - __builtin_ctzll(cap)) {
        *why = "the capacity is not a power of two of its shift";
        return -1;
    }
    for (size_t j = 0; j < cap; j++) {
        const slotmap_entry_t *x = &m->e[j];
        if (!x->value)
            continue;
        used++;
        /* From its home to j: no empty entry, and no other entry of its key. */
        for (size_t i = slotmap_home(m, x->key); i != j; i = (i + 1) & m->mask) {
            if (!m->e[i].value) {
                *why = "a key lies beyond an empty entry from its home";
                return -1;
            }
            if (m->e[i].key == x->key) {
                *why = "a key is in two entries";
                return -1;
            }
        }
    }
    if (used != m->count) {
        *why = "count is not the entries in use";
        return -1;
    }
    if (used * 4 > cap * 3) {
        *why = "the load is above 3/4";
        return -1;
    }
    return 0;
}
