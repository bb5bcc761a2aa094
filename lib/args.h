/*
 * args: checked parsing of command-line values, shared by memsim and
 * memsim-analyze (both link lib/).
 * Each parser prints one line naming the command, the option and the
 * value on failure ("memsim simulate: --ops: \"x\" is not a count") and
 * returns -1; the caller exits with status 2.
 */
#ifndef MEMSIM_LIB_ARGS_H
#define MEMSIM_LIB_ARGS_H

#include <stdint.h>

/* A whole number >= min. */
int args_count(const char *cmd, const char *opt, const char *s, uint64_t min, uint64_t *out);
/* A byte size with optional K/M/G/T suffix, >= min. */
int args_size(const char *cmd, const char *opt, const char *s, uint64_t min, uint64_t *out);
/* A finite number in [lo, hi]. */
int args_real(const char *cmd, const char *opt, const char *s, double lo, double hi,
              double *out);

#endif
