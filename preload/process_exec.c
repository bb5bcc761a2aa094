/*
 * process_exec: exec, spawn and children's environment.  See
 * process_exec.h.
 */
#include "preload/process_exec.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ipc/arena.h"
#include "ipc/childenv.h"
#include "ipc/clock.h"
#include "preload/guard.h"
#include "ipc/msg.h"
#include "preload/process.h"
#include "preload/process_begin.h"
#include "ipc/ring.h"
#include "preload/sandboxed.h"
#include "ipc/sysmem.h"
#include "preload/thread.h"

static char *env_output; /* MEMSIM_OUTPUT=<absolute>, for children; NULL: none */
static char *env_root;   /* MEMSIM_ROOT_PID=<pid> with MEMSIM_TRACE_CHILDREN=0, or NULL */
static char *env_ahead;  /* MEMSIM_AHEAD=<library>: the note said in the tree, or NULL */

void process_exec_vars(char *output, char *root, char *ahead)
{
    env_output = output && output[0] ? output : NULL;
    env_root = root && root[0] ? root : NULL;
    env_ahead = ahead && ahead[0] ? ahead : NULL;
}

/* "MEMSIM_ARENA=PID:ID" of this process's arena into buf, for the
 * environment of a program it execs or spawns (which then joins the same
 * recorder); "" when it has none. */
static void env_arena(char *buf, size_t len)
{
    buf[0] = '\0';
    if (!proc_tracing())
        return;
    arena_t *a = memsim_proc->arena;
    int32_t pid = atomic_load(&a->rec_pid);
    if (pid > 0 && atomic_load(&a->open))
        snprintf(buf, len, "%s=%ld:%llx", PROCESS_ENV_ARENA, (long)pid, (unsigned long long)a->id);
}

/* envp as a child should get it: with memsim's variables when it will be
 * traced too (it keeps libmemsim.so in LD_PRELOAD), else unchanged.  The
 * array lives in *mem (*len bytes, from sysmem), never on the stack: an
 * environment may be large and the thread's stack small. */
static char *const *child_env(char *const *envp, void **mem, size_t *len, char *arena)
{
    *mem = NULL;
    *len = 0;
    if (!env_output || !childenv_preloads_memsim(envp))
        return envp;
    char *set[] = {env_output, env_root, env_ahead, arena[0] ? arena : NULL};
    *len = (childenv_count(envp) + 5) * sizeof(char *);
    *mem = sysmem_alloc(*len);
    if (!*mem)
        return envp;
    return childenv_merge(envp, NULL, 0, set, 4, *mem);
}

/* path NUL arg0 NUL arg1 NUL ... into a sysmem block: *len bytes of it
 * used, *cap mapped; NULL without memory. */
static char *launch_bytes(const char *path, char *const argv[], size_t *len, size_t *cap,
                          uint64_t *argc)
{
    size_t n = strlen(path ? path : "") + 1;
    *argc = 0;
    for (size_t i = 0; argv && argv[i]; i++, (*argc)++)
        n += strlen(argv[i]) + 1;
    *cap = n;
    char *buf = sysmem_alloc(n), *w = buf;
    if (!buf)
        return NULL;
    size_t k = strlen(path ? path : "") + 1;
    memcpy(w, path ? path : "", k);
    w += k;
    for (size_t i = 0; argv && argv[i]; i++) {
        k = strlen(argv[i]) + 1;
        memcpy(w, argv[i], k);
        w += k;
    }
    *len = n;
    return buf;
}

static void post_launch(uint8_t kind, pid_t child, const char *path, char *const argv[],
                        bool traced_child, bool sync)
{
    region_t *r = memsim_proc->region;
    size_t len = 0, cap = 0;
    uint64_t argc;
    char *bytes = launch_bytes(path, argv, &len, &cap, &argc);
    ring_slot_t m = {.kind = kind,
                     .tid = thread_tid(),
                     .t = clock_ticks(),
                     .a = child > 0 ? (uint64_t)child : 0,
                     .b = argc,
                     .c = traced_child};
    ring_post(r, &m, bytes, bytes ? len : 0, sync ? RING_SYNC : 0);
    sysmem_free(bytes, cap);
}

int process_exec(const char *path, char *const argv[], char *const envp[], process_exec_fn call,
                 void *ctx)
{
    void *mem;
    size_t len;
    char arena[64];
    env_arena(arena, sizeof arena);
    char *const *env = child_env(envp, &mem, &len, arena);
    bool traced = proc_tracing() && sandbox_getpid() == memsim_proc->pid; /* not a vfork child */
    region_t *r = memsim_proc->region;
    bool locked = false;
    if (traced) {
        GUARD_SCOPE;
        /* Held across the real exec: a successful one releases it as its
         * owner dies (robust mutex), which the recorder sees. */
        int rc = pthread_mutex_lock(&r->exec_lock);
        if (rc == EOWNERDEAD)
            pthread_mutex_consistent(&r->exec_lock);
        locked = rc == 0 || rc == EOWNERDEAD;
        post_launch(MSG_EXEC, 0, path, argv, env != envp || childenv_preloads_memsim(envp), true);
    }
    int rc = call(ctx, env);
    int e = errno;
    if (traced) {
        GUARD_SCOPE;
        ring_slot_t m = {
            .kind = MSG_EXEC_FAILED, .tid = thread_tid(), .t = clock_ticks(), .a = (uint64_t)e};
        ring_post(r, &m, NULL, 0, RING_SYNC);
        if (locked)
            pthread_mutex_unlock(&r->exec_lock);
    }
    sysmem_free(mem, len);
    errno = e;
    return rc;
}

int process_spawn(const char *path, char *const argv[], char *const envp[], pid_t *pid,
                  process_spawn_fn call, void *ctx)
{
    void *mem;
    size_t len;
    char arena[64];
    env_arena(arena, sizeof arena);
    char *const *env = child_env(envp, &mem, &len, arena);
    pid_t child = 0;
    int rc = call(ctx, &child, env);
    if (rc == 0) {
        if (pid)
            *pid = child;
        if (proc_tracing()) {
            GUARD_SCOPE;
            post_launch(MSG_SPAWN, child, path, argv, env != envp, false);
        }
    }
    sysmem_free(mem, len);
    return rc;
}
