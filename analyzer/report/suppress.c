/*
 * suppress: leak suppressions.  See suppress.h.
 */
#include "analyzer/report/suppress.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/escape.h"
#include "analyzer/report/groups.h"
#include "analyzer/options.h"
#include "lib/grow.h"

/* The C runtime's and the loader's one-time allocations, matched on the
 * allocating frame's function, library or source file. */
static const char *const builtin_rules[] = {
    "^ld-linux",              /* the dynamic loader's own data (link maps, TLS, search paths) */
    "^ld.so",
    "^_dl_",                  /* the loader's functions inside libc (dlopen, TLS) */
    "^_dlerror_run", "^__libc_dlerror_result",
    "^_IO_",                  /* stdio's buffers (_IO_file_doallocate, _IO_doallocbuf) */
    "^_nl_", "setlocale",     /* the locale's data and names */
    "^__nss_", "^nss_",       /* the name service's modules */
    "^__tzfile_read", "^tzset_internal", "^__tzstring", /* time zones */
    "^__gconv",               /* iconv's modules */
    "^__new_exitfn",          /* atexit's list */
    "^__cxa_thread_atexit",
    "::pool::pool(",          /* libstdc++'s emergency pool for exceptions */
    "^__libc_early_init",
};

static int add_rule(suppress_t *s, size_t *cap, const char *pattern, bool builtin)
{
    if (!grow_room((void **)&s->v, cap, s->n, sizeof *s->v, 32))
        return -1;
    size_t n = strlen(pattern);
    bool start = pattern[0] == '^', end = n > (size_t)start && pattern[n - 1] == '$';
    char *glob = malloc(n + 3), *copy = strdup(pattern);
    if (!glob || !copy) {
        free(glob);
        free(copy);
        return -1;
    }
    size_t body = n - start - end, at = 0;
    if (!start)
        glob[at++] = '*';
    memcpy(glob + at, pattern + start, body);
    at += body;
    if (!end)
        glob[at++] = '*';
    glob[at] = '\0';
    s->v[s->n++] = (suppress_rule_t){.pattern = copy, .glob = glob, .builtin = builtin};
    return 0;
}

static int read_file(suppress_t *s, size_t *cap, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        escape_line(stderr, "%s: --suppressions: cannot read %s: %s", ANALYZE_CMD, path,
                    strerror(errno));
        return -1;
    }
    char line[4096];
    int rc = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        char *p = line + strspn(line, " \t");
        p[strcspn(p, "\r\n")] = '\0';
        size_t n = strlen(p);
        while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
            p[--n] = '\0';
        if (!*p || *p == '#')
            continue;
        if (!strncmp(p, "leak:", 5))
            p += 5;
        if (!*p)
            continue;
        if (add_rule(s, cap, p, false)) {
            fprintf(stderr, "%s: out of memory\n", ANALYZE_CMD);
            rc = -1;
        }
    }
    fclose(f);
    return rc;
}

int suppress_init(suppress_t *s, bool builtin, const char *const *files, size_t nfiles)
{
    *s = (suppress_t){0};
    size_t cap = 0;
    for (size_t i = 0; builtin && i < sizeof builtin_rules / sizeof builtin_rules[0]; i++)
        if (add_rule(s, &cap, builtin_rules[i], true)) {
            fprintf(stderr, "%s: out of memory\n", ANALYZE_CMD);
            suppress_fini(s);
            return -1;
        }
    for (size_t i = 0; i < nfiles; i++)
        if (read_file(s, &cap, files[i])) {
            suppress_fini(s);
            return -1;
        }
    return 0;
}

void suppress_fini(suppress_t *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->v[i].pattern);
        free(s->v[i].glob);
    }
    free(s->v);
    *s = (suppress_t){0};
}

/* Whether s matches the pattern p, where '*' is any text and every other
 * character itself (no classes: C++ names hold brackets).  Greedy with
 * one backtrack point, linear in practice. */
static bool glob_match(const char *p, const char *s)
{
    const char *star = NULL, *from = NULL;
    while (*s) {
        if (*p == '*') {
            star = p++;
            from = s;
        } else if (*p == *s) {
            p++;
            s++;
        } else if (star) {
            p = star + 1;
            s = ++from;
        } else {
            return false;
        }
    }
    while (*p == '*')
        p++;
    return !*p;
}

bool suppress_match(const suppress_rule_t *r, const char *name)
{
    return name && *name && glob_match(r->glob, name);
}

/* Whether rule r matches frame f: its function, library or source file. */
static bool frame_matches(const suppress_rule_t *r, const symbols_frame_t *f)
{
    return suppress_match(r, f->function) || suppress_match(r, f->name) ||
           suppress_match(r, f->module) || suppress_match(r, f->file) ||
           (f->file && suppress_match(r, frames_base_name(f->file)));
}

void suppress_apply(suppress_t *s, sites_t *sites, symbols_t *store, frames_t *fr,
                    uint64_t *bytes, uint64_t *blocks)
{
    if (!s->n)
        return;
    for (uint64_t id = 0; id < sites_count(sites); id++) {
        site_t *st = id < sites->cap ? &sites->v[id] : NULL;
        if (!st || !st->live_blocks || st->suppressed)
            continue;
        size_t n = frames_of(store, st, fr);
        if (!n)
            continue;
        size_t at = groups_alloc_frame(fr, n);
        for (size_t r = 0; r < s->n && !st->suppressed; r++) {
            suppress_rule_t *rule = &s->v[r];
            bool hit = false;
            if (rule->builtin)
                hit = frame_matches(rule, &fr->v[at]);
            for (size_t k = 0; !rule->builtin && k < n && !hit; k++)
                hit = frame_matches(rule, &fr->v[k]);
            if (!hit)
                continue;
            st->suppressed = true;
            rule->bytes += st->live;
            rule->blocks += st->live_blocks;
            *bytes += st->live;
            *blocks += st->live_blocks;
        }
    }
}
