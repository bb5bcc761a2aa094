/*
 * symbols: libdwfl over the recorded module map.  See symbols.h.
 *
 * Each module gets a Dwfl of its own, holding that one ELF reported at
 * the recorded bias: modules of different processes (or a library
 * reloaded elsewhere) may then share addresses without clashing, and the
 * module is always known before the lookup, so no address search is
 * needed inside libdwfl.
 */
#include "analyzer/read/symbols.h"

#include "analyzer/escape.h"
#include "analyzer/read/symdwarf.h"
#include "analyzer/read/symnames.h"
#include "analyzer/read/symopen.h"

#include <elfutils/libdwfl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libstdc++'s demangler: the Itanium C++ ABI's, which every C++ compiler
 * on Linux mangles for.  The C++ runtime is on every Debian system, and
 * its demangler is the one tools (eu-addr2line, heaptrack) use. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

struct symbols_module_s {
    char *path;
    const char *name;  /* the last part of path */
    uint64_t base, size;
    int32_t prev;      /* the module reported before it at the same base, or -1 */
    int32_t same;      /* the first module of the same path and size, whose Dwfl this
                          one reads (at address - base + its base), or -1: its own */
    bool tried;        /* opening was attempted */
    symnames_t names;  /* its symbol table's names by interval (empty: ask libdwfl each time) */
    bool failed;       /* and failed: frames print as module+offset */
    Dwfl *dwfl;
    Dwfl_Module *mod;
    addrmap_t cache;   /* address -> entry_t; usable once tried */
    symopen_t *ahead;  /* opening on the store's thread (symbols_prewarm), until tried */
};

/* A resolved address: its frames, innermost first. */
typedef struct entry_s {
    size_t n;
    symbols_frame_t f[];
} entry_t;

/* ---- the store --------------------------------------------------------------- */

int symbols_init(symbols_t *s)
{
    memset(s, 0, sizeof *s);
    symopen_limits();
    elf_version(EV_CURRENT);
    if (addrmap_init(&s->by_base, 64))
        return -1;
    if (addrmap_init(&s->unmapped, 64)) {
        addrmap_fini(&s->by_base);
        return -1;
    }
    if (addrmap_init(&s->by_file, 64)) {
        addrmap_fini(&s->by_base);
        addrmap_fini(&s->unmapped);
        return -1;
    }
    return 0;
}

static void entry_free(entry_t *e)
{
    for (size_t i = 0; i < e->n; i++) {
        free((char *)e->f[i].function);
        free((char *)e->f[i].file);
    }
    free(e);
}

static void cache_free(addrmap_t *m)
{
    for (size_t i = 0; m->slots && i <= m->mask; i++)
        if (m->slots[i].value)
            entry_free(m->slots[i].value);
    addrmap_fini(m);
}

void symbols_fini(symbols_t *s)
{
    symopen_ahead_stop(s);
    for (size_t i = 0; i < s->nmodules; i++) {
        symbols_module_t *m = &s->modules[i];
        if (m->ahead) { /* opened ahead (or queued) and never looked up */
            if (m->ahead->state == SYMOPEN_DONE && m->ahead->dwfl)
                dwfl_end(m->ahead->dwfl);
            if (m->ahead->state == SYMOPEN_DONE)
                symnames_free(&m->ahead->names);
            free(m->ahead);
        }
        if (m->tried)
            cache_free(&m->cache);
        if (m->dwfl)
            dwfl_end(m->dwfl);
        symnames_free(&m->names);
        free(m->path);
    }
    free(s->modules);
    addrmap_fini(&s->by_base);
    addrmap_fini(&s->by_file);
    cache_free(&s->unmapped);
    memset(s, 0, sizeof *s);
}

/* by_file's key of a module: its path and size hashed (FNV-1a), never 0. */
static uint64_t file_key(const char *path, uint64_t size)
{
    uint64_t h = 14695981039346656037ull ^ size;
    for (const unsigned char *p = (const unsigned char *)path; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return h ? h : 1;
}

int32_t symbols_module(symbols_t *s, const char *path, uint64_t base, uint64_t size)
{
    intptr_t first = (intptr_t)addrmap_get(&s->by_base, base) - 1;
    for (int32_t i = (int32_t)first; i >= 0; i = s->modules[i].prev)
        if (s->modules[i].size == size && !strcmp(s->modules[i].path, path))
            return i;
    if (s->nmodules >= INT32_MAX)
        return -1;
    if (s->nmodules == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 32;
        symbols_module_t *v = realloc(s->modules, cap * sizeof *v);
        if (!v)
            return -1;
        s->modules = v;
        s->cap = cap;
    }
    char *copy = strdup(path);
    if (!copy)
        return -1;
    int32_t idx = (int32_t)s->nmodules;
    if (addrmap_put(&s->by_base, base, (void *)(intptr_t)(idx + 1))) {
        free(copy);
        return -1;
    }
    /* The same file at another base (each process of a tree maps its
     * libraries where ASLR puts them): its Dwfl is the first one's. */
    uint64_t key = file_key(path, size);
    intptr_t same = (intptr_t)addrmap_get(&s->by_file, key) - 1;
    if (same >= 0 && (s->modules[same].size != size || strcmp(s->modules[same].path, path)))
        same = -1; /* another file of the same key: its own Dwfl */
    else if (same < 0 && addrmap_put(&s->by_file, key, (void *)(intptr_t)(idx + 1)))
        same = -1; /* out of memory: its own Dwfl */
    const char *slash = strrchr(copy, '/');
    s->modules[s->nmodules++] = (symbols_module_t){
        .path = copy, .name = slash ? slash + 1 : copy, .base = base, .size = size,
        .prev = (int32_t)first, .same = (int32_t)same};
    return idx;
}

/* ---- a module's file -------------------------------------------------------- */

__attribute__((format(printf, 3, 4)))
static void warn(const symbols_t *s, const symbols_module_t *m, const char *fmt, ...)
{
    if (s->quiet)
        return;
    /* Once per path: the same file may be mapped by many processes. */
    for (const symbols_module_t *o = s->modules; o < m; o++)
        if (o->failed && !strcmp(o->path, m->path))
            return;
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    escape_line(stderr, "memsim-analyze: module %s: %s; its frames print as %s+0x…", m->path, why,
                m->name);
}

/* The module of index module; NULL when there is none. */
static symbols_module_t *module_at(symbols_t *s, int32_t module)
{
    return module >= 0 && (size_t)module < s->nmodules ? &s->modules[module] : NULL;
}

/* The module whose Dwfl and symbol-table index serve m: the first module
 * of its file (m itself, or m->same).  An address a of m is a - m->base +
 * home->base in it. */
static symbols_module_t *module_home(symbols_t *s, symbols_module_t *m)
{
    return m->same >= 0 ? &s->modules[m->same] : m;
}

void symbols_prewarm(symbols_t *s, int32_t module)
{
    symbols_module_t *m = module_at(s, module);
    if (!m)
        return;
    m = module_home(s, m);
    if (m->tried || m->ahead || !strchr(m->path, '/'))
        return;
    symopen_t *job = calloc(1, sizeof *job);
    if (!job)
        return;
    *job = (symopen_t){.path = m->path, .name = m->name, .base = m->base, .size = m->size,
                       .store = s};
    if (symopen_ahead_queue(s, job)) {
        free(job);
        return;
    }
    m->ahead = job;
}

/* ---- opening a module ------------------------------------------------------- */

/* The module's Dwfl_Module, opened on first use (or taken from the
 * store's thread, which may have opened it ahead); NULL when it cannot
 * be.  A warning, if any, is printed here either way: at the module's
 * first lookup, in the order of the lookups. */
static Dwfl_Module *module_open(symbols_t *s, symbols_module_t *m)
{
    if (m->tried)
        return m->mod;
    if (m->same >= 0) { /* the first module of its file: opened (and warned about) once */
        symbols_module_t *first = module_home(s, m);
        module_open(s, first);
        m->tried = true;
        m->failed = first->failed;
        m->mod = first->mod;
        if (addrmap_init(&m->cache, 64)) {
            m->cache.slots = NULL; /* cache_free skips it */
            m->failed = true;
            m->mod = NULL;
        }
        return m->mod;
    }
    m->tried = true;
    symopen_t here, *job = m->ahead;
    m->ahead = NULL;
    if (job)
        symopen_ahead_claim(s, job);
    else {
        here = (symopen_t){
            .path = m->path, .name = m->name, .base = m->base, .size = m->size, .store = s};
        job = &here;
        symopen_run(job);
    }
    m->dwfl = job->dwfl;
    m->mod = job->mod;
    m->names = job->names;
    if (!m->mod) {
        m->failed = true;
        if (job->warn)
            warn(s, m, "%s", job->why);
    }
    if (job != &here)
        free(job);
    if (addrmap_init(&m->cache, 64)) {
        m->cache.slots = NULL; /* cache_free skips it */
        m->failed = true;
        m->mod = NULL; /* the Dwfl stays m's, ended by symbols_fini */
    }
    return m->mod;
}

/* ---- resolving --------------------------------------------------------------- */

char *symbols_demangle(const char *name)
{
    if (!name || strncmp(name, "_Z", 2))
        return NULL;
    int status = 0;
    char *out = __cxa_demangle(name, NULL, NULL, &status);
    if (status) {
        free(out);
        return NULL;
    }
    return out;
}

size_t symbols_resolve(symbols_t *s, int32_t module, uint64_t address,
                       const symbols_frame_t **frames)
{
    symbols_module_t *m = module_at(s, module);
    Dwfl_Module *mod = m ? module_open(s, m) : NULL;
    addrmap_t *cache = m ? &m->cache : &s->unmapped;
    if (cache->slots) {
        entry_t *hit = addrmap_get(cache, address);
        if (hit) {
            *frames = hit->f;
            return hit->n;
        }
    }
    symbols_frame_t f[SYMDWARF_MAX_INLINE];
    size_t n = 1;
    memset(f, 0, sizeof f[0]);
    if (mod && symopen_room(s)) { /* in the Dwfl's module: its first's, at that base */
        symbols_module_t *d = module_home(s, m);
        n = symdwarf_lookup(mod, &d->names, address - m->base + d->base, f);
    }
    for (size_t i = 0; i < n; i++) {
        f[i].address = address;
        f[i].module = m ? m->path : NULL;
        f[i].name = m ? m->name : NULL;
        f[i].offset = m ? address - m->base : 0;
    }
    entry_t *e = malloc(sizeof *e + n * sizeof e->f[0]);
    if (!e || !cache->slots || addrmap_put(cache, address, e)) {
        /* Out of memory: an uncached frame without names. */
        for (size_t i = 0; i < n; i++) {
            free((char *)f[i].function);
            free((char *)f[i].file);
        }
        free(e);
        s->scratch = f[0];
        s->scratch.function = s->scratch.file = NULL;
        s->scratch.line = 0;
        s->scratch.inlined = false;
        *frames = &s->scratch;
        return 1;
    }
    e->n = n;
    memcpy(e->f, f, n * sizeof f[0]);
    *frames = e->f;
    return n;
}

const char *symbols_symtab_name(symbols_t *s, int32_t module, uint64_t pc)
{
    symbols_module_t *m = module_at(s, module);
    Dwfl_Module *mod = m ? module_open(s, m) : NULL;
    if (!mod)
        return NULL;
    symbols_module_t *d = module_home(s, m);
    return symnames_at(mod, &d->names, pc - m->base + d->base);
}

const char *symbols_label(const symbols_frame_t *f, char *buf, size_t len)
{
    if (f->function)
        snprintf(buf, len, "%s", f->function);
    else if (f->name)
        snprintf(buf, len, "%s+0x%" PRIx64, f->name, f->offset);
    else
        snprintf(buf, len, "0x%" PRIx64, f->address);
    return buf;
}

/* ---- one process's address space --------------------------------------------- */

void symbols_space_init(symbols_space_t *sp, symbols_t *store)
{
    memset(sp, 0, sizeof *sp);
    sp->store = store;
}

void symbols_space_fini(symbols_space_t *sp)
{
    free(sp->v);
    sp->v = NULL;
    sp->n = sp->cap = 0;
}

/* The first mapping whose base is above addr. */
static size_t upper(const symbols_space_t *sp, uint64_t addr)
{
    size_t lo = 0, hi = sp->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sp->v[mid].base <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void find_overlap(symbols_space_t *sp)
{
    sp->overlap = false;
    uint64_t end = 0;
    for (size_t i = 0; i < sp->n && !sp->overlap; i++) {
        sp->overlap = i && sp->v[i].base < end;
        if (sp->v[i].end > end)
            end = sp->v[i].end;
    }
}

int symbols_space_load(symbols_space_t *sp, const char *path, uint64_t base, uint64_t size)
{
    int32_t module = symbols_module(sp->store, path, base, size);
    if (module < 0)
        return -2;
    if (sp->n == sp->cap) {
        size_t cap = sp->cap ? sp->cap * 2 : 32;
        symbols_mapping_t *v = realloc(sp->v, cap * sizeof *v);
        if (!v)
            return -2;
        sp->v = v;
        sp->cap = cap;
    }
    size_t at = upper(sp, base);
    memmove(&sp->v[at + 1], &sp->v[at], (sp->n - at) * sizeof sp->v[0]);
    sp->v[at] = (symbols_mapping_t){.base = base, .end = base + size < base ? UINT64_MAX
                                                                          : base + size,
                                    .seq = ++sp->seq, .module = module};
    sp->n++;
    find_overlap(sp);
    return 0;
}

void symbols_space_unload(symbols_space_t *sp, uint64_t base, uint64_t size)
{
    /* The oldest mapping at exactly (base, size): a reload in its place is
     * listed before the unload of the old one. */
    size_t found = sp->n;
    for (size_t i = 0; i < sp->n; i++)
        if (sp->v[i].base == base && sp->v[i].end - sp->v[i].base == size &&
            (found == sp->n || sp->v[i].seq < sp->v[found].seq))
            found = i;
    if (found == sp->n)
        return;
    memmove(&sp->v[found], &sp->v[found + 1], (sp->n - found - 1) * sizeof sp->v[0]);
    sp->n--;
    find_overlap(sp);
}

int32_t symbols_space_find(const symbols_space_t *sp, uint64_t addr)
{
    size_t i = upper(sp, addr);
    if (!sp->overlap)
        return i && addr < sp->v[i - 1].end ? sp->v[i - 1].module : SYMBOLS_NO_MODULE;
    const symbols_mapping_t *best = NULL;
    for (size_t k = 0; k < i; k++)
        if (addr < sp->v[k].end && (!best || sp->v[k].seq > best->seq))
            best = &sp->v[k];
    return best ? best->module : SYMBOLS_NO_MODULE;
}

int symbols_space_add(symbols_space_t *sp, const event_t *e)
{
    const json_t *o = e->json;
    const char *op = json_string_value(json_object_get(o, "op"));
    const char *path = json_string_value(json_object_get(o, "path"));
    const json_t *base = json_object_get(o, "base"), *size = json_object_get(o, "size");
    if (!op || !json_is_integer(base) || !json_is_integer(size) || json_integer_value(base) < 0 ||
        json_integer_value(size) < 0)
        return -1;
    if (!strcmp(op, "load"))
        return path ? symbols_space_load(sp, path, (uint64_t)json_integer_value(base),
                                         (uint64_t)json_integer_value(size))
                    : -1;
    if (!strcmp(op, "unload")) {
        symbols_space_unload(sp, (uint64_t)json_integer_value(base),
                             (uint64_t)json_integer_value(size));
        return 0;
    }
    return -1;
}
