/*
 * process_start: start-up, libmemsim.so's constructor: the settings
 * read, the recorder started or joined (preload/process_begin.h), then
 * the handlers that follow the process's life installed — the end's,
 * fork's and signals'.  A process that does not trace (setuid, a bad
 * setting, MEMSIM_TRACE_CHILDREN=0 below the first process, a recorder
 * that did not start) stays passive, having said why in one line.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "ipc/config.h"
#include "preload/guard.h"
#include "preload/modules.h"
#include "preload/process.h"
#include "preload/process_begin.h"
#include "preload/process_end.h"
#include "preload/process_exec.h"
#include "preload/process_fork.h"
#include "preload/real.h"
#include "preload/sandbox.h"
#include "preload/sandboxed.h"
#include "preload/say.h"
#include "preload/signals.h"
#include "preload/thread.h"
#include "preload/unwind.h"

#define ENV_AHEAD "MEMSIM_AHEAD" /* the allocator ahead of memsim, said in this tree */

static char env_output[PATH_MAX + 32]; /* MEMSIM_OUTPUT=<absolute>, for children */
static char env_root[48];              /* MEMSIM_ROOT_PID=<pid> with MEMSIM_TRACE_CHILDREN=0 */
static char note[512];                 /* a remark for the meta record and stderr, or "" */
static char env_ahead[PATH_MAX + 16];  /* MEMSIM_AHEAD=<library>: the note said in the tree */
static bool note_said;                 /* an ancestor said the same note: not again */

/* MEMSIM_OUTPUT relative to the directory the process started in, made
 * absolute once: a forked child that changed directory still writes
 * beside its parent, and exec'd programs get the absolute form. */
static void absolute_output(config_t *c)
{
    char cwd[PATH_MAX];
    if (c->output[0] == '/' || !getcwd(cwd, sizeof cwd))
        return;
    if (strcmp(c->output, ".") == 0 || strcmp(c->output, "./") == 0)
        c->output[0] = '\0';
    size_t a = strlen(cwd), b = strlen(c->output);
    if (b == 0) {
        memcpy(c->output, cwd, a + 1);
        return;
    }
    if (a + 1 + b >= sizeof c->output)
        return;
    memmove(c->output + a + 1, c->output, b + 1);
    memcpy(c->output, cwd, a);
    c->output[a] = '/';
}

/* MEMSIM_TRACE_CHILDREN=0: whether a process below the first one. */
static bool below_root(void)
{
    const char *root = getenv("MEMSIM_ROOT_PID");
    char pid[24];
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    if (root && *root)
        return strcmp(root, pid) != 0;
    snprintf(env_root, sizeof env_root, "MEMSIM_ROOT_PID=%s", pid);
    return false;
}

extern bool memsim_malloc_probe, memsim_malloc_reached;

/* Whether the program's malloc is memsim's: another allocator preloaded
 * ahead of it (or the executable's own) gets the calls, and memsim sees
 * none of them.  Asked by calling it: the address alone misleads (an
 * executable that takes malloc's address has a stub of its own that
 * leads to memsim's). */
static void check_interposed(void)
{
    void *(*m)(size_t) = (void *(*)(size_t))dlsym(RTLD_DEFAULT, "malloc");
    void (*f)(void *) = (void (*)(void *))dlsym(RTLD_DEFAULT, "free");
    if (!m || !f)
        return;
    memsim_malloc_probe = true;
    memsim_malloc_reached = false;
    f(m(1));
    memsim_malloc_probe = false;
    if (memsim_malloc_reached)
        return;
    Dl_info info;
    const char *who =
        dladdr(m, &info) && info.dli_fname && *info.dli_fname ? info.dli_fname : "another library";
    snprintf(note, sizeof note,
             "memsim: malloc is %s's, found ahead of libmemsim.so: the heap events it serves "
             "are not recorded (put libmemsim.so first in LD_PRELOAD)",
             who);
    /* Said once for a tree: the traced children of this process (and the
     * program an exec replaces it with) get MEMSIM_AHEAD naming the
     * library, and one that finds the same library ahead keeps quiet
     * (its meta record still has the note). */
    const char *said = getenv(ENV_AHEAD);
    note_said = said && strcmp(said, who) == 0;
    snprintf(env_ahead, sizeof env_ahead, "%s=%s", ENV_AHEAD, who);
}

/* unwind_may_load: a dlopen here cannot deadlock (no other thread can
 * hold a lock the loader waits for) nor harm (no sandbox judging the
 * loader's calls, not a vfork child sharing its parent's loader). */
static bool may_load_unwinder(void)
{
    return proc_one_thread() && sandbox_getpid() == memsim_proc->pid && !sandbox_without();
}

__attribute__((constructor(101))) static void memsim_start(int argc, char **argv, char **envp)
{
    (void)argc;
    (void)argv;
    (void)envp;
    GUARD_SCOPE;
    unwind_may_load = may_load_unwinder;
    say_init();
    real_resolve();
    sandbox_tsc_at_start(NULL); /* before the first reading of a clock */
    check_interposed();
    if (getauxval(AT_SECURE)) /* setuid and friends: stay passive */
        return;
    static char err[PATH_MAX + 256];
    if (config_load(&process_cfg, NULL, err, sizeof err)) {
        say(err);
        return;
    }
    absolute_output(&process_cfg);
    if (!process_cfg.trace_children && below_root())
        return; /* MEMSIM_TRACE_CHILDREN=0: a program started below the first one */
    ssize_t n = readlink("/proc/self/exe", process_exe, sizeof process_exe - 1);
    process_exe[n > 0 ? n : 0] = '\0';
    modules_init(process_exe);
    snprintf(env_output, sizeof env_output, "%s=%s", CONFIG_ENV_OUTPUT, process_cfg.output);
    process_exec_vars(env_output, env_root, env_ahead);
    if (thread_init() || !process_page()) {
        process_stop(NULL);
        say("memsim: out of memory at start; tracing is off");
        return;
    }
    if (process_begin(true, getppid(), note, err, sizeof err)) {
        process_stop(NULL);
        say(err);
        return;
    }
    memsim_track_maps = process_cfg.mmap;
    process_end_install();
    process_fork_install();
    signals_install();
    if (note[0] && !note_said)
        say(note);
}
