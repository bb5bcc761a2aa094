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
#include "core/hashtab.h"
#include "preload/sysmem.h"

/* ---- the table --------------------------------------------------------------- */

/* A stack, in the arena: written once, before it is published, and
 * never moved or freed, so a per-thread cache may point at it without
 * the lock.  Only gone changes: set when a library holding one of its
 * frames is unloaded, after which nothing matches it. */
typedef struct entry_s {
    uint64_t hash;
    uint64_t id;
    unsigned n;
    _Atomic unsigned gone;
    uintptr_t frames[]; /* n of them */
} entry_t;

/* A slot of the table: core/hashtab's, keyed and marked by the hash
 * (never 0).  Slots move (growth, which frees the old table); entries
 * do not. */
typedef struct slot_s {
    uint64_t hash;
    const entry_t *e;
} slot_t;

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

/* The table's memory: mappings of its own, never malloc (this runs
 * inside the traced process, in its allocator's hooks). */
static void *table_mem_alloc(size_t bytes, void *ctx)
{
    (void)ctx;
    return sysmem_alloc(bytes);
}

static void table_mem_free(void *p, size_t bytes, void *ctx)
{
    (void)ctx;
    sysmem_free(p, bytes);
}

static const hashtab_alloc_t table_mem = {.alloc = table_mem_alloc, .free = table_mem_free};

static const hashtab_type_t table_type = {
    .slot_size = sizeof(slot_t),
    .key_off = offsetof(slot_t, hash),
    .mark_off = offsetof(slot_t, hash),
    .mem = &table_mem,
};

static hashtab_t table = HASHTAB_INITIALIZER; /* under lock */
static _Atomic uint64_t nstacks;
static char *arena;          /* current chunk */
static size_t arena_used = ARENA_CHUNK;
static _Atomic unsigned generation = 1; /* bumped by stacks_reset */

static __thread struct {
    uint64_t hash;
    const entry_t *e;
    unsigned gen;
} cache[TLS_CACHE] __attribute__((tls_model("initial-exec")));

/* Four lanes, each a chain of its own, so that a deep stack's hash costs
 * a quarter of the multiplies' latency in a row (one chain took 5 cycles
 * a frame: 100 ns for 64 frames, at every allocation). */
static uint64_t hash_frames(const uintptr_t *f, unsigned n)
{
    const uint64_t k = 0x9e3779b97f4a7c15ull;
    uint64_t a = 0x84222325cbf29ce4ull ^ n, b = k, c = ~k, d = 0x100000001b3ull;
    unsigned i = 0;
    for (; i + 4 <= n; i += 4) {
        a = (a ^ f[i]) * k;
        b = (b ^ f[i + 1]) * k;
        c = (c ^ f[i + 2]) * k;
        d = (d ^ f[i + 3]) * k;
    }
    for (; i < n; i++)
        a = (a ^ f[i]) * k;
    uint64_t h = a ^ (b >> 17 | b << 47) ^ (c >> 31 | c << 33) ^ (d >> 43 | d << 21);
    h ^= h >> 29;
    h *= k;
    h ^= h >> 32;
    return h ? h : 1;
}

/* A new entry for the stack in the arena, not yet published. */
static entry_t *arena_entry_locked(uint64_t h, uint64_t id, const uintptr_t *f, unsigned n)
{
    CHECK_LOCKED();
    size_t bytes = sizeof(entry_t) + n * sizeof *f;
    if (bytes > ARENA_CHUNK)
        return NULL;
    if (arena_used + bytes > ARENA_CHUNK) {
        char *chunk = sysmem_alloc(ARENA_CHUNK);
        if (!chunk)
            return NULL;
        arena = chunk;
        arena_used = 0;
    }
    entry_t *e = (entry_t *)(arena + arena_used);
    e->hash = h;
    e->id = id;
    e->n = n;
    atomic_init(&e->gone, 0);
    memcpy(e->frames, f, n * sizeof *f);
    arena_used += (bytes + 7) & ~(size_t)7;
    return e;
}

static bool same(const entry_t *e, uint64_t h, const uintptr_t *f, unsigned n)
{
    if (e->hash != h || e->n != n || atomic_load_explicit(&e->gone, memory_order_relaxed))
        return false;
    for (unsigned i = 0; i < n; i++) /* a few words: no call to memcmp */
        if (e->frames[i] != f[i])
            return false;
    return true;
}

/* What a lookup in the table compares a slot with. */
typedef struct probe_s {
    const uintptr_t *frames;
    unsigned n;
} probe_t;

static bool slot_matches(const void *slot, void *ctx)
{
    const slot_t *s = slot;
    const probe_t *p = ctx;
    return same(s->e, s->hash, p->frames, p->n);
}

/* A stack not in this thread's cache (stacks_intern's slow path): the
 * table, under its lock. */
static __attribute__((noinline)) uint64_t intern_locked_table(uint64_t h, unsigned gen,
                                                              unsigned slot,
                                                              const uintptr_t *frames, unsigned n,
                                                              stacks_write_fn write, void *ctx,
                                                              bool *is_new)
{
    table_lock();
    probe_t probe = {frames, n};
    const slot_t *s = hashtab_find_match(&table, &table_type, h, slot_matches, &probe);
    const entry_t *found = s ? s->e : NULL;
    if (!found) {
        uint64_t count = atomic_load(&nstacks);
        entry_t *e = arena_entry_locked(h, count + 1, frames, n);
        slot_t *fresh = e ? hashtab_insert(&table, &table_type, h) : NULL;
        if (!fresh) {
            /* An entry already in the arena stays unused there. */
            table_unlock();
            return 0;
        }
        fresh->hash = h;
        fresh->e = e;
        atomic_store(&nstacks, count + 1);
        found = e;
        write(found->id, e->frames, n, ctx);
        *is_new = true;
    }
    table_unlock();
    /* Entries never move nor change once placed: the pointer stays good
     * for as long as the generation does. */
    cache[slot].hash = h;
    cache[slot].e = found;
    cache[slot].gen = gen;
    return found->id;
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
    if (!write)
        return 0;
    return intern_locked_table(h, gen, slot, frames, n, write, ctx, is_new);
}

uint64_t stacks_count(void) { return atomic_load(&nstacks); }

void stacks_forget_range(uintptr_t lo, uintptr_t hi)
{
    table_lock();
    slot_t *v = table.slots;
    for (size_t i = 0; v && i <= table.mask; i++) {
        const entry_t *e = v[i].e;
        if (!v[i].hash || atomic_load_explicit(&e->gone, memory_order_relaxed))
            continue;
        for (unsigned k = 0; k < e->n; k++)
            if (e->frames[k] >= lo && e->frames[k] < hi) {
                atomic_store_explicit(&((entry_t *)e)->gone, 1, memory_order_relaxed);
                break;
            }
    }
    table_unlock();
}

void stacks_reset(void)
{
    /* Old tables and arena chunks stay mapped (caches may point there);
     * a new generation makes every cache entry miss.  The lock may have
     * been held by a thread of the parent when it forked. */
    pthread_mutex_init(&lock, NULL);
    table = (hashtab_t)HASHTAB_INITIALIZER; /* not freed: it may be half grown */
    arena_used = ARENA_CHUNK;
    atomic_store(&nstacks, 0);
    atomic_fetch_add(&generation, 1);
}
