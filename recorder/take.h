/*
 * take: one message of a process's ring into its trace, a handler per
 * message kind.  The end goes to the trace's on_end (recorder/recorder.h).
 */
#ifndef MEMSIM_RECORDER_TAKE_H
#define MEMSIM_RECORDER_TAKE_H

#include <stddef.h>
#include <stdint.h>

#include "ipc/ring.h"
#include "recorder/recorder.h"

/* m into the trace and state of rc (a rec_t *, the trace in use:
 * rec_use), as reorder_init wants its taker.  A kind with no handler,
 * or unknown to this recorder, counts as a lost record. */
void take(void *rc, const ring_slot_t *m);

/* A loaded object (path: n bytes) into rc's list, which a forked
 * child's trace starts from; out of memory, it is left out. */
void take_module_add(rec_t *rc, uint64_t base, uint64_t size, const char *path, size_t n);

#endif
