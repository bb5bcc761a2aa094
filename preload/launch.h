/*
 * launch: start a recorder for a new arena, without leaving a thread, a
 * descriptor or a child in the traced process.
 *
 * The work that needs descriptors runs in a short-lived helper that
 * shares the process's memory but has a descriptor table of its own
 * (clone with CLONE_VM | CLONE_VFORK and no CLONE_FILES; the calling
 * thread waits until it is gone): it closes every descriptor it
 * inherited, reads the kernel's clocksource, loads the unwinder (when
 * asked), creates the arena's memfd and maps it, which maps it in the
 * process too, and starts the recorder as a grandchild
 * (clone without CLONE_VM, no exit signal), which moves into a session
 * of its own and execs memsim-recorder with the memfd as its only
 * descriptor.  The helper's exit is reaped at once; the recorder is
 * reparented to init (or to the nearest subreaper, such as memsim run)
 * and is never the program's child: no SIGCHLD, no wait() that finds it,
 * no pipe held open.
 *
 * A program exec'd or spawned below a traced one joins its tree's
 * recorder instead (recorder/procs.h), without a helper: the calling
 * thread, with signals blocked, reads the clocksource, loads the
 * unwinder, opens the recorder's arena through /proc/<pid>/fd/3, maps it
 * and closes it; nothing is started.  (It runs before the program has
 * control, so no thread of the program's sees those descriptors.)
 */
#ifndef MEMSIM_PRELOAD_LAUNCH_H
#define MEMSIM_PRELOAD_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct launch_s {
    /* in */
    bool load_unwinder;      /* unwind_init while joining or in the helper (first start only) */
    unsigned stack_depth;
    int unwind_mode;         /* config_unwind_t */
    int join_pid;            /* a recorder whose arena to join (MEMSIM_ARENA), or 0 */
    uint64_t join_id;        /* ...and that arena's id */
    /* out */
    void *arena;             /* the mapped arena (region 0 reserved), or NULL */
    bool joined;             /* it is join_pid's: no recorder was started */
    bool tsc;                /* the kernel keeps time with the TSC */
    int unwind_rc;           /* unwind_init's result */
    const char *unwind_why;
} launch_t;

/* Map join_pid's arena (its recorder's descriptor 3, through /proc:
 * the same user's, the id matching), or else make an arena and start its
 * recorder.  0, or -1 with a one-line reason in err. */
int launch_recorder(launch_t *l, char *err, size_t errlen);

/* The recorder binary memsim runs (for messages). */
const char *launch_recorder_path(void);

#endif
