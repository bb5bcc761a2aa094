/*
 * symbols: offline symbolization of a trace's return addresses over the
 * module map the trace recorded (docs/trace-format.md: `module`
 * records), with elfutils' libdwfl.
 *
 * Two parts:
 *   symbols_t        the store, shared by every trace of a run: each
 *                    module ever seen, keyed by (path, base, size), with
 *                    its Dwfl (opened the first time one of its frames is
 *                    resolved) and a cache of the addresses resolved in
 *                    it.  The modules of one file (same path and size)
 *                    at other bases, as each process of a tree maps its
 *                    libraries, share the first one's Dwfl: memory grows
 *                    with the distinct files, and with the distinct
 *                    frames resolved, never with the trace or the
 *                    processes.
 *   symbols_space_t  one process's address space as its trace describes
 *                    it so far: the modules loaded and not yet unloaded.
 *                    The sites assign each stack's frames to modules
 *                    through it when the stack is first used, so that a
 *                    library unloaded, and another loaded at its address
 *                    later, cannot change what an earlier stack means.
 *
 * Resolving: every frame of a stack record is a return address (memsim's
 * own frames are gone; none is the allocation's PC), so the lookup is at
 * address - 1, the call instruction.  One address gives one frame per
 * function it lies in, innermost first: inlined calls (DWARF
 * DW_TAG_inlined_subroutine scopes, as eu-addr2line -i walks them), each
 * with inlined = true and the file:line inside it, then the function they
 * were inlined into, at the call's file:line.  Names come from DWARF when
 * there is debug information (demangled when they are C++ names) and
 * from the ELF symbol table otherwise.  What cannot be resolved still has
 * its module and offset (the frame prints as `libfoo.so+0x1a2b`), or only
 * its address (`0x7f3a12345678`) when no module covers it: a frame never
 * prints as nothing.
 *
 * A module's file is opened only if it is a regular file, without
 * blocking (analyzer/read/modfile.h: a trace may name a FIFO or a device).  One
 * that cannot be opened, is not a regular file, is not ELF, or whose
 * loaded span differs from the recorded one (rebuilt since the trace)
 * gets one warning per path; its frames fall back to module+offset.  Separate
 * debug information is looked up where elfutils looks (build id under
 * /usr/lib/debug, .gnu_debuglink beside the module; debuginfod when
 * DEBUGINFOD_URLS is set), by modfile_find_debuginfo, which opens what it
 * finds by name the same careful way.
 */
#ifndef MEMSIM_ANALYZER_SYMBOLS_H
#define MEMSIM_ANALYZER_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzer/read/reader.h"
#include "lib/addrmap.h"

#define SYMBOLS_NO_MODULE (-1)

/* One frame of a resolved address.  Strings belong to the store. */
typedef struct symbols_frame_s {
    uint64_t address;     /* the return address as recorded */
    const char *module;   /* the module's path; NULL when no module covers it */
    const char *name;     /* the module's file name (its path's last part); NULL likewise */
    uint64_t offset;      /* address - the module's base (its lowest loaded address) */
    const char *function; /* NULL when unknown */
    const char *file;     /* source file; NULL when unknown */
    unsigned line;        /* 0 when unknown */
    bool inlined;         /* inlined into the next frame (same address) */
} symbols_frame_t;

typedef struct symbols_module_s symbols_module_t;
typedef struct symbols_ahead_s symbols_ahead_t;

typedef struct symbols_s {
    symbols_module_t *modules; /* every module reported, by index */
    size_t nmodules, cap;
    addrmap_t by_base;         /* base -> index + 1 of the latest module at that base */
    addrmap_t by_file;         /* the hash of (path, size) -> index + 1 of the first such
                                  module: the one whose Dwfl every module of its file reads */
    addrmap_t unmapped;        /* address -> resolved entry, for frames in no module */
    symbols_frame_t scratch;   /* what resolving returns when the host is out of memory */
    bool quiet;                /* no warnings on stderr (tests) */
    symbols_ahead_t *ahead;    /* the thread opening modules ahead (symbols_prewarm), or NULL */
    bool ahead_failed;         /* it could not be started: nothing is opened ahead */
} symbols_t;

/* 0, or -1 when the host is out of memory. */
int symbols_init(symbols_t *s);
void symbols_fini(symbols_t *s);

/* The index of the module (path, base, size), added if new; -1 when the
 * host is out of memory. */
int32_t symbols_module(symbols_t *s, const char *path, uint64_t base, uint64_t size);

/* The frames of the return address `address` in `module` (an index, or
 * SYMBOLS_NO_MODULE), innermost first, into *frames (owned by the store,
 * valid until symbols_fini); returns their number, at least 1.  Cached:
 * the second call for an address costs a hash lookup. */
size_t symbols_resolve(symbols_t *s, int32_t module, uint64_t address,
                       const symbols_frame_t **frames);

/* The name the module's ELF symbol table gives the instruction at pc
 * (not a return address: no - 1), as libdwfl's dwfl_module_addrinfo
 * gives it (the same string, from an index of the table: see
 * symnames.h), or NULL (no symbol, or the module cannot be opened).
 * What resolving names a frame by when there is no debug information. */
const char *symbols_symtab_name(symbols_t *s, int32_t module, uint64_t pc);

/* Start opening module (an index; anything else is ignored) on the
 * store's own thread: its file, its debug information (inflating
 * compressed debug sections is most of a module's cost) and its symbol
 * table, so that its first symbols_resolve, later, finds them loaded.
 * Only speed: what resolving returns and warns is the same, and a
 * warning is still printed at the module's first symbols_resolve.
 * Nothing when the module is opened or queued already, or when the
 * thread cannot be had.  The store is still used from one thread: the
 * caller's; symbols_fini stops the thread (a module not started is never
 * opened). */
void symbols_prewarm(symbols_t *s, int32_t module);

/* How a frame prints: its function, else `module+0xoffset`, else
 * `0xaddress`.  Returns buf. */
const char *symbols_label(const symbols_frame_t *f, char *buf, size_t len);

/* name demangled (malloc'd; the caller frees it), or NULL when it is not
 * a C++ mangled name or the demangler refuses it. */
char *symbols_demangle(const char *name);

/* ---- one process's address space -------------------------------------- */

typedef struct symbols_mapping_s {
    uint64_t base, end;  /* [base, end) */
    uint64_t seq;        /* load order: the latest wins where two overlap */
    int32_t module;      /* index in the store */
} symbols_mapping_t;

typedef struct symbols_space_s {
    symbols_t *store;
    symbols_mapping_t *v; /* sorted by base */
    size_t n, cap;
    uint64_t seq;
    bool overlap;         /* two mappings overlap (a load listed before its unload) */
} symbols_space_t;

void symbols_space_init(symbols_space_t *sp, symbols_t *store);
void symbols_space_fini(symbols_space_t *sp);

/* A module record (e->json: op, path, base, size).  0; -1 when a field is
 * missing or mistyped; -2 when the host is out of memory. */
int symbols_space_add(symbols_space_t *sp, const event_t *e);

int symbols_space_load(symbols_space_t *sp, const char *path, uint64_t base, uint64_t size);
/* Forget the mapping at exactly (base, size); nothing if there is none. */
void symbols_space_unload(symbols_space_t *sp, uint64_t base, uint64_t size);

/* The module covering addr now (the latest loaded where two overlap), or
 * SYMBOLS_NO_MODULE. */
int32_t symbols_space_find(const symbols_space_t *sp, uint64_t addr);

#endif
