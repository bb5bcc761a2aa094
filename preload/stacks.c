/*
 * stacks: the dedup table.  See stacks.h.
 */
#include "preload/stacks.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/check.h"
#include "preload/sysmem.h"

/* ---- the table --------------------------------------------------------------- */

typedef struct entry_s {
    uint64_t hash;
    uint64_t id;
    const uintptr_t *frames; /* in the arena, immutable */
    unsigned n;
} entry_t;

#define ARENA_CHUNK (4u << 20)
#define TLS_CACHE 256

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic long lock_owner __attribute__((unused)); /* checked builds: the thread holding lock */

static void table_lock(void)
{
    pthread_mutex_lock(&lock);
    CHECK_EXPENSIVE(atomic_store(&lock_owner, syscall(SYS_gettid)));
}

static void table_unlock(void)
{
    CHECK_EXPENSIVE(atomic_store(&lock_owner, 0));
    pthread_mutex_unlock(&lock);
}

/* In a _locked function: the caller holds lock. */
#define CHECK_LOCKED() CHECK(atomic_load(&lock_owner) == syscall(SYS_gettid))
static entry_t *table;       /* open addressing, hash 0 marks empty */
static uint64_t table_mask;
static _Atomic uint64_t nstacks;
static char *arena;          /* current chunk */
static size_t arena_used = ARENA_CHUNK;
static _Atomic unsigned generation = 1; /* bumped by stacks_reset */

static __thread struct {
    uint64_t hash;
    const entry_t *e;
    unsigned gen;
} cache[TLS_CACHE] __attribute__((tls_model("initial-exec")));

static uint64_t hash_frames(const uintptr_t *f, unsigned n)
{
    uint64_t h = 0x84222325cbf29ce4ull ^ n;
    for (unsigned i = 0; i < n; i++) {
        h ^= f[i];
        h *= 0x100000001b3ull;
        h ^= h >> 29;
    }
    return h ? h : 1;
}

static const uintptr_t *arena_copy(const uintptr_t *f, unsigned n)
{
    size_t bytes = n * sizeof *f;
    if (arena_used + bytes > ARENA_CHUNK) {
        char *chunk = sysmem_alloc(ARENA_CHUNK);
        if (!chunk)
            return NULL;
        arena = chunk;
        arena_used = 0;
    }
    uintptr_t *dst = (uintptr_t *)(arena + arena_used);
    memcpy(dst, f, bytes);
    arena_used += bytes;
    return dst;
}

static bool grow_locked(void)
{
    CHECK_LOCKED();
    uint64_t cap = table ? (table_mask + 1) * 2 : 4096;
    entry_t *t = sysmem_alloc(cap * sizeof *t);
    if (!t)
        return false;
    for (uint64_t i = 0; table && i <= table_mask; i++) {
        if (!table[i].hash)
            continue;
        uint64_t j = table[i].hash & (cap - 1);
        while (t[j].hash)
            j = (j + 1) & (cap - 1);
        t[j] = table[i];
    }
    /* The old table stays mapped: per-thread caches may point into it. */
    table = t;
    table_mask = cap - 1;
    return true;
}

static bool same(const entry_t *e, uint64_t h, const uintptr_t *f, unsigned n)
{
    if (e->hash != h || e->n != n)
        return false;
    for (unsigned i = 0; i < n; i++) /* a few words: no call to memcmp */
        if (e->frames[i] != f[i])
            return false;
    return true;
}

uint64_t stacks_intern(const uintptr_t *frames, unsigned n, stacks_write_fn write, void *ctx,
                       bool *is_new)
{
    *is_new = false;
    if (!n)
        return 0;
    uint64_t h = hash_frames(frames, n);
    unsigned gen = atomic_load_explicit(&generation, memory_order_relaxed);
    unsigned slot = (unsigned)(h % TLS_CACHE);
    if (cache[slot].gen == gen && cache[slot].hash == h && same(cache[slot].e, h, frames, n))
        return cache[slot].e->id;

    table_lock();
    const entry_t *found = NULL;
    if (table) {
        for (uint64_t i = h & table_mask; table[i].hash; i = (i + 1) & table_mask)
            if (same(&table[i], h, frames, n)) {
                found = &table[i];
                break;
            }
    }
    if (!found) {
        uint64_t count = atomic_load(&nstacks);
        const uintptr_t *copy;
        if (((!table || (count + 1) * 2 > table_mask + 1) && !grow_locked()) ||
            !(copy = arena_copy(frames, n))) {
            table_unlock();
            return 0;
        }
        uint64_t i = h & table_mask;
        while (table[i].hash)
            i = (i + 1) & table_mask;
        table[i] = (entry_t){.hash = h, .id = count + 1, .frames = copy, .n = n};
        atomic_store(&nstacks, count + 1);
        found = &table[i];
        write(found->id, copy, n, ctx);
        *is_new = true;
    }
    table_unlock();
    /* Entries never move once placed except by growth, which copies them:
     * cache the pointer only when it cannot go stale (same generation and
     * the table did not grow — checked next time through `same`). */
    cache[slot].hash = h;
    cache[slot].e = found;
    cache[slot].gen = gen;
    return found->id;
}

uint64_t stacks_count(void) { return atomic_load(&nstacks); }

void stacks_reset(void)
{
    /* Old tables and arena chunks stay mapped (caches may point there);
     * a new generation makes every cache entry miss.  The lock may have
     * been held by a thread of the parent when it forked. */
    pthread_mutex_init(&lock, NULL);
    table = NULL;
    table_mask = 0;
    arena_used = ARENA_CHUNK;
    atomic_store(&nstacks, 0);
    atomic_fetch_add(&generation, 1);
}
