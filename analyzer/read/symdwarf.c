/*
 * symdwarf: DWARF scopes, names and lines of one address.  See
 * symdwarf.h.
 */
#include "analyzer/read/symdwarf.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdlib.h>
#include <string.h>

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
size_t symdwarf_lookup(Dwfl_Module *mod, symnames_t *sn, uint64_t address, symbols_frame_t *f)
{
    Dwarf_Addr pc = address ? address - 1 : 0; /* the call, not the return address */
    const char *symname = symnames_at(mod, sn, pc);
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
    for (int i = 0; i < nchain && n < SYMDWARF_MAX_INLINE; i++) {
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
