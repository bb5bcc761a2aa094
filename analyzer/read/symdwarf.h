/*
 * symdwarf: one return address of an opened module resolved into its
 * frames with libdwfl: the inlined calls it lies in (DWARF
 * DW_TAG_inlined_subroutine scopes, as eu-addr2line -i walks them), each
 * at the file:line inside it, then the function they were inlined into,
 * at the call's file:line; names from DWARF, demangled, else from the
 * symbol table (analyzer/read/symnames.h).  See symbols.h for what a frame
 * holds.
 */
#ifndef MEMSIM_ANALYZER_SYMDWARF_H
#define MEMSIM_ANALYZER_SYMDWARF_H

#include <elfutils/libdwfl.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzer/read/symbols.h"
#include "analyzer/read/symnames.h"

#define SYMDWARF_MAX_INLINE 64 /* frames kept per address; deeper inline chains are cut */

/* Resolve address (a return address of the module's Dwfl: the lookup is
 * at address - 1, the call) into f[] (room for SYMDWARF_MAX_INLINE),
 * innermost first; the number of frames (>= 1).  Only function, file,
 * line and inlined are set; the strings are malloc'd (NULL when
 * unknown). */
size_t symdwarf_lookup(Dwfl_Module *mod, symnames_t *sn, uint64_t address, symbols_frame_t *f);

#endif
