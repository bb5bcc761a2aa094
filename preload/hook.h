/*
 * hook: what the files of hooks (preload/hooks.c, preload/hooks_process.c)
 * share: every function of preload/hooks.def declared with its exact type
 * and exported, and whether tracing is on for a call.
 */
#ifndef MEMSIM_PRELOAD_HOOK_H
#define MEMSIM_PRELOAD_HOOK_H

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <threads.h>
#include <unistd.h>

#include "preload/guard.h"
#include "preload/process.h"
#include "preload/process_fork.h"

#define EXPORT __attribute__((visibility("default")))

/* Every function of hooks.def is declared with exactly its type
 * (sigset is deprecated in glibc's headers; memsim still stands in front
 * of it for programs that call it). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#define HOOK(ret, name, params, args) EXPORT ret name params;
#include "preload/hooks.def"
#undef HOOK
#define HOOK(ret, name, params, args) \
    __attribute__((unused)) static ret(*const hook_check_##name) params = name;
#include "preload/hooks.def"
#undef HOOK
#pragma GCC diagnostic pop

/* Tracing is on for this call (and the guard free).  An untraced copy
 * of a traced process starts its own trace on its first call. */
static inline bool traced(void)
{
    if (__builtin_expect(proc_tracing(), 1))
        return true;
    if (proc_is_clone_copy() && !guard_held()) {
        process_clone_copy();
        return proc_tracing();
    }
    return false;
}

#endif
