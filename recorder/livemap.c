/*
 * livemap: the recorder's table of live blocks.  See livemap.h.
 *
 * The new table is lib/hashtab's, with livemap_entry_t slots keyed and
 * marked by the address (0: empty); livemap_t keeps no shift: each
 * operation takes a hashtab_t view of the map's fields (the shift
 * follows from the capacity) and stores back what changed.  The table
 * being moved is read here directly: it only ever loses entries, to
 * the cursor or to a gone mark.
 */
#include "recorder/livemap.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "lib/check.h"
#include "lib/hashtab.h"
#include "lib/lines.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* ---- the tables' memory ----------------------------------------------------------- */

/* A table of LIVEMAP_MAPPED bytes or more is mapped on its own, on
 * 2 MiB boundaries, asks for transparent huge pages and has its pages
 * made present ahead (in one call, or piece by piece: see next_prepare
 * below).  On this project's VM (nested paging) a
 * page fault costs 15 us and a TLB miss is dear: faulting in a 128 MiB
 * table a page at a time took 510 ms, one MADV_POPULATE_WRITE 30 ms;
 * moving a million entries into it took 90 ns a slot on 4 KiB pages
 * and 9 ns on huge ones.  Where huge pages are off (or the kernel is
 * older than 5.14, without MADV_POPULATE_WRITE) the table is an
 * ordinary mapping whose pages fault in as they are written. */
#define HUGE_PAGE ((size_t)2 << 20)

/* The mapped table of the map cleared last (livemap_clear: a trace's
 * end), kept for the next copy of its size (livemap_copy).  A recorder
 * serving a tree copies the parent's table at every fork, and a child
 * that exits or execs at once gives its copy back soon after: the next
 * fork's copy then writes over memory that is there, where a new mapping
 * had the kernel allocate and zero every page first (for a million live
 * blocks, 64 MiB: most of what a fork cost).  One table at most: a
 * table cleared takes the place of a spare no larger than itself.  It is
 * given back when a mapping fails for want of address space (the
 * recorder shares the program's RLIMIT_AS). */
static struct {
    void *p;
    size_t bytes;
    bool keep; /* set while livemap_clear frees */
} spare;

static void spare_drop(void)
{
    if (spare.p)
        munmap(spare.p, spare.bytes);
    spare.p = NULL;
    spare.bytes = 0;
}

/* bytes of memory on 2 MiB boundaries, huge pages asked for; NULL when
 * there is none. */
static void *map_table(size_t bytes)
{
    size_t span = bytes + HUGE_PAGE;
    char *p = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED && spare.p) {
        spare_drop();
        p = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    }
    if (p == MAP_FAILED)
        return NULL;
    char *q = (char *)(((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
    if (q > p)
        munmap(p, (size_t)(q - p));
    if (p + span > q + bytes)
        munmap(q + bytes, (size_t)(p + span - (q + bytes)));
    (void)madvise(q, bytes, MADV_HUGEPAGE);
    return q;
}

static void *table_alloc(size_t bytes, void *ctx)
{
    (void)ctx;
    if (bytes < LIVEMAP_MAPPED)
        return lines_calloc(bytes);
    void *p = map_table(bytes);
    if (p)
        (void)madvise(p, bytes, MADV_POPULATE_WRITE);
    return p;
}

static void table_free(void *p, size_t bytes, void *ctx)
{
    (void)ctx;
    if (bytes < LIVEMAP_MAPPED) {
        lines_free(p);
        return;
    }
    if (!spare.keep || (spare.p && spare.bytes > bytes)) { /* the larger one kept */
        munmap(p, bytes);
        return;
    }
    spare_drop();
    spare.p = p;
    spare.bytes = bytes;
}

/* bytes of table for a copy to write over whole: the spare when it is of
 * that size (not zeroed), else a new one. */
static void *table_for_copy(size_t bytes)
{
    if (bytes >= LIVEMAP_MAPPED && spare.p && spare.bytes == bytes) {
        void *p = spare.p;
        spare.p = NULL;
        return p;
    }
    return table_alloc(bytes, NULL);
}

static const hashtab_alloc_t table_mem = {table_alloc, table_free, NULL};

static const hashtab_type_t livemap_type = {
    .mem = &table_mem,
    .slot_size = sizeof(livemap_entry_t),
    .key_off = offsetof(livemap_entry_t, addr),
    .mark_off = offsetof(livemap_entry_t, addr),
};

static inline int shift_of(uint64_t mask) { return __builtin_clzll(mask + 1) + 1; }

static inline hashtab_t tab_of(const livemap_t *m)
{
    hashtab_t t = {.slots = m->slots, .mask = m->mask, .count = m->used};
    if (m->slots)
        t.shift = shift_of(m->mask); /* 64 - log2(capacity) */
    return t;
}

static inline void tab_store(livemap_t *m, const hashtab_t *t)
{
    m->slots = t->slots;
    m->mask = t->mask;
    m->used = t->count;
}

/* ---- the table being moved ------------------------------------------------------- */

static inline uint64_t old_home(const livemap_t *m, uint64_t addr)
{
    return (addr * HASHTAB_FIB) >> shift_of(m->old_mask);
}

/* addr's entry in the old table, not moved and not gone, or NULL.  The
 * old table's layout is as it was when the move began, so addr's probe
 * run is intact; an entry found below the cursor was moved (and is in
 * the new table, or was taken from it since). */
static livemap_entry_t *old_find(const livemap_t *m, uint64_t addr)
{
    for (uint64_t i = old_home(m, addr);; i = (i + 1) & m->old_mask) {
        livemap_entry_t *s = &m->old[i];
        if (!s->addr)
            return NULL;
        if (s->addr == addr)
            return i >= m->old_next && s->owner != LIVEMAP_GONE ? s : NULL;
    }
}

static void old_done(livemap_t *m)
{
    hashtab_table_free(&livemap_type, m->old, m->old_mask + 1);
    m->old = NULL;
    m->old_mask = m->old_next = m->old_left = 0;
}

/* Move up to n slots of the old table into t (which has room for them:
 * see livemap.h), and end the move after its last. */
static void move_some(livemap_t *m, hashtab_t *t, uint64_t n)
{
    uint64_t end = m->old_mask + 1, i = m->old_next;
    if (n > end - i)
        n = end - i;
    for (uint64_t stop = i + n; i < stop && m->old_left; i++) {
        const livemap_entry_t *s = &m->old[i];
        if (!s->addr || s->owner == LIVEMAP_GONE)
            continue;
        livemap_entry_t *d = hashtab_place(t, &livemap_type, s->addr);
        *d = *s;
        m->old_left--;
    }
    m->old_next = i;
    if (m->old_next == end || !m->old_left)
        old_done(m);
}

/* ---- the next table, made ready ahead -------------------------------------------------- */

/* Made present all at once, a 128 MiB table stalled the recorder up to
 * 240 ms where the host backs guest memory lazily (perl waited for ring
 * room through it).  So a mapped table's successor is mapped when the
 * table is 7/16 full and made present 2 MiB at a time, one piece every
 * LIVEMAP_READY_EVERY operations: ready after 1/32 of the table's
 * capacity in operations, before the 1/16 more entries that fill it to
 * half.  A map that empties below a quarter gives it back. */
static void next_drop(livemap_t *m)
{
    if (m->next)
        munmap(m->next, m->next_bytes);
    m->next = NULL;
    m->next_bytes = m->next_ready = 0;
}

/* Called past 7/16 load, or with a next table (and no move under way). */
static void next_prepare(livemap_t *m)
{
    uint64_t cap = m->mask + 1;
    if (!m->next) {
        if (cap * 2 * sizeof(livemap_entry_t) < LIVEMAP_MAPPED)
            return;
        m->next_bytes = cap * 2 * sizeof(livemap_entry_t);
        m->next = map_table(m->next_bytes);
        m->next_ready = 0;
        m->next_tick = 0;
        if (!m->next) { /* no address space: not again at every operation */
            m->next_bytes = 0;
            m->grow_wait = LIVEMAP_GROW_RETRY;
        }
        return;
    }
    if (m->used * 4 < cap) {
        next_drop(m);
        return;
    }
    if (m->next_ready < m->next_bytes && ++m->next_tick % LIVEMAP_READY_EVERY == 0) {
        size_t n =
            m->next_bytes - m->next_ready < HUGE_PAGE ? m->next_bytes - m->next_ready : HUGE_PAGE;
        (void)madvise((char *)m->next + m->next_ready, n, MADV_POPULATE_WRITE);
        m->next_ready += n;
    }
}

/* The next table, of capacity cap, into *t if it is ready (the rest of
 * it made present); false when there is none of that size. */
static bool next_take(livemap_t *m, hashtab_t *t, size_t cap)
{
    if (!m->next || m->next_bytes != cap * sizeof(livemap_entry_t))
        return false;
    if (m->next_ready < m->next_bytes)
        (void)madvise((char *)m->next + m->next_ready, m->next_bytes - m->next_ready,
                      MADV_POPULATE_WRITE);
    *t = (hashtab_t){.slots = m->next,
                     .mask = cap - 1,
                     .count = 0,
                     .shift = shift_of(cap - 1)};
    m->next = NULL;
    m->next_bytes = m->next_ready = 0;
    return true;
}

/* Make room for one more entry in the new table: begin a move into a
 * table twice its size when it is half full (ending a move still under
 * way first, which the step size makes all but impossible).  false when
 * there is no memory: nothing changed. */
static bool room_for_one(livemap_t *m, hashtab_t *t)
{
    if (t->slots && (t->count + 1) * 2 <= t->mask + 1)
        return true;
    if (m->old)
        move_some(m, t, m->old_mask + 1);
    if (t->slots && (t->count + 1) * 2 <= t->mask + 1)
        return true;
    hashtab_t bigger;
    size_t cap = t->slots ? (t->mask + 1) * 2 : HASHTAB_MIN_CAPACITY;
    if (m->grow_wait || !cap ||
        (!next_take(m, &bigger, cap) && hashtab_table_alloc(&bigger, &livemap_type, cap))) {
        /* No memory for a bigger table (the recorder shares the
         * program's RLIMIT_AS): fill this one on, and try again later. */
        m->grow_wait = m->grow_wait ? m->grow_wait - 1 : LIVEMAP_GROW_RETRY;
        if (!t->slots || (t->count + 1) * 16 > (t->mask + 1) * 15)
            return false;
        m->crowded = true;
        return true;
    }
    m->crowded = false;
    if (t->slots) {
        m->old = t->slots;
        m->old_mask = t->mask;
        m->old_next = 0;
        m->old_left = t->count;
    }
    *t = bigger;
    return true;
}

/* ---- the map ------------------------------------------------------------------------ */

/* What every put and take does first: move a step of the old table, or
 * else see to the next one. */
static inline void step(livemap_t *m, hashtab_t *t)
{
    if (m->old)
        move_some(m, t, LIVEMAP_MOVE_STEP);
    else if (!m->grow_wait && (m->next || (t->slots && t->count * 16 > (t->mask + 1) * 7)))
        next_prepare(m); /* (not while growing waits: no mapping at each operation) */
}

bool livemap_put(livemap_t *m, const livemap_entry_t *e)
{
    hashtab_t t = tab_of(m);
    step(m, &t);
    livemap_entry_t *s = hashtab_find(&t, &livemap_type, e->addr);
    if (!s) {
        if (!room_for_one(m, &t)) {
            tab_store(m, &t);
            return false;
        }
        livemap_entry_t *o = m->old ? old_find(m, e->addr) : NULL;
        if (o) { /* replaced: it leaves the old table */
            m->bytes -= o->size;
            o->owner = LIVEMAP_GONE;
            m->old_left--;
        }
        s = hashtab_place(&t, &livemap_type, e->addr); /* room_for_one keeps the load */
        s->size = 0;
    }
    m->bytes += e->size - s->size;
    *s = *e;
    /* In its slot, and a slot left free (probes end). */
    CHECK(s->addr == e->addr && t.count <= t.mask && m->bytes >= e->size);
    tab_store(m, &t);
    if (m->old && !m->old_left)
        old_done(m);
    return true;
}

bool livemap_take(livemap_t *m, uint64_t addr, livemap_entry_t *out)
{
    hashtab_t t = tab_of(m);
    step(m, &t);
    livemap_entry_t *s = hashtab_find(&t, &livemap_type, addr);
    bool found = s != NULL;
    if (s) {
        *out = *s;
        hashtab_erase(&t, &livemap_type, s);
    } else if (m->old && (s = old_find(m, addr)) != NULL) {
        *out = *s;
        s->owner = LIVEMAP_GONE;
        m->old_left--;
        found = true;
    }
    tab_store(m, &t);
    if (m->old && !m->old_left)
        old_done(m);
    /* The entry asked for, whose bytes the sum holds. */
    CHECK(!found || (out->addr == addr && m->bytes >= out->size));
    if (found)
        m->bytes -= out->size;
    return found;
}

void livemap_prefetch(const livemap_t *m, uint64_t addr)
{
    hashtab_t t = tab_of(m);
    hashtab_prefetch(&t, &livemap_type, addr);
    if (m->old)
        __builtin_prefetch(&m->old[old_home(m, addr)], 1);
}

uint64_t livemap_count(const livemap_t *m)
{
    return m->used + m->old_left;
}
uint64_t livemap_bytes(const livemap_t *m)
{
    return m->bytes;
}
bool livemap_moving(const livemap_t *m)
{
    return m->old != NULL;
}

void livemap_clear(livemap_t *m)
{
    hashtab_t t = tab_of(m);
    spare.keep = true;
    hashtab_fini(&t, &livemap_type);
    spare.keep = false;
    if (m->old)
        old_done(m);
    next_drop(m);
    memset(m, 0, sizeof *m);
}

int livemap_check(const livemap_t *m, const char **why)
{
    hashtab_t t = tab_of(m);
    if (hashtab_check_runs(&t, &livemap_type, why))
        return -1;
    if (m->slots && (m->crowded ? m->used * 16 > (m->mask + 1) * 15 : m->used * 2 > m->mask + 1)) {
        *why = m->crowded ? "the table is over 15/16 full" : "the table is over half full";
        return -1;
    }
    uint64_t bytes = 0, left = 0;
    for (uint64_t i = 0; i < hashtab_capacity(&t); i++)
        if (m->slots[i].addr)
            bytes += m->slots[i].size;
    if (m->old) {
        for (uint64_t i = m->old_next; i <= m->old_mask; i++) {
            const livemap_entry_t *s = &m->old[i];
            if (!s->addr || s->owner == LIVEMAP_GONE)
                continue;
            if (old_find(m, s->addr) != s) {
                *why = "an entry of the table being moved is not found from its home";
                return -1;
            }
            if (hashtab_find(&t, &livemap_type, s->addr)) {
                *why = "a key is in both tables";
                return -1;
            }
            left++;
            bytes += s->size;
        }
        if (left != m->old_left) {
            *why = "the entries left to move disagree with the table being moved";
            return -1;
        }
    } else if (m->old_left || m->old_next) {
        *why = "a move's cursor is set with no table being moved";
        return -1;
    }
    if (m->next_ready > m->next_bytes || (!m->next && m->next_bytes)) {
        *why = "the next table's size or readiness is wrong";
        return -1;
    }
    if (bytes != m->bytes) {
        *why = "count or bytes disagree with the entries";
        return -1;
    }
    return 0;
}

void livemap_each(livemap_t *m, void (*fn)(const livemap_entry_t *e, void *ctx), void *ctx)
{
    if (m->old) { /* the move ended first: one table to walk */
        hashtab_t t = tab_of(m);
        move_some(m, &t, m->old_mask + 1);
        tab_store(m, &t);
    }
    for (uint64_t i = 0; m->slots && i <= m->mask; i++)
        if (m->slots[i].addr)
            fn(&m->slots[i], ctx);
}

bool livemap_copy(livemap_t *to, livemap_t *from, void (*fix)(livemap_entry_t *e, void *ctx),
                  void *ctx, uint64_t *left_out)
{
    *left_out = 0;
    livemap_clear(to);
    hashtab_t t = tab_of(from);
    if (from->old) { /* the move ended first: one table to copy */
        move_some(from, &t, from->old_mask + 1);
        tab_store(from, &t);
    }
    if (!from->slots)
        return true;
    uint64_t cap = from->mask + 1;
    livemap_entry_t *slots = table_for_copy(cap * sizeof(livemap_entry_t));
    if (!slots) {
        *left_out = from->used;
        return false;
    }
    /* The same capacity: every entry at the same slot, every slot written. */
    memcpy(slots, from->slots, cap * sizeof(livemap_entry_t));
    to->slots = slots;
    to->mask = from->mask;
    to->used = from->used;
    to->bytes = from->bytes;
    to->crowded = from->crowded;
    for (uint64_t i = 0; fix && i < cap; i++)
        if (to->slots[i].addr)
            fix(&to->slots[i], ctx);
    return true;
}
