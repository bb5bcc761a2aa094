/*
 * catalog: the real allocators.  See catalog.h.
 */
#include "allocators/catalog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define LIB_MAX_BYTES (64u << 20) /* a library read to check settings, at most */

static const char *const jemalloc_libs[] = {"libjemalloc.so.2", NULL};
static const char *const mimalloc_libs[] = {"libmimalloc.so.2", "libmimalloc.so.2.0", NULL};
static const char *const tcmalloc_libs[] = {"libtcmalloc_minimal.so.4", NULL};

static const catalog_allocator_t allocators[] = {
    {"glibc", NULL, NULL},
    {"jemalloc", "libjemalloc2", jemalloc_libs},
    {"mimalloc", "libmimalloc2.0", mimalloc_libs},
    {"tcmalloc", "libtcmalloc-minimal4", tcmalloc_libs},
};

#define NALLOCATORS (sizeof allocators / sizeof allocators[0])

/* mallopt's names and the glibc tunables that set the same. */
static const struct {
    const char *mallopt, *tunable;
} glibc_names[] = {
    {"M_ARENA_MAX", "glibc.malloc.arena_max"},
    {"M_ARENA_TEST", "glibc.malloc.arena_test"},
    {"M_MMAP_THRESHOLD", "glibc.malloc.mmap_threshold"},
    {"M_MMAP_MAX", "glibc.malloc.mmap_max"},
    {"M_TRIM_THRESHOLD", "glibc.malloc.trim_threshold"},
    {"M_TOP_PAD", "glibc.malloc.top_pad"},
    {"M_MXFAST", "glibc.malloc.mxfast"},
    {"M_PERTURB", "glibc.malloc.perturb"},
};

/* glibc.malloc.* tunables (glibc 2.36 and 2.37): glibc ignores a name it
 * does not know, silently. */
static const char *const glibc_tunables[] = {
    "arena_max", "arena_test", "check", "hugetlb", "mmap_max", "mmap_threshold", "mxfast",
    "perturb", "tcache_count", "tcache_max", "tcache_unsorted_limit", "top_pad",
    "trim_threshold"};

/* Where Debian puts libraries, after the directory of the libc this
 * process runs with. */
static const char *const system_dirs[] = {"/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu",
                                          "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
                                          "/usr/local/lib"};

size_t catalog_count(void) { return NALLOCATORS; }

const catalog_allocator_t *catalog_at(size_t i) { return i < NALLOCATORS ? &allocators[i] : NULL; }

const catalog_allocator_t *catalog_find(const char *name)
{
    for (size_t i = 0; i < NALLOCATORS; i++)
        if (!strcmp(allocators[i].name, name))
            return &allocators[i];
    return NULL;
}

const char *catalog_names(char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < NALLOCATORS && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : "", allocators[i].name);
    return buf;
}

static bool word_char(char c, bool dot)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || (dot && (c == '.' || c == '-'));
}

/* glibc's KEY=VALUE: a mallopt name or a glibc.malloc.* tunable it
 * has, and a number (decimal, or hexadecimal after 0x), as each of them
 * takes.  glibc says nothing of a name or a value it ignores, which would
 * make a row the same as plain glibc's under another name.  0, or -1 with
 * one line in err. */
static int glibc_setting(const char *k, size_t klen, const char *v, size_t vlen, char *err,
                         size_t errlen)
{
    bool known = false;
    for (size_t i = 0; i < sizeof glibc_names / sizeof glibc_names[0] && !known; i++)
        known = strlen(glibc_names[i].mallopt) == klen && !strncmp(k, glibc_names[i].mallopt, klen);
    for (size_t i = 0; i < sizeof glibc_tunables / sizeof glibc_tunables[0] && !known; i++)
        known = klen == 13 + strlen(glibc_tunables[i]) && !strncmp(k, "glibc.malloc.", 13) &&
                !strncmp(k + 13, glibc_tunables[i], klen - 13);
    if (!known) {
        snprintf(err, errlen, "glibc takes mallopt's names (M_ARENA_MAX, M_MMAP_THRESHOLD, "
                 "M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_MAX, M_ARENA_TEST, M_MXFAST, M_PERTURB) "
                 "or glibc.malloc.* tunables (tcache_count, hugetlb, ...), not \"%.*s\"",
                 (int)klen, k);
        return -1;
    }
    bool hex = vlen > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X');
    for (size_t i = hex ? 2 : 0; i < vlen; i++)
        if (!(v[i] >= '0' && v[i] <= '9') &&
            !(hex && ((v[i] >= 'a' && v[i] <= 'f') || (v[i] >= 'A' && v[i] <= 'F')))) {
            snprintf(err, errlen, "%.*s=%.*s: glibc's settings take a number (decimal, or "
                     "hexadecimal after 0x)", (int)klen, k, (int)vlen, v);
            return -1;
        }
    return 0;
}

/* One KEY=VALUE of spec's allocator into out. */
static int parse_setting(const char *s, size_t n, catalog_spec_t *out, char *err, size_t errlen)
{
    const char *eq = memchr(s, '=', n);
    size_t klen = eq ? (size_t)(eq - s) : 0, vlen = eq ? n - klen - 1 : 0;
    if (!eq || !klen || !vlen) {
        snprintf(err, errlen, "\"%.*s\" is not KEY=VALUE", (int)n, s);
        return -1;
    }
    if (klen >= sizeof out->keys[0] || vlen >= sizeof out->values[0]) {
        snprintf(err, errlen, "\"%.*s\" is too long", (int)n, s);
        return -1;
    }
    for (size_t i = 0; i < klen; i++)
        if (!word_char(s[i], true)) {
            snprintf(err, errlen, "\"%.*s\": a setting's name is letters, digits, '_', '.' and '-'",
                     (int)klen, s);
            return -1;
        }
    for (size_t i = 0; i < vlen; i++)
        if (!word_char(eq[1 + i], true)) {
            snprintf(err, errlen, "\"%.*s\": a setting's value is letters, digits, '_', '.' and '-'",
                     (int)vlen, eq + 1);
            return -1;
        }
    if (out->nsettings == CATALOG_MAX_SETTINGS) {
        snprintf(err, errlen, "more than %d settings for %s", CATALOG_MAX_SETTINGS, out->a->name);
        return -1;
    }
    if (!strcmp(out->a->name, "glibc") && glibc_setting(s, klen, eq + 1, vlen, err, errlen))
        return -1;
    memcpy(out->keys[out->nsettings], s, klen);
    out->keys[out->nsettings][klen] = '\0';
    memcpy(out->values[out->nsettings], eq + 1, vlen);
    out->values[out->nsettings][vlen] = '\0';
    out->nsettings++;
    return 0;
}

int catalog_parse_spec(const char *spec, catalog_spec_t *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    size_t n = strlen(spec);
    if (!n) {
        snprintf(err, errlen, "an empty allocator name");
        return -1;
    }
    if (n >= sizeof out->label) {
        snprintf(err, errlen, "\"%.40s...\" is too long", spec);
        return -1;
    }
    memcpy(out->label, spec, n + 1);
    const char *colon = strchr(spec, ':');
    size_t nlen = colon ? (size_t)(colon - spec) : n;
    char name[32];
    snprintf(name, sizeof name, "%.*s", (int)(nlen < sizeof name ? nlen : sizeof name - 1), spec);
    if (!(out->a = catalog_find(name)) || nlen >= sizeof name) {
        char names[128];
        snprintf(err, errlen, "unknown allocator \"%.*s\" (known: %s)", (int)(nlen < 40 ? nlen : 40),
                 spec, catalog_names(names, sizeof names));
        return -1;
    }
    for (const char *s = colon; s;) {
        const char *start = s + 1, *next = strchr(start, ':');
        size_t len = next ? (size_t)(next - start) : strlen(start);
        if (parse_setting(start, len, out, err, errlen))
            return -1;
        s = next;
    }
    return catalog_check_spec(out, err, errlen);
}

/* The name under which allocator a reads setting key: jemalloc's as
 * given, mimalloc's in lower case without MIMALLOC_ (its table of
 * options), tcmalloc's as its environment variable, TCMALLOC_NAME. */
static void setting_name(const catalog_allocator_t *a, const char *key, char *out, size_t len)
{
    bool mi = !strcmp(a->name, "mimalloc"), tc = !strcmp(a->name, "tcmalloc");
    if (mi && !strncasecmp(key, "mimalloc_", 9))
        key += 9;
    size_t at = 0;
    if (tc && strncasecmp(key, "tcmalloc_", 9))
        at = (size_t)snprintf(out, len, "TCMALLOC_");
    for (; *key && at + 1 < len; key++) {
        char c = *key;
        if (mi || tc)
            c = c == '.' || c == '-' ? '_' : c;
        if (mi && c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (tc && c >= 'a' && c <= 'z')
            c = (char)(c - 'a' + 'A');
        out[at++] = c;
    }
    out[at] = '\0';
}

int catalog_check_spec(const catalog_spec_t *spec, char *err, size_t errlen)
{
    char lib[4096];
    if (!spec->nsettings || !spec->a->sonames || !catalog_library(spec->a, lib, sizeof lib))
        return 0;
    FILE *f = fopen(lib, "rb");
    struct stat st;
    size_t size = f && !fstat(fileno(f), &st) && st.st_size > 0 ? (size_t)st.st_size : 0;
    char *buf = size && size <= LIB_MAX_BYTES ? malloc(size) : NULL;
    size_t n = buf ? fread(buf, 1, size, f) : 0;
    if (f)
        fclose(f);
    int rc = 0;
    for (size_t i = 0; buf && i < spec->nsettings && !rc; i++) {
        char name[80];
        setting_name(spec->a, spec->keys[i], name, sizeof name);
        if (!memmem(buf, n, name, strlen(name) + 1)) { /* with its NUL */
            snprintf(err, errlen, "%s has no setting \"%s\" (its library %s names none: it "
                     "would be ignored)", spec->a->name, name, lib);
            rc = -1;
        }
    }
    free(buf);
    return rc;
}

int catalog_parse_list(const char *list, catalog_spec_t *out, size_t max, size_t *n, char *err,
                       size_t errlen)
{
    *n = 0;
    const char *s = list;
    for (;;) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        char one[200];
        if (len >= sizeof one) {
            snprintf(err, errlen, "\"%.40s...\" is too long", s);
            return -1;
        }
        memcpy(one, s, len);
        one[len] = '\0';
        if (*n == max) {
            snprintf(err, errlen, "more than %zu allocators", max);
            return -1;
        }
        if (catalog_parse_spec(one, &out[*n], err, errlen))
            return -1;
        for (size_t i = 0; i < *n; i++)
            if (!strcmp(out[i].label, one)) {
                snprintf(err, errlen, "\"%s\" is named twice", one);
                return -1;
            }
        (*n)++;
        if (!comma)
            return 0;
        s = comma + 1;
    }
}

static bool in_dir(const char *dir, const char *const *names, char *out, size_t len)
{
    for (size_t k = 0; names[k]; k++) {
        int w = snprintf(out, len, "%s/%s", dir, names[k]);
        if (w > 0 && (size_t)w < len && access(out, R_OK) == 0)
            return true;
    }
    return false;
}

bool catalog_library(const catalog_allocator_t *a, char *out, size_t len)
{
    if (!a->sonames) {
        if (len)
            out[0] = '\0';
        return true;
    }
    const char *dirs = getenv("MEMSIM_ALLOCATOR_DIRS");
    if (dirs) {
        char dir[4096];
        for (const char *s = dirs; *s;) {
            const char *colon = strchr(s, ':');
            size_t n = colon ? (size_t)(colon - s) : strlen(s);
            if (n && n < sizeof dir) {
                memcpy(dir, s, n);
                dir[n] = '\0';
                if (in_dir(dir, a->sonames, out, len))
                    return true;
            }
            if (!colon)
                break;
            s = colon + 1;
        }
        return false;
    }
    for (size_t i = 0; i < sizeof system_dirs / sizeof system_dirs[0]; i++)
        if (in_dir(system_dirs[i], a->sonames, out, len))
            return true;
    return false;
}

const char *catalog_install_line(const catalog_allocator_t *a, char *buf, size_t len)
{
    snprintf(buf, len, "apt-get install %s", a->package ? a->package : "libc6");
    return buf;
}

/* Append "NAME=VALUE" to buf at *at; the entry's start, or NULL when full. */
static const char *put(char *buf, size_t len, size_t *at, const char *fmt_name, const char *name,
                       const char *value)
{
    if (*at >= len)
        return NULL;
    char *start = buf + *at;
    int w = snprintf(start, len - *at, fmt_name, name);
    if (w < 0 || (size_t)w >= len - *at)
        return NULL;
    *at += (size_t)w;
    w = snprintf(buf + *at, len - *at, "=%s", value);
    if (w < 0 || (size_t)w >= len - *at)
        return NULL;
    *at += (size_t)w + 1;
    return start;
}

size_t catalog_env(const catalog_spec_t *spec, char *buf, size_t len, const char *env[CATALOG_MAX_ENV])
{
    size_t n = 0, at = 0;
    if (!spec->nsettings)
        return 0;
    const char *name = spec->a->name;
    if (!strcmp(name, "glibc") || !strcmp(name, "jemalloc")) {
        /* one variable: GLIBC_TUNABLES=a=1:b=2, MALLOC_CONF=a:1,b:2 */
        bool glibc = name[0] == 'g';
        char *start = buf;
        int w = snprintf(buf, len, "%s=", glibc ? "GLIBC_TUNABLES" : "MALLOC_CONF");
        if (w < 0 || (size_t)w >= len)
            return 0;
        at = (size_t)w;
        for (size_t i = 0; i < spec->nsettings; i++) {
            const char *key = spec->keys[i];
            for (size_t k = 0; glibc && k < sizeof glibc_names / sizeof glibc_names[0]; k++)
                if (!strcmp(key, glibc_names[k].mallopt))
                    key = glibc_names[k].tunable;
            w = snprintf(buf + at, len - at, "%s%s%c%s", i ? (glibc ? ":" : ",") : "", key,
                         glibc ? '=' : ':', spec->values[i]);
            if (w < 0 || (size_t)w >= len - at)
                return 0;
            at += (size_t)w;
        }
        env[n++] = start;
        return n;
    }
    /* mimalloc, tcmalloc: a variable per setting, MIMALLOC_X / TCMALLOC_X */
    const char *prefix = !strcmp(name, "mimalloc") ? "MIMALLOC_" : "TCMALLOC_";
    for (size_t i = 0; i < spec->nsettings && n < CATALOG_MAX_ENV; i++) {
        char upper[64];
        size_t k = 0;
        for (; spec->keys[i][k] && k < sizeof upper - 1; k++) {
            char c = spec->keys[i][k];
            upper[k] = c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c == '.' || c == '-' ? '_' : c;
        }
        upper[k] = '\0';
        bool has = !strncmp(upper, prefix, strlen(prefix));
        char full[96];
        snprintf(full, sizeof full, "%s%s", has ? "" : prefix, upper);
        const char *e = put(buf, len, &at, "%s", full, spec->values[i]);
        if (!e)
            return n;
        env[n++] = e;
    }
    return n;
}

bool catalog_env_is_setting(const char *entry)
{
    static const char *const vars[] = {"LD_PRELOAD=", "GLIBC_TUNABLES=", "MALLOC_CONF=",
                                       "MALLOC_ARENA_MAX=", "MALLOC_MMAP_THRESHOLD_=",
                                       "MALLOC_TRIM_THRESHOLD_=", "MALLOC_TOP_PAD_=",
                                       "MALLOC_MMAP_MAX_=", "MALLOC_ARENA_TEST=", "MALLOC_PERTURB_="};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (!strncmp(entry, vars[i], strlen(vars[i])))
            return true;
    return !strncmp(entry, "MIMALLOC_", 9) || !strncmp(entry, "TCMALLOC_", 9);
}

const catalog_allocator_t *catalog_from_library(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    static const struct {
        const char *prefix, *name;
    } libs[] = {{"libjemalloc.so", "jemalloc"}, {"libmimalloc.so", "mimalloc"},
                {"libtcmalloc", "tcmalloc"}};
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++)
        if (!strncmp(base, libs[i].prefix, strlen(libs[i].prefix)))
            return catalog_find(libs[i].name);
    return NULL;
}
