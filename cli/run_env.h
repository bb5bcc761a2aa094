/*
 * run_env: the command's environment: memsim run's own, less what it
 * sets, then LD_PRELOAD (libmemsim.so, or an allocator and the meter
 * with --allocator), MEMSIM_OUTPUT and the variables of the options
 * given.
 */
#ifndef MEMSIM_CLI_RUN_ENV_H
#define MEMSIM_CLI_RUN_ENV_H

#include <stddef.h>

#include "cli/run_opts.h"
#include "cli/run_out.h"

/* environ, less what memsim run sets, then LD_PRELOAD, MEMSIM_OUTPUT and
 * the variables of the options given.  MEMSIM_ROOT_PID goes: the command
 * is a new root.  NULL when out of memory; else free with run_env_free,
 * the entries from *own on being memsim run's. */
char **run_env_make(const run_opts_t *o, const run_paths_t *p, size_t *own);
void run_env_free(char **env, size_t own);

#endif
