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
 */
#ifndef MEMSIM_ANALYZER_MODFILE_H
#define MEMSIM_ANALYZER_MODFILE_H

#include <stddef.h>

/* A descriptor of path open for reading (close-on-exec), or -1 with the
 * reason in why ("cannot open it: ...", "a FIFO, not a regular file")
 * when it cannot be opened or is not a regular file. */
int modfile_open(const char *path, char *why, size_t len);

#endif
