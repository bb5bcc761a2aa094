/*
 * sampleset: the sampled blocks not freed yet.  See sampleset.h.
 */
#include "preload/sampleset.h"

#include <stddef.h>

#include "ipc/sysmem.h"

#define MOVED 1u               /* a slot's mark: its table moves on */
#define BUCKET 8u              /* slots of a bucket: a cache line */
#define FIRST_COUNTERS 1024u   /* the first table's: a KiB, in L1 with the program's data */
#define LOAD 8u                /* at most a block per LOAD counters before a move */
#define STUCK 255u             /* a counter that reached it stays */

_Static_assert(offsetof(sampleset_table_t, counters) == sizeof(sampleset_table_t),
               "the counters start where the header ends");

/* Until sampling starts: two counters that never read 0. */
static struct {
    sampleset_table_t t;
    _Atomic uint8_t c[2];
} none = {.t = {.shift = 63, .ncounters = 2}, .c = {1, 1}};

_Atomic(sampleset_table_t *) sampleset_cur_ = &none.t;

static uint64_t counter_of(const sampleset_table_t *t, uintptr_t p)
{
    return ((uint64_t)p * SAMPLESET_HASH) >> t->shift;
}

/* A zeroed table of n counters (a power of 2, at least BUCKET), or NULL. */
static sampleset_table_t *table_new(uint64_t n)
{
    size_t head = sizeof(sampleset_table_t) + n;
    size_t slots_at = (head + 63) & ~(size_t)63;
    size_t spill_at = slots_at + n * sizeof(uint64_t);
    size_t bytes = spill_at + n / BUCKET;
    sampleset_table_t *t = sysmem_alloc(bytes);
    if (!t)
        return NULL;
    t->shift = (unsigned)(64 - __builtin_ctzll(n));
    t->ncounters = n;
    t->slots = (_Atomic uint64_t *)(void *)((char *)t + slots_at);
    t->spill = (_Atomic uint8_t *)((char *)t + spill_at);
    t->bytes = bytes;
    return t;
}

/* Raise counter i (not past STUCK). */
static void counter_up(sampleset_table_t *t, uint64_t i)
{
    uint8_t c = atomic_load(&t->counters[i]);
    while (c < STUCK && !atomic_compare_exchange_weak(&t->counters[i], &c, (uint8_t)(c + 1))) {
    }
}

/* Lower counter i, unless it is stuck. */
static void counter_down(sampleset_table_t *t, uint64_t i)
{
    uint8_t c = atomic_load(&t->counters[i]);
    while (c > 0 && c < STUCK && !atomic_compare_exchange_weak(&t->counters[i], &c, (uint8_t)(c - 1))) {
    }
}

/* ---- placing ------------------------------------------------------------------------ */

enum { PLACED, FULL, MOVING };

/* p into t's slot for it: PLACED, MOVING (t is moving on: nothing
 * done but the counter, which only errs on the side of "maybe"), FULL
 * (every bucket is full). */
static int place(sampleset_table_t *t, uintptr_t p)
{
    uint64_t i = counter_of(t, p), nb = t->ncounters / BUCKET, b = i / BUCKET;
    counter_up(t, i);
    for (uint64_t tries = 0; tries < nb; tries++, b = (b + 1) & (nb - 1)) {
        for (unsigned k = 0; k < BUCKET; k++) {
            _Atomic uint64_t *s = &t->slots[b * BUCKET + k];
            uint64_t v = atomic_load(s);
            if (v & MOVED)
                return MOVING;
            if (v == 0 && atomic_compare_exchange_strong(s, &v, p)) {
                atomic_fetch_add(&t->blocks, 1);
                return PLACED;
            }
            if (v & MOVED)
                return MOVING;
        }
        atomic_store(&t->spill[b], 1);
    }
    return FULL;
}

/* p into t unless it is there already (a move's copy: another thread may
 * have copied it).  A copy that lands after the block was freed is a
 * stale entry, which the set allows. */
static bool has(sampleset_table_t *t, uintptr_t p);
static int copy_in(sampleset_table_t *t, uintptr_t p) { return has(t, p) ? PLACED : place(t, p); }

/* ---- moving ------------------------------------------------------------------------- */

/* Finish t's move (t->next set): mark every slot, copy every block, and
 * publish the new table.  Every thread that comes does it all. */
static void help(sampleset_table_t *t)
{
    sampleset_table_t *n = atomic_load(&t->next);
    for (uint64_t j = 0; j < t->ncounters; j++) {
        uint64_t v = atomic_load(&t->slots[j]);
        while (!(v & MOVED) && !atomic_compare_exchange_weak(&t->slots[j], &v, v | MOVED)) {
        }
        if (v & ~(uint64_t)MOVED)
            copy_in(n, v & ~(uint64_t)MOVED); /* the new table is twice as big: room */
    }
    sampleset_table_t *expect = t;
    atomic_compare_exchange_strong(&sampleset_cur_, &expect, n);
}

/* Start t's move to a table twice its size (or join one under way).
 * false without memory. */
static bool move_on(sampleset_table_t *t)
{
    if (!atomic_load(&t->next)) {
        sampleset_table_t *n = table_new(t->ncounters * 2), *expect = NULL;
        if (!n)
            return false;
        if (!atomic_compare_exchange_strong(&t->next, &expect, n))
            sysmem_free(n, n->bytes); /* another thread's won */
    }
    help(t);
    return true;
}

/* ---- the set ----------------------------------------------------------------------- */

int sampleset_start(void)
{
    sampleset_table_t *t = table_new(FIRST_COUNTERS);
    if (!t)
        return -1;
    atomic_store(&sampleset_cur_, t);
    return 0;
}

bool sampleset_add(const void *ptr)
{
    uintptr_t p = (uintptr_t)ptr;
    if (!p || (p & 7)) /* allocators align to 8 at least; the mark needs bit 0 */
        return false;
    for (;;) {
        sampleset_table_t *t = atomic_load(&sampleset_cur_);
        if (t == &none.t)
            return false;
        if (atomic_load(&t->next) || atomic_load(&t->blocks) + 1 > t->ncounters / LOAD) {
            if (!move_on(t))
                return false;
            continue;
        }
        int r = place(t, p);
        if (r == PLACED)
            return true;
        if (r == FULL || !move_on(t))
            return false;
    }
}

/* The slot of t holding p (marked or not), or NULL. */
static _Atomic uint64_t *find(sampleset_table_t *t, uintptr_t p)
{
    uint64_t i = counter_of(t, p), nb = t->ncounters / BUCKET, b = i / BUCKET;
    if (!atomic_load(&t->counters[i]))
        return NULL;
    for (uint64_t tries = 0; tries < nb; tries++, b = (b + 1) & (nb - 1)) {
        for (unsigned k = 0; k < BUCKET; k++) {
            _Atomic uint64_t *s = &t->slots[b * BUCKET + k];
            if ((atomic_load(s) & ~(uint64_t)MOVED) == p)
                return s;
        }
        if (!atomic_load(&t->spill[b]))
            return NULL;
    }
    return NULL;
}

static bool has(sampleset_table_t *t, uintptr_t p) { return find(t, p) != NULL; }

/* Take p out of t, and of the tables t moved to; whether it was there. */
static bool take_from(sampleset_table_t *t, uintptr_t p)
{
    bool was = false;
    for (;;) {
        _Atomic uint64_t *s = find(t, p);
        if (!s)
            return was;
        uint64_t v = p;
        if (atomic_compare_exchange_strong(s, &v, 0)) {
            atomic_fetch_sub(&t->blocks, 1);
            counter_down(t, counter_of(t, p));
            return true;
        }
        if (v & MOVED) {
            /* The block is (once the move ends) in the next table. */
            was = true;
            help(t);
            t = atomic_load(&t->next);
        }
        /* else another thread took it meanwhile: look again */
    }
}

bool sampleset_take(const void *ptr)
{
    uintptr_t p = (uintptr_t)ptr;
    if (!p || (p & 7))
        return false;
    sampleset_table_t *t = atomic_load(&sampleset_cur_);
    if (t == &none.t)
        return false;
    return take_from(t, p);
}
