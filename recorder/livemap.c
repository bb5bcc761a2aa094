/*
 * livemap: the recorder's table of live blocks.  See livemap.h.
 *
 * The new table is core/hashtab's, with livemap_entry_t slots keyed and
 * marked by the address (0: empty); livemap_t keeps no shift: each
 * operation takes a hashtab_t view of the map's fields (the shift
 * follows from the capacity) and stores back what changed.  The table
 * being moved is read here directly: it only ever loses entries, to
 * the cursor or to a gone mark.
 */
#include "recorder/livemap.h"

#include <string.h>

#include "core/hashtab.h"

livemap_t livemap_program = LIVEMAP_INITIALIZER;
livemap_t livemap_quiet = LIVEMAP_INITIALIZER;

static const hashtab_type_t livemap_type = {
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
        livemap_entry_t *d = hashtab_insert(t, &livemap_type, s->addr);
        *d = *s;
        m->old_left--;
    }
    m->old_next = i;
    if (m->old_next == end || !m->old_left)
        old_done(m);
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
    if (!cap || hashtab_table_alloc(&bigger, &livemap_type, cap))
        return false;
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

bool livemap_put(livemap_t *m, const livemap_entry_t *e)
{
    hashtab_t t = tab_of(m);
    if (m->old)
        move_some(m, &t, LIVEMAP_MOVE_STEP);
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
        s = hashtab_insert(&t, &livemap_type, e->addr);
        s->size = 0;
    }
    m->bytes += e->size - s->size;
    *s = *e;
    tab_store(m, &t);
    if (m->old && !m->old_left)
        old_done(m);
    return true;
}

bool livemap_take(livemap_t *m, uint64_t addr, livemap_entry_t *out)
{
    hashtab_t t = tab_of(m);
    if (m->old)
        move_some(m, &t, LIVEMAP_MOVE_STEP);
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

uint64_t livemap_count(const livemap_t *m) { return m->used + m->old_left; }
uint64_t livemap_bytes(const livemap_t *m) { return m->bytes; }
bool livemap_moving(const livemap_t *m) { return m->old != NULL; }

void livemap_clear(livemap_t *m)
{
    hashtab_t t = tab_of(m);
    hashtab_fini(&t, &livemap_type);
    if (m->old)
        old_done(m);
    memset(m, 0, sizeof *m);
}

int livemap_check(const livemap_t *m, const char **why)
{
    hashtab_t t = tab_of(m);
    if (hashtab_check(&t, &livemap_type, why))
        return -1;
    if (m->slots && m->used * 2 > m->mask + 1) {
        *why = "the table is over half full";
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
    if (bytes != m->bytes) {
        *why = "count or bytes disagree with the entries";
        return -1;
    }
    return 0;
}
