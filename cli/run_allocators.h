/*
 * run_allocators: memsim run with a real allocator, and the comparison
 * of memsim-analyze --allocators' predictions with real runs.
 *
 *   memsim run --allocator SPEC CMD...
 *       CMD runs traced, as always, with the allocator of SPEC
 *       (allocators/catalog.h: NAME[:KEY=VALUE...]) preloaded behind
 *       libmemsim.so and its settings in the environment, and with
 *       libmemsim-meter.so ahead of both, which measures each process's
 *       heap RSS (allocators/meter.c) into DIR/meter.PID.json.  The
 *       figures go into resources.json ("allocator") and one line says
 *       the largest process's peak heap RSS.
 *
 *   memsim run --compare-allocators[=LIST] CMD...
 *       CMD once per allocator of LIST (default: the four of the
 *       catalog; one not installed is named with the line that installs
 *       it, and skipped), each as memsim run --allocator into DIR/SPEC/;
 *       then memsim-analyze --allocators LIST on the first run's traces
 *       (the recording).  For one executable of the tree (--exe NAME:
 *       its path or file name; by default the recording's process with
 *       the most heap operations) it prints each allocator's predicted
 *       peak heap RSS beside the measured one (of several processes of
 *       that executable, the largest, on both sides), their difference,
 *       and whether the two orders agree; DIR/allocators.json holds the
 *       same ("not measured", null, where no process of it ended by
 *       exit or _exit: the meter writes then; a crash is not measured).  An --exe of which the first
 *       run measured no process stops the comparison there, with one
 *       line naming those it measured.  A run counts when the command
 *       ran (its resources.json), whatever its exit status; memsim run
 *       exits with the first run's, the command's.
 */
#ifndef MEMSIM_CLI_RUN_ALLOCATORS_H
#define MEMSIM_CLI_RUN_ALLOCATORS_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "allocators/catalog.h"

typedef struct run_alloc_s {
    bool on;                 /* --allocator given */
    catalog_spec_t spec;
    char lib[PATH_MAX];      /* the library to preload ("" for glibc) */
    char meter[PATH_MAX];    /* libmemsim-meter.so */
} run_alloc_t;

/* --allocator SPEC: parse it and find its library and the meter.  0, or
 * -1 after one line (a library not installed: the line that installs it). */
int run_alloc_parse(const char *cmd, const char *spec, const char *self_dir, run_alloc_t *a);

/* The LD_PRELOAD value for the command: the meter, libmemsim.so, the
 * allocator's library, then what LD_PRELOAD held (old, may be NULL). */
char *run_alloc_preload(const run_alloc_t *a, const char *memsim_preload, const char *old);

/* The other variables the command gets ("NAME=value", malloc'd each)
 * into out (room for CATALOG_MAX_ENV + 2); their number, 0 when out of
 * memory. */
size_t run_alloc_vars(const run_alloc_t *a, const char *dir, char **out);

/* After the command: the meter's files of dir as resources.json's
 * "allocator" object, and one line on stderr.  NULL when out of memory. */
json_t *run_alloc_collect(const char *cmd, const run_alloc_t *a, const char *dir);

/* Whether name is a file the meter writes (meter.PID.json), or the
 * comparison's allocators.json. */
bool run_alloc_file(const char *name);

/* --compare-allocators: run argv (the command) once per allocator of
 * list (NULL: every one of the catalog) under memsim run --allocator
 * into dir/SPEC/, then compare exe's process (NULL: the one with the
 * most heap operations).  run_args: memsim run's options to pass on to
 * each run (NULL-terminated).  The exit status of memsim run: the
 * command's in the first run that ran (a failed comparison is one line),
 * else 1 or 2. */
int run_alloc_compare(const char *cmd, const char *self_dir, const char *dir, const char *list,
                      const char *exe, char *const *run_args, char *const *argv);

#endif
