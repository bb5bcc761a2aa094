/*
 * catalog: the real allocators memsim replays traces through and runs
 * programs with (glibc's, and the Debian packages of jemalloc, mimalloc
 * and tcmalloc), where their libraries are, and how each takes its
 * settings.  memsim-analyze --allocators parses its list here.
 *
 * A spec is NAME or NAME:KEY=VALUE[:KEY=VALUE...]; a list separates
 * specs with commas: 'glibc,glibc:M_ARENA_MAX=1,jemalloc:dirty_decay_ms=0'.
 * Each spec is a row of its own.  Settings go where the allocator reads
 * them (catalog_env):
 *
 *   glibc     M_ARENA_MAX, M_MMAP_THRESHOLD, ... (mallopt's names) or
 *             glibc.malloc.* tunables: GLIBC_TUNABLES
 *   jemalloc  its options (dirty_decay_ms, narenas, ...): MALLOC_CONF
 *   mimalloc  its options (reset_delay, eager_commit, ...: 2.0's names):
 *             MIMALLOC_<NAME>, upper case
 *   tcmalloc  its environment (release_rate, ...): TCMALLOC_<NAME>,
 *             upper case
 *
 * Includes only libc's headers (the analyzer and the front command link
 * it).
 */
#ifndef MEMSIM_ALLOCATORS_CATALOG_H
#define MEMSIM_ALLOCATORS_CATALOG_H

#include <stdbool.h>
#include <stddef.h>

#define CATALOG_MAX_SPECS 16
#define CATALOG_MAX_SETTINGS 8
#define CATALOG_MAX_ENV 8   /* environment entries a spec adds, at most */

typedef struct catalog_allocator_s {
    const char *name;          /* glibc, jemalloc, mimalloc, tcmalloc */
    const char *package;       /* the Debian package of its library (NULL: glibc, always there) */
    const char *const *sonames; /* its library's names, most wanted first (NULL for glibc) */
} catalog_allocator_t;

typedef struct catalog_spec_s {
    char label[160];           /* the spec as written: a report's row name */
    const catalog_allocator_t *a;
    size_t nsettings;
    char keys[CATALOG_MAX_SETTINGS][48];
    char values[CATALOG_MAX_SETTINGS][48];
} catalog_spec_t;

size_t catalog_count(void);
const catalog_allocator_t *catalog_at(size_t i);
const catalog_allocator_t *catalog_find(const char *name);
/* "glibc, jemalloc, mimalloc, tcmalloc" into buf. */
const char *catalog_names(char *buf, size_t len);

/* Parse one spec (NAME[:KEY=VALUE...]) into *out, and check its settings
 * (catalog_check_spec).  0, or -1 with one line (no newline) in err
 * naming the problem. */
int catalog_parse_spec(const char *spec, catalog_spec_t *out, char *err, size_t errlen);
/* Whether the allocator of spec takes each of its settings, as far as
 * can be told before it runs: an allocator ignores, silently, a setting
 * it does not know (glibc's tunables, mimalloc's and tcmalloc's
 * environment; jemalloc says so on stderr as the program starts), and
 * the row would be the allocator's without settings under another name.
 * glibc's names and values are checked as they are parsed; of the
 * others, the name under which the allocator reads a setting (MALLOC_CONF's
 * key, mimalloc's option, TCMALLOC_NAME) must be a string of its
 * installed library, as each one it reads is.  A library not installed
 * or not readable: 0 (the row then says it is missing).  0, or -1 with
 * one line in err. */
int catalog_check_spec(const catalog_spec_t *spec, char *err, size_t errlen);
/* Parse a comma-separated list into out[0..max); *n specs.  0 or -1 (err). */
int catalog_parse_list(const char *list, catalog_spec_t *out, size_t max, size_t *n, char *err,
                       size_t errlen);

/* The library to preload for allocator a, found in the directories of
 * MEMSIM_ALLOCATOR_DIRS (colon-separated) when set, else the system's
 * library directories: true with its path in out.  glibc: true with ""
 * (nothing to preload). */
bool catalog_library(const catalog_allocator_t *a, char *out, size_t len);
/* The line that installs a's package: "apt-get install libjemalloc2". */
const char *catalog_install_line(const catalog_allocator_t *a, char *buf, size_t len);

/* The environment entries ("NAME=VALUE", in buf, pointers into it in
 * env[]) that carry spec's settings; their number.  buf needs 1 KiB. */
size_t catalog_env(const catalog_spec_t *spec, char *buf, size_t len, const char *env[CATALOG_MAX_ENV]);
/* Whether an environment entry ("NAME=VALUE") is one through which an
 * allocator of the catalog takes settings: a replay or a run starts
 * without those it inherits, so that a row is exactly its spec. */
bool catalog_env_is_setting(const char *entry);

/* The allocator a process ran with, from the path of a library it
 * loaded: the catalog's allocator whose library it is, or NULL. */
const catalog_allocator_t *catalog_from_library(const char *path);

#endif
