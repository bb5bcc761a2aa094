/*
 * stackids: the trace's stack ids.  See stackids.h.
 */
#include "recorder/stackids.h"

#include <stdlib.h>
#include <string.h>

#define CHUNK (1u << 20)    /* bytes of entries in a chunk */
#define CHUNK_SHIFT 18        /* an entry's place in its chunk, in 4-byte units */
#define CHUNKS_MAX (1u << 13) /* 8 GiB of entries */
#define MAX_FRAMES 4096u      /* a stack longer than the process ever posts: kept apart */
#define VARINT_MAX 10u
#define INDEX_MIN 4096u

/* A stack, 4-byte aligned in a chunk; its frames' code follows.
 * Entries are never moved. */
typedef struct entry_s {
    uint32_t id;  /* the trace's id; 0: forgotten (a library unloaded) */
    uint16_t n;   /* frames */
    uint16_t len; /* bytes of code */
    unsigned char code[]; /* each frame less the one before, zigzag, as a varint */
} entry_t;

static stackids_t S; /* the current trace's */

void stackids_reset(void) { stackids_fini(&S); }

void stackids_swap(stackids_t *other)
{
    stackids_t t = S;
    S = *other;
    *other = t;
}

void stackids_fini(stackids_t *t)
{
    for (uint32_t i = 0; i < t->nchunks; i++)
        free(t->chunks[i].data);
    free(t->chunks);
    free(t->index);
    free(t->map);
    memset(t, 0, sizeof *t);
}

static uint64_t hash_frames(const uint64_t *f, unsigned n)
{
    uint64_t h = 0x84222325cbf29ce4ull ^ n;
    for (unsigned i = 0; i < n; i++) {
        h = (h ^ f[i]) * 0x9e3779b97f4a7c15ull;
        h ^= h >> 29;
    }
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ h >> 32;
}

static uint64_t slot_home(uint32_t tag) { return (uint32_t)(tag * 0x9e3779b9u) >> S.shift; }

static entry_t *slot_entry(uint64_t slot)
{
    uint32_t ref = (uint32_t)slot - 1;
    return (entry_t *)(S.chunks[ref >> CHUNK_SHIFT].data +
                       (size_t)(ref & ((1u << CHUNK_SHIFT) - 1)) * 4);
}

/* ---- the frames' code ------------------------------------------------------------- */

static size_t encode(unsigned char *out, const uint64_t *f, unsigned n)
{
    size_t k = 0;
    uint64_t prev = 0;
    for (unsigned i = 0; i < n; i++) {
        uint64_t d = f[i] - prev;
        uint64_t z = d << 1 ^ (uint64_t)((int64_t)d >> 63);
        prev = f[i];
        while (z >= 0x80) {
            out[k++] = (unsigned char)(z | 0x80);
            z >>= 7;
        }
        out[k++] = (unsigned char)z;
    }
    return k;
}

static bool same(const entry_t *e, const uint64_t *f, unsigned n)
{
    if (e->n != n || !e->id)
        return false;
    const unsigned char *p = e->code;
    uint64_t prev = 0;
    for (unsigned i = 0; i < n; i++) {
        uint64_t z = 0;
        for (unsigned shift = 0;; shift += 7) {
            unsigned char b = *p++;
            z |= (uint64_t)(b & 0x7f) << shift;
            if (!(b & 0x80))
                break;
        }
        prev += z >> 1 ^ (uint64_t)-(int64_t)(z & 1);
        if (prev != f[i])
            return false;
    }
    return true;
}

/* Whether one of e's frames is in [lo, hi). */
static bool within(const entry_t *e, uint64_t lo, uint64_t hi)
{
    const unsigned char *p = e->code;
    uint64_t prev = 0;
    for (unsigned i = 0; i < e->n; i++) {
        uint64_t z = 0;
        for (unsigned shift = 0;; shift += 7) {
            unsigned char b = *p++;
            z |= (uint64_t)(b & 0x7f) << shift;
            if (!(b & 0x80))
                break;
        }
        prev += z >> 1 ^ (uint64_t)-(int64_t)(z & 1);
        if (prev >= lo && prev < hi)
            return true;
    }
    return false;
}

static size_t entry_bytes(size_t len) { return (sizeof(entry_t) + len + 3) & ~(size_t)3; }

/* ---- the table ------------------------------------------------------------------------ */

/* The index doubled (made, the first time); false without memory. */
static bool index_grow(void)
{
    uint64_t cap = S.index ? 2 * (S.mask + 1) : INDEX_MIN;
    if (cap > (1ull << 31))
        return false;
    uint64_t *bigger = calloc(cap, sizeof *bigger);
    if (!bigger)
        return false;
    int shift = 32 - __builtin_ctzll(cap);
    for (uint64_t i = 0; S.index && i <= S.mask; i++) {
        uint64_t v = S.index[i];
        if (!v)
            continue;
        uint64_t j = (uint32_t)((uint32_t)(v >> 32) * 0x9e3779b9u) >> shift;
        while (bigger[j])
            j = (j + 1) & (cap - 1);
        bigger[j] = v;
    }
    free(S.index);
    S.index = bigger;
    S.mask = cap - 1;
    S.shift = shift;
    return true;
}

/* The entry of these frames (hash h), or NULL. */
static entry_t *find(uint64_t h, const uint64_t *f, unsigned n)
{
    if (!S.index)
        return NULL;
    uint32_t tag = (uint32_t)(h >> 32);
    for (uint64_t i = slot_home(tag);; i = (i + 1) & S.mask) {
        uint64_t v = S.index[i];
        if (!v)
            return NULL;
        if ((uint32_t)(v >> 32) == tag && same(slot_entry(v), f, n))
            return slot_entry(v);
    }
}

/* A new entry for the frames, indexed under hash h; false without memory
 * (the frames are then not remembered). */
static bool remember(uint64_t h, uint32_t id, const uint64_t *f, unsigned n)
{
    if ((S.count + 1) * 4 > (S.index ? S.mask + 1 : 0) * 3 && !index_grow())
        return false;
    unsigned char code[MAX_FRAMES * VARINT_MAX];
    size_t len = encode(code, f, n);
    size_t bytes = entry_bytes(len);
    if (!S.nchunks || S.chunks[S.nchunks - 1].used + bytes > CHUNK) {
        if (S.nchunks == CHUNKS_MAX)
            return false;
        if (S.nchunks == S.capchunks) {
            uint32_t cap = S.capchunks ? 2 * S.capchunks : 64;
            stackids_chunk_t *c = realloc(S.chunks, cap * sizeof *c);
            if (!c)
                return false;
            S.chunks = c;
            S.capchunks = cap;
        }
        unsigned char *data = malloc(CHUNK);
        if (!data)
            return false;
        S.chunks[S.nchunks++] = (stackids_chunk_t){data, 0};
    }
    stackids_chunk_t *c = &S.chunks[S.nchunks - 1];
    entry_t *e = (entry_t *)(c->data + c->used);
    uint32_t ref = 1 + ((S.nchunks - 1) << CHUNK_SHIFT) + (uint32_t)(c->used / 4);
    c->used += bytes;
    e->id = id;
    e->n = (uint16_t)n;
    e->len = (uint16_t)len;
    memcpy(e->code, code, len);
    uint32_t tag = (uint32_t)(h >> 32);
    uint64_t i = slot_home(tag);
    while (S.index[i])
        i = (i + 1) & S.mask;
    S.index[i] = (uint64_t)tag << 32 | ref;
    S.count++;
    return true;
}

/* Room in the map for pid; false without memory. */
static bool map_reach(uint64_t pid)
{
    if (pid < S.map_cap)
        return true;
    uint64_t cap = S.map_cap ? S.map_cap : 4096;
    while (cap <= pid)
        cap *= 2;
    uint32_t *m = realloc(S.map, cap * sizeof *m);
    if (!m)
        return false;
    memset(m + S.map_cap, 0, (cap - S.map_cap) * sizeof *m);
    S.map = m;
    S.map_cap = cap;
    return true;
}

uint32_t stackids_post(uint64_t pid, const uint64_t *frames, unsigned n, bool *fresh)
{
    *fresh = false;
    if (!pid || pid > UINT32_MAX)
        return 0;
    uint64_t h = hash_frames(frames, n);
    const entry_t *e = n <= MAX_FRAMES ? find(h, frames, n) : NULL;
    uint32_t id;
    if (e) {
        id = e->id;
    } else {
        id = ++S.last_id;
        *fresh = true;
        if (n <= MAX_FRAMES)
            remember(h, id, frames, n); /* without memory: a record of its own */
    }
    if (map_reach(pid))
        S.map[pid] = id;
    return id;
}

uint32_t stackids_of(uint32_t pid)
{
    if (!pid)
        return 0;
    uint32_t id = pid < S.map_cap ? S.map[pid] : 0;
    if (!id)
        S.unmapped++;
    return id;
}

void stackids_forget_range(uint64_t lo, uint64_t hi)
{
    for (uint32_t k = 0; k < S.nchunks; k++)
        for (size_t at = 0; at < S.chunks[k].used;) {
            entry_t *e = (entry_t *)(S.chunks[k].data + at);
            if (e->id && within(e, lo, hi))
                e->id = 0;
            at += entry_bytes(e->len);
        }
}

uint64_t stackids_unmapped(void) { return S.unmapped; }

uint64_t stackids_count(void) { return S.count; }

uint64_t stackids_bytes(void)
{
    return (uint64_t)S.nchunks * CHUNK + (S.index ? S.mask + 1 : 0) * sizeof *S.index +
           S.map_cap * sizeof *S.map;
}
