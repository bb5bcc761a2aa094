/*
 * process_begin: a trace for this process — the settings read at
 * start-up, a recorder started or joined, the process's region of the
 * arena published (preload/process.h has the files of the process's
 * life; this is the part start-up, a fork's child and a clone's copy
 * share).
 *
 * A program exec'd or spawned by a traced one gets MEMSIM_ARENA=PID:ID
 * in its environment (ID: the arena's, in hex) and joins the recorder of
 * its tree when that recorder takes it; otherwise it starts its own.
 */
#ifndef MEMSIM_PRELOAD_PROCESS_BEGIN_H
#define MEMSIM_PRELOAD_PROCESS_BEGIN_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ipc/arena.h"
#include "ipc/config.h"

#define PROCESS_ENV_ARENA "MEMSIM_ARENA" /* the tree's recorder, for the programs it execs */

extern config_t process_cfg;       /* MEMSIM_* as read at start */
extern char process_exe[PATH_MAX]; /* /proc/self/exe */

/* An arena and a region for this process: the recorder's of the tree
 * when MEMSIM_ARENA names one that takes it, else a new arena and
 * recorder (load_unwinder: at start-up, where the unwinder and the
 * clock are set up too); then tracing is on.  parent: the parent's pid
 * for the trace; why: a note for its meta record, or NULL.  0, or -1
 * with err set. */
int process_begin(bool load_unwinder, pid_t parent, const char *why, char *err, size_t errlen);

/* Fill r for this process and publish it (its recorder waits for it):
 * flags REGION_JOINED or REGION_INHERITED, or 0. */
void process_publish(void *arena, region_t *r, pid_t parent, uint32_t flags, const char *why);

#endif
