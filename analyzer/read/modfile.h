/*
 * modfile: opening the files a trace names.
 *
 * Symbolization reads the files the trace's `module` records name
 * (docs/trace-format.md), and whatever wrote the trace could have named
 * any path: a FIFO, whose open() waits for a writer (forever); a device
 * node, which an open may act on (a tape rewinds, a watchdog arms) and
 * which may read without end; a terminal, which would become the
 * analyzer's controlling one.  Run as root, the analyzer can open all of
 * them.  So a module's file is opened only if it is a regular file, and
 * never in a way that can block.
 *
 * So is its separate debug information.  libdwfl's standard search
 * (dwfl_standard_find_debuginfo) looks by build id under /usr/lib/debug,
 * then by .gnu_debuglink name in the module's own directory, a directory
 * the trace chose, with a plain open(): a FIFO named like the debug file
 * beside a module blocks it the same way.  modfile_find_debuginfo keeps
 * the lookups by build id (system directories, and debuginfod when
 * DEBUGINFOD_URLS is set) and does the one by name itself, opening with
 * modfile_open.
 */
#ifndef MEMSIM_ANALYZER_MODFILE_H
#define MEMSIM_ANALYZER_MODFILE_H

#include <elfutils/libdwfl.h>
#include <stddef.h>

/* A descriptor of path open for reading (close-on-exec), or -1 with the
 * reason in why ("cannot open it: ...", "a FIFO, not a regular file")
 * when it cannot be opened or is not a regular file. */
int modfile_open(const char *path, char *why, size_t len);

/* A Dwfl_Callbacks find_debuginfo: mod's separate debug file, found
 *   1. by build id under the system's debug directories
 *      (dwfl_build_id_find_debuginfo);
 *   2. by the name .gnu_debuglink gives (link; with none, the module's
 *      name + ".debug"), where elfutils' default path looks: beside file
 *      (the module's path), in .debug beside it, under /usr/lib/debug by
 *      its directory; only a regular file, and only the file of mod: the
 *      same build id when mod has one, else the CRC-32 the link records
 *      (crc; 0: none to check);
 *   3. by debuginfod, when DEBUGINFOD_URLS is set.
 * A link holding a '/' is no file name (a dwz file's alternate link is a
 * path): not searched by name, such files are found by build id.
 * Returns a descriptor, its path malloc'd in *found; or -1 and *found NULL
 * (libdwfl would open a name left there). */
int modfile_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
                           Dwarf_Addr base, const char *file, const char *link, GElf_Word crc,
                           char **found);

#endif
