/*
 * livemap: sharded open-addressing tables.  See livemap.h.
 */
#include "recorder/livemap.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "preload/sysmem.h"

#define SHARDS LIVEMAP_SHARDS
#define MIN_SLOTS 64

typedef livemap_shard_t shard_t;

livemap_t livemap_program = LIVEMAP_INITIALIZER;
livemap_t livemap_quiet = LIVEMAP_INITIALIZER;

static inline uint64_t mix(uint64_t a) { return (a >> 4) * 0x9E3779B97F4A7C15ull; }
static inline shard_t *shard_of(livemap_t *m, uint64_t a) { return &m->shards[mix(a) >> 58]; }
static inline uint64_t home(const shard_t *s, uint64_t a) { return (mix(a) >> 20) & s->mask; }

static void put_fresh_locked(shard_t *s, const livemap_entry_t *e)
{
    uint64_t i = home(s, e->addr);
    while (s->slots[i].addr)
        i = (i + 1) & s->mask;
    s->slots[i] = *e;
    s->count++;
}

static bool grow_locked(shard_t *s)
{
    uint64_t cap = s->slots ? (s->mask + 1) * 2 : MIN_SLOTS;
    livemap_entry_t *slots = sysmem_alloc(cap * sizeof *slots);
    if (!slots)
        return false;
    livemap_entry_t *old = s->slots;
    uint64_t old_cap = old ? s->mask + 1 : 0;
    s->slots = slots;
    s->mask = cap - 1;
    s->count = 0;
    for (uint64_t i = 0; i < old_cap; i++)
        if (old[i].addr)
            put_fresh_locked(s, &old[i]);
    sysmem_free(old, old_cap * sizeof *old);
    return true;
}

/* Insert or replace in shard s, whose lock (if any) the caller holds;
 * returns the change in entries (0 or 1), or -1 without memory. */
static int put_in(shard_t *s, const livemap_entry_t *e, uint64_t *old_size)
{
    *old_size = 0;
    if (s->slots) {
        for (uint64_t i = home(s, e->addr); s->slots[i].addr; i = (i + 1) & s->mask) {
            if (s->slots[i].addr == e->addr) {
                *old_size = s->slots[i].size;
                s->slots[i] = *e;
                return 0;
            }
        }
    }
    if ((!s->slots || (s->count + 1) * 2 > s->mask + 1) && !grow_locked(s))
        return -1;
    put_fresh_locked(s, e);
    return 1;
}

/* Remove addr from shard s (its lock held); true when it was there. */
static bool take_in(shard_t *s, uint64_t addr, livemap_entry_t *out)
{
    if (!s->slots)
        return false;
    uint64_t i = home(s, addr);
    for (;; i = (i + 1) & s->mask) {
        if (!s->slots[i].addr)
            return false;
        if (s->slots[i].addr == addr)
            break;
    }
    *out = s->slots[i];
    /* Backward shift deletion: no tombstones. */
    uint64_t hole = i;
    for (uint64_t j = (i + 1) & s->mask; s->slots[j].addr; j = (j + 1) & s->mask) {
        uint64_t h = home(s, s->slots[j].addr);
        if (((j - h) & s->mask) >= ((j - hole) & s->mask)) {
            s->slots[hole] = s->slots[j];
            hole = j;
        }
    }
    s->slots[hole].addr = 0;
    s->count--;
    return true;
}

bool livemap_put(livemap_t *m, const livemap_entry_t *e)
{
    shard_t *s = shard_of(m, e->addr);
    uint64_t old;
    pthread_mutex_lock(&s->lock);
    int added = put_in(s, e, &old);
    pthread_mutex_unlock(&s->lock);
    if (added < 0)
        return false;
    m->count += (uint64_t)added;
    m->bytes += e->size - old;
    return true;
}

bool livemap_take(livemap_t *m, uint64_t addr, livemap_entry_t *out)
{
    shard_t *s = shard_of(m, addr);
    pthread_mutex_lock(&s->lock);
    bool found = take_in(s, addr, out);
    pthread_mutex_unlock(&s->lock);
    if (found) {
        m->count--;
        m->bytes -= out->size;
    }
    return found;
}

/* The totals change by plain stores: one writer, readers see whole values. */
static inline void add_relaxed(_Atomic uint64_t *v, uint64_t d)
{
    atomic_store_explicit(v, atomic_load_explicit(v, memory_order_relaxed) + d,
                          memory_order_relaxed);
}

bool livemap_put_locked(livemap_t *m, const livemap_entry_t *e)
{
    uint64_t old;
    int added = put_in(shard_of(m, e->addr), e, &old);
    if (added < 0)
        return false;
    add_relaxed(&m->count, (uint64_t)added);
    add_relaxed(&m->bytes, e->size - old);
    return true;
}

bool livemap_take_locked(livemap_t *m, uint64_t addr, livemap_entry_t *out)
{
    if (!take_in(shard_of(m, addr), addr, out))
        return false;
    add_relaxed(&m->count, (uint64_t)-1);
    add_relaxed(&m->bytes, -out->size);
    return true;
}

uint64_t livemap_count(const livemap_t *m) { return m->count; }
uint64_t livemap_bytes(const livemap_t *m) { return m->bytes; }

void livemap_lock_all(livemap_t *m)
{
    for (int i = 0; i < SHARDS; i++)
        pthread_mutex_lock(&m->shards[i].lock);
}

void livemap_unlock_all(livemap_t *m)
{
    for (int i = 0; i < SHARDS; i++)
        pthread_mutex_unlock(&m->shards[i].lock);
}

void livemap_clear(livemap_t *m)
{
    for (int i = 0; i < SHARDS; i++) {
        shard_t *s = &m->shards[i];
        pthread_mutex_lock(&s->lock);
        sysmem_free(s->slots, s->slots ? (s->mask + 1) * sizeof *s->slots : 0);
        s->slots = NULL;
        s->mask = 0;
        s->count = 0;
        pthread_mutex_unlock(&s->lock);
    }
    m->count = 0;
    m->bytes = 0;
}
