/*
 * procs: one memsim-recorder for every traced process of an arena — the
 * process that started it, the children it forks, and the programs they
 * exec, which join it (preload/launch.h) — each with a trace of its own
 * (recorder/recorder.h), all taken in one loop by one single-threaded
 * process.
 *
 * Why one: a recorder is a process, and the user's process limit
 * (RLIMIT_NPROC) counts it; one per traced process doubled what a
 * program that forks needs of it.  And a process that execs found its
 * recorder already there: the new image maps the arena and takes a
 * region instead of starting a recorder of its own (which cost an exec
 * of memsim-recorder and its loader at every exec).
 *
 * Each region of the arena is one traced process's, and one trace's:
 *
 *   waiting  a fork's child's trace, made at the fork message in the
 *            parent's ring (its state a copy of the parent's then: the
 *            ring's order), until the child publishes its pid; or a
 *            region a new image published (REGION_JOINED), until no
 *            older image of the same pid is left to open first (the
 *            traces of one pid are numbered in the order of its images)
 *   running  opened: its messages are taken, samples written
 *   ended    the end record is written; the region stays the process's
 *            until it is gone (it may post still, as it exits) or it
 *            exec'd, then it is released
 *
 * The loop takes every running trace's messages in turn, as the one
 * trace's loop did: it naps while the producers gather a batch, pauses
 * at a hole nothing may pass yet (recorder/intake.h), and sleeps when
 * nothing comes, on every ring's futex and the arena's join word at once
 * (futex_waitv).
 * It ends when no region is left: it marks the arena closed first, and a
 * new image that reserved a region meanwhile sees the mark and starts a
 * recorder of its own (arena.h, arena_t.open).
 */
#ifndef MEMSIM_RECORDER_PROCS_H
#define MEMSIM_RECORDER_PROCS_H

/* Serve the arena mapped at arena (memfd: its descriptor) from region
 * first, the process that started this recorder, until no traced
 * process of it is left.  0, or -1 when the first never attached (its
 * region says why). */
int procs_run(void *arena, int memfd, unsigned first);

#endif
