/*
 * replay_rounds: a replay set's strategies beyond its width
 * (replay_set_width), replayed after the trace from a spool of the
 * operations as the set resolved them (spool.h), width of them at
 * once, each state made when its round takes it and freed once reduced
 * to its result.  Where the spool cannot be made or written, they are
 * fed as events come instead (catching up on what the spool holds):
 * the same results.  Part of replay (replay_ext.h): it works on the
 * set's state.
 */
#ifndef MEMSIM_ANALYZER_REPLAY_ROUNDS_H
#define MEMSIM_ANALYZER_REPLAY_ROUNDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzer/consume/replay_ext.h"

/* Whether strategy, being added to s, goes to a later round (s has a
 * width, and its live strategies fill it): then noted, to be made again
 * when its round starts, and the spool opened with the first.  false:
 * it is fed as events come (a note in s when the spool cannot be made). */
bool replay_rounds_defer(replay_set_t *s, const char *strategy, uint64_t device_size);
/* Append batch b, submitted, to the spool; when it cannot be written,
 * replay the later strategies from what the spool has and feed them
 * as events come from here on.  The feeding thread, while s has later
 * strategies. */
void replay_rounds_spool(replay_set_t *s, const batch_t *b);
/* Replay the later strategies from the spool, at most s->width at once
 * (the caller's thread and width - 1 of their own); their results into
 * out after the n given, in the order they were added.  The number of
 * results. */
size_t replay_rounds_run(replay_set_t *s, replay_result_t *out, size_t n);

#endif
