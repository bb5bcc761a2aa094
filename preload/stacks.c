/*
 * stacks: the dedup table.  See stacks.h.
 *
 * Two generations, young and old, each an arena of entries (at most
 * GEN_CHUNKS chunks of CHUNK bytes) and an index of them (lib/hashtab,
 * at most GEN_ENTRIES entries).  A stack never seen gets the next id
 * and goes into the young generation; a stack found in the old one is
 * copied into the young one with its id, so the stacks in use stay.
 * When the young generation is full, the old one is emptied and becomes
 * the young one, its memory reused: the stacks not seen for a whole
 * generation are forgotten.  One of them seen again gets a new id and
 * is posted again, and the recorder, which keeps every stack it wrote,
 * gives it the trace's id of the same frames (recorder/stackids.h).
 *
 * Memory: at most 2 * (GEN_CHUNKS * CHUNK + the index of GEN_ENTRIES)
 * = 2 * (6 + 1) MiB, and 0.5 MiB more while the young index doubles to
 * its last size; mapped without malloc, touched as used, never unmapped
 * (a thread's cache may point into any chunk).  6 MiB hold 16,000 of
 * python3's stacks (46 frames on average): compiling a package's
 * modules (51,461 stacks) posts 0.3% of them again.
 */
#include "preload/stacks.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/check.h"
#include "lib/hashtab.h"
#include "ipc/config.h"
#include "ipc/sysmem.h"
#include "preload/unwind.h"

/* ---- the table --------------------------------------------------------------- */

/* A stack, in a generation's arena: written once, before it is
 * published, and never moved.  Its memory is reused only after the
 * generation counter moved on (rotate_locked), so a thread's cache that
 * checks the counter before and after reading it may point at it
 * without the lock.  Only gone changes in place: set when a library
 * holding one of its frames is unloaded, after which nothing matches it. */
typedef struct entry_s {
    uint64_t hash;
    uint64_t id;
    unsigned n;
    _Atomic unsigned gone;
    uintptr_t frames[]; /* n of them */
} entry_t;

/* A slot of an index: lib/hashtab's, keyed and marked by the hash
 * (never 0).  Slots move (growth, which frees the old index); entries
 * do not. */
typedef struct slot_s {
    uint64_t hash;
    const entry_t *e;
} slot_t;

#define CHUNK (2u << 20)
#define GEN_CHUNKS 3u
#define GEN_ENTRIES 32768u /* an index of 65,536 slots of 16 bytes at most */
#define TLS_CACHE 256
/* The most frames a stack has (the unwinder's buffer), and so the most
 * bytes a read of an entry may span from its start: an entry starts no
 * later than that before its chunk's end, so that a thread reading one
 * whose memory is being reused never reads past the chunk. */
#define MAX_FRAMES (UNWIND_MAX_DEPTH + UNWIND_SELF_MAX)
#define ENTRY_MAX (sizeof(entry_t) + MAX_FRAMES * sizeof(uintptr_t))

/* One generation: its entries and their index. */
typedef struct gen_s {
    hashtab_t index;          /* hash -> entry, GEN_ENTRIES at most */
    char *chunks[GEN_CHUNKS]; /* chunks[0, nchunks) are mapped */
    unsigned nchunks;
    unsigned cur;             /* the chunk entries go into, < nchunks unless none */
    size_t used;              /* bytes of chunks[cur] taken */
} gen_t;

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

/* The indexes' memory: mappings of their own, never malloc (this runs
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

static gen_t gens[2];                /* under lock */
static unsigned young;               /* gens[young] takes new entries; under lock */
static _Atomic uint64_t nids;        /* ids given: the last one */
/* Bumped when entries' memory may be reused (a rotation, stacks_reset):
 * a thread's cache entry is good only while it holds.  A line of its
 * own: read at every event, written once a generation. */
static _Atomic unsigned generation __attribute__((aligned(64))) = 1;

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

/* The young generation emptied of its entries (memory kept). */
static void gen_empty(gen_t *g)
{
    hashtab_clear(&g->index, &table_type);
    g->cur = 0;
    g->used = 0;
}

/* The young generation is full: the old one is emptied and becomes the
 * young one.  Every thread's cache misses from here on, before any of
 * the old entries' memory is written again. */
static void rotate_locked(void)
{
    CHECK_LOCKED();
    atomic_fetch_add(&generation, 1); /* a full barrier: before the writes below */
    young ^= 1;
    gen_empty(&gens[young]);
}

/* Room for an entry of `bytes` in generation g's arena; NULL when it
 * has no more (*full: its GEN_CHUNKS are taken) or no memory. */
static char *gen_room_locked(gen_t *g, size_t bytes, bool *full)
{
    CHECK_LOCKED();
    size_t take = (bytes + 7) & ~(size_t)7;
    *full = false;
    if (g->cur < g->nchunks && g->used + ENTRY_MAX <= CHUNK) {
        char *p = g->chunks[g->cur] + g->used;
        g->used += take;
        return p;
    }
    unsigned next = g->cur < g->nchunks ? g->cur + 1 : g->cur; /* none yet: the first */
    if (next == GEN_CHUNKS) {
        *full = true;
        return NULL;
    }
    if (next == g->nchunks) {
        char *chunk = sysmem_alloc(CHUNK);
        if (!chunk)
            return NULL;
        g->chunks[next] = chunk;
        g->nchunks = next + 1; /* after the pointer: stacks_reset reads them */
    }
    g->cur = next;
    g->used = take;
    return g->chunks[next];
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

/* What a lookup in an index compares a slot with. */
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

static const entry_t *gen_find_locked(gen_t *g, uint64_t h, const uintptr_t *frames, unsigned n)
{
    CHECK_LOCKED();
    probe_t probe = {frames, n};
    const slot_t *s = hashtab_find_match(&g->index, &table_type, h, slot_matches, &probe);
    return s ? s->e : NULL;
}

/* A new entry in the young generation, indexed, rotating first when it
 * is full; NULL without memory. */
static const entry_t *add_locked(uint64_t h, uint64_t id, const uintptr_t *f, unsigned n)
{
    CHECK_LOCKED();
    size_t bytes = sizeof(entry_t) + n * sizeof *f;
    if (n > MAX_FRAMES)
        return NULL;
    gen_t *g = &gens[young];
    bool full = g->index.count >= GEN_ENTRIES;
    char *at = full ? NULL : gen_room_locked(g, bytes, &full);
    if (full) {
        rotate_locked();
        g = &gens[young];
        at = gen_room_locked(g, bytes, &full);
    }
    if (!at)
        return NULL;
    slot_t *s = hashtab_insert(&g->index, &table_type, h);
    if (!s)
        return NULL; /* the room taken stays unused */
    entry_t *e = (entry_t *)at;
    e->hash = h;
    e->id = id;
    e->n = n;
    atomic_init(&e->gone, 0);
    memcpy(e->frames, f, n * sizeof *f);
    s->hash = h;
    s->e = e;
    return e;
}

/* A stack not in this thread's cache (stacks_intern's slow path): the
 * generations, under the lock. */
static __attribute__((noinline)) uint64_t intern_locked_table(uint64_t h, unsigned slot,
                                                              const uintptr_t *frames, unsigned n,
                                                              stacks_write_fn write, void *ctx,
                                                              bool *is_new)
{
    table_lock();
    const entry_t *found = gen_find_locked(&gens[young], h, frames, n);
    if (!found) {
        const entry_t *old = gen_find_locked(&gens[young ^ 1], h, frames, n);
        uint64_t id = old ? old->id : atomic_load(&nids) + 1;
        found = add_locked(h, id, frames, n);
        if (!found) {
            table_unlock();
            return 0;
        }
        if (!old) {
            atomic_store(&nids, id);
            write(id, found->frames, n, ctx);
            *is_new = true;
        }
    }
    /* Read under the lock: found's memory may be reused as soon as it
     * is let go, once the generation moves on. */
    unsigned gen = atomic_load_explicit(&generation, memory_order_relaxed);
    uint64_t id = found->id;
    table_unlock();
    cache[slot].hash = h;
    cache[slot].e = found;
    cache[slot].gen = gen;
    return id;
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
    if (cache[slot].gen == gen && cache[slot].hash == h && same(cache[slot].e, h, frames, n)) {
        uint64_t id = cache[slot].e->id;
        /* A seqlock's read: what was read is the entry's only if no
         * rotation began meanwhile (the reads above come first). */
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&generation, memory_order_relaxed) == gen)
            return id;
    }
    if (!write)
        return 0;
    return intern_locked_table(h, slot, frames, n, write, ctx, is_new);
}

uint64_t stacks_count(void) { return atomic_load(&nids); }

size_t stacks_memory(void)
{
    table_lock();
    size_t bytes = 0;
    for (int i = 0; i < 2; i++)
        bytes += gens[i].nchunks * (size_t)CHUNK +
                 hashtab_capacity(&gens[i].index) * sizeof(slot_t);
    table_unlock();
    return bytes;
}

static void gen_forget_range_locked(gen_t *g, uintptr_t lo, uintptr_t hi)
{
    CHECK_LOCKED();
    slot_t *v = g->index.slots;
    for (size_t i = 0; v && i <= g->index.mask; i++) {
        const entry_t *e = v[i].e;
        if (!v[i].hash || atomic_load_explicit(&e->gone, memory_order_relaxed))
            continue;
        for (unsigned k = 0; k < e->n; k++)
            if (e->frames[k] >= lo && e->frames[k] < hi) {
                atomic_store_explicit(&((entry_t *)e)->gone, 1, memory_order_relaxed);
                break;
            }
    }
}

void stacks_forget_range(uintptr_t lo, uintptr_t hi)
{
    table_lock();
    gen_forget_range_locked(&gens[0], lo, hi);
    gen_forget_range_locked(&gens[1], lo, hi);
    table_unlock();
}

void stacks_reset(void)
{
    /* The lock may have been held by a thread of the parent when it
     * forked: its indexes may then be half grown, and are left as they
     * are (not freed).  The chunks are reused (a chunk's pointer is
     * stored before it is counted); a new generation makes every cache
     * entry miss. */
    bool whole = pthread_mutex_trylock(&lock) == 0;
    pthread_mutex_init(&lock, NULL);
    atomic_fetch_add(&generation, 1);
    for (int i = 0; i < 2; i++) {
        if (whole)
            hashtab_clear(&gens[i].index, &table_type);
        else
            gens[i].index = (hashtab_t)HASHTAB_INITIALIZER;
        gens[i].cur = 0;
        gens[i].used = 0;
    }
    young = 0;
    atomic_store(&nids, 0);
}
