/*
 * hashtab: memory, growth and the invariant walker.  See hashtab.h.
 */
#include "lib/hashtab.h"

#include <stdlib.h>
#include <string.h>

#include "lib/lines.h"

int hashtab_table_alloc(hashtab_t *t, const hashtab_type_t *ty, size_t capacity)
{
    if (capacity > SIZE_MAX / ty->slot_size)
        return -1;
    size_t bytes = capacity * ty->slot_size;
    void *slots = ty->mem ? ty->mem->alloc(bytes, ty->mem->ctx) : lines_calloc(bytes);
    if (!slots)
        return -1;
    t->slots = slots;
    t->mask = capacity - 1;
    t->count = 0;
    t->shift = 64 - __builtin_ctzll((unsigned long long)capacity);
    return 0;
}

void hashtab_table_free(const hashtab_type_t *ty, void *slots, size_t capacity)
{
    if (!slots)
        return;
    if (ty->mem)
        ty->mem->free(slots, capacity * ty->slot_size, ty->mem->ctx);
    else
        lines_free(slots);
}

int hashtab_init(hashtab_t *t, const hashtab_type_t *ty, size_t hint)
{
    /* Refuse hints whose table could not be addressed (this also keeps
     * hint * 2 and the doubling below from wrapping). */
    if (hint > SIZE_MAX / 4 / ty->slot_size)
        return -1;
    size_t cap = HASHTAB_MIN_CAPACITY;
    while (cap < hint * 2)
        cap <<= 1;
    return hashtab_table_alloc(t, ty, cap);
}

void hashtab_fini(hashtab_t *t, const hashtab_type_t *ty)
{
    hashtab_table_free(ty, t->slots, hashtab_capacity(t));
    *t = (hashtab_t)HASHTAB_INITIALIZER;
}

void hashtab_clear(hashtab_t *t, const hashtab_type_t *ty)
{
    if (t->slots)
        memset(t->slots, 0, (t->mask + 1) * ty->slot_size);
    t->count = 0;
}

int hashtab_check_runs(const hashtab_t *t, const hashtab_type_t *ty, const char **why)
{
    size_t cap = hashtab_capacity(t), n = 0;
    if (cap & t->mask) {
        *why = "capacity is not a power of two";
        return -1;
    }
    if (cap && t->shift != 64 - __builtin_ctzll((unsigned long long)cap)) {
        *why = "shift disagrees with the capacity";
        return -1;
    }
    for (size_t i = 0; i < cap; i++) {
        const void *s = hashtab_slot(t, ty, i);
        if (!hashtab_used(ty, s))
            continue;
        n++;
        for (size_t j = hashtab_home(t, hashtab_key(ty, s)); j != i; j = (j + 1) & t->mask)
            if (!hashtab_used(ty, hashtab_slot(t, ty, j))) {
                *why = "an entry lies past an empty slot of its probe run";
                return -1;
            }
    }
    if (n != t->count) {
        *why = "count disagrees with the slots in use";
        return -1;
    }
    return 0;
}

int hashtab_check(const hashtab_t *t, const hashtab_type_t *ty, const char **why)
{
    if (hashtab_check_runs(t, ty, why))
        return -1;
    if (t->count * 2 > hashtab_capacity(t)) {
        *why = "more than half full";
        return -1;
    }
    return 0;
}
