/*
 * livemap: the recorder's table of live blocks.  See livemap.h.
 */
#include "recorder/livemap.h"

#include <stdlib.h>
#include <string.h>

#define MIN_SLOTS 1024

livemap_t livemap_program = LIVEMAP_INITIALIZER;
livemap_t livemap_quiet = LIVEMAP_INITIALIZER;

static inline uint64_t home(const livemap_t *m, uint64_t a)
{
    return ((a >> 4) * 0x9E3779B97F4A7C15ull >> 20) & m->mask;
}

static void put_fresh(livemap_t *m, const livemap_entry_t *e)
{
    uint64_t i = home(m, e->addr);
    while (m->slots[i].addr)
        i = (i + 1) & m->mask;
    m->slots[i] = *e;
}

static bool grow(livemap_t *m)
{
    uint64_t cap = m->slots ? (m->mask + 1) * 2 : MIN_SLOTS;
    livemap_entry_t *slots = calloc(cap, sizeof *slots), *old = m->slots;
    if (!slots)
        return false;
    uint64_t old_cap = old ? m->mask + 1 : 0;
    m->slots = slots;
    m->mask = cap - 1;
    for (uint64_t i = 0; i < old_cap; i++)
        if (old[i].addr)
            put_fresh(m, &old[i]);
    free(old);
    return true;
}

bool livemap_put(livemap_t *m, const livemap_entry_t *e)
{
    if (m->slots) {
        for (uint64_t i = home(m, e->addr); m->slots[i].addr; i = (i + 1) & m->mask)
            if (m->slots[i].addr == e->addr) {
                m->bytes += e->size - m->slots[i].size;
                m->slots[i] = *e;
                return true;
            }
    }
    if ((!m->slots || (m->count + 1) * 2 > m->mask + 1) && !grow(m))
        return false;
    put_fresh(m, e);
    m->count++;
    m->bytes += e->size;
    return true;
}

bool livemap_take(livemap_t *m, uint64_t addr, livemap_entry_t *out)
{
    if (!m->slots || !m->count)
        return false;
    uint64_t i = home(m, addr);
    for (;; i = (i + 1) & m->mask) {
        if (!m->slots[i].addr)
            return false;
        if (m->slots[i].addr == addr)
            break;
    }
    *out = m->slots[i];
    /* Backward shift deletion: no tombstones. */
    uint64_t hole = i;
    for (uint64_t j = (i + 1) & m->mask; m->slots[j].addr; j = (j + 1) & m->mask) {
        uint64_t h = home(m, m->slots[j].addr);
        if (((j - h) & m->mask) >= ((j - hole) & m->mask)) {
            m->slots[hole] = m->slots[j];
            hole = j;
        }
    }
    m->slots[hole].addr = 0;
    m->count--;
    m->bytes -= out->size;
    return true;
}

uint64_t livemap_count(const livemap_t *m) { return m->count; }
uint64_t livemap_bytes(const livemap_t *m) { return m->bytes; }

void livemap_clear(livemap_t *m)
{
    free(m->slots);
    memset(m, 0, sizeof *m);
}

int livemap_check(const livemap_t *m, const char **why)
{
    uint64_t n = 0, bytes = 0, cap = m->slots ? m->mask + 1 : 0;
    for (uint64_t i = 0; i < cap; i++) {
        const livemap_entry_t *e = &m->slots[i];
        if (!e->addr)
            continue;
        n++;
        bytes += e->size;
        for (uint64_t j = home(m, e->addr); j != i; j = (j + 1) & m->mask)
            if (!m->slots[j].addr) {
                *why = "an entry lies past an empty slot of its probe run";
                return -1;
            }
    }
    if (n != m->count || bytes != m->bytes) {
        *why = "count or bytes disagree with the entries";
        return -1;
    }
    if (cap && n * 2 > cap) {
        *why = "more than half full";
        return -1;
    }
    return 0;
}
