/*
 * symnames: a module's ELF symbol-table names by address, the same
 * strings libdwfl's dwfl_module_addrinfo gives, found through an index
 * of the table and kept per interval of addresses.  symbols.c names a
 * frame by them where there is no debug information.
 */
#ifndef MEMSIM_ANALYZER_SYMNAMES_H
#define MEMSIM_ANALYZER_SYMNAMES_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* mod's symbol table into *out: the index (out->indexed when it could
 * be made) and the cuts (none when memory is short: then every lookup
 * asks libdwfl).  *out is overwritten; free it with symnames_free. */
void symnames_build(Dwfl_Module *mod, symnames_t *out);
void symnames_free(symnames_t *sn);

/* The symbol-table name dwfl_module_addrinfo gives pc (an address of the
 * module, not a return address), or NULL; found once per interval. */
const char *symnames_at(Dwfl_Module *mod, symnames_t *sn, uint64_t pc);

#endif
