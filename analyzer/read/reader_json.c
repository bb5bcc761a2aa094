/*
 * reader_json: lines jansson parses.  See reader_json.h.
 */
#include "analyzer/read/reader_json.h"

#include <stdlib.h>
#include <string.h>

#define names tracefmt_names

static event_type_t type_of(const char *ev)
{
    for (int i = 0; i < EV_COUNT; i++)
        if (strcmp(ev, names[i]) == 0)
            return (event_type_t)i;
    return EV_COUNT;
}

/* Field k as an unsigned integer into *v; false (and a problem) if absent
 * or not a non-negative integer. */
static bool need_u64(reader_t *r, const json_t *o, const char *k, uint64_t *v)
{
    const json_t *j = json_object_get(o, k);
    if (!json_is_integer(j) || json_integer_value(j) < 0) {
        reader_problem(r, "%s field \"%s\"", j ? "mistyped" : "missing", k);
        return false;
    }
    *v = (uint64_t)json_integer_value(j);
    return true;
}

uint64_t reader_count(const json_t *o, const char *k)
{
    const json_t *j = json_object_get(o, k);
    return json_is_integer(j) && json_integer_value(j) >= 0 ? (uint64_t)json_integer_value(j) : 0;
}

static void opt_u64(const json_t *o, const char *k, uint64_t *v) { *v = reader_count(o, k); }

/* The fields each record type needs; false when one is missing. */
static bool fill(reader_t *r, const json_t *o, event_t *e)
{
    switch (e->type) {
    case EV_META: {
        uint64_t v = 0;
        if (!need_u64(r, o, "version", &v))
            return false;
        r->version = (int)v;
        if (v > READER_FORMAT_VERSION)
            reader_problem(r, "trace format version %llu is newer than this analyzer's %d; reading "
                       "what it knows", (unsigned long long)v, READER_FORMAT_VERSION);
        return true;
    }
    case EV_ALLOC: {
        const char *fn = json_string_value(json_object_get(o, "fn"));
        e->fn = fn ? (uint8_t)tracefmt_fn_find(fn, strlen(fn)) : TRACEFMT_FN_MALLOC;
    }
        opt_u64(o, "align", &e->align);
        if (!json_object_get(o, "align"))
            e->align = READER_DEFAULT_ALIGN;
        opt_u64(o, "stack", &e->stack);
        return need_u64(r, o, "addr", &e->addr) && need_u64(r, o, "size", &e->size);
    case EV_FREE:
        opt_u64(o, "stack", &e->stack);
        e->inherited = json_is_true(json_object_get(o, "inherited"));
        return need_u64(r, o, "addr", &e->addr) && need_u64(r, o, "size", &e->size);
    case EV_REALLOC: {
        opt_u64(o, "stack", &e->stack);
        e->inherited = json_is_true(json_object_get(o, "inherited"));
        const json_t *os = json_object_get(o, "old_size");
        e->has_old_size = json_is_integer(os);
        e->old_size = e->has_old_size ? (uint64_t)json_integer_value(os) : 0;
        return need_u64(r, o, "old_addr", &e->old_addr) && need_u64(r, o, "addr", &e->addr) &&
               need_u64(r, o, "size", &e->size);
    }
    case EV_MMAP:
    case EV_MUNMAP:
        opt_u64(o, "stack", &e->stack);
        return need_u64(r, o, "addr", &e->addr) && need_u64(r, o, "size", &e->size);
    case EV_MREMAP:
        opt_u64(o, "stack", &e->stack);
        return true;
    case EV_TOUCHED:
        if (!need_u64(r, o, "addr", &e->addr) || !need_u64(r, o, "pages", &e->touched) ||
            e->touched == UINT64_MAX)
            return false;
        e->touched++;
        return true;
    case EV_SAMPLE:
        opt_u64(o, "hwm", &e->hwm);
        opt_u64(o, "tree_rss", &e->tree_rss);
        opt_u64(o, "malloc_reserved", &e->malloc_reserved);
        opt_u64(o, "malloc_in_use", &e->malloc_in_use);
        opt_u64(o, "device_total", &e->device_total);
        opt_u64(o, "heap_live", &e->heap_live);
        opt_u64(o, "heap_live_se", &e->heap_live_se);
        return need_u64(r, o, "rss", &e->rss);
    default:
        return true;
    }
}

/* An address element: 1 to 16 lower-case hex digits, as fast3 reads them. */
static bool hex_value(const char *h, uint64_t *v)
{
    size_t n = h ? strlen(h) : 0;
    if (!n || n > 16 || strspn(h, "0123456789abcdef") != n)
        return false;
    *v = strtoull(h, NULL, 16);
    return true;
}

/* A compact record jansson parsed (the fast path refused it): its
 * fields checked one by one, so that the problem can be named. */
static bool fill_array(reader_t *r, const json_t *a, event_t *e)
{
    size_t n = json_array_size(a);
    const char *tag = json_string_value(json_array_get(a, 0));
    static const struct {
        char tag;
        event_type_t type;
        size_t min;
        const char *optional; /* the trailing elements: 's' a string, 'n' a number */
    } kinds[] = {{TRACEFMT_TAG_ALLOC, EV_ALLOC, 6, "sn"},
                 {TRACEFMT_TAG_FREE, EV_FREE, 4, "nsn"},
                 {TRACEFMT_TAG_REALLOC, EV_REALLOC, 7, "nsn"},
                 {TRACEFMT_TAG_REALLOC_FAILED, EV_REALLOC_FAILED, 6, "s"}};
    size_t k = 0;
    while (tag && k < sizeof kinds / sizeof kinds[0] && (tag[0] != kinds[k].tag || tag[1]))
        k++;
    if (!tag || k == sizeof kinds / sizeof kinds[0]) {
        reader_problem(r, "an array record of no known kind");
        return false;
    }
    size_t max = kinds[k].min + strlen(kinds[k].optional);
    if (n < kinds[k].min || n > max) {
        reader_problem(r, "a %s record with %zu elements (%zu to %zu)", names[kinds[k].type], n,
                       kinds[k].min, max);
        return false;
    }
    for (size_t i = kinds[k].min; i < n; i++) {
        const json_t *x = json_array_get(a, i);
        if (kinds[k].optional[i - kinds[k].min] == 's'
                ? !json_is_string(x)
                : !json_is_integer(x) || json_integer_value(x) < 0) {
            reader_problem(r, "a %s record with a mistyped element %zu", names[kinds[k].type],
                           i + 1);
            return false;
        }
    }
    memset(e, 0, sizeof *e);
    e->type = kinds[k].type;
    const json_t *dt = json_array_get(a, 1), *ti = json_array_get(a, 2);
    if (!json_is_integer(dt) || !json_is_integer(ti) || json_integer_value(ti) < 0 ||
        (size_t)json_integer_value(ti) >= r->ntids) {
        reader_problem(r, "a %s record without its time or with a thread no thread record named",
                       names[e->type]);
        return false;
    }
    /* The addresses (hex strings) and numbers after them. */
    uint64_t v[4] = {0};
    size_t nhex = e->type == EV_REALLOC ? 2 : 1, nnum = e->type == EV_FREE ? 0 : 2;
    for (size_t i = 0; i < nhex + nnum; i++) {
        const json_t *x = json_array_get(a, 3 + i);
        if (i < nhex ? !hex_value(json_string_value(x), &v[i])
                     : !json_is_integer(x) || json_integer_value(x) < 0) {
            reader_problem(r, "a %s record with a mistyped element %zu", names[e->type], 4 + i);
            return false;
        }
        if (i >= nhex)
            v[i] = (uint64_t)json_integer_value(x);
    }
    uint64_t flags = 0;
    const json_t *extra = json_array_get(a, 3 + nhex + nnum);
    const json_t *touched = json_array_get(a, 5 + nhex + nnum); /* after flags and fn */
    if ((e->type == EV_FREE || e->type == EV_REALLOC) && json_is_integer(touched) &&
        json_integer_value(touched) >= 0)
        e->touched = (uint64_t)json_integer_value(touched) + 1;
    if (e->type == EV_ALLOC) {
        e->addr = v[0], e->size = v[1], e->stack = v[2];
        const char *fn = json_string_value(json_array_get(a, 6));
        e->fn = fn ? (uint8_t)tracefmt_fn_find(fn, strlen(fn)) : TRACEFMT_FN_MALLOC;
        const json_t *al = json_array_get(a, 7);
        e->align = json_is_integer(al) ? (uint64_t)json_integer_value(al) : READER_DEFAULT_ALIGN;
    } else if (e->type == EV_FREE) {
        e->addr = v[0];
        flags = json_is_integer(extra) ? (uint64_t)json_integer_value(extra) : 0;
    } else if (e->type == EV_REALLOC) {
        e->old_addr = v[0], e->addr = v[1], e->size = v[2], e->stack = v[3];
        flags = json_is_integer(extra) ? (uint64_t)json_integer_value(extra) : 0;
        e->has_old_size = !(flags & TRACEFMT_F_OLD_UNKNOWN);
    } else {
        e->addr = v[0], e->size = v[1], e->stack = v[2];
    }
    e->inherited = flags & TRACEFMT_F_INHERITED;
    e->tid = r->tids[json_integer_value(ti)];
    r->last_us += json_integer_value(dt);
    if (r->last_us < 0)
        r->last_us = 0;
    e->t = (uint64_t)r->last_us * 1000;
    return true;
}

/* A thread record (version 3): index -> tid. */
static void thread_record(reader_t *r, const json_t *o)
{
    const json_t *index = json_object_get(o, "index"), *tid = json_object_get(o, "tid");
    if (!json_is_integer(index) || json_integer_value(index) < 0 ||
        json_integer_value(index) > (1 << 24) || !json_is_integer(tid)) {
        r->bad_lines++;
        reader_problem(r, "a thread record without its index or tid");
        return;
    }
    size_t i = (size_t)json_integer_value(index);
    if (i >= r->cap_tids) {
        size_t cap = r->cap_tids ? r->cap_tids : 16;
        while (cap <= i)
            cap *= 2;
        int64_t *t = realloc(r->tids, cap * sizeof *t);
        if (!t)
            return;
        r->tids = t;
        r->cap_tids = cap;
    }
    for (; r->ntids < i; r->ntids++)
        r->tids[r->ntids] = 0; /* indexes given out of order: the gaps say tid 0 */
    r->tids[i] = json_integer_value(tid);
    if (i >= r->ntids)
        r->ntids = i + 1;
}

int reader_json_line(reader_t *r, const char *line, size_t len, event_t *e)
{
    json_error_t err;
    r->obj = json_loadb(line, len, 0, &err);
    if (json_is_array(r->obj)) {
        if (!fill_array(r, r->obj, e)) {
            r->bad_lines++;
            return 0;
        }
        r->by_type[e->type]++;
        return 1; /* json stays NULL: a hot record, as from the fast path */
    }
    if (!json_is_object(r->obj)) {
        r->bad_lines++;
        if (line[len - 1] != '\n' && !r->obj)
            reader_problem(r, "a truncated last line");
        else
            reader_problem(r, "not a JSON object: %s", err.text);
        return 0;
    }
    const char *ev = json_string_value(json_object_get(r->obj, "ev"));
    if (!ev) {
        r->bad_lines++;
        reader_problem(r, "no \"ev\" field");
        return 0;
    }
    if (strcmp(ev, TRACEFMT_NAME(THREAD)) == 0) {
        thread_record(r, r->obj);
        if (json_is_integer(json_object_get(r->obj, "t")))
            r->last_us = json_integer_value(json_object_get(r->obj, "t"));
        return 0;
    }
    memset(e, 0, sizeof *e);
    e->type = type_of(ev);
    if (e->type == EV_COUNT) {
        r->unknown++;
        return 0;
    }
    opt_u64(r->obj, "t", &e->t);
    if (r->version >= 3 || (e->type == EV_META && json_integer_value(json_object_get(
                                                      r->obj, "version")) >= 3)) {
        r->last_us = (int64_t)e->t; /* version 3: microseconds */
        e->t *= 1000;
    }
    const json_t *tid = json_object_get(r->obj, "tid");
    e->tid = json_is_integer(tid) ? json_integer_value(tid) : 0;
    if (!fill(r, r->obj, e)) {
        r->bad_lines++;
        return 0;
    }
    if (e->type == EV_END)
        r->ended = true;
    else if (e->type == EV_EXEC_FAILED)
        r->ended = false;
    r->by_type[e->type]++;
    e->json = r->obj;
    return 1;
}
