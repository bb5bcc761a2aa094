/*
 * childenv: the environment a program memsim starts or sees started gets.
 *
 * One helper for both sides: memsim run builds the command's environment
 * with it (its own environment, less what it sets, then LD_PRELOAD and
 * the MEMSIM_* variables), and the preload the environment of every exec
 * and posix_spawn: a child that keeps libmemsim.so in its LD_PRELOAD
 * gets memsim's variables (MEMSIM_OUTPUT made absolute, MEMSIM_ROOT_PID);
 * one whose environment no longer preloads it (env -i, a sanitized
 * environment) is not traced and gets its environment exactly as the
 * program built it.  The program's own environment is never changed (it
 * may own it: bash does).
 *
 * No allocation, no stdio: the caller provides the array.
 */
#ifndef MEMSIM_IPC_CHILDENV_H
#define MEMSIM_IPC_CHILDENV_H

#include <stdbool.h>
#include <stddef.h>

/* Entries of envp (NULL: none). */
size_t childenv_count(char *const *envp);

/* Into out (room for childenv_count(envp) + nset + 1 pointers): envp's
 * entries but those named in drop[] or named like an entry of set[]
 * ("NAME=value"), in their order, then set[], then NULL.  NULL entries
 * of drop and set are skipped.  Returns out. */
char **childenv_merge(char *const *envp, const char *const *drop, size_t ndrop,
                      char *const *set, size_t nset, char **out);

/* The value of NAME in envp, or NULL. */
const char *childenv_get(char *const *envp, const char *name);

/* Whether envp's LD_PRELOAD (entries separated by ':' or ' ') names a
 * file called libmemsim.so. */
bool childenv_preloads_memsim(char *const *envp);

#endif
