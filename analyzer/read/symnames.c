/*
 * symnames: the symbol-table name index and its intervals.  See
 * symnames.h.
 */
#include "analyzer/read/symnames.h"

#include "lib/grow.h"

#include <gelf.h>
#include <stdlib.h>
#include <string.h>

static const char not_asked[1];
#define NOT_ASKED not_asked
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

/* The cuts of one symbol: its value as found, as in the table and as
 * adjusted by its file's bias (a cut too many only splits an interval),
 * each with value + 1 and value + size. */
static void cut_symbol(cutlist_t *c, const GElf_Sym *sym, GElf_Addr addr, Dwarf_Addr bias)
{
    uint64_t at[3] = {addr, sym->st_value, sym->st_value + bias};
    for (size_t k = 0; k < 3; k++) {
        cut(c, at[k]);
        cut(c, at[k] + 1);
        cut(c, at[k] + sym->st_size);
    }
}

/* The symbol tables a module's symbols come from (its file's, its debug
 * file's), each at its bias: their sections are cuts too. */
typedef struct tables_s {
    Elf *elf[8];
    GElf_Addr bias[8];
    size_t n;
} tables_t;

/* Note (elf, bias) among t's; false when t is full (more tables than
 * this knows of: then libdwfl is asked). */
static bool tables_note(tables_t *t, Elf *elf, Dwarf_Addr bias)
{
    size_t k = 0;
    while (k < t->n && (t->elf[k] != elf || t->bias[k] != bias))
        k++;
    if (k < t->n)
        return true;
    if (t->n == sizeof t->elf / sizeof t->elf[0])
        return false;
    t->elf[t->n] = elf;
    t->bias[t->n++] = bias;
    return true;
}

/* Symbol i of the table into out's index, if libdwfl's search considers
 * it; false when the index cannot answer for the module (then it is not
 * used). */
static bool index_symbol(symnames_t *out, int i, const char *name, const GElf_Sym *sym,
                         GElf_Addr addr, GElf_Word shndx, Dwarf_Addr bias, bool global)
{
    /* What libdwfl's search considers. */
    int type = GELF_ST_TYPE(sym->st_info);
    if (i == 0 || !name[0] || sym->st_shndx == SHN_UNDEF || type == STT_SECTION ||
        type == STT_FILE || type == STT_TLS)
        return true;
    if (!global && !out->locals)
        return true;
    /* A value not the table's plus the bias, in a loaded section: a
     * function descriptor's target, and libdwfl tries both.  (An
     * absolute symbol's value, and one in a section not loaded,
     * shndx -1, are the table's.) */
    if (shndx < SHN_LORESERVE && addr != sym->st_value + bias)
        return false;
    if (sym->st_size) {
        sized_t x = {.value = addr, .end = addr + sym->st_size, .name = name, .ndx = i,
                     .bind = binding_rank(sym->st_info)};
        return x.end >= x.value && sized_push(global ? &out->glob : &out->loc, x);
    }
    if (shndx >= SHN_LORESERVE) {
        if (!grow_room((void **)&out->exact, &out->cap_exact, out->nexact, sizeof *out->exact,
                       64))
            return false;
        out->exact[out->nexact++] = addr;
    } else if (addr < out->min_sizeless) {
        out->min_sizeless = addr;
    }
    if (global) {
        if (!grow_room((void **)&out->zero, &out->cap_zero, out->nzero, sizeof *out->zero, 256))
            return false;
        out->zero[out->nzero++] = addr;
    }
    return true;
}

/* The index sorted for lookups: out->indexed when it could be. */
static void index_sort(symnames_t *out)
{
    if (sized_index(&out->glob) && sized_index(&out->loc)) {
        if (out->nzero) /* (qsort wants an array, even of none) */
            qsort(out->zero, out->nzero, sizeof *out->zero, cut_order);
        if (out->nexact)
            qsort(out->exact, out->nexact, sizeof *out->exact, cut_order);
        out->indexed = true;
    }
}

/* The cuts sorted and made distinct, each interval's name NOT_ASKED, into
 * out; none when memory is short.  c's array becomes out's. */
static void cuts_finish(symnames_t *out, cutlist_t *c)
{
    const char **name = c->failed ? NULL : malloc((c->n + 1) * sizeof *name);
    if (!name) {
        free(c->v);
        return;
    }
    if (c->n)
        qsort(c->v, c->n, sizeof *c->v, cut_order);
    size_t u = 0;
    for (size_t i = 0; i < c->n; i++)
        if (!u || c->v[i] != c->v[u - 1])
            c->v[u++] = c->v[i];
    for (size_t i = 0; i <= u; i++)
        name[i] = NOT_ASKED;
    out->cuts = c->v;
    out->name = name;
    out->ncuts = u;
}

void symnames_build(Dwfl_Module *mod, symnames_t *out)
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
    tables_t tables = {0};
    for (int i = 0; i < n && !c.failed; i++) {
        GElf_Sym sym;
        GElf_Addr addr;
        GElf_Word shndx;
        Elf *elf = NULL;
        Dwarf_Addr bias = 0;
        const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, &elf, &bias);
        if (!name)
            continue;
        cut_symbol(&c, &sym, addr, bias);
        if (!tables_note(&tables, elf, bias)) {
            c.failed = true; /* more tables than this knows of: ask libdwfl */
            break;
        }
        if (indexed && !index_symbol(out, i, name, &sym, addr, shndx, bias, i >= globals_from))
            indexed = false;
    }
    if (indexed)
        index_sort(out);
    for (size_t k = 0; k < tables.n; k++)
        cut_sections(&c, tables.elf[k], tables.bias[k]);
    Dwarf_Addr bias = 0;
    cut_sections(&c, dwfl_module_getelf(mod, &bias), bias);
    Dwarf *dw = dwfl_module_getdwarf(mod, &bias);
    if (dw)
        cut_sections(&c, dwarf_getelf(dw), bias);
    cuts_finish(out, &c);
}

static void sizedtab_free(sizedtab_t *t)
{
    free(t->v);
    free(t->maxend);
}

void symnames_free(symnames_t *sn)
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

const char *symnames_at(Dwfl_Module *mod, symnames_t *sn, uint64_t pc)
{
    if (!sn->name)
        return symname_find(mod, sn, pc);
    size_t i = count_le(sn->cuts, sn->ncuts, sizeof *sn->cuts, pc);
    if (sn->name[i] == NOT_ASKED)
        sn->name[i] = symname_find(mod, sn, pc);
    return sn->name[i];
}
