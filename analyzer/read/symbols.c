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
#include "analyzer/read/modfile.h"
#include "lib/grow.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#define MAX_INLINE 64 /* frames kept per address; deeper inline chains are cut */

/* libstdc++'s demangler: the Itanium C++ ABI's, which every C++ compiler
 * on Linux mangles for.  The C++ runtime is on every Debian system, and
 * its demangler is the one tools (eu-addr2line, heaptrack) use. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* A module's symbol-table names, found without libdwfl's search.
 * dwfl_module_addrinfo reads the whole symbol table at every call (it
 * keeps no index): on a compiler's hundred thousand symbols, most of a
 * report's time.  Two things spare it, each giving its answer exactly:
 *
 * The index.  Its answer is, among the named symbols of nonzero size
 * that contain the address (not sections, files or TLS), the one of the
 * highest address, then the better binding (global, weak, local), then
 * the smaller size, then the first in the table; the global symbols
 * first, the local ones only when no global one contains it.  The
 * symbols of nonzero size, sorted by address with the highest end so
 * far, find the few that contain an address by a binary search and a
 * short walk back; the same rules, applied in the table's order, pick
 * the same one.  Where none does, or where a global symbol of size zero
 * sits exactly at the address (then libdwfl would skip the local ones),
 * the answer involves sizeless symbols and sections: libdwfl is asked,
 * unless no sizeless symbol lies at or below the address (they mark the
 * data's ends, above the code, in most programs; an absolute one, such
 * as a version's name at 0, counts only at its exact address): then
 * there is none.
 *
 * The intervals.  Its answer depends on the address only through
 * comparisons with constants of the module: each symbol's address, its
 * end (address + size) and address + 1 (an absolute or sizeless symbol
 * matches only exactly), and the bounds of the ELF sections.  Between
 * two consecutive such cuts every comparison comes out the same, and so
 * does the answer: it is found once per interval and kept. */
typedef struct sized_s {
    uint64_t value, end; /* [value, end) */
    const char *name;
    int32_t ndx;         /* in the table: the order of libdwfl's search */
    int32_t bind;        /* 3 global, 2 weak, 1 local, 0 other: higher is better */
} sized_t;

typedef struct sizedtab_s {
    sized_t *v;          /* by value, then ndx */
    uint64_t *maxend;    /* maxend[i]: the highest end of v[0..i] */
    size_t n, cap;
} sizedtab_t;

typedef struct symnames_s {
    uint64_t *cuts;     /* sorted, distinct */
    const char **name;  /* [ncuts + 1]: interval i is [cuts[i - 1], cuts[i]); NOT_ASKED until asked */
    size_t ncuts;
    bool indexed;       /* glob, loc and zero are usable */
    bool locals;        /* libdwfl searches local symbols (after the global ones) */
    sizedtab_t glob, loc;
    uint64_t *zero;     /* the addresses of the global symbols of size zero, sorted */
    size_t nzero, cap_zero;
    uint64_t min_sizeless; /* the lowest address of a symbol of size zero libdwfl's
                              search considers, in a section (UINT64_MAX: none) */
    uint64_t *exact;    /* the addresses of the others (absolute: they count only
                           at exactly their address), sorted */
    size_t nexact, cap_exact;
} symnames_t;

static const char not_asked[1];
#define NOT_ASKED not_asked

/* A module's file opened, or the reason it could not be: the work of
 * opening, apart from the store, so that the store's thread can do it
 * ahead (symbols_prewarm) while the main thread goes on. */
typedef struct opening_s {
    const char *path, *name;   /* the module's (owned by the store; they do not move) */
    uint64_t base, size;
    const symbols_t *store;    /* whose quiet says whether to warn */
    int state;                 /* OPEN_QUEUED, _RUNNING, _DONE, _TAKEN (the caller's own) */
    Dwfl *dwfl;                /* done: reported, its debug information loaded, or NULL */
    Dwfl_Module *mod;          /* done: NULL when the file cannot be used */
    bool warn;                 /* done, mod NULL: why says why, for a warning */
    char why[384];
    symnames_t names;          /* done: the symbol table's names by interval */
    struct opening_s *next;    /* the queue of the store's thread */
} opening_t;

enum { OPEN_QUEUED, OPEN_RUNNING, OPEN_DONE, OPEN_TAKEN };

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
    opening_t *ahead;  /* opening on the store's thread (symbols_prewarm), until tried */
};

/* The store's thread, opening modules ahead of their first lookup. */
struct symbols_ahead_s {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;    /* a job queued or done, or stopping */
    opening_t *head, *tail; /* queued jobs (and taken ones, skipped) */
    bool stop;
};

/* A resolved address: its frames, innermost first. */
typedef struct entry_s {
    size_t n;
    symbols_frame_t f[];
} entry_t;

static char *debuginfo_path; /* NULL: the standard places */
static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = modfile_find_debuginfo, /* never blocks on a path the trace chose */
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

/* ---- the store --------------------------------------------------------------- */

/* ---- memory for libdw --------------------------------------------------------- */

/* libdw ends the program when an allocation fails inside it (its
 * __libdw_oom calls error(EXIT_FAILURE)), and the analysis would lose
 * its report.  That happens only under a limit on the address space or
 * the data segment (ulimit -v, -d): without one, Linux hands out address
 * space and the OOM killer decides.  Under such a limit the store calls
 * into libdw only while HEADROOM more bytes could still be mapped, and
 * once they cannot, never again: frames print as module+offset from
 * there, with one line that says so. */
#define HEADROOM (4u << 20)

static bool limited;         /* an address-space or data limit is set (symbols_init) */
static atomic_bool starved;  /* HEADROOM could not be had once */

static bool rlimit_set(int resource)
{
    struct rlimit rl;
    return getrlimit(resource, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY;
}

/* Whether libdw may be called now.  Both threads of the store ask. */
static bool room_for_libdw(const symbols_t *s)
{
    if (!limited)
        return true;
    if (atomic_load_explicit(&starved, memory_order_relaxed))
        return false;
    /* Mapped and given back untouched: it costs address space, never
     * pages. */
    void *p = mmap(NULL, HEADROOM, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p != MAP_FAILED) {
        munmap(p, HEADROOM);
        return true;
    }
    if (!atomic_exchange(&starved, true) && !s->quiet)
        escape_line(stderr, "memsim-analyze: out of memory for symbols (under ulimit -v or -d): "
                    "frames from here on print as module+0x…");
    return false;
}

int symbols_init(symbols_t *s)
{
    memset(s, 0, sizeof *s);
    limited = rlimit_set(RLIMIT_AS) || rlimit_set(RLIMIT_DATA);
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

static void ahead_stop(symbols_t *s);
static void symnames_free(symnames_t *sn);

void symbols_fini(symbols_t *s)
{
    ahead_stop(s);
    for (size_t i = 0; i < s->nmodules; i++) {
        symbols_module_t *m = &s->modules[i];
        if (m->ahead) { /* opened ahead (or queued) and never looked up */
            if (m->ahead->state == OPEN_DONE && m->ahead->dwfl)
                dwfl_end(m->ahead->dwfl);
            if (m->ahead->state == OPEN_DONE)
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

/* The span [*lo, *hi) of the loadable segments of the file open on fd,
 * as the preload measured it in memory.  0, or -1 with the reason in why.
 * fd stays open. */
static int elf_span(int fd, uint64_t *lo, uint64_t *hi, char *why, size_t len)
{
    int rc = -1;
    size_t n = 0;
    Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    if (!e || elf_kind(e) != ELF_K_ELF || elf_getphdrnum(e, &n)) {
        snprintf(why, len, "not an ELF file");
        goto out;
    }
    *lo = UINT64_MAX;
    *hi = 0;
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
            continue;
        if (ph.p_vaddr < *lo)
            *lo = ph.p_vaddr;
        if (ph.p_vaddr + ph.p_memsz > *hi)
            *hi = ph.p_vaddr + ph.p_memsz;
    }
    if (*hi <= *lo)
        snprintf(why, len, "no loadable segment");
    else
        rc = 0;
out:
    if (e)
        elf_end(e);
    return rc;
}

/* ---- symbol names by interval --------------------------------------------------- */

static int cut_order(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

typedef struct cutlist_s {
    uint64_t *v;
    size_t n, cap;
    bool failed;
} cutlist_t;

static void cut(cutlist_t *c, uint64_t at)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 1024;
        uint64_t *v = c->failed ? NULL : realloc(c->v, cap * sizeof *v);
        if (!v) {
            c->failed = true;
            return;
        }
        c->v = v;
        c->cap = cap;
    }
    c->v[c->n++] = at;
}

/* The bounds of elf's sections, in the module's addresses (bias added). */
static void cut_sections(cutlist_t *c, Elf *elf, GElf_Addr bias)
{
    Elf_Scn *scn = NULL;
    while (elf && (scn = elf_nextscn(elf, scn))) {
        GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);
        if (sh) {
            cut(c, sh->sh_addr + bias);
            cut(c, sh->sh_addr + sh->sh_size + bias);
        }
    }
}

static int sized_order(const void *a, const void *b)
{
    const sized_t *x = a, *y = b;
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    return (x->ndx > y->ndx) - (x->ndx < y->ndx);
}

static bool sized_push(sizedtab_t *t, sized_t x)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 1024;
        sized_t *v = realloc(t->v, cap * sizeof *v);
        if (!v)
            return false;
        t->v = v;
        t->cap = cap;
    }
    t->v[t->n++] = x;
    return true;
}

static bool sized_index(sizedtab_t *t)
{
    if (!t->n)
        return true;
    qsort(t->v, t->n, sizeof *t->v, sized_order);
    if (!(t->maxend = malloc(t->n * sizeof *t->maxend)))
        return false;
    uint64_t m = 0;
    for (size_t i = 0; i < t->n; i++)
        t->maxend[i] = m = t->v[i].end > m ? t->v[i].end : m;
    return true;
}

static int binding_rank(unsigned char info)
{
    switch (GELF_ST_BIND(info)) {
    case STB_GLOBAL: return 3;
    case STB_WEAK: return 2;
    case STB_LOCAL: return 1;
    default: return 0;
    }
}

/* mod's symbol table into *out: the index (out->indexed when it could
 * be made) and the cuts (none when memory is short: then every lookup
 * asks libdwfl). */
static void symnames_build(Dwfl_Module *mod, symnames_t *out)
{
    memset(out, 0, sizeof *out);
    out->min_sizeless = UINT64_MAX;
    int n = dwfl_module_getsymtab(mod);
    int first_global = dwfl_module_getsymtab_first_global(mod);
    if (n <= 0 || first_global < 0)
        return;
    bool indexed = true;
    out->locals = first_global > 1;
    int globals_from = first_global == 0 ? 1 : first_global;
    cutlist_t c = {0};
    Elf *elves[8];
    GElf_Addr biases[8];
    size_t nelves = 0;
    for (int i = 0; i < n && !c.failed; i++) {
        GElf_Sym sym;
        GElf_Addr addr;
        GElf_Word shndx;
        Elf *elf = NULL;
        Dwarf_Addr bias = 0;
        const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, &elf, &bias);
        if (!name)
            continue;
        /* The symbol's value as found, as in the table and as adjusted
         * by its file's bias: a cut too many only splits an interval. */
        uint64_t at[3] = {addr, sym.st_value, sym.st_value + bias};
        for (size_t k = 0; k < 3; k++) {
            cut(&c, at[k]);
            cut(&c, at[k] + 1);
            cut(&c, at[k] + sym.st_size);
        }
        size_t k = 0;
        while (k < nelves && (elves[k] != elf || biases[k] != bias))
            k++;
        if (k == nelves) {
            if (nelves == sizeof elves / sizeof elves[0]) {
                c.failed = true; /* more tables than this knows of: ask libdwfl */
                break;
            }
            elves[nelves] = elf;
            biases[nelves++] = bias;
        }
        /* What libdwfl's search considers. */
        int type = GELF_ST_TYPE(sym.st_info);
        if (!indexed || i == 0 || !name[0] || sym.st_shndx == SHN_UNDEF || type == STT_SECTION ||
            type == STT_FILE || type == STT_TLS)
            continue;
        bool global = i >= globals_from;
        if (!global && !out->locals)
            continue;
        /* A value not the table's plus the bias, in a loaded section: a
         * function descriptor's target, and libdwfl tries both.  (An
         * absolute symbol's value, and one in a section not loaded,
         * shndx -1, are the table's.) */
        if (shndx < SHN_LORESERVE && addr != sym.st_value + bias) {
            indexed = false;
            continue;
        }
        if (sym.st_size) {
            sized_t x = {.value = addr, .end = addr + sym.st_size, .name = name, .ndx = i,
                         .bind = binding_rank(sym.st_info)};
            if (x.end < x.value || !sized_push(global ? &out->glob : &out->loc, x))
                indexed = false;
        } else if (shndx >= SHN_LORESERVE) {
            if (!grow_room((void **)&out->exact, &out->cap_exact, out->nexact,
                           sizeof *out->exact, 64))
                indexed = false;
            else
                out->exact[out->nexact++] = addr;
        } else if (addr < out->min_sizeless) {
            out->min_sizeless = addr;
        }
        if (!sym.st_size && global) {
            if (!grow_room((void **)&out->zero, &out->cap_zero, out->nzero, sizeof *out->zero,
                           256))
                indexed = false;
            else
                out->zero[out->nzero++] = addr;
        }
    }
    if (indexed && sized_index(&out->glob) && sized_index(&out->loc)) {
        if (out->nzero) /* (qsort wants an array, even of none) */
            qsort(out->zero, out->nzero, sizeof *out->zero, cut_order);
        if (out->nexact)
            qsort(out->exact, out->nexact, sizeof *out->exact, cut_order);
        out->indexed = true;
    }
    for (size_t k = 0; k < nelves; k++)
        cut_sections(&c, elves[k], biases[k]);
    Dwarf_Addr bias = 0;
    cut_sections(&c, dwfl_module_getelf(mod, &bias), bias);
    Dwarf *dw = dwfl_module_getdwarf(mod, &bias);
    if (dw)
        cut_sections(&c, dwarf_getelf(dw), bias);
    const char **name = c.failed ? NULL : malloc((c.n + 1) * sizeof *name);
    if (!name) {
        free(c.v);
        return;
    }
    if (c.n)
        qsort(c.v, c.n, sizeof *c.v, cut_order);
    size_t u = 0;
    for (size_t i = 0; i < c.n; i++)
        if (!u || c.v[i] != c.v[u - 1])
            c.v[u++] = c.v[i];
    for (size_t i = 0; i <= u; i++)
        name[i] = NOT_ASKED;
    out->cuts = c.v;
    out->name = name;
    out->ncuts = u;
}

static void sizedtab_free(sizedtab_t *t)
{
    free(t->v);
    free(t->maxend);
}

static void symnames_free(symnames_t *sn)
{
    free(sn->cuts);
    free(sn->name);
    sizedtab_free(&sn->glob);
    sizedtab_free(&sn->loc);
    free(sn->zero);
    free(sn->exact);
    memset(sn, 0, sizeof *sn);
}

/* How many of the n sorted values v[] are <= x (v by stride bytes). */
static size_t count_le(const void *v, size_t n, size_t stride, uint64_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (*(const uint64_t *)((const char *)v + mid * stride) <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

enum { CONTAINING_MAX = 64, WALK_MAX = 4096 };

/* The symbol of t libdwfl's search picks for pc (see symnames_t): into
 * *name (NULL when none contains pc); false when the walk is too long
 * to tell (then libdwfl is asked). */
static bool sized_pick(const sizedtab_t *t, uint64_t pc, const char **name)
{
    const sized_t *in[CONTAINING_MAX];
    size_t nin = 0;
    size_t i = count_le(t->v, t->n, sizeof *t->v, pc);
    for (size_t walked = 0; i-- > 0 && t->maxend[i] > pc; walked++) {
        if (walked == WALK_MAX)
            return false;
        if (t->v[i].end <= pc)
            continue;
        if (nin == CONTAINING_MAX)
            return false;
        /* kept in the table's order */
        size_t k = nin++;
        while (k > 0 && in[k - 1]->ndx > t->v[i].ndx) {
            in[k] = in[k - 1];
            k--;
        }
        in[k] = &t->v[i];
    }
    const sized_t *best = NULL;
    for (size_t k = 0; k < nin; k++) {
        const sized_t *x = in[k];
        uint64_t bsize = best ? best->end - best->value : 0, xsize = x->end - x->value;
        if (!best || best->value < x->value || best->bind < x->bind)
            best = x;
        else if (best->value == x->value && ((bsize > xsize && best->bind <= x->bind) ||
                                             (bsize >= xsize && best->bind < x->bind)))
            best = x;
    }
    *name = best ? best->name : NULL;
    return true;
}

/* The symbol-table name dwfl_module_addrinfo gives pc. */
static const char *symname_find(Dwfl_Module *mod, const symnames_t *sn, uint64_t pc)
{
    if (sn->indexed) {
        const char *name;
        if (!sized_pick(&sn->glob, pc, &name))
            goto ask;
        if (name)
            return name;
        size_t x = count_le(sn->exact, sn->nexact, sizeof *sn->exact, pc);
        if (sn->min_sizeless > pc && !(x && sn->exact[x - 1] == pc)) { /* no sizeless one either */
            if (!sn->locals)
                return NULL;
            if (!sized_pick(&sn->loc, pc, &name))
                goto ask;
            return name;
        }
        if (!sn->locals) /* sizeless symbols decide */
            goto ask;
        size_t z = count_le(sn->zero, sn->nzero, sizeof *sn->zero, pc);
        if (z && sn->zero[z - 1] == pc) /* libdwfl may skip the locals */
            goto ask;
        if (sized_pick(&sn->loc, pc, &name) && name)
            return name;
    }
ask:;
    GElf_Off off;
    GElf_Sym sym;
    return dwfl_module_addrinfo(mod, pc, &off, &sym, NULL, NULL, NULL);
}

/* The same, found once per interval. */
static const char *symname_at(Dwfl_Module *mod, symnames_t *sn, uint64_t pc)
{
    if (!sn->name)
        return symname_find(mod, sn, pc);
    size_t i = count_le(sn->cuts, sn->ncuts, sizeof *sn->cuts, pc);
    if (sn->name[i] == NOT_ASKED)
        sn->name[i] = symname_find(mod, sn, pc);
    return sn->name[i];
}

/* Open job's file: a Dwfl of its own with the file reported at the
 * recorded bias, and the debug information and symbol table its first
 * lookup would load (libdw inflates compressed debug sections then: most
 * of what a module costs); or, mod NULL, why not (a warning when
 * job->warn).  It touches nothing but job, so that the store's thread can
 * run it while the main thread goes on. */
static void opening_run(opening_t *job)
{
    job->dwfl = NULL;
    job->mod = NULL;
    job->warn = false;
    memset(&job->names, 0, sizeof job->names);
    /* A name without a slash is no file (linux-vdso.so.1): no warning. */
    if (!strchr(job->path, '/'))
        return;
    uint64_t lo, hi;
    int fd = modfile_open(job->path, job->why, sizeof job->why);
    if (fd < 0 || elf_span(fd, &lo, &hi, job->why, sizeof job->why)) {
        job->warn = true;
        if (fd >= 0)
            close(fd);
        return;
    }
    if (hi - lo != job->size) {
        snprintf(job->why, sizeof job->why, "it spans %" PRIu64 " bytes, the traced one %" PRIu64
                 " (rebuilt since the trace?)", hi - lo, job->size);
        job->warn = true;
        close(fd);
        return;
    }
    if (!room_for_libdw(job->store)) { /* said once, for every module */
        close(fd);
        return;
    }
    job->dwfl = dwfl_begin(&callbacks);
    if (job->dwfl) {
        dwfl_report_begin(job->dwfl);
        /* The bias is the recorded base less the lowest segment's address
         * (add_p_vaddr: elfutils adds the segments' own addresses).  The
         * file is given as fd, never by name: libdwfl would open the path
         * again, as it is now, blocking and whatever it is. */
        job->mod = dwfl_report_elf(job->dwfl, job->name, job->path, fd, job->base - lo, true);
        dwfl_report_end(job->dwfl, NULL, NULL);
    }
    if (!job->mod) {
        /* On success dwfl_end closes fd; on failure it is still ours
         * (libdwfl closes a descriptor it was given only after inflating
         * a compressed file, and elf_span has just read this one as
         * plain ELF). */
        close(fd);
        snprintf(job->why, sizeof job->why, "%s", job->dwfl ? dwfl_errmsg(-1) : "out of memory");
        job->warn = true;
        return;
    }
    Dwarf_Addr bias;
    dwfl_module_getdwarf(job->mod, &bias); /* NULL without debug information: kept as such */
    symnames_build(job->mod, &job->names);
}

/* ---- opening ahead ------------------------------------------------------------ */

/* The store's thread: runs queued jobs in order until told to stop
 * (jobs still queued then are never run). */
static void *ahead_main(void *arg)
{
    symbols_ahead_t *a = arg;
    pthread_mutex_lock(&a->mu);
    while (!a->stop) {
        opening_t *job = a->head;
        if (!job) {
            pthread_cond_wait(&a->cv, &a->mu);
            continue;
        }
        a->head = job->next;
        if (!a->head)
            a->tail = NULL;
        job->state = OPEN_RUNNING;
        pthread_mutex_unlock(&a->mu);
        opening_run(job);
        pthread_mutex_lock(&a->mu);
        job->state = OPEN_DONE;
        pthread_cond_broadcast(&a->cv);
    }
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

/* The store's thread started; -1 when it cannot be (then nothing is
 * opened ahead). */
static int ahead_start(symbols_t *s)
{
    if (s->ahead_failed)
        return -1;
    symbols_ahead_t *a = calloc(1, sizeof *a);
    if (!a) {
        s->ahead_failed = true;
        return -1;
    }
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->cv, NULL);
    if (pthread_create(&a->thread, NULL, ahead_main, a)) {
        pthread_cond_destroy(&a->cv);
        pthread_mutex_destroy(&a->mu);
        free(a);
        s->ahead_failed = true;
        return -1;
    }
    s->ahead = a;
    return 0;
}

/* Stop the store's thread (after the job it runs, if any) and join it. */
static void ahead_stop(symbols_t *s)
{
    symbols_ahead_t *a = s->ahead;
    if (!a)
        return;
    pthread_mutex_lock(&a->mu);
    a->stop = true;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    pthread_join(a->thread, NULL);
    pthread_cond_destroy(&a->cv);
    pthread_mutex_destroy(&a->mu);
    free(a);
    s->ahead = NULL;
}

/* job, queued on the store's thread, for the caller: run there (wait
 * for it), or, when the thread has not started it, taken off the queue
 * and run here. */
static void ahead_claim(symbols_t *s, opening_t *job)
{
    symbols_ahead_t *a = s->ahead;
    pthread_mutex_lock(&a->mu);
    if (job->state == OPEN_QUEUED) {
        opening_t **at = &a->head, *last = NULL;
        while (*at != job) {
            last = *at;
            at = &(*at)->next;
        }
        *at = job->next;
        if (a->tail == job)
            a->tail = last;
        job->state = OPEN_TAKEN;
    }
    while (job->state == OPEN_RUNNING)
        pthread_cond_wait(&a->cv, &a->mu);
    pthread_mutex_unlock(&a->mu);
    if (job->state == OPEN_TAKEN)
        opening_run(job);
}

void symbols_prewarm(symbols_t *s, int32_t module)
{
    if (module < 0 || (size_t)module >= s->nmodules)
        return;
    symbols_module_t *m = &s->modules[module];
    if (m->same >= 0)
        m = &s->modules[m->same];
    if (m->tried || m->ahead || !strchr(m->path, '/'))
        return;
    if (!s->ahead && ahead_start(s))
        return;
    opening_t *job = calloc(1, sizeof *job);
    if (!job)
        return;
    *job = (opening_t){.path = m->path, .name = m->name, .base = m->base, .size = m->size,
                       .store = s, .state = OPEN_QUEUED};
    symbols_ahead_t *a = s->ahead;
    pthread_mutex_lock(&a->mu);
    if (a->tail)
        a->tail->next = job;
    else
        a->head = job;
    a->tail = job;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
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
        symbols_module_t *first = &s->modules[m->same];
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
    opening_t here, *job = m->ahead;
    m->ahead = NULL;
    if (job)
        ahead_claim(s, job);
    else {
        here = (opening_t){
            .path = m->path, .name = m->name, .base = m->base, .size = m->size, .store = s};
        job = &here;
        opening_run(job);
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

/* A function's name for printing, demangled; malloc'd, or NULL. */
static char *dup_name(const char *name)
{
    if (!name)
        return NULL;
    char *d = symbols_demangle(name);
    return d ? d : strdup(name);
}

/* The name of a function-like DIE, looked up through abstract origins and
 * specifications: a C++ linkage name (it demangles to the qualified name
 * with parameters), else the name in the source (not an assembler alias
 * such as glibc's __GI_ ones), else whatever linkage name there is. */
static const char *die_name(Dwarf_Die *die)
{
    Dwarf_Attribute a;
    const char *link = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
    if (!link)
        link = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
    if (link && !strncmp(link, "_Z", 2))
        return link;
    const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
    return name ? name : link;
}

static bool is_function(Dwarf_Die *die)
{
    int tag = dwarf_tag(die);
    return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
           tag == DW_TAG_entry_point;
}

/* The directory a CU was compiled in, or NULL. */
static const char *comp_dir(Dwarf_Die *cu)
{
    Dwarf_Attribute a;
    return cu ? dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &a)) : NULL;
}

/* file as a malloc'd string: relative names joined to the compilation
 * directory, as a debugger finds them.  NULL for NULL. */
static char *dup_path(const char *file, const char *dir)
{
    if (!file)
        return NULL;
    if (file[0] == '/' || !dir || dir[0] != '/')
        return strdup(file);
    size_t nd = strlen(dir), nf = strlen(file);
    char *p = malloc(nd + nf + 2);
    if (p) {
        memcpy(p, dir, nd);
        p[nd] = '/';
        memcpy(p + nd + 1, file, nf + 1);
    }
    return p;
}

/* The file, its CU's directory and the line of the call an
 * inlined_subroutine DIE stands for. */
static void call_site(Dwarf_Die *inl, const char **file, const char **dir, unsigned *line)
{
    Dwarf_Die cu;
    Dwarf_Files *files;
    Dwarf_Attribute a;
    Dwarf_Word v;
    *file = *dir = NULL;
    *line = 0;
    if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_line, &a), &v) == 0)
        *line = (unsigned)v;
    if (!dwarf_diecu(inl, &cu, NULL, NULL))
        return;
    *dir = comp_dir(&cu);
    if (dwarf_getsrcfiles(&cu, &files, NULL) == 0 &&
        dwarf_formudata(dwarf_attr(inl, DW_AT_call_file, &a), &v) == 0)
        *file = dwarf_filesrc(files, v, NULL, NULL);
}

/* The function-like scopes containing pc (module-relative to the Dwfl's
 * addresses), innermost first, as eu-addr2line -i finds them: the
 * innermost scope from the CU's address ranges, then its DIE's parents.
 * Returns their number; *chain is malloc'd (free it) when it is > 0. */
static int scopes_at(Dwfl_Module *mod, Dwarf_Die *cu, Dwarf_Addr bias, Dwarf_Addr pc,
                     Dwarf_Die **chain)
{
    Dwarf_Die *scopes = NULL;
    int n = cu ? dwarf_getscopes(cu, pc - bias, &scopes) : 0;
    if (n <= 0)
        return 0;
    Dwarf_Die inner = scopes[0];
    Dwarf *dw = dwfl_module_getdwarf(mod, &bias);
    if (dw)
        dwarf_offdie(dw, dwarf_dieoffset(&scopes[0]), &inner);
    free(scopes);
    n = dwarf_getscopes_die(&inner, chain);
    return n > 0 ? n : 0;
}

/* Resolve address in the opened module mod into f[]; the number of
 * frames (>= 1).  Strings are malloc'd. */
static size_t lookup(Dwfl_Module *mod, symnames_t *sn, uint64_t address, symbols_frame_t *f)
{
    Dwarf_Addr pc = address ? address - 1 : 0; /* the call, not the return address */
    const char *symname = symname_at(mod, sn, pc);
    const char *file = NULL;
    int line = 0;
    Dwfl_Line *l = dwfl_module_getsrc(mod, pc);
    if (l)
        file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
    Dwarf_Addr bias = 0;
    Dwarf_Die *cu = dwfl_module_addrdie(mod, pc, &bias);
    const char *dir = comp_dir(cu);

    Dwarf_Die *chain = NULL;
    int nchain = scopes_at(mod, cu, bias, pc, &chain);
    size_t n = 0;
    const char *prev_file = file, *prev_dir = dir;
    unsigned prev_line = line > 0 ? (unsigned)line : 0;
    for (int i = 0; i < nchain && n < MAX_INLINE; i++) {
        if (!is_function(&chain[i]))
            continue;
        bool inl = dwarf_tag(&chain[i]) == DW_TAG_inlined_subroutine;
        const char *name = die_name(&chain[i]);
        f[n].function = dup_name(name ? name : inl ? NULL : symname);
        f[n].file = dup_path(prev_file, prev_dir);
        f[n].line = prev_line;
        f[n].inlined = inl;
        n++;
        if (!inl)
            break;
        /* The next frame is where this one was called from. */
        call_site(&chain[i], &prev_file, &prev_dir, &prev_line);
    }
    free(chain);
    if (!n) { /* no debug information: the symbol table */
        f[0].function = dup_name(symname);
        f[0].file = dup_path(file, dir);
        f[0].line = line > 0 ? (unsigned)line : 0;
        f[0].inlined = false;
        n = 1;
    }
    return n;
}

size_t symbols_resolve(symbols_t *s, int32_t module, uint64_t address,
                       const symbols_frame_t **frames)
{
    symbols_module_t *m = module >= 0 && (size_t)module < s->nmodules ? &s->modules[module] : NULL;
    Dwfl_Module *mod = m ? module_open(s, m) : NULL;
    addrmap_t *cache = m ? &m->cache : &s->unmapped;
    if (cache->slots) {
        entry_t *hit = addrmap_get(cache, address);
        if (hit) {
            *frames = hit->f;
            return hit->n;
        }
    }
    symbols_frame_t f[MAX_INLINE];
    size_t n = 1;
    memset(f, 0, sizeof f[0]);
    if (mod && room_for_libdw(s)) { /* in the Dwfl's module: its first's, at that base */
        symbols_module_t *d = m->same >= 0 ? &s->modules[m->same] : m;
        n = lookup(mod, &d->names, address - m->base + d->base, f);
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
    symbols_module_t *m = module >= 0 && (size_t)module < s->nmodules ? &s->modules[module] : NULL;
    Dwfl_Module *mod = m ? module_open(s, m) : NULL;
    symbols_module_t *d = m && m->same >= 0 ? &s->modules[m->same] : m;
    return mod ? symname_at(mod, &d->names, pc - m->base + d->base) : NULL;
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
