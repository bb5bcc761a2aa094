/*
 * smapsum: the heap's RSS and the anonymous RSS out of /proc/self/smaps,
 * line by line (libmemsim-meter.so reads it; allocators/meter.c).
 *
 * The heap: [heap] and every anonymous private mapping without a name
 * (their "Rss:"); the anonymous RSS: every mapping's "Anonymous:".
 *
 * The kernel writes smaps a page at a time, dropping the mappings' lock
 * between two reads and going on after the last address it showed: a
 * mapping that grew meanwhile past that address (glibc grows a thread's
 * arena by mprotect, which extends its mapping) is shown again, whole.
 * So a mapping that starts below the end of the last one counted is the
 * newer view of it: starting where that one starts (or before), it
 * replaces that one's counts; starting inside it (a part split off after
 * it was shown), it is left out.  No allocation.
 */
#ifndef MEMSIM_ALLOCATORS_SMAPSUM_H
#define MEMSIM_ALLOCATORS_SMAPSUM_H

#include <stdbool.h>
#include <stdint.h>

typedef struct smapsum_s {
    uint64_t heap;          /* Σ Rss of the heap's mappings, bytes */
    uint64_t anon;          /* Σ Anonymous of every mapping, bytes */
    bool in_heap;           /* the current mapping is the heap's */
    bool skip;              /* the current mapping was counted already */
    uintptr_t last_start;   /* the last mapping counted: its range */
    uintptr_t last_end;
    uint64_t last_heap;     /* and its part of heap and anon */
    uint64_t last_anon;
} smapsum_t;

void smapsum_init(smapsum_t *s);

/* One line of smaps, without its newline; line is cut up in place. */
void smapsum_line(smapsum_t *s, char *line);

#endif
