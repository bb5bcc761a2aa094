/*
 * hooks_process: the hooks of a process's life and of sandboxes (fork,
 * daemon, the exit family, the exec family, posix_spawn, clone, prctl and
 * syscall's seccomp and exit).  As every hook (preload/hooks.c): the real
 * call when tracing is off, else the event around it.  What each does to
 * the trace is preload/process_fork.h's, process_exec.h's, process_end.h's
 * and sandbox.h's.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "ipc/sysmem.h"
#include "preload/guard.h"
#include "preload/hook.h"
#include "preload/process.h"
#include "preload/process_end.h"
#include "preload/process_exec.h"
#include "preload/process_fork.h"
#include "preload/real.h"
#include "preload/sandbox.h"
#include "preload/unwind.h"

/* ---- processes ------------------------------------------------------------------------ */

EXPORT pid_t fork(void)
{
    pid_t pid = REAL(fork)();
    if (pid != 0) {
        int saved = errno;
        process_forked(pid); /* the atfork handlers did the rest */
        errno = saved;
    }
    return pid;
}

/* glibc's daemon() forks and leaves with an _exit of its own, which no
 * hook sees: the same steps here, through the hooks. */
EXPORT int daemon(int nochdir, int noclose)
{
    switch (fork()) {
    case -1:
        return -1;
    case 0:
        break;
    default:
        _exit(0);
    }
    if (setsid() == -1)
        return -1;
    if (!nochdir && chdir("/")) {
        /* as glibc: a failed chdir is not an error of daemon's */
    }
    if (!noclose) {
        int fd = open("/dev/null", O_RDWR);
        struct stat st;
        if (fd < 0)
            return -1;
        if (fstat(fd, &st) || !S_ISCHR(st.st_mode)) {
            close(fd);
            errno = ENODEV;
            return -1;
        }
        dup2(fd, 0);
        dup2(fd, 1);
        dup2(fd, 2);
        if (fd > 2)
            close(fd);
    }
    return 0;
}

extern char **environ;

typedef struct exec_args_s {
    int dirfd, flags;
    const char *path;
    char *const *argv;
} exec_args_t;

static int call_execve(void *ctx, char *const envp[])
{
    exec_args_t *a = ctx;
    return REAL(execve)(a->path, a->argv, envp);
}

static int call_execvpe(void *ctx, char *const envp[])
{
    exec_args_t *a = ctx;
    return REAL(execvpe)(a->path, a->argv, envp);
}

static int call_fexecve(void *ctx, char *const envp[])
{
    exec_args_t *a = ctx;
    return REAL(fexecve)(a->dirfd, a->argv, envp);
}

static int call_execveat(void *ctx, char *const envp[])
{
    exec_args_t *a = ctx;
    if (!REAL(execveat)) {
        errno = ENOSYS;
        return -1;
    }
    return real.execveat(a->dirfd, a->path, a->argv, envp, a->flags);
}

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    exec_args_t a = {.path = path, .argv = argv};
    return process_exec(path, argv, envp, call_execve, &a);
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    exec_args_t a = {.path = file, .argv = argv};
    return process_exec(file, argv, envp, call_execvpe, &a);
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    exec_args_t a = {.dirfd = fd, .argv = argv};
    return process_exec("", argv, envp, call_fexecve, &a);
}

EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
                    int flags)
{
    exec_args_t a = {.dirfd = dirfd, .path = path, .argv = argv, .flags = flags};
    return process_exec(path, argv, envp, call_execveat, &a);
}

EXPORT int execv(const char *path, char *const argv[]) { return execve(path, argv, environ); }

EXPORT int execvp(const char *file, char *const argv[]) { return execvpe(file, argv, environ); }

/* execl, execlp, execle: the arguments into an array, then the execv*
 * hooks.  The array comes from mmap, not the stack: a thread's stack may
 * be small, and arguments many. */
static char **collect(const char *first, va_list ap, size_t *bytes, char ***envp_out)
{
    va_list count;
    va_copy(count, ap);
    size_t n = 1;
    while (va_arg(count, char *))
        n++;
    va_end(count);
    *bytes = (n + 1) * sizeof(char *);
    char **argv = sysmem_alloc(*bytes);
    if (!argv) {
        errno = E2BIG;
        return NULL;
    }
    argv[0] = (char *)first;
    for (size_t i = 1; i <= n; i++)
        argv[i] = va_arg(ap, char *); /* the last one read is the list's NULL */
    if (envp_out)
        *envp_out = va_arg(ap, char **); /* execle's, after that NULL */
    return argv;
}

/* The body of execl, execlp and execle: the list from ap into an array,
 * then exec (the execve or execvpe hook) with it and the environment
 * (environ, or for execle the pointer after the list's NULL). */
typedef int (*execv_fn)(const char *path, char *const argv[], char *const envp[]);

static int exec_list(execv_fn exec, const char *path, const char *arg, va_list ap,
                     bool envp_follows)
{
    size_t bytes;
    char **envp = environ;
    char **argv = collect(arg, ap, &bytes, envp_follows ? &envp : NULL);
    if (!argv)
        return -1;
    int rc = exec(path, argv, envp);
    int e = errno;
    sysmem_free(argv, bytes);
    errno = e;
    return rc;
}

EXPORT int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    int rc = exec_list(execve, path, arg, ap, false);
    va_end(ap);
    return rc;
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    int rc = exec_list(execvpe, file, arg, ap, false);
    va_end(ap);
    return rc;
}

EXPORT int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    int rc = exec_list(execve, path, arg, ap, true);
    va_end(ap);
    return rc;
}

typedef struct spawn_args_s {
    const char *path;
    const posix_spawn_file_actions_t *fa;
    const posix_spawnattr_t *attr;
    char *const *argv;
} spawn_args_t;

static int call_spawn(void *ctx, pid_t *child, char *const envp[])
{
    spawn_args_t *a = ctx;
    return REAL(posix_spawn)(child, a->path, a->fa, a->attr, a->argv, envp);
}

static int call_spawnp(void *ctx, pid_t *child, char *const envp[])
{
    spawn_args_t *a = ctx;
    return REAL(posix_spawnp)(child, a->path, a->fa, a->attr, a->argv, envp);
}

EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                       const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    spawn_args_t a = {path, fa, attr, argv};
    return process_spawn(path, argv, envp, pid, call_spawn, &a);
}

EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                        const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    spawn_args_t a = {file, fa, attr, argv};
    return process_spawn(file, argv, envp, pid, call_spawnp, &a);
}

EXPORT void _exit(int status)
{
    process_end_by(SYS_exit_group, END__EXIT, status & 0xff);
    REAL(_exit)(status);
    __builtin_unreachable();
}

EXPORT void _Exit(int status)
{
    process_end_by(SYS_exit_group, END__EXIT, status & 0xff);
    REAL(_Exit)(status);
    __builtin_unreachable();
}

EXPORT void quick_exit(int status)
{
    process_quick_exit(status);
    REAL(quick_exit)(status);
    __builtin_unreachable();
}

/* clone() itself changes nothing: a copy it makes without CLONE_VM finds
 * its page wiped and starts its own trace on its first hook
 * (preload/process.h); a CLONE_VM child shares everything with its
 * parent, memsim's state included, as it does natively.  Such a child
 * is a thread glibc does not count: reallocs take their place before
 * the call from then on (proc_one_thread). */
EXPORT int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    pid_t *ptid = va_arg(ap, pid_t *);
    void *tls = va_arg(ap, void *);
    pid_t *ctid = va_arg(ap, pid_t *);
    va_end(ap);
    if ((flags & CLONE_VM) && !(flags & CLONE_VFORK)) {
        GUARD_SCOPE;
        unwind_need(); /* while the process has one thread */
        atomic_store(&memsim_shared_clone, true);
    }
    return REAL(clone)(fn, stack, flags, arg, ptid, tls, ctid);
}

/* ---- sandboxes -------------------------------------------------------------------------------- */

/* The real call of a hook below: six words, as the variadic call gave
 * them (glibc's prctl and syscall read as many). */
typedef struct words_s {
    long nr;
    unsigned long a[6];
} words_t;

static long call_prctl(void *ctx)
{
    words_t *w = ctx;
    return REAL(prctl)((int)w->nr, w->a[0], w->a[1], w->a[2], w->a[3]);
}

static long call_syscall(void *ctx)
{
    words_t *w = ctx;
    return REAL(syscall)(w->nr, w->a[0], w->a[1], w->a[2], w->a[3], w->a[4], w->a[5]);
}

/* PR_SET_SECCOMP's mode as the seccomp call's operation (other values:
 * the kernel refuses them, and memsim passes them on). */
static unsigned seccomp_op(unsigned long mode)
{
    return mode == SECCOMP_MODE_STRICT   ? SECCOMP_SET_MODE_STRICT
           : mode == SECCOMP_MODE_FILTER ? SECCOMP_SET_MODE_FILTER
                                         : ~0u;
}

EXPORT int prctl(int option, ...)
{
    va_list ap;
    va_start(ap, option);
    words_t w = {.nr = option};
    for (int i = 0; i < 4; i++)
        w.a[i] = va_arg(ap, unsigned long);
    va_end(ap);
    if (option == PR_SET_TSC && REAL(prctl))
        return (int)sandbox_set_tsc(w.a[0], call_prctl, &w);
    if (option != PR_SET_SECCOMP || !REAL(prctl))
        return (int)call_prctl(&w);
    return (int)sandbox_enter(seccomp_op(w.a[0]), 0, (const void *)w.a[1], call_prctl, &w);
}

/* The seccomp and prctl system calls as libseccomp makes them; exit and
 * exit_group, the only way out of a strict sandbox, end the trace as
 * _exit does when the caller is the process's only thread.  With other
 * threads running, a raw exit_group stops them wherever they are, and
 * what they posted until then is the trace's: the recorder sees the
 * process vanish and takes it all (an end posted first would leave
 * their last events after it, outside the trace). */
EXPORT long syscall(long nr, ...)
{
    va_list ap;
    va_start(ap, nr);
    words_t w = {.nr = nr};
    for (int i = 0; i < 6; i++)
        w.a[i] = va_arg(ap, unsigned long);
    va_end(ap);
    if (nr == SYS_seccomp)
        return sandbox_enter((unsigned)w.a[0], w.a[1], (const void *)w.a[2], call_syscall, &w);
    if (nr == SYS_prctl && w.a[0] == PR_SET_TSC)
        return sandbox_set_tsc(w.a[1], call_syscall, &w);
    if (nr == SYS_prctl && w.a[0] == PR_SET_SECCOMP) {
        words_t p = {.nr = nr, .a = {w.a[0], w.a[1], w.a[2], w.a[3], w.a[4], w.a[5]}};
        return sandbox_enter(seccomp_op(w.a[1]), 0, (const void *)w.a[2], call_syscall, &p);
    }
    if ((nr == SYS_exit_group || nr == SYS_exit) && proc_one_thread())
        process_end_by(nr, END__EXIT, (int)(w.a[0] & 0xff));
    return call_syscall(&w);
}

