/*
 * radixmap: the directory, leaves made and given back, odd keys.  The
 * hot paths are inline in radixmap.h.
 */
#include "lib/radixmap.h"

#include <stdlib.h>
#include <string.h>

int radixmap_init(radixmap_t *m)
{
    memset(m, 0, sizeof *m);
    if (addrmap_init(&m->dir, 64))
        return -1;
    if (addrmap_init(&m->odd, 16)) {
        addrmap_fini(&m->dir);
        return -1;
    }
    return 0;
}

void radixmap_fini(radixmap_t *m)
{
    for (size_t i = 0; m->dir.slots && i <= m->dir.mask; i++)
        free(m->dir.slots[i].value);
    while (m->spares) {
        radixmap_leaf_t *next = m->spares->next;
        free(m->spares);
        m->spares = next;
    }
    addrmap_fini(&m->dir);
    addrmap_fini(&m->odd);
    memset(m, 0, sizeof *m);
}

/* The leaf of page, or NULL: the last one found, or the directory's. */
static radixmap_leaf_t *leaf_of(const radixmap_t *m, uint64_t page)
{
    return page + 1 == m->last_page ? m->last : addrmap_get(&m->dir, page);
}

uint32_t radixmap_get(const radixmap_t *m, uint64_t key)
{
    if (radixmap_odd_key(key))
        return (uint32_t)(uintptr_t)addrmap_get(&m->odd, key);
    radixmap_leaf_t *leaf = leaf_of(m, key >> RADIXMAP_LEAF_SHIFT);
    return leaf ? *radixmap_slot_(leaf, key) : 0;
}

void radixmap_prefetch(const radixmap_t *m, uint64_t key)
{
    if (radixmap_odd_key(key))
        return;
    radixmap_leaf_t *leaf = leaf_of(m, key >> RADIXMAP_LEAF_SHIFT);
    if (leaf)
        __builtin_prefetch(radixmap_slot_(leaf, key), 1);
}

radixmap_leaf_t *radixmap_leaf_slow(radixmap_t *m, uint64_t page, bool make)
{
    radixmap_leaf_t *leaf = addrmap_get(&m->dir, page); /* not the last: the caller looked */
    if (!leaf && make) {
        if (m->spares) {
            leaf = m->spares;
            m->spares = leaf->next;
            m->nspares--;
            leaf->next = NULL;
        } else if (!(leaf = calloc(1, sizeof *leaf))) {
            return NULL;
        }
        if (addrmap_put(&m->dir, page, leaf)) {
            leaf->next = m->spares; /* still zero: a spare */
            m->spares = leaf;
            m->nspares++;
            return NULL;
        }
        m->leaves++;
    }
    if (leaf) {
        m->last_page = page + 1;
        m->last = leaf;
    }
    return leaf;
}

void radixmap_leaf_emptied(radixmap_t *m)
{
    /* The leaf is zero again: out of the directory, onto the spares (or
     * back to the host beyond RADIXMAP_SPARES).  It is the last leaf
     * found: radixmap_remove found it just now. */
    radixmap_leaf_t *leaf = m->last;
    addrmap_remove(&m->dir, m->last_page - 1);
    m->leaves--;
    m->last_page = 0;
    m->last = NULL;
    if (m->nspares < RADIXMAP_SPARES) {
        leaf->next = m->spares;
        m->spares = leaf;
        m->nspares++;
    } else {
        free(leaf);
    }
}

int radixmap_odd_exchange(radixmap_t *m, uint64_t key, uint32_t value, uint32_t *old)
{
    void *was;
    if (addrmap_exchange(&m->odd, key, (void *)(uintptr_t)value, &was))
        return -1;
    *old = (uint32_t)(uintptr_t)was;
    if (!was)
        m->count++;
    return 0;
}

uint32_t radixmap_odd_remove(radixmap_t *m, uint64_t key)
{
    uint32_t v = (uint32_t)(uintptr_t)addrmap_remove(&m->odd, key);
    if (v)
        m->count--;
    return v;
}

int radixmap_check(const radixmap_t *m, const char **why)
{
    size_t total = m->odd.count, leaves = 0;
    for (size_t i = 0; m->dir.slots && i <= m->dir.mask; i++) {
        const radixmap_leaf_t *leaf = m->dir.slots[i].value;
        if (!leaf)
            continue;
        leaves++;
        uint32_t n = 0;
        for (size_t j = 0; j < RADIXMAP_LEAF_SLOTS; j++)
            n += leaf->slot[j] != 0;
        if (n != leaf->count) {
            *why = "a leaf's count is not its slots in use";
            return -1;
        }
        if (!n) {
            *why = "an empty leaf in the directory";
            return -1;
        }
        if (m->last_page == m->dir.slots[i].key + 1 && m->last != leaf) {
            *why = "the last leaf is not the directory's";
            return -1;
        }
        total += n;
    }
    if (total != m->count || leaves != m->leaves) {
        *why = "count is not the keys in the map";
        return -1;
    }
    size_t spares = 0;
    for (const radixmap_leaf_t *s = m->spares; s; s = s->next, spares++)
        for (size_t j = 0; j < RADIXMAP_LEAF_SLOTS; j++)
            if (s->slot[j] || s->count) {
                *why = "a spare leaf is not zero";
                return -1;
            }
    if (spares != m->nspares || spares > RADIXMAP_SPARES) {
        *why = "the spare list's length";
        return -1;
    }
    return 0;
}
