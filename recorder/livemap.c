/*
 * livemap: the recorder's table of live blocks.  See livemap.h.
 *
 * core/hashtab's table with livemap_entry_t slots, keyed and marked by
 * the address (0: empty).  livemap_t keeps no shift: each operation
 * takes a hashtab_t view of the map's fields (the shift follows from
 * the capacity) and stores back what changed.
 */
#include "recorder/livemap.h"

#include <string.h>

#include "core/hashtab.h"

livemap_t livemap_program = LIVEMAP_INITIALIZER;
livemap_t livemap_quiet = LIVEMAP_INITIALIZER;

static const hashtab_type_t livemap_type = {
    .slot_size = sizeof(livemap_entry_t),
    .key_off = offsetof(livemap_entry_t, addr),
    .mark_off = offsetof(livemap_entry_t, addr),
};

static inline hashtab_t tab_of(const livemap_t *m)
{
    hashtab_t t = {.slots = m->slots, .mask = m->mask, .count = m->count};
    if (m->slots)
        t.shift = __builtin_clzll(m->mask + 1) + 1; /* 64 - log2(capacity) */
    return t;
}

static inline void tab_store(livemap_t *m, const hashtab_t *t)
{
    m->slots = t->slots;
    m->mask = t->mask;
    m->count = t->count;
}

bool livemap_put(livemap_t *m, const livemap_entry_t *e)
{
    hashtab_t t = tab_of(m);
    bool found;
    livemap_entry_t *s = hashtab_put(&t, &livemap_type, e->addr, &found);
    if (!s)
        return false;
    m->bytes += e->size - (found ? s->size : 0);
    *s = *e;
    tab_store(m, &t);
    return true;
}

bool livemap_take(livemap_t *m, uint64_t addr, livemap_entry_t *out)
{
    hashtab_t t = tab_of(m);
    livemap_entry_t *s = hashtab_find(&t, &livemap_type, addr);
    if (!s)
        return false;
    *out = *s;
    hashtab_erase(&t, &livemap_type, s);
    m->count = t.count;
    m->bytes -= out->size;
    return true;
}

void livemap_prefetch(const livemap_t *m, uint64_t addr)
{
    hashtab_t t = tab_of(m);
    hashtab_prefetch(&t, &livemap_type, addr);
}

uint64_t livemap_count(const livemap_t *m) { return m->count; }
uint64_t livemap_bytes(const livemap_t *m) { return m->bytes; }

void livemap_clear(livemap_t *m)
{
    hashtab_t t = tab_of(m);
    hashtab_fini(&t, &livemap_type);
    memset(m, 0, sizeof *m);
}

int livemap_check(const livemap_t *m, const char **why)
{
    hashtab_t t = tab_of(m);
    if (hashtab_check(&t, &livemap_type, why))
        return -1;
    uint64_t bytes = 0;
    for (uint64_t i = 0; i < hashtab_capacity(&t); i++)
        if (m->slots[i].addr)
            bytes += m->slots[i].size;
    if (bytes != m->bytes) {
        *why = "count or bytes disagree with the entries";
        return -1;
    }
    return 0;
}
