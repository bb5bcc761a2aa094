/*
 * run_out: where memsim run's things are: its own directory, the
 * preload, and the output directory DIR, checked before anything is made
 * (the current directory usable, --out new or empty or --force), then
 * made, and taken away again when the command did not run.
 */
#ifndef MEMSIM_CLI_RUN_OUT_H
#define MEMSIM_CLI_RUN_OUT_H

#include <limits.h>
#include <stdbool.h>

#include "cli/run_opts.h"

/* Where things are, resolved before the command starts. */
typedef struct run_paths_s {
    char self_dir[PATH_MAX]; /* directory of the memsim executable */
    char preload[PATH_MAX];  /* absolute path of libmemsim.so */
    char dir[PATH_MAX];      /* absolute output directory */
    bool dir_created;        /* memsim run made dir (removed if nothing ran) */
} run_paths_t;

/* The current directory must exist (without --out, be writable), and
 * --out be a path to create, or an empty directory we can write (one
 * that is not empty with --force).  0, or -1 after one line. */
int run_out_check(const run_opts_t *o);
/* Create (or take) the output directory; its absolute path into p->dir.
 * With --force, the files of the run before in it go first.  0, or -1
 * after one line. */
int run_out_make(const run_opts_t *o, run_paths_t *p);
/* When the command did not run: take away what memsim run made. */
void run_out_remove(const run_paths_t *p);

#endif
