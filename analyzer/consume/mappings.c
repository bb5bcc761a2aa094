/*
 * mappings: the program's own mappings.  See mappings.h.
 */
#include "analyzer/consume/mappings.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "analyzer/consume/sites.h" /* SITES_MAX_ID_GAP */
#include "lib/grow.h"

int mappings_init(mappings_t *m)
{
    memset(m, 0, sizeof *m);
    return 0;
}

void mappings_fini(mappings_t *m)
{
    free(m->v);
    free(m->sites);
    memset(m, 0, sizeof *m);
}

/* The site of id, grown into; site 0 when the id is absurd or memory
 * runs out. */
static mapping_site_t *site(mappings_t *m, uint64_t id)
{
    if (id >= m->nsites) {
        if (id > m->nsites + SITES_MAX_ID_GAP)
            id = 0;
        size_t n = m->nsites ? m->nsites : 64;
        while (n <= id)
            n *= 2;
        mapping_site_t *v = realloc(m->sites, n * sizeof *v);
        if (!v) {
            m->nomem = true;
            if (!m->nsites)
                return NULL;
            return &m->sites[0];
        }
        memset(v + m->nsites, 0, (n - m->nsites) * sizeof *v);
        m->sites = v;
        m->nsites = n;
    }
    return &m->sites[id];
}

/* Before a site's live bytes change: keep what it had at the last peak. */
static void touch(mappings_t *m, mapping_site_t *s)
{
    if (s->snap_epoch != m->peak_epoch) {
        s->snap = s->live;
        s->snap_file = s->live_file;
        s->snap_epoch = m->peak_epoch;
    }
}

static void account(mappings_t *m, uint64_t id, bool file, uint64_t bytes, bool add)
{
    mapping_site_t *s = site(m, id);
    if (s)
        touch(m, s);
    if (add) {
        m->live += bytes;
        m->live_file += file ? bytes : 0;
        if (s) {
            s->live += bytes;
            s->live_file += file ? bytes : 0;
        }
    } else {
        m->live -= bytes;
        m->live_file -= file ? bytes : 0;
        if (s) {
            s->live -= bytes;
            s->live_file -= file ? bytes : 0;
        }
    }
}

/* The index of the first mapping whose end is past a. */
static size_t first_after(const mappings_t *m, uint64_t a)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->v[mid].end <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool room(mappings_t *m, size_t more)
{
    if (!grow_room((void **)&m->v, &m->cap, m->n + more - 1, sizeof *m->v, 64)) {
        m->nomem = true;
        return false;
    }
    return true;
}

/* Unmap [a, b); *from (may be NULL) gets the first mapping cut, for
 * mremap's site and kind.  Returns whether anything was mapped there. */
static bool unmap(mappings_t *m, uint64_t a, uint64_t b, mapping_t *from)
{
    bool any = false;
    size_t i = first_after(m, a);
    while (i < m->n && m->v[i].start < b) {
        mapping_t *v = &m->v[i];
        if (!any && from)
            *from = *v;
        any = true;
        uint64_t lo = v->start > a ? v->start : a, hi = v->end < b ? v->end : b;
        account(m, v->site, v->file, hi - lo, false);
        if (v->start < a && v->end > b) { /* a hole in the middle: split */
            if (!room(m, 1)) { /* the tail is forgotten, its bytes counted gone */
                account(m, v->site, v->file, v->end - b, false);
                v->end = a;
                return any;
            }
            v = &m->v[i];
            memmove(&m->v[i + 2], &m->v[i + 1], (m->n - i - 1) * sizeof *m->v);
            m->v[i + 1] = (mapping_t){.start = b, .end = v->end, .site = v->site, .file = v->file};
            v->end = a;
            m->n++;
            return any;
        }
        if (v->start < a) { /* the tail goes */
            v->end = a;
            i++;
        } else if (v->end > b) { /* the head goes */
            v->start = b;
            i++;
        } else { /* all of it */
            memmove(&m->v[i], &m->v[i + 1], (m->n - i - 1) * sizeof *m->v);
            m->n--;
        }
    }
    return any;
}

static void map(mappings_t *m, uint64_t a, uint64_t b, uint64_t id, bool file, uint64_t t)
{
    unmap(m, a, b, NULL);
    if (!room(m, 1))
        return;
    size_t i = first_after(m, a);
    memmove(&m->v[i + 1], &m->v[i], (m->n - i) * sizeof *m->v);
    m->v[i] = (mapping_t){.start = a, .end = b, .site = id, .file = file};
    m->n++;
    account(m, id, file, b - a, true);
    if (m->live > m->peak) {
        m->peak = m->live;
        m->peak_file = m->live_file;
        m->peak_t = t;
        m->peak_epoch++;
    }
}

static uint64_t page_up(uint64_t v)
{
    return v > UINT64_MAX - (MAPPINGS_PAGE - 1) ? UINT64_MAX & ~(uint64_t)(MAPPINGS_PAGE - 1)
                                                 : (v + MAPPINGS_PAGE - 1) & ~(uint64_t)(MAPPINGS_PAGE - 1);
}

static uint64_t field(const json_t *o, const char *k, bool *ok)
{
    const json_t *j = json_object_get(o, k);
    if (!json_is_integer(j) || json_integer_value(j) < 0) {
        *ok = false;
        return 0;
    }
    return (uint64_t)json_integer_value(j);
}

void mappings_add(mappings_t *m, const event_t *e)
{
    const json_t *o = e->json;
    switch (e->type) {
    case EV_MMAP: {
        if (!e->size || e->addr > UINT64_MAX - e->size)
            return;
        const json_t *fl = json_object_get(o, "flags"), *fd = json_object_get(o, "fd");
        bool anon = json_is_integer(fl) && (json_integer_value(fl) & MAP_ANONYMOUS);
        bool file = !anon && json_is_integer(fd) && json_integer_value(fd) >= 0;
        uint64_t a = e->addr & ~(uint64_t)(MAPPINGS_PAGE - 1), b = page_up(e->addr + e->size);
        m->calls++;
        mapping_site_t *s = site(m, e->stack);
        if (s) {
            s->calls++;
            s->mapped += b - a;
            s->file = file;
        }
        map(m, a, b, s ? (uint64_t)(s - m->sites) : 0, file, e->t);
        break;
    }
    case EV_MUNMAP:
        if (!e->size || e->addr > UINT64_MAX - e->size)
            return;
        m->unmaps++;
        unmap(m, e->addr & ~(uint64_t)(MAPPINGS_PAGE - 1), page_up(e->addr + e->size), NULL);
        break;
    case EV_MREMAP: {
        bool ok = true;
        uint64_t old = field(o, "old_addr", &ok), old_size = field(o, "old_size", &ok);
        uint64_t to = field(o, "addr", &ok), size = field(o, "size", &ok);
        if (!ok || old > UINT64_MAX - old_size || to > UINT64_MAX - size)
            return;
        m->remaps++;
        mapping_t from = {.site = e->stack};
        uint64_t oa = old & ~(uint64_t)(MAPPINGS_PAGE - 1);
        /* old_size 0 duplicates a shared mapping: the old one stays. */
        if (old_size)
            unmap(m, oa, page_up(old + old_size), &from);
        else if (first_after(m, oa) < m->n && m->v[first_after(m, oa)].start <= oa)
            from = m->v[first_after(m, oa)];
        if (size)
            map(m, to & ~(uint64_t)(MAPPINGS_PAGE - 1), page_up(to + size), from.site, from.file,
                e->t);
        break;
    }
    default:
        break;
    }
}

uint64_t mappings_site_peak(const mappings_t *m, uint64_t id, uint64_t *file)
{
    if (id >= m->nsites) {
        if (file)
            *file = 0;
        return 0;
    }
    const mapping_site_t *s = &m->sites[id];
    bool snapped = s->snap_epoch == m->peak_epoch;
    if (file)
        *file = snapped ? s->snap_file : s->live_file;
    return snapped ? s->snap : s->live;
}

static uint64_t key_of(const mappings_t *m, uint64_t id, mappings_key_t key)
{
    return key == MAPPINGS_BY_PEAK ? mappings_site_peak(m, id, NULL) : m->sites[id].live;
}

size_t mappings_top(const mappings_t *m, mappings_key_t key, size_t max, uint64_t **ids)
{
    *ids = NULL;
    if (!max)
        return 0;
    uint64_t *v = malloc((max + 1) * sizeof *v);
    if (!v)
        return 0;
    size_t n = 0;
    for (uint64_t id = 0; id < m->nsites; id++) {
        uint64_t k = key_of(m, id, key);
        if (!k)
            continue;
        /* insertion into the top list, largest first, ties by id */
        size_t at = n;
        while (at > 0 && key_of(m, v[at - 1], key) < k)
            at--;
        if (at >= max)
            continue;
        memmove(&v[at + 1], &v[at], (n - at) * sizeof *v);
        v[at] = id;
        if (n < max)
            n++;
    }
    if (!n) {
        free(v);
        return 0;
    }
    *ids = v;
    return n;
}
