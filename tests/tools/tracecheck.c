/*
 * tracecheck: verify a memsim trace the way the integration tests need.
 *
 *   tracecheck [--tag MOD:REM] [--expect-end REASON] [--truncated | --dropped-ok] TRACE
 *   tracecheck --cat TRACE      the trace's text, decompressed (the tests grep it)
 *
 * Reads every record with jansson (plain or zstd-compressed, through
 * trace/tracein.h; versions 2 and 3) and checks the rules of
 * docs/trace-format.md: a meta record first; every object record has
 * ev, t and tid, every compact record its tag, dt, thread and a thread
 * record before it; stack ids are defined before use; an allocation
 * never lands on an address that is still live; every free and every
 * realloc of a known block names a live block (with its size, where the
 * record says one); the end record is the last one, with dropped 0 and a
 * record count equal to the lines read; the records of each thread (but
 * stack and module records, which are written as soon as they are found,
 * ahead of heap events still queued) come in time order, but tid 0's:
 * the unknown thread, whose records are of several threads.  A trace cut
 * off (a NUL tail of version 2, a compressed one cut inside a frame) is
 * allowed only with --truncated, and then there must be no end record.
 * --dropped-ok accepts an end record that counts dropped records (a full
 * disk, the file size limit).
 *
 * Prints one line of counts: records, allocs, frees, reallocs, tagged
 * allocation calls (sizes with size % MOD == REM, the test programs'
 * own), stacks, errors, live at end, peak heap (the most requested bytes
 * live at once), the end reason and the records it says were dropped.  Exit 0 when
 * every check passed, 1 with one line per problem otherwise, 2 usage.
 */
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/addrmap.h"
#include "trace/tracefmt.h"
#include "trace/tracein.h"

static long problems;

#define PROBLEM(line, ...)                                           \
    do {                                                             \
        if (problems++ < 20) {                                       \
            fprintf(stderr, "tracecheck: line %ld: ", (long)(line)); \
            fprintf(stderr, __VA_ARGS__);                            \
            fputc('\n', stderr);                                     \
        }                                                            \
    } while (0)

/* ---- lines out of tracein ---------------------------------------------------------- */

typedef struct lines_s {
    tracein_t *in;
    char *buf;
    size_t cap, pos, end;
    bool eof;
} lines_t;

/* The next line (without its '\n') in *len; NULL at the end. */
static char *next_line(lines_t *l, size_t *len)
{
    for (;;) {
        char *nl = memchr(l->buf + l->pos, '\n', l->end - l->pos);
        if (nl || (l->eof && l->pos < l->end)) {
            char *s = l->buf + l->pos;
            *len = nl ? (size_t)(nl - s) : l->end - l->pos;
            l->pos += *len + (nl != NULL);
            return s;
        }
        if (l->eof)
            return NULL;
        memmove(l->buf, l->buf + l->pos, l->end - l->pos);
        l->end -= l->pos;
        l->pos = 0;
        if (l->cap - l->end < 65536) {
            l->cap = l->cap ? l->cap * 2 : 1 << 20;
            l->buf = realloc(l->buf, l->cap);
            if (!l->buf) {
                fprintf(stderr, "tracecheck: out of memory\n");
                exit(2);
            }
        }
        size_t got = tracein_read(l->in, l->buf + l->end, l->cap - l->end);
        l->end += got;
        if (!got)
            l->eof = true;
    }
}

/* ---- fields ---------------------------------------------------------------------------- */

static json_int_t get_int(json_t *o, const char *k, long line, bool *ok)
{
    json_t *v = json_object_get(o, k);
    if (!json_is_integer(v)) {
        PROBLEM(line, "missing integer \"%s\"", k);
        *ok = false;
        return 0;
    }
    return json_integer_value(v);
}

static json_int_t arr_int(json_t *a, size_t i, long line, bool *ok)
{
    json_t *v = json_array_get(a, i);
    if (!json_is_integer(v)) {
        PROBLEM(line, "element %zu is not an integer", i);
        *ok = false;
        return 0;
    }
    return json_integer_value(v);
}

static json_int_t arr_hex(json_t *a, size_t i, long line, bool *ok)
{
    const char *s = json_string_value(json_array_get(a, i));
    char *end;
    errno = 0;
    unsigned long long v = s && *s ? strtoull(s, &end, 16) : 0;
    if (!s || !*s || *end || errno || s[0] == '-' || s[0] == '+' || (s[0] == '0' && s[1])) {
        PROBLEM(line, "element %zu is not a hex address", i);
        *ok = false;
        return 0;
    }
    return (json_int_t)v;
}

/* A heap record of either shape, made one. */
typedef struct heap_s {
    const char *ev;      /* alloc, free, realloc, realloc_failed */
    json_int_t t, tid, addr, old, size, stack;
    bool has_size, has_stack, inherited, old_unknown;
} heap_t;

/* A free's or realloc's optional ,"fn"[,touched] from element at: fn a
 * string, touched (version 5) a count of pages. */
static void touched(json_t *a, size_t at, size_t len, long n, bool *ok)
{
    if (len > at && !json_is_string(json_array_get(a, at))) {
        PROBLEM(n, "free or realloc fn is not a string");
        *ok = false;
    }
    if (len > at + 1 && arr_int(a, at + 1, n, ok) < 0) {
        PROBLEM(n, "touched pages are negative");
        *ok = false;
    }
}

/* A compact record into *h; false (with a problem) when it is malformed. */
static bool compact(json_t *a, long n, json_int_t *now, const json_int_t *tids, size_t ntids,
                    heap_t *h)
{
    const char *tag = json_string_value(json_array_get(a, 0));
    size_t len = json_array_size(a);
    bool ok = true;
    memset(h, 0, sizeof *h);
    if (!tag || strlen(tag) != 1) {
        PROBLEM(n, "an array without a one-letter tag");
        return false;
    }
    json_int_t dt = arr_int(a, 1, n, &ok), ti = arr_int(a, 2, n, &ok);
    if (!ok)
        return false;
    *now += dt;
    h->t = *now;
    if (ti < 0 || (size_t)ti >= ntids) {
        PROBLEM(n, "thread index %lld has no thread record before it", (long long)ti);
        return false;
    }
    h->tid = tids[ti];
    unsigned flags = 0;
    switch (tag[0]) {
    case TRACEFMT_TAG_ALLOC:
        h->ev = "alloc";
        if (len < 6 || len > 8)
            break;
        h->addr = arr_hex(a, 3, n, &ok);
        h->size = arr_int(a, 4, n, &ok);
        h->stack = arr_int(a, 5, n, &ok);
        h->has_size = h->has_stack = true;
        if (len > 6 && !json_is_string(json_array_get(a, 6)))
            PROBLEM(n, "alloc fn is not a string");
        if (len > 7)
            arr_int(a, 7, n, &ok);
        return ok;
    case TRACEFMT_TAG_FREE:
        h->ev = "free";
        if (len < 4 || len > 7)
            break;
        h->addr = arr_hex(a, 3, n, &ok);
        if (len > 4)
            flags = (unsigned)arr_int(a, 4, n, &ok);
        touched(a, 5, len, n, &ok);
        if (flags & ~TRACEFMT_F_INHERITED)
            PROBLEM(n, "free flags %u", flags);
        h->inherited = flags & TRACEFMT_F_INHERITED;
        return ok;
    case TRACEFMT_TAG_REALLOC:
        h->ev = "realloc";
        if (len < 7 || len > 10)
            break;
        h->old = arr_hex(a, 3, n, &ok);
        h->addr = arr_hex(a, 4, n, &ok);
        h->size = arr_int(a, 5, n, &ok);
        h->stack = arr_int(a, 6, n, &ok);
        h->has_size = h->has_stack = true;
        if (len > 7)
            flags = (unsigned)arr_int(a, 7, n, &ok);
        touched(a, 8, len, n, &ok);
        if (flags & ~(TRACEFMT_F_INHERITED | TRACEFMT_F_OLD_UNKNOWN))
            PROBLEM(n, "realloc flags %u", flags);
        h->inherited = flags & TRACEFMT_F_INHERITED;
        h->old_unknown = flags & TRACEFMT_F_OLD_UNKNOWN;
        return ok;
    case TRACEFMT_TAG_REALLOC_FAILED:
        h->ev = "realloc_failed";
        if (len < 6 || len > 7)
            break;
        h->old = arr_hex(a, 3, n, &ok);
        h->size = arr_int(a, 4, n, &ok);
        h->stack = arr_int(a, 5, n, &ok);
        h->has_stack = true;
        return ok;
    default:
        PROBLEM(n, "unknown tag \"%s\"", tag);
        return false;
    }
    PROBLEM(n, "a %s array of %zu elements", h->ev, len);
    return false;
}

/* An object heap record (version 2, or a version 3 trace's) into *h. */
static bool object_heap(json_t *o, const char *ev, long n, heap_t *h)
{
    bool ok = true;
    memset(h, 0, sizeof *h);
    h->ev = ev;
    h->t = get_int(o, "t", n, &ok);
    h->tid = get_int(o, "tid", n, &ok);
    h->inherited = json_is_true(json_object_get(o, "inherited"));
    if (!strcmp(ev, "alloc")) {
        h->addr = get_int(o, "addr", n, &ok);
        h->size = get_int(o, "size", n, &ok);
        h->has_size = true;
    } else if (!strcmp(ev, "free")) {
        h->addr = get_int(o, "addr", n, &ok);
        json_t *s = json_object_get(o, "size");
        h->has_size = json_is_integer(s);
        h->size = json_integer_value(s);
    } else if (!strcmp(ev, "realloc")) {
        h->old = get_int(o, "old_addr", n, &ok);
        h->addr = get_int(o, "addr", n, &ok);
        h->size = get_int(o, "size", n, &ok);
        h->has_size = true;
        h->old_unknown = json_is_null(json_object_get(o, "old_size"));
    }
    json_t *st = json_object_get(o, "stack");
    h->has_stack = json_is_integer(st);
    h->stack = json_integer_value(st);
    return ok;
}

/* --cat: the bytes as tracein gives them. */
static int cat(const char *path)
{
    tracein_t *in = tracein_open(path);
    if (!in) {
        fprintf(stderr, "tracecheck: cannot open %s\n", path);
        return 2;
    }
    static char buf[1 << 16];
    for (size_t n; (n = tracein_read(in, buf, sizeof buf));)
        fwrite(buf, 1, n, stdout);
    int rc = tracein_error(in) ? 1 : 0;
    if (rc)
        fprintf(stderr, "tracecheck: %s: %s\n", path, tracein_error(in));
    tracein_close(in);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--cat"))
        return cat(argv[2]);
    unsigned long tag_mod = 0, tag_rem = 0;
    const char *expect_end = NULL, *path = NULL;
    bool truncated_ok = false, dropped_ok = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--tag") && i + 1 < argc) {
            if (sscanf(argv[++i], "%lu:%lu", &tag_mod, &tag_rem) != 2 || !tag_mod) {
                fprintf(stderr, "tracecheck: --tag wants MOD:REM\n");
                return 2;
            }
        } else if (!strcmp(argv[i], "--expect-end") && i + 1 < argc) {
            expect_end = argv[++i];
        } else if (!strcmp(argv[i], "--truncated")) {
            truncated_ok = true;
        } else if (!strcmp(argv[i], "--dropped-ok")) {
            dropped_ok = true;
        } else if (!path) {
            path = argv[i];
        } else {
            fprintf(stderr, "usage: tracecheck [--tag MOD:REM] [--expect-end REASON] "
                            "[--truncated | --dropped-ok] TRACE\n");
            return 2;
        }
    }
    lines_t in = {.in = path ? tracein_open(path) : NULL};
    if (!in.in) {
        fprintf(stderr, "tracecheck: cannot open %s\n", path ? path : "(none)");
        return 2;
    }
    addrmap_t live, stacks, thread_t; /* live: addr -> size + 1; thread_t: tid -> its last t + 1 */
    addrmap_init(&live, 1024);
    addrmap_init(&stacks, 1024);
    addrmap_init(&thread_t, 64);
    json_int_t *tids = NULL, now = 0;
    size_t ntids = 0;
    long n = 0, allocs = 0, frees = 0, reallocs = 0, tagged = 0, nstacks = 0, errors = 0;
    long long heap = 0, peak = 0; /* live requested bytes, and their maximum */
    bool ended = false, nul_tail = false;
    int version = 0;
    const char *end_reason = "none";
    static char reason_buf[64];
    json_int_t end_records = -1, end_dropped = -1;
    char *line;
    size_t len;
    while ((line = next_line(&in, &len))) {
        if (len > 0 && line[0] == '\0') {
            nul_tail = true;
            for (size_t i = 0; i < len; i++)
                if (line[i]) {
                    PROBLEM(n + 1, "data after a NUL byte");
                    break;
                }
            continue;
        }
        if (nul_tail) {
            PROBLEM(n + 1, "a record after the NUL tail");
            break;
        }
        n++;
        if (ended)
            PROBLEM(n, "a record after the end record");
        json_error_t err;
        json_t *o = json_loadb(line, len, 0, &err);
        heap_t h;
        bool is_heap = false, ok = true;
        const char *ev = NULL;
        if (json_is_array(o)) {
            if (version < 3)
                PROBLEM(n, "a compact record in a version %d trace", version);
            is_heap = compact(o, n, &now, tids, ntids, &h);
            ev = h.ev;
            if (!is_heap) {
                json_decref(o);
                continue;
            }
        } else if (!json_is_object(o)) {
            PROBLEM(n, "not a JSON object: %s", err.text);
            json_decref(o);
            continue;
        } else {
            ev = json_string_value(json_object_get(o, "ev"));
            json_int_t t = get_int(o, "t", n, &ok);
            get_int(o, "tid", n, &ok);
            if (ok)
                now = t;
            if (ev && (!strcmp(ev, "alloc") || !strcmp(ev, "free") || !strcmp(ev, "realloc")))
                is_heap = object_heap(o, ev, n, &h);
            else if (ev) {
                memset(&h, 0, sizeof h);
                h.t = t;
                h.tid = json_integer_value(json_object_get(o, "tid"));
            }
        }
        if (ok && ev && strcmp(ev, "stack") && strcmp(ev, "module") && h.tid != 0) {
            uintptr_t last = (uintptr_t)addrmap_get(&thread_t, (uint64_t)h.tid);
            if (last && (uintptr_t)h.t + 1 < last)
                PROBLEM(n, "t %lld of thread %lld is before its previous record's %lld",
                        (long long)h.t, (long long)h.tid, (long long)(last - 1));
            addrmap_put(&thread_t, (uint64_t)h.tid, (void *)((uintptr_t)h.t + 1));
        }
        if (!ev) {
            PROBLEM(n, "no \"ev\"");
        } else if (n == 1 && strcmp(ev, "meta")) {
            PROBLEM(n, "first record is %s, not meta", ev);
        } else if (!strcmp(ev, "meta")) {
            version = (int)get_int(o, "version", n, &ok);
            if (version < 2 || version > TRACEFMT_VERSION_MAX)
                PROBLEM(n, "version %d", version);
        } else if (!strcmp(ev, "thread")) {
            json_int_t index = get_int(o, "index", n, &ok);
            if (ok && (size_t)index != ntids)
                PROBLEM(n, "thread index %lld, expected %zu", (long long)index, ntids);
            tids = realloc(tids, (ntids + 1) * sizeof *tids);
            tids[ntids++] = h.tid;
        } else if (!strcmp(ev, "stack")) {
            json_int_t id = get_int(o, "id", n, &ok);
            if (ok && addrmap_get(&stacks, (uint64_t)id))
                PROBLEM(n, "stack %lld defined twice", (long long)id);
            addrmap_put(&stacks, (uint64_t)id, (void *)1);
            nstacks++;
        } else if (is_heap || !strcmp(ev, "mmap") || !strcmp(ev, "munmap") ||
                   !strcmp(ev, "error")) {
            json_int_t st = is_heap ? h.stack : json_integer_value(json_object_get(o, "stack"));
            if (st && !addrmap_get(&stacks, (uint64_t)st))
                PROBLEM(n, "stack %lld used before its record", (long long)st);
        }
        if (is_heap && !strcmp(ev, "alloc")) {
            if (addrmap_get(&live, (uint64_t)h.addr))
                PROBLEM(n, "alloc of 0x%llx, which is still live", (long long)h.addr);
            addrmap_put(&live, (uint64_t)h.addr, (void *)(uintptr_t)(h.size + 1));
            heap += h.size;
            peak = heap > peak ? heap : peak;
            allocs++;
            if (tag_mod && (unsigned long)h.size % tag_mod == tag_rem)
                tagged++;
        } else if (is_heap && !strcmp(ev, "free")) {
            void *v = addrmap_remove(&live, (uint64_t)h.addr);
            if (!v && !h.inherited)
                PROBLEM(n, "free of 0x%llx, which is not live", (long long)h.addr);
            else if (v && h.inherited)
                PROBLEM(n, "free of 0x%llx marked inherited, but allocated here",
                        (long long)h.addr);
            if (v && !h.inherited) {
                heap -= (long long)((uintptr_t)v - 1);
                if (h.has_size && (uintptr_t)v != (uintptr_t)(h.size + 1))
                    PROBLEM(n, "free of 0x%llx with size %lld, allocated with %lld",
                            (long long)h.addr, (long long)h.size,
                            (long long)((uintptr_t)v - 1));
            }
            frees++;
        } else if (is_heap && !strcmp(ev, "realloc")) {
            void *v = addrmap_remove(&live, (uint64_t)h.old);
            if (!v && !h.old_unknown && !h.inherited)
                PROBLEM(n, "realloc of 0x%llx, which is not live", (long long)h.old);
            if (v && h.old_unknown)
                PROBLEM(n, "realloc of 0x%llx says unknown, but it is live", (long long)h.old);
            if (v && json_is_object(o)) {
                json_t *os = json_object_get(o, "old_size");
                if (json_is_integer(os) && (uintptr_t)v != (uintptr_t)(json_integer_value(os) + 1))
                    PROBLEM(n, "realloc old_size disagrees for 0x%llx", (long long)h.old);
            }
            if (addrmap_get(&live, (uint64_t)h.addr))
                PROBLEM(n, "realloc to 0x%llx, which is still live", (long long)h.addr);
            addrmap_put(&live, (uint64_t)h.addr, (void *)(uintptr_t)(h.size + 1));
            if (v && !h.inherited)
                heap -= (long long)((uintptr_t)v - 1);
            heap += h.size;
            peak = heap > peak ? heap : peak;
            reallocs++;
            if (tag_mod && (unsigned long)h.size % tag_mod == tag_rem)
                tagged++;
        } else if (!strcmp(ev, "error")) {
            errors++;
        } else if (!strcmp(ev, "end")) {
            ended = true;
            const char *r = json_string_value(json_object_get(o, "reason"));
            snprintf(reason_buf, sizeof reason_buf, "%s", r ? r : "?");
            end_reason = reason_buf;
            end_records = get_int(o, "records", n, &ok);
            end_dropped = get_int(o, "dropped", n, &ok);
        } else if (!strcmp(ev, "exec_failed")) {
            ended = false; /* the trace goes on after a failed exec */
        }
        json_decref(o);
    }
    bool cut = nul_tail || tracein_cut(in.in);
    if (tracein_error(in.in) && !tracein_cut(in.in))
        PROBLEM(n, "%s", tracein_error(in.in));
    tracein_close(in.in);
    free(in.buf);
    free(tids);
    if (cut && !truncated_ok)
        PROBLEM(n, "the trace is cut off (%s) but --truncated was not given",
                nul_tail ? "a NUL tail" : "inside a compressed frame");
    if (truncated_ok && ended)
        PROBLEM(n, "--truncated, but the trace has its end record");
    if (!truncated_ok) {
        if (!ended)
            PROBLEM(n, "no end record");
        else if (end_records != n)
            PROBLEM(n, "end says %lld records, the file has %ld", (long long)end_records, n);
        if (ended && end_dropped != 0 && !dropped_ok)
            PROBLEM(n, "end says %lld records were dropped", (long long)end_dropped);
        if (expect_end && strcmp(expect_end, end_reason))
            PROBLEM(n, "end reason is %s, expected %s", end_reason, expect_end);
    }
    printf("records=%ld allocs=%ld frees=%ld reallocs=%ld tagged=%ld stacks=%ld errors=%ld "
           "live=%zu peak=%lld end=%s dropped=%lld\n",
           n, allocs, frees, reallocs, tagged, nstacks, errors, live.count, peak, end_reason,
           (long long)(end_dropped > 0 ? end_dropped : 0));
    addrmap_fini(&live);
    addrmap_fini(&stacks);
    addrmap_fini(&thread_t);
    return problems ? 1 : 0;
}
