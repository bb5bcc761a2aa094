/*
 * inputs: the trace paths memsim-analyze was given.  A directory
 * contributes its memsim.*.jsonl and memsim.*.jsonl.zst files in name
 * order; "-" is standard input (once).
 */
#ifndef MEMSIM_ANALYZER_INPUTS_H
#define MEMSIM_ANALYZER_INPUTS_H

#include <stddef.h>
#include <stdint.h>

typedef struct paths_s {
    char **v;
    size_t n, cap;
    /* A memsim run directory's resources.json: the peak tree RSS its
     * polls saw (and the kernel's peak of its waited-for children); the
     * highest over the directories given, 0 when none has one. */
    uint64_t run_peak_tree_rss;
    /* Its "command", joined by blanks (escaped as escape_copy does); ""
     * when none was read (the first directory's that has one). */
    char run_command[1024];
} paths_t;

/* Add arg's traces; 0, or -1 after one line on stderr. */
int inputs_collect(const char *arg, paths_t *p);
void inputs_free(paths_t *p);

#endif
