/*
 * guard: the reentrancy guard of the calling thread.
 *
 * While it is held (inside memsim, libunwind, or a call of the program's
 * that memsim's own work made), the hooks only call the real function
 * and record nothing: memsim's own allocations are not the program's.
 * It is an initial-exec TLS variable, so touching it never allocates.
 * Take it for a scope with GUARD_SCOPE; it is given back when the scope
 * ends, however it ends, and nests.
 */
#ifndef MEMSIM_PRELOAD_GUARD_H
#define MEMSIM_PRELOAD_GUARD_H

#include <stdbool.h>

extern __thread int memsim_guard __attribute__((tls_model("initial-exec")));

static inline bool guard_held(void) { return memsim_guard != 0; }
static inline int guard_enter(void) { return memsim_guard++; }
static inline void guard_leave(const int *before) { memsim_guard = *before; }

#define GUARD_SCOPE int guard_before_ __attribute__((cleanup(guard_leave))) = guard_enter()

/* For a thread that never gives it back (one ending the process). */
static inline void guard_forever(void) { memsim_guard = 1; }

#endif
