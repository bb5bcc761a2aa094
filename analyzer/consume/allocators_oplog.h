/*
 * allocators_oplog: the operation file memsim-replay reads
 * (allocators/oplog.h), written as a trace is read, for memsim-analyze
 * --allocators (allocators.c): each heap event an operation on a slot,
 * in windows grouped by thread (see allocators_oplog.c).
 */
#ifndef MEMSIM_ANALYZER_CONSUME_ALLOCATORS_OPLOG_H
#define MEMSIM_ANALYZER_CONSUME_ALLOCATORS_OPLOG_H

#include <stdbool.h>
#include <stdint.h>

#include "allocators/oplog.h"

struct event_s;
typedef struct alloc_writer_s alloc_writer_t;

/* A new, empty operation file (a memfd); NULL when out of memory.
 * all_pages: every page of each block written (--allocators-pages all),
 * the trace's touched counts ignored. */
alloc_writer_t *alloc_oplog_open(bool all_pages);
/* The trace's next event: allocations, frees, reallocs and the touched
 * counts of blocks live at the end go in; the rest is ignored. */
void alloc_oplog_event(alloc_writer_t *w, const struct event_s *e);
/* The last window, the buffer and the header: the file is complete.
 * 0 and *out set, or -1: alloc_oplog_why says why. */
int alloc_oplog_finish(alloc_writer_t *w, uint64_t peak_live, oplog_header_t *out);
const char *alloc_oplog_why(const alloc_writer_t *w);
int alloc_oplog_fd(const alloc_writer_t *w); /* the memfd, for the replays to map */
unsigned alloc_oplog_kinds(const alloc_writer_t *w); /* a bit per oplog_kind_t written */
/* Close and free (NULL: nothing). */
void alloc_oplog_close(alloc_writer_t *w);

#endif
