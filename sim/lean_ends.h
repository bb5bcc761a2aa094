/*
 * lean_ends: the map of run ends of a lean form, each free run's start
 * and end (as keys) to the run's slot, through which a freed block finds
 * its free neighbours.  Open addressing, linear probes from a Fibonacci
 * hash, backward-shift deletion; at most 3/4 full, doubled before it
 * would pass, never shrunk (a run's two keys come and go at every
 * operation).  A template over the key's width, written once for the
 * fits' extents (sim/lean_ext.h: 32-bit keys, 8-byte slots) and the
 * caching pool's runs (sim/lean_caching_ext.h: 64-bit keys).  A header
 * includes it once, after defining
 *
 *   ENDS_CTX   the structure holding the map: ENDS_SLOT *hash; uint64_t
 *              hcap (slots, a power of two), hcount (keys); unsigned hshift
 *              (64 - log2(hcap))
 *   ENDS_SLOT  a slot: ENDS_KEY key; uint32_t x (the run; NIL: an empty
 *              slot, its key left as it was)
 *   ENDS_KEY   the key's type
 *
 * and NIL.  All here is static (ends_grow out of line), each file's own:
 * one layout to a file.
 */
#ifndef MEMSIM_SIM_LEAN_ENDS_H
#define MEMSIM_SIM_LEAN_ENDS_H

#include <stdint.h>
#include <stdlib.h>

/* key's first slot to probe. */
static inline uint64_t home(const ENDS_CTX *c, uint64_t key)
{
    return (key * 0x9E3779B97F4A7C15ull) >> c->hshift;
}

/* The run with that key, NIL when none. */
static inline uint32_t ends_get(const ENDS_CTX *c, ENDS_KEY key)
{
    uint64_t m = c->hcap - 1;
    for (uint64_t i = home(c, key);; i = (i + 1) & m) {
        const ENDS_SLOT *s = &c->hash[i];
        if (s->x == NIL || s->key == key)
            return s->x;
    }
}

/* key -> x; key is absent, and there is room (ends_room). */
static inline void ends_put(ENDS_CTX *c, ENDS_KEY key, uint32_t x)
{
    uint64_t m = c->hcap - 1, i = home(c, key);
    while (c->hash[i].x != NIL)
        i = (i + 1) & m;
    c->hash[i].key = key;
    c->hash[i].x = x;
    c->hcount++;
}

/* Remove key (present: no empty slot lies between its home and it),
 * shifting back the probe run after it. */
static inline void ends_del(ENDS_CTX *c, ENDS_KEY key)
{
    uint64_t m = c->hcap - 1, i = home(c, key);
    while (c->hash[i].key != key)
        i = (i + 1) & m;
    for (uint64_t j = (i + 1) & m; c->hash[j].x != NIL; j = (j + 1) & m) {
        uint64_t h = home(c, c->hash[j].key);
        /* j's slot may move to the hole at i when its home is not in (i, j]. */
        if (((j - h) & m) >= ((j - i) & m)) {
            c->hash[i] = c->hash[j];
            i = j;
        }
    }
    c->hash[i].x = NIL;
    c->hcount--;
}

/* Room for n more keys: the map doubled until they fit (made, at 64
 * slots, when it has none).  0, or -1 without memory (the map as it
 * was). */
__attribute__((noinline, unused)) static int ends_grow(ENDS_CTX *c, uint64_t n)
{
    uint64_t cap = c->hcap ? c->hcap : 64;
    while ((c->hcount + n) * 4 > cap * 3)
        cap *= 2;
    ENDS_SLOT *old = c->hash, *nw = malloc(cap * sizeof *nw);
    if (!nw)
        return -1;
    for (uint64_t i = 0; i < cap; i++)
        nw[i].x = NIL;
    uint64_t ocap = c->hcap;
    c->hash = nw;
    c->hcap = cap;
    c->hshift = (unsigned)(64 - __builtin_ctzll(cap));
    c->hcount = 0;
    for (uint64_t i = 0; i < ocap; i++)
        if (old[i].x != NIL)
            ends_put(c, old[i].key, old[i].x);
    free(old);
    return 0;
}

/* Room for n more keys without growing: 0, or -1 (nothing changed). */
static inline int ends_room(ENDS_CTX *c, uint64_t n)
{
    return (c->hcount + n) * 4 > c->hcap * 3 ? ends_grow(c, n) : 0;
}

#endif
