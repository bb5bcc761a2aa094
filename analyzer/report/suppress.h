/*
 * suppress: leak suppressions, as LeakSanitizer and heaptrack have them.
 *
 * A leaked block whose allocation stack matches a suppression is left
 * out of the leak figures (the summary's leaked bytes and blocks, each
 * site's leaked key, the groups' leaked totals) and counted apart, so
 * the reports can say how much was suppressed and by what.
 *
 * Two kinds:
 *   built-in     the C runtime's and the loader's one-time allocations:
 *                what ld.so allocates for itself, stdio's buffers, the
 *                locale, the name service, time zones, iconv's modules,
 *                atexit's list, the exception pool of libstdc++.  A
 *                built-in pattern matches only the allocating frame (the
 *                first past the allocator and its wrappers,
 *                analyzer/report/groups.h), so that a program's own allocations
 *                made under the loader (global constructors run by
 *                _dl_init) are never suppressed.
 *                --no-default-suppressions turns them off.
 *   from a file  --suppressions FILE: one pattern a line, `leak:PATTERN`
 *                or `PATTERN`; blank lines and `#` comments are skipped.
 *                A pattern matches any frame of the stack (as
 *                LeakSanitizer's): its function, its library's file name
 *                or path, or its source file's name or path.  `*` is any
 *                text; a pattern matches anywhere in a name unless it
 *                starts with `^` (the start) or ends with `$` (the end).
 */
#ifndef MEMSIM_ANALYZER_SUPPRESS_H
#define MEMSIM_ANALYZER_SUPPRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzer/read/frames.h"
#include "analyzer/consume/sites.h"

typedef struct suppress_rule_s {
    char *pattern;          /* as written (without "leak:") */
    char *glob;             /* the pattern, '*' added where unanchored */
    bool builtin;           /* matches the allocating frame only */
    uint64_t bytes, blocks; /* what it suppressed, summed over the processes */
} suppress_rule_t;

typedef struct suppress_s {
    suppress_rule_t *v;
    size_t n;
} suppress_t;

/* The built-in rules when builtin, then each file's.  0, or -1 after one
 * line on stderr (a file that cannot be read; out of memory). */
int suppress_init(suppress_t *s, bool builtin, const char *const *files, size_t nfiles);
void suppress_fini(suppress_t *s);

/* Whether a name matches a rule's pattern. */
bool suppress_match(const suppress_rule_t *r, const char *name);

/* Mark every site of sites whose leaks a rule matches (site_t's
 * suppressed), adding its leaked bytes and blocks to *bytes and *blocks
 * and to the first matching rule's counts. */
void suppress_apply(suppress_t *s, sites_t *sites, symbols_t *store, frames_t *fr,
                    uint64_t *bytes, uint64_t *blocks);

#endif
