/*
 * addrmap: lib/hashtab's table with {key, value} slots; a NULL value
 * marks an empty slot.  The typed addrmap_t and hashtab_t hold the same
 * four fields: each operation works on a hashtab_t copy of them and
 * stores back what changed (free once inlined).
 */
#include "lib/addrmap.h"

#include "lib/hashtab.h"

_Static_assert(sizeof(void *) == sizeof(uint64_t), "the mark word is a pointer");

static const hashtab_type_t addrmap_type = {
    .slot_size = sizeof(addrmap_slot_t),
    .key_off = offsetof(addrmap_slot_t, key),
    .mark_off = offsetof(addrmap_slot_t, value),
};

static inline hashtab_t tab_of(const addrmap_t *m)
{
    return (hashtab_t){.slots = m->slots, .mask = m->mask, .count = m->count, .shift = m->shift};
}

static inline void tab_store(addrmap_t *m, const hashtab_t *t)
{
    m->slots = t->slots;
    m->mask = t->mask;
    m->count = t->count;
    m->shift = t->shift;
}

int addrmap_init(addrmap_t *m, size_t hint)
{
    hashtab_t t = HASHTAB_INITIALIZER;
    if (hashtab_init(&t, &addrmap_type, hint))
        return -1;
    tab_store(m, &t);
    return 0;
}

void addrmap_fini(addrmap_t *m)
{
    hashtab_t t = tab_of(m);
    hashtab_fini(&t, &addrmap_type);
    tab_store(m, &t);
}

void addrmap_clear(addrmap_t *m)
{
    hashtab_t t = tab_of(m);
    hashtab_clear(&t, &addrmap_type);
    tab_store(m, &t);
}

void *addrmap_get(const addrmap_t *m, uint64_t key)
{
    hashtab_t t = tab_of(m);
    addrmap_slot_t *s = hashtab_find(&t, &addrmap_type, key);
    return s ? s->value : NULL;
}

int addrmap_exchange(addrmap_t *m, uint64_t key, void *value, void **old)
{
    *old = NULL;
    if (!value)
        return -1; /* NULL marks empty slots: not storable */
    hashtab_t t = tab_of(m);
    bool found;
    addrmap_slot_t *s = hashtab_put(&t, &addrmap_type, key, &found);
    if (!s)
        return -1;
    if (found)
        *old = s->value;
    s->key = key;
    s->value = value;
    tab_store(m, &t);
    return 0;
}

int addrmap_put(addrmap_t *m, uint64_t key, void *value)
{
    void *old;
    return addrmap_exchange(m, key, value, &old);
}

void *addrmap_remove(addrmap_t *m, uint64_t key)
{
    hashtab_t t = tab_of(m);
    addrmap_slot_t *s = hashtab_find(&t, &addrmap_type, key);
    if (!s)
        return NULL;
    void *value = s->value;
    hashtab_erase(&t, &addrmap_type, s);
    m->count = t.count;
    return value;
}
