/*
 * tracecheck: verify a memsim trace the way the integration tests need.
 *
 *   tracecheck [--tag MOD:REM] [--expect-end REASON] [--truncated | --dropped-ok] TRACE
 *
 * Reads every record with jansson and checks the rules of
 * docs/trace-format.md: a meta record first; every record has ev, t and
 * tid; stack ids are defined before use; an allocation never lands on an
 * address that is still live; every free and every realloc of a known
 * block names a live block with its size; the end record is the last
 * one, with dropped 0 and a record count equal to the lines read; the
 * records of each thread (but stack and module records, which are
 * written as soon as they are found, ahead of heap events still queued)
 * come in time order.  A
 * NUL tail (a version 2 trace cut by SIGKILL) is allowed only with
 * --truncated, and then there must be no end record.  --dropped-ok
 * accepts an end record that counts dropped records (a full disk, the
 * file size limit).
 *
 * Prints one line of counts: records, allocs, frees, reallocs, tagged
 * allocation calls (sizes with size % MOD == REM, the test programs'
 * own), stacks, errors, live at end, peak heap (the most requested bytes
 * live at once), the end reason and the records it says were dropped.  Exit 0 when
 * every check passed, 1 with one line per problem otherwise, 2 usage.
 */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/addrmap.h"

static long problems;

#define PROBLEM(line, ...)                                           \
    do {                                                             \
        if (problems++ < 20) {                                       \
            fprintf(stderr, "tracecheck: line %ld: ", (long)(line)); \
            fprintf(stderr, __VA_ARGS__);                            \
            fputc('\n', stderr);                                     \
        }                                                            \
    } while (0)

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

int main(int argc, char **argv)
{
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
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f) {
        fprintf(stderr, "tracecheck: cannot open %s\n", path ? path : "(none)");
        return 2;
    }
    addrmap_t live, stacks, thread_t; /* thread_t: tid -> its last t + 1 */
    addrmap_init(&live, 1024);
    addrmap_init(&stacks, 1024);
    addrmap_init(&thread_t, 64);
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    long n = 0, allocs = 0, frees = 0, reallocs = 0, tagged = 0, nstacks = 0, errors = 0;
    long long heap = 0, peak = 0; /* live requested bytes, and their maximum */
    bool ended = false, nul_tail = false;
    const char *end_reason = "none";
    static char reason_buf[64];
    json_int_t end_records = -1, end_dropped = -1;
    while ((len = getline(&line, &cap, f)) != -1) {
        if (len > 0 && line[0] == '\0') {
            nul_tail = true;
            for (ssize_t i = 0; i < len; i++)
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
        json_t *o = json_loadb(line, (size_t)len, 0, &err);
        if (!json_is_object(o)) {
            PROBLEM(n, "not a JSON object: %s", err.text);
            json_decref(o);
            continue;
        }
        const char *ev = json_string_value(json_object_get(o, "ev"));
        bool ok = true;
        json_int_t t = get_int(o, "t", n, &ok), tid = get_int(o, "tid", n, &ok);
        if (ok && ev && strcmp(ev, "stack") && strcmp(ev, "module")) {
            uintptr_t last = (uintptr_t)addrmap_get(&thread_t, (uint64_t)tid);
            if (last && (uintptr_t)t + 1 < last)
                PROBLEM(n, "t %lld of thread %lld is before its previous record's %lld",
                        (long long)t, (long long)tid, (long long)(last - 1));
            addrmap_put(&thread_t, (uint64_t)tid, (void *)((uintptr_t)t + 1));
        }
        if (!ev) {
            PROBLEM(n, "no \"ev\"");
        } else if (n == 1 && strcmp(ev, "meta")) {
            PROBLEM(n, "first record is %s, not meta", ev);
        } else if (!strcmp(ev, "stack")) {
            json_int_t id = get_int(o, "id", n, &ok);
            if (ok && addrmap_get(&stacks, (uint64_t)id))
                PROBLEM(n, "stack %lld defined twice", (long long)id);
            addrmap_put(&stacks, (uint64_t)id, (void *)1);
            nstacks++;
        } else if (!strcmp(ev, "alloc") || !strcmp(ev, "free") || !strcmp(ev, "realloc") ||
                   !strcmp(ev, "mmap") || !strcmp(ev, "munmap") || !strcmp(ev, "error")) {
            json_int_t st = get_int(o, "stack", n, &ok);
            if (ok && st && !addrmap_get(&stacks, (uint64_t)st))
                PROBLEM(n, "stack %lld used before its record", (long long)st);
            if (!strcmp(ev, "alloc")) {
                json_int_t a = get_int(o, "addr", n, &ok), s = get_int(o, "size", n, &ok);
                if (ok && addrmap_get(&live, (uint64_t)a))
                    PROBLEM(n, "alloc of 0x%llx, which is still live", (long long)a);
                addrmap_put(&live, (uint64_t)a, (void *)(uintptr_t)(s + 1));
                heap += s;
                peak = heap > peak ? heap : peak;
                allocs++;
                if (tag_mod && (unsigned long)s % tag_mod == tag_rem)
                    tagged++;
            } else if (!strcmp(ev, "free")) {
                json_int_t a = get_int(o, "addr", n, &ok), s = get_int(o, "size", n, &ok);
                void *v = addrmap_remove(&live, (uint64_t)a);
                bool inherited = json_is_true(json_object_get(o, "inherited"));
                if (ok && !v && !inherited)
                    PROBLEM(n, "free of 0x%llx, which is not live", (long long)a);
                else if (v && inherited)
                    PROBLEM(n, "free of 0x%llx marked inherited, but allocated here",
                            (long long)a);
                else if (inherited)
                    v = (void *)(uintptr_t)(s + 1);
                if (v && !inherited)
                    heap -= s;
                else if (ok && (uintptr_t)v != (uintptr_t)(s + 1))
                    PROBLEM(n, "free of 0x%llx with size %lld, allocated with %lld",
                            (long long)a, (long long)s, (long long)((uintptr_t)v - 1));
                frees++;
            } else if (!strcmp(ev, "realloc")) {
                json_int_t old = get_int(o, "old_addr", n, &ok), a = get_int(o, "addr", n, &ok);
                json_int_t s = get_int(o, "size", n, &ok);
                json_t *os = json_object_get(o, "old_size");
                void *v = addrmap_remove(&live, (uint64_t)old);
                if (!v && json_is_true(json_object_get(o, "inherited")))
                    v = (void *)(uintptr_t)(json_integer_value(os) + 1);
                if (json_is_integer(os) && !v)
                    PROBLEM(n, "realloc of 0x%llx, which is not live", (long long)old);
                if (v && json_is_integer(os) &&
                    (uintptr_t)v != (uintptr_t)(json_integer_value(os) + 1))
                    PROBLEM(n, "realloc old_size disagrees for 0x%llx", (long long)old);
                if (ok && addrmap_get(&live, (uint64_t)a))
                    PROBLEM(n, "realloc to 0x%llx, which is still live", (long long)a);
                addrmap_put(&live, (uint64_t)a, (void *)(uintptr_t)(s + 1));
                if (v && !json_is_true(json_object_get(o, "inherited")))
                    heap -= (long long)((uintptr_t)v - 1);
                heap += s;
                peak = heap > peak ? heap : peak;
                reallocs++;
                if (tag_mod && (unsigned long)s % tag_mod == tag_rem)
                    tagged++;
            } else if (!strcmp(ev, "error")) {
                errors++;
            }
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
    free(line);
    fclose(f);
    if (nul_tail && !truncated_ok)
        PROBLEM(n, "the trace ends in NUL bytes (cut off) but --truncated was not given");
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
