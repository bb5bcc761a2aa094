/*
 * hashtab: the one open-addressing hash table of memsim, under the
 * address map of the pool (lib/addrmap), the recorder's live map
 * (recorder/livemap) and the preload's stack table (preload/stacks).
 *
 * Linear probing from a Fibonacci home, home(k) = (k * 2^64/phi) >>
 * shift (the top log2(capacity) bits of the product); backward-shift
 * deletion, so no tombstones; a power-of-two capacity, doubled when an
 * insert would make it more than half full.
 *
 * Slots are the caller's own struct, described by a hashtab_type_t:
 *   key word   a uint64_t at key_off: the key itself (an address), or
 *              the caller's hash of a longer key (the stack table's
 *              frame arrays), which then also compares with match()
 *   mark word  8 bytes at mark_off (a uint64_t or a pointer; it may be
 *              the key word), zero exactly when the slot is empty:
 *              zeroed memory is an empty table
 * and the table's memory comes from the type's allocator (the traced
 * process's stack table must not call malloc).
 *
 * Every function that touches slots is inline, and meant to be called
 * with a type that is a compile-time constant (a static const object),
 * so that offsets and sizes fold into the code; only getting and giving
 * back memory, and the walker, are out of line.
 *
 * Invariants (hashtab_check): every slot in use sits in the probe run
 * from its home, with no empty slot between; count is the number of
 * slots in use; count * 2 <= capacity.  A slot pointer is valid until
 * the next insert or removal (either may move slots).
 */
#ifndef MEMSIM_LIB_HASHTAB_H
#define MEMSIM_LIB_HASHTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define HASHTAB_FIB 0x9E3779B97F4A7C15ull /* 2^64 / golden ratio, odd */
#define HASHTAB_MIN_CAPACITY 64

#define HASHTAB_INLINE static inline __attribute__((always_inline))

/* Where a table's memory comes from.  alloc returns zeroed memory or
 * NULL; free gets the same size back. */
typedef struct hashtab_alloc_s {
    void *(*alloc)(size_t bytes, void *ctx);
    void (*free)(void *p, size_t bytes, void *ctx);
    void *ctx;
} hashtab_alloc_t;

typedef struct hashtab_type_s {
    size_t slot_size;           /* bytes per slot */
    size_t key_off;             /* offset of the uint64_t key word */
    size_t mark_off;            /* offset of the 8-byte mark word (0: empty) */
    const hashtab_alloc_t *mem; /* NULL: lines_calloc and lines_free (lib/lines.h:
                                   slots never straddle a line needlessly) */
} hashtab_type_t;

typedef struct hashtab_s {
    void *slots;  /* capacity slots; NULL until the first insert or init */
    size_t mask;  /* capacity - 1 */
    size_t count; /* slots in use */
    int shift;    /* 64 - log2(capacity) */
} hashtab_t;

/* Zeroed: an empty table with no memory yet. */
#define HASHTAB_INITIALIZER {0}

/* A table with room for hint entries at load 1/2 (at least
 * HASHTAB_MIN_CAPACITY slots).  0, or -1 when the allocator fails or
 * the hint cannot be addressed. */
int hashtab_init(hashtab_t *t, const hashtab_type_t *ty, size_t hint);
/* Give the memory back; t is then empty with no memory. */
void hashtab_fini(hashtab_t *t, const hashtab_type_t *ty);
/* Empty every slot, keeping the capacity. */
void hashtab_clear(hashtab_t *t, const hashtab_type_t *ty);
/* The invariants above; 0, or -1 with *why. */
int hashtab_check(const hashtab_t *t, const hashtab_type_t *ty, const char **why);
/* The same but the load: for a caller that keeps the load itself
 * (hashtab_place). */
int hashtab_check_runs(const hashtab_t *t, const hashtab_type_t *ty, const char **why);

/* ---- slots --------------------------------------------------------------------- */

HASHTAB_INLINE void *hashtab_slot(const hashtab_t *t, const hashtab_type_t *ty, size_t i)
{
    return (char *)t->slots + i * ty->slot_size;
}

HASHTAB_INLINE uint64_t hashtab_key(const hashtab_type_t *ty, const void *slot)
{
    uint64_t k;
    memcpy(&k, (const char *)slot + ty->key_off, sizeof k);
    return k;
}

HASHTAB_INLINE bool hashtab_used(const hashtab_type_t *ty, const void *slot)
{
    uint64_t m;
    memcpy(&m, (const char *)slot + ty->mark_off, sizeof m);
    return m != 0;
}

HASHTAB_INLINE size_t hashtab_home(const hashtab_t *t, uint64_t key)
{
    return (size_t)((key * HASHTAB_FIB) >> t->shift);
}

HASHTAB_INLINE size_t hashtab_capacity(const hashtab_t *t) { return t->slots ? t->mask + 1 : 0; }

/* ---- lookups ------------------------------------------------------------------- */

/* The slot whose key word is key, or NULL. */
HASHTAB_INLINE void *hashtab_find(const hashtab_t *t, const hashtab_type_t *ty, uint64_t key)
{
    if (!t->slots)
        return NULL;
    for (size_t i = hashtab_home(t, key);; i = (i + 1) & t->mask) {
        void *s = hashtab_slot(t, ty, i);
        if (!hashtab_used(ty, s))
            return NULL;
        if (hashtab_key(ty, s) == key)
            return s;
    }
}

/* Start loading the cache line of key's home slot, to be written (a put
 * or an erase comes): for a caller that knows its next keys ahead (a
 * table far larger than the caches misses on nearly every probe).  No
 * effect on the table. */
HASHTAB_INLINE void hashtab_prefetch(const hashtab_t *t, const hashtab_type_t *ty, uint64_t key)
{
    if (t->slots)
        __builtin_prefetch(hashtab_slot(t, ty, hashtab_home(t, key)), 1);
}

/* The slot whose key word is hash and for which match(slot, ctx) holds,
 * or NULL: for keys longer than a word, hashed by the caller. */
HASHTAB_INLINE void *hashtab_find_match(const hashtab_t *t, const hashtab_type_t *ty, uint64_t hash,
                                        bool (*match)(const void *, void *), void *ctx)
{
    if (!t->slots)
        return NULL;
    for (size_t i = hashtab_home(t, hash);; i = (i + 1) & t->mask) {
        void *s = hashtab_slot(t, ty, i);
        if (!hashtab_used(ty, s))
            return NULL;
        if (hashtab_key(ty, s) == hash && match(s, ctx))
            return s;
    }
}

/* ---- growth -------------------------------------------------------------------- */

/* A table of capacity slots (a power of two), empty, into *t; and back. */
int hashtab_table_alloc(hashtab_t *t, const hashtab_type_t *ty, size_t capacity);
void hashtab_table_free(const hashtab_type_t *ty, void *slots, size_t capacity);

/* Double the capacity (make the first table when there is none).  0, or
 * -1 with t unchanged when memory runs out.  Inline, like the probes:
 * moving a slot is then a copy of a known size, and t never has its
 * address taken, so callers keep its fields in registers (a table held
 * in memory would be read back as one wide load over several narrow
 * stores, which the CPU cannot forward: each operation would wait for
 * the last one's stores, cache misses included). */
HASHTAB_INLINE int hashtab_grow(hashtab_t *t, const hashtab_type_t *ty)
{
    size_t cap = t->slots ? t->mask + 1 : 0;
    hashtab_t bigger;
    if (cap > SIZE_MAX / 2 ||
        hashtab_table_alloc(&bigger, ty, cap ? cap * 2 : HASHTAB_MIN_CAPACITY))
        return -1;
    for (size_t i = 0; i < cap; i++) {
        const void *s = hashtab_slot(t, ty, i);
        if (!hashtab_used(ty, s))
            continue;
        size_t j = hashtab_home(&bigger, hashtab_key(ty, s));
        while (hashtab_used(ty, hashtab_slot(&bigger, ty, j)))
            j = (j + 1) & bigger.mask;
        memcpy(hashtab_slot(&bigger, ty, j), s, ty->slot_size);
    }
    bigger.count = t->count;
    hashtab_table_free(ty, t->slots, cap);
    *t = bigger;
    return 0;
}

/* ---- inserts ------------------------------------------------------------------- */

/* The empty slot key takes, never growing: for a caller that keeps the
 * load itself (t has a table and a free slot).  The caller fills the
 * slot (key word and a non-zero mark) before any other call on t; it is
 * counted already.  Does not look for key. */
HASHTAB_INLINE void *hashtab_place(hashtab_t *t, const hashtab_type_t *ty, uint64_t key)
{
    size_t i = hashtab_home(t, key);
    void *s;
    while (hashtab_used(ty, s = hashtab_slot(t, ty, i)))
        i = (i + 1) & t->mask;
    t->count++;
    return s;
}

/* The empty slot key would take, growing first when one more entry
 * would pass load 1/2; NULL when growing fails.  As hashtab_place
 * otherwise.  Does not look for key: see hashtab_put. */
HASHTAB_INLINE void *hashtab_insert(hashtab_t *t, const hashtab_type_t *ty, uint64_t key)
{
    if (__builtin_expect(!t->slots || (t->count + 1) * 2 > t->mask + 1, 0) && hashtab_grow(t, ty))
        return NULL;
    return hashtab_place(t, ty, key);
}

/* The slot of key: the one holding it (*found set), or else a new empty
 * one as hashtab_insert gives (*found clear).  One probe unless the
 * table grows.  NULL when growing fails (nothing changed). */
HASHTAB_INLINE void *hashtab_put(hashtab_t *t, const hashtab_type_t *ty, uint64_t key,
                                 bool *found)
{
    *found = false;
    if (t->slots) {
        size_t i = hashtab_home(t, key);
        void *s;
        while (hashtab_used(ty, s = hashtab_slot(t, ty, i))) {
            if (hashtab_key(ty, s) == key) {
                *found = true;
                return s;
            }
            i = (i + 1) & t->mask;
        }
        if ((t->count + 1) * 2 <= t->mask + 1) {
            t->count++;
            return s; /* the end of key's run: where it goes */
        }
    }
    return hashtab_insert(t, ty, key);
}

/* ---- removal -------------------------------------------------------------------- */

/* Empty slot (one of t's, in use), closing the gap: later members of its
 * probe run whose home is at or before the hole move back into it. */
HASHTAB_INLINE void hashtab_erase(hashtab_t *t, const hashtab_type_t *ty, void *slot)
{
    size_t hole = (size_t)((char *)slot - (char *)t->slots) / ty->slot_size;
    for (size_t j = (hole + 1) & t->mask;; j = (j + 1) & t->mask) {
        void *s = hashtab_slot(t, ty, j);
        if (!hashtab_used(ty, s))
            break;
        size_t home = hashtab_home(t, hashtab_key(ty, s));
        /* Cyclic distance from home to j against from the hole to j. */
        if (((j - home) & t->mask) >= ((j - hole) & t->mask)) {
            memcpy(hashtab_slot(t, ty, hole), s, ty->slot_size);
            hole = j;
        }
    }
    memset((char *)hashtab_slot(t, ty, hole) + ty->mark_off, 0, sizeof(uint64_t));
    t->count--;
}

#endif
