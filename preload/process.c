/*
 * process: the traced process's state and the ways tracing stops.  See
 * process.h.
 */
#include "preload/process.h"

#include <limits.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ipc/arena.h"
#include "preload/release.h"
#include "ipc/ring.h"
#include "preload/sandboxed.h"
#include "preload/say.h"
#include "ipc/seccomp.h"
#include "ipc/sysmem.h"

static proc_t off; /* all zeros: nothing is traced */
proc_t *memsim_proc = &off;
pid_t memsim_traced_pid;
bool memsim_track_maps;
_Atomic bool memsim_shared_clone;

static char gone_line[PATH_MAX + 100]; /* process_recorder_gone's line for the end, or "" */
static _Atomic pid_t gone_pid;         /* the process whose recorder went, 0: none */

proc_t *process_page(void)
{
    if (memsim_proc != &off)
        return memsim_proc;
    proc_t *p = sysmem_alloc(4096);
    if (!p)
        return NULL;
    if (madvise(p, 4096, MADV_WIPEONFORK)) {
        /* Linux < 4.14: copies made by clone() write into the parent's
         * ring as before; everything else works. */
    }
    memsim_proc = p;
    return p;
}

pid_t process_self_pid(void)
{
    if (!seccomp_active())
        return getpid();
    long r = seccomp_call(SYS_getpid, 0, 0, 0, 0, 0, 0);
    return r > 0 ? (pid_t)r : seccomp_gettid();
}

void process_stop(void *arena)
{
    memsim_proc = &off;
    memsim_traced_pid = 0;
    release_all(arena);
}

void process_recorder_gone(void)
{
    proc_t *p = memsim_proc;
    pid_t none = 0;
    if (!proc_tracing() || sandbox_getpid() != p->pid ||
        !atomic_compare_exchange_strong(&gone_pid, &none, p->pid))
        return;
    snprintf(gone_line, sizeof gone_line,
             "memsim: %s may be incomplete: its recorder did not finish with it",
             p->region->trace_path);
    atomic_store(&p->active, false);
}

void process_release_stopped(void)
{
    proc_t *p = memsim_proc;
    if (p != &off && p->pid && atomic_load(&gone_pid) == p->pid && proc_one_thread() &&
        !ring_posting() && sandbox_getpid() == p->pid)
        process_stop(p->arena);
}

bool process_gone_at_end(void)
{
    if (proc_tracing() || !gone_line[0] || atomic_load(&gone_pid) != sandbox_getpid())
        return false;
    if (atomic_exchange(&gone_pid, -1) > 0) /* once */
        say(gone_line);
    return true;
}
