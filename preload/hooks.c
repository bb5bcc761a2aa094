/*
 * hooks: the functions libmemsim.so exports, the only symbols it
 * exports besides the memsim_* API (-fvisibility=hidden elsewhere).  The
 * list is preload/hooks.def.
 *
 * Each hook is a few lines.  Inside memsim (the guard is held) or when
 * tracing is off it only calls the real function (preload/real.h);
 * otherwise it takes the guard for its scope, calls the real function
 * and records the event in the order preload/events.h prescribes.  The
 * real allocator is whatever the program would reach without memsim.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "include/memsim.h"
#include "preload/cancel.h"
#include "preload/events.h"
#include "preload/guard.h"
#include "preload/modules.h"
#include "preload/process.h"
#include "preload/process_end.h"
#include "preload/process_exec.h"
#include "preload/process_fork.h"
#include "preload/real.h"
#include "preload/sample.h"
#include "preload/sampleset.h"
#include "preload/sandbox.h"
#include "preload/signals.h"
#include "ipc/sysmem.h"

#define EXPORT __attribute__((visibility("default")))

__thread int memsim_guard __attribute__((tls_model("initial-exec")));

/* Every function of hooks.def is defined here with exactly its type
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

/* ---- the heap ----------------------------------------------------------------------
 *
 * Each allocating hook is two parts.  Its fast path serves an allocation
 * a sampled trace does not record (preload/sample.h: the thread's count
 * of bytes to the next point, taken down) and a free of a block it did
 * not record (preload/sampleset.h: the block's counter reads 0): the real
 * call, the guard held around it as for every call memsim records (an
 * allocator that calls mmap or malloc through the program's symbols is
 * not the program), nothing else.  The rest is the slow path, a function
 * of its own the hook jumps to (the fast path keeps no registers to save):
 * the bootstrap, memsim's own calls, tracing off, every call of a fully
 * traced process (its count stays 0, its set never reads 0) and the
 * sampled ones. */

/* The real call on the fast path, under the guard (nested in one the
 * caller may hold: inside memsim the fast path serves it too). */
#define QUICK(call)                                                                                \
    __extension__({                                                                                \
        memsim_guard++;                                                                            \
        __typeof__(call) q_ = (call);                                                              \
        memsim_guard--;                                                                            \
        q_;                                                                                        \
    })

#define SLOW __attribute__((noinline))

/* A block the real allocator gave memsim's own work. */
static void *quiet(void *p)
{
    if (p && proc_tracing())
        events_quiet(p);
    return p;
}

/* While the table of real functions is filled, dlsym's allocations. */
static inline bool bootstrapping(void) { return __builtin_expect(real_resolving(), 0); }

/* process_start.c's probe: whether a call to the program's malloc reaches
 * this one (the probe runs with the guard held). */
bool memsim_malloc_probe, memsim_malloc_reached;

static SLOW void *malloc_slow(size_t n)
{
    if (!real.malloc && bootstrapping())
        return real_bootstrap_alloc(n, 16);
    bool take = sample_take(n);
    if (guard_held()) {
        if (__builtin_expect(memsim_malloc_probe, 0))
            memsim_malloc_reached = true;
        return quiet(REAL(malloc)(n));
    }
    if (!traced())
        return REAL(malloc)(n);
    if (!take)
        return QUICK(real.malloc(n));
    GUARD_SCOPE;
    void *p = real.malloc(n);
    if (p)
        events_alloc(FN_MALLOC, p, n, 16);
    return p;
}

EXPORT void *malloc(size_t n)
{
    if (__builtin_expect(sample_skip(n), 1))
        return QUICK(real.malloc(n));
    return malloc_slow(n);
}

static SLOW void free_slow(void *p, const void *caller)
{
    if (real_bootstrap_owns(p))
        return;
    if (guard_held() || !traced()) {
        REAL(free)(p);
        return;
    }
    if (memsim_sample_bytes && !sampleset_take(p)) { /* a stale counter: not sampled */
        memsim_guard++;
        real.free(p);
        memsim_guard--;
        return;
    }
    GUARD_SCOPE;
    events_free(FN_FREE, p, caller);
    real.free(p);
}

EXPORT void free(void *p)
{
    if (!p)
        return;
    if (__builtin_expect(sampleset_absent(p) && !real_bootstrap_owns(p), 1)) {
        memsim_guard++;
        real.free(p);
        memsim_guard--;
        return;
    }
    free_slow(p, __builtin_return_address(0));
}

static SLOW void *calloc_slow(size_t k, size_t n)
{
    size_t bytes;
    bool over = __builtin_mul_overflow(k, n, &bytes);
    if (!real.calloc && bootstrapping())
        return over ? NULL : real_bootstrap_alloc(bytes, 16);
    bool take = over || sample_take(bytes);
    if (guard_held())
        return quiet(REAL(calloc)(k, n));
    if (!traced())
        return REAL(calloc)(k, n);
    if (!take)
        return QUICK(real.calloc(k, n));
    GUARD_SCOPE;
    void *p = real.calloc(k, n);
    if (p)
        events_alloc(FN_CALLOC, p, k * n, 16);
    return p;
}

EXPORT void *calloc(size_t k, size_t n)
{
    size_t bytes;
    if (__builtin_expect(!__builtin_mul_overflow(k, n, &bytes) && sample_skip(bytes), 1))
        return QUICK(real.calloc(k, n));
    return calloc_slow(k, n);
}

/* realloc of a bootstrap block: a real one, with the old contents. */
static void *from_bootstrap(void *old, size_t n)
{
    void *p = REAL(malloc)(n);
    size_t had = real_bootstrap_size(old);
    if (p)
        memcpy(p, old, had < n ? had : n);
    return p;
}

/* The real realloc or reallocarray (k elements of n bytes). */
static inline void *real_resize(events_fn_t fn, void *old, size_t k, size_t n)
{
    return fn == FN_REALLOCARRAY ? real.reallocarray(old, k, n) : real.realloc(old, n);
}

/* realloc or reallocarray of old != NULL in a fully traced process,
 * tracing on and the guard free. */
static void *resize_traced(events_fn_t fn, void *old, size_t k, size_t n, size_t bytes,
                           const void *caller)
{
    GUARD_SCOPE;
    if (proc_one_thread()) {
        void *p = real_resize(fn, old, k, n);
        events_realloc_now(fn, old, p, bytes, caller, 0);
        return p;
    }
    events_move_t m;
    events_move_begin(&m, MSG_REALLOC, old);
    void *p = real_resize(fn, old, k, n);
    events_realloc_end(&m, fn, old, p, bytes, caller);
    return p;
}

/* The set of sampled blocks after a resize of old (was: sampled) to p
 * (take: sampled): the message's flags (msg.h). */
static uint64_t resized(const void *old, const void *p, size_t bytes, bool was, bool take)
{
    uint64_t flags = (was ? 0 : MSG_REALLOC_OLD_UNSAMPLED) | (take ? 0 : MSG_REALLOC_NEW_UNSAMPLED);
    if (!p) {
        if (bytes && was) /* failed: old is as it was */
            sampleset_add(old);
        return flags;
    }
    if (take && !sampleset_add(p)) /* its free could not be told: not recorded */
        flags |= MSG_REALLOC_NEW_UNSAMPLED;
    return flags;
}

/* realloc or reallocarray in a sampled trace, tracing on and the guard
 * free; take: the new block is sampled.  Posted when the old block or
 * the new one is sampled: a free, an alloc or a realloc to the recorder. */
static void *resize_sampled(events_fn_t fn, void *old, size_t k, size_t n, size_t bytes,
                            bool take, const void *caller)
{
    if (!old) {
        if (!take)
            return QUICK(real_resize(fn, NULL, k, n));
        GUARD_SCOPE;
        void *p = real_resize(fn, NULL, k, n);
        if (p)
            events_alloc(fn, p, bytes, 16);
        return p;
    }
    bool was = sampleset_take(old);
    if (!was && !take)
        return QUICK(real_resize(fn, old, k, n));
    GUARD_SCOPE;
    if (proc_one_thread()) {
        void *p = real_resize(fn, old, k, n);
        events_realloc_now(fn, old, p, bytes, caller, resized(old, p, bytes, was, take));
        return p;
    }
    events_move_t m;
    events_move_begin(&m, MSG_REALLOC, old);
    void *p = real_resize(fn, old, k, n);
    m.flags = resized(old, p, bytes, was, take);
    events_realloc_end(&m, fn, old, p, bytes, caller);
    return p;
}

static SLOW void *realloc_slow(void *old, size_t n, const void *caller)
{
    if (old && real_bootstrap_owns(old))
        return from_bootstrap(old, n);
    bool take = sample_take(n);
    if (guard_held()) {
        void *p = REAL(realloc)(old, n);
        return p && p != old ? quiet(p) : p;
    }
    if (!traced())
        return REAL(realloc)(old, n);
    if (memsim_sample_bytes)
        return resize_sampled(FN_REALLOC, old, 1, n, n, take, caller);
    if (!old) {
        GUARD_SCOPE;
        void *p = real.realloc(NULL, n);
        if (p)
            events_alloc(FN_REALLOC, p, n, 16);
        return p;
    }
    return resize_traced(FN_REALLOC, old, 1, n, n, caller);
}

EXPORT void *realloc(void *old, size_t n)
{
    if (__builtin_expect((!old || (sampleset_absent(old) && !real_bootstrap_owns(old))) &&
                             sample_skip(n),
                         1))
        return QUICK(real.realloc(old, n));
    return realloc_slow(old, n, __builtin_return_address(0));
}

EXPORT void *reallocarray(void *old, size_t k, size_t n)
{
    size_t bytes;
    if (__builtin_mul_overflow(k, n, &bytes)) {
        errno = ENOMEM;
        return NULL;
    }
    if (old && real_bootstrap_owns(old))
        return from_bootstrap(old, bytes);
    if (!REAL(reallocarray)) /* an allocator without it: realloc's, as glibc's does */
        return realloc(old, bytes);
    if ((!old || sampleset_absent(old)) && sample_skip(bytes))
        return QUICK(real.reallocarray(old, k, n));
    bool take = sample_take(bytes);
    if (guard_held()) {
        void *p = real.reallocarray(old, k, n);
        return p && p != old ? quiet(p) : p;
    }
    if (!traced())
        return real.reallocarray(old, k, n);
    if (memsim_sample_bytes)
        return resize_sampled(FN_REALLOCARRAY, old, k, n, bytes, take,
                              __builtin_return_address(0));
    if (!old) {
        GUARD_SCOPE;
        void *p = real.reallocarray(NULL, k, n);
        if (p)
            events_alloc(FN_REALLOCARRAY, p, bytes, 16);
        return p;
    }
    return resize_traced(FN_REALLOCARRAY, old, k, n, bytes, __builtin_return_address(0));
}

/* The aligned allocators: one shape (rare enough to need no slow path
 * of their own). */
#define ALIGNED_HOOK(fn, call, n, align)             \
    do {                                             \
        if (sample_skip(n))                          \
            return QUICK(call);                      \
        bool take_ = sample_take(n);                 \
        if (guard_held())                            \
            return quiet(call);                      \
        if (!traced())                               \
            return call;                             \
        if (!take_)                                  \
            return QUICK(call);                      \
        GUARD_SCOPE;                                 \
        void *p_ = call;                             \
        if (p_)                                      \
            events_alloc((fn), p_, (n), (align));    \
        return p_;                                   \
    } while (0)

EXPORT void *memalign(size_t align, size_t n)
{
    if (!real.memalign && bootstrapping())
        return real_bootstrap_alloc(n, align);
    ALIGNED_HOOK(FN_MEMALIGN, REAL(memalign)(align, n), n, align);
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
    ALIGNED_HOOK(FN_ALIGNED_ALLOC, REAL(aligned_alloc)(align, n), n, align);
}

EXPORT void *valloc(size_t n)
{
    ALIGNED_HOOK(FN_VALLOC, REAL(valloc)(n), n, (size_t)sysconf(_SC_PAGESIZE));
}

EXPORT void *pvalloc(size_t n)
{
    if (!REAL(pvalloc)) {
        errno = ENOMEM;
        return NULL;
    }
    ALIGNED_HOOK(FN_PVALLOC, real.pvalloc(n), n, (size_t)sysconf(_SC_PAGESIZE));
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
    if (sample_skip(n))
        return QUICK(REAL(posix_memalign)(out, align, n));
    bool take = sample_take(n);
    if (guard_held()) {
        int rc = REAL(posix_memalign)(out, align, n);
        if (rc == 0)
            quiet(*out);
        return rc;
    }
    if (!traced())
        return REAL(posix_memalign)(out, align, n);
    if (!take)
        return QUICK(real.posix_memalign(out, align, n));
    GUARD_SCOPE;
    int rc = real.posix_memalign(out, align, n);
    if (rc == 0)
        events_alloc(FN_POSIX_MEMALIGN, *out, n, align);
    return rc;
}

EXPORT size_t malloc_usable_size(void *p)
{
    if (p && real_bootstrap_owns(p))
        return real_bootstrap_size(p);
    return REAL(malloc_usable_size)(p);
}

/* ---- mappings ------------------------------------------------------------------------ */

static bool tracing_maps(void) { return memsim_track_maps && !guard_held() && traced(); }

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (!tracing_maps())
        return REAL(mmap)(addr, len, prot, flags, fd, off);
    GUARD_SCOPE;
    void *p = real.mmap(addr, len, prot, flags, fd, off);
    if (p != MAP_FAILED)
        events_mmap(FN_MMAP, p, len, prot, flags, fd);
    return p;
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (!tracing_maps())
        return REAL(mmap64)(addr, len, prot, flags, fd, off);
    GUARD_SCOPE;
    void *p = real.mmap64(addr, len, prot, flags, fd, off);
    if (p != MAP_FAILED)
        events_mmap(FN_MMAP64, p, len, prot, flags, fd);
    return p;
}

EXPORT int munmap(void *addr, size_t len)
{
    if (!tracing_maps())
        return REAL(munmap)(addr, len);
    GUARD_SCOPE;
    events_munmap(addr, len);
    return real.munmap(addr, len);
}

EXPORT void *mremap(void *old, size_t old_len, size_t len, int flags, ...)
{
    void *new_addr = NULL;
    if (flags & MREMAP_FIXED) {
        va_list ap;
        va_start(ap, flags);
        new_addr = va_arg(ap, void *);
        va_end(ap);
    }
    if (!tracing_maps())
        return REAL(mremap)(old, old_len, len, flags, new_addr);
    GUARD_SCOPE;
    events_move_t m;
    events_move_begin(&m, MSG_MREMAP, old);
    void *p = real.mremap(old, old_len, len, flags, new_addr);
    events_mremap_end(&m, old, old_len, p, len, flags);
    return p;
}

/* ---- threads ------------------------------------------------------------------------ */

EXPORT int pthread_setcanceltype(int type, int *old) { return cancel_settype(type, old); }

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
    if ((flags & CLONE_VM) && !(flags & CLONE_VFORK))
        atomic_store(&memsim_shared_clone, true);
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
    if (nr == SYS_prctl && w.a[0] == PR_SET_SECCOMP) {
        words_t p = {.nr = nr, .a = {w.a[0], w.a[1], w.a[2], w.a[3], w.a[4], w.a[5]}};
        return sandbox_enter(seccomp_op(w.a[1]), 0, (const void *)w.a[2], call_syscall, &p);
    }
    if ((nr == SYS_exit_group || nr == SYS_exit) && proc_one_thread())
        process_end_by(nr, END__EXIT, (int)(w.a[0] & 0xff));
    return call_syscall(&w);
}

/* ---- libraries ------------------------------------------------------------------------------ */

/* Not dlopen: glibc takes a dlopen's search path from its caller. */
EXPORT int dlclose(void *handle)
{
    int rc = REAL(dlclose)(handle);
    int saved = errno;
    {
        GUARD_SCOPE;
        modules_changed();
    }
    errno = saved;
    return rc;
}

/* ---- signals ------------------------------------------------------------------------------ */

EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    return signals_sigaction(sig, act, old);
}

EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
    return signals_set(REAL(signal), sig, handler);
}

EXPORT sighandler_t bsd_signal(int sig, sighandler_t handler)
{
    return signals_set(REAL(bsd_signal), sig, handler);
}

EXPORT sighandler_t sysv_signal(int sig, sighandler_t handler)
{
    return signals_set(REAL(sysv_signal), sig, handler);
}

EXPORT sighandler_t sigset(int sig, sighandler_t disp)
{
    return signals_set(REAL(sigset), sig, disp);
}

EXPORT int sigaltstack(const stack_t *ss, stack_t *old) { return signals_sigaltstack(ss, old); }

/* ---- the memsim API ----------------------------------------------------------------------- */

EXPORT void memsim_phase_begin(const char *name)
{
    if (guard_held() || !traced())
        return;
    GUARD_SCOPE;
    events_phase(name, true);
}

EXPORT void memsim_phase_end(void)
{
    if (guard_held() || !traced())
        return;
    GUARD_SCOPE;
    events_phase(NULL, false);
}
