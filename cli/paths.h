/*
 * paths: where memsim's own files are, found from the memsim executable.
 *
 * In the build tree everything is beside memsim (build/memsim,
 * build/memsim-analyze, build/libmemsim.so, build/memsim-recorder).  In
 * an installed tree (make install PREFIX=P) the programs are in P/bin/
 * and the preload library with its recorder in P/lib/memsim/, off the
 * linker's search path:
 *
 *   P/bin/memsim, P/bin/memsim-analyze
 *   P/lib/memsim/libmemsim.so, P/lib/memsim/memsim-recorder
 *
 * (libmemsim.so finds memsim-recorder beside itself: preload/launch.c.)
 */
#ifndef MEMSIM_CLI_PATHS_H
#define MEMSIM_CLI_PATHS_H

#include <stdbool.h>
#include <stddef.h>

/* The directory of the running memsim executable into buf (no trailing
 * '/' but for "/").  0, or -1 after one line prefixed cmd. */
int paths_self_dir(const char *cmd, char *buf, size_t len);

/* libmemsim.so beside memsim (the build tree) or in ../lib/memsim/
 * (installed): its absolute, resolved path into out (PATH_MAX bytes).
 * 0, or -1 after one line prefixed cmd naming where it looked, or why
 * the path found cannot go into LD_PRELOAD. */
int paths_preload(const char *cmd, const char *self_dir, char *out);

/* The program name beside memsim (memsim-analyze) into out.  Whether it
 * is there and executable. */
bool paths_tool(const char *self_dir, const char *name, char *out, size_t len);

#endif
