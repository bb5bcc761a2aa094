/*
 * hooks: the functions libmemsim.so exports, the only symbols it
 * exports besides the memsim_* API (-fvisibility=hidden elsewhere).
 *
 * Each hook is a few lines: if this thread is already inside memsim, or
 * tracing is off, it only calls the real function; otherwise it sets the
 * thread's reentrancy guard, calls the real function and one recorder
 * function in the order recorder.h prescribes, and clears the guard.
 * The guard is an initial-exec TLS variable, so touching it never
 * allocates.  The real allocator is glibc's own __libc_* entry points;
 * everything else is found with dlsym(RTLD_NEXT) at start-up (dlsym's
 * own calloc goes to __libc_calloc through the guard, so no bootstrap
 * buffer is needed).
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

#include "include/memsim.h"
#include "preload/config.h"
#include "preload/poller.h"
#include "preload/recorder.h"

#define EXPORT __attribute__((visibility("default")))

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

static __thread int guard __attribute__((tls_model("initial-exec")));

/* Blocks allocated inside memsim go to livemap_quiet (see livemap.h). */
static void *quiet_note(void *p, size_t n)
{
    if (p) {
        livemap_entry_t e = {.addr = (uintptr_t)p, .size = n};
        livemap_put(&livemap_quiet, &e);
    }
    return p;
}

static bool quiet_forget(void *p)
{
    livemap_entry_t e;
    return livemap_take(&livemap_quiet, (uintptr_t)p, &e);
}
static _Atomic bool started; /* start-up done (traced or not) */
static bool track_maps;      /* MEMSIM_MMAP */

static struct {
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    void *(*reallocarray)(void *, size_t, size_t);
    size_t (*malloc_usable_size)(void *);
    void *(*mmap)(void *, size_t, int, int, int, off_t);
    void *(*mmap64)(void *, size_t, int, int, int, off_t);
    int (*munmap)(void *, size_t);
    void *(*mremap)(void *, size_t, size_t, int, ...);
    pid_t (*fork)(void);
    int (*execve)(const char *, char *const[], char *const[]);
    int (*execv)(const char *, char *const[]);
    int (*execvp)(const char *, char *const[]);
    int (*execvpe)(const char *, char *const[], char *const[]);
    int (*fexecve)(int, char *const[], char *const[]);
    int (*posix_spawn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                       const posix_spawnattr_t *, char *const[], char *const[]);
    int (*posix_spawnp)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                        const posix_spawnattr_t *, char *const[], char *const[]);
    void (*exit_)(int);
    void (*Exit_)(int);
    int (*sigaction)(int, const struct sigaction *, struct sigaction *);
    sighandler_t (*signal)(int, sighandler_t);
} real;

static bool tracing(void) { return !guard && recorder_active(); }

static void guard_forever(void) { guard = 1; }
static unsigned sample_ms;

static void resolve(void);

/* A hook can run before the constructor (another library's constructor
 * allocates first): find the real functions on first use. */
#define REAL(name) (real.name ? real.name : (resolve(), real.name))

/* ---- start-up ------------------------------------------------------------------ */

static void resolve(void)
{
#define R(name, sym) real.name = (__typeof__(real.name))dlsym(RTLD_NEXT, sym)
    R(posix_memalign, "posix_memalign");
    R(aligned_alloc, "aligned_alloc");
    R(reallocarray, "reallocarray");
    R(malloc_usable_size, "malloc_usable_size");
    R(mmap, "mmap");
    R(mmap64, "mmap64");
    R(munmap, "munmap");
    R(mremap, "mremap");
    R(fork, "fork");
    R(execve, "execve");
    R(execv, "execv");
    R(execvp, "execvp");
    R(execvpe, "execvpe");
    R(fexecve, "fexecve");
    R(posix_spawn, "posix_spawn");
    R(posix_spawnp, "posix_spawnp");
    R(exit_, "_exit");
    R(Exit_, "_Exit");
    R(sigaction, "sigaction");
    R(signal, "signal");
#undef R
}

static void say(const char *line)
{
    ssize_t rc = write(2, line, strlen(line));
    rc = write(2, "\n", 1);
    (void)rc;
}

static void signals_install(void);
static void on_exit_status(int status, void *arg);
static void atfork_prepare(void);
static void atfork_parent(void);
static void atfork_child(void);

/* What memsim passes on to the programs this process starts, through
 * the environment of every exec and posix_spawn (never by changing the
 * program's own environment, which the program may own — bash does):
 * MEMSIM_OUTPUT made absolute, so a child that runs elsewhere writes
 * beside its parent; and with MEMSIM_TRACE_CHILDREN=0, MEMSIM_ROOT_PID,
 * the first process's pid (an exec keeps the pid, so the first process's
 * own execs stay traced; any other process finding it stays passive). */
static char env_output[PATH_MAX + 32];
static char env_root[48];

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

static size_t env_count(char *const *envp)
{
    size_t n = 0;
    while (envp && envp[n])
        n++;
    return n;
}

static bool same_name(const char *entry, const char *assignment)
{
    size_t k = (size_t)(strchr(assignment, '=') - assignment) + 1;
    return strncmp(entry, assignment, k) == 0;
}

/* envp with memsim's variables put in, built in out (env_count + 3
 * entries); envp itself when there is nothing to add. */
static char *const *env_for_child(char *const *envp, char **out)
{
    if (!env_output[0] && !env_root[0])
        return envp;
    size_t k = 0;
    for (size_t i = 0; envp && envp[i]; i++) {
        if ((env_output[0] && same_name(envp[i], env_output)) ||
            (env_root[0] && same_name(envp[i], env_root)))
            continue;
        out[k++] = envp[i];
    }
    if (env_output[0])
        out[k++] = env_output;
    if (env_root[0])
        out[k++] = env_root;
    out[k] = NULL;
    return out;
}

__attribute__((constructor(101))) static void memsim_start(int argc, char **argv, char **envp)
{
    (void)envp;
    guard = 1;
    resolve();
    if (getauxval(AT_SECURE)) { /* setuid and friends: stay passive */
        atomic_store(&started, true);
        guard = 0;
        return;
    }
    static config_t cfg;
    static char err[PATH_MAX + 256];
    if (config_load(&cfg, NULL, err, sizeof err)) {
        say(err);
    } else if (!cfg.trace_children && below_root()) {
        /* MEMSIM_TRACE_CHILDREN=0: a program started below the first one */
    } else {
        char exe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = '\0';
        if (recorder_start(&cfg, exe, argc, argv, NULL, err, sizeof err)) {
            say(err);
        } else {
            track_maps = cfg.mmap;
            snprintf(env_output, sizeof env_output, "%s=%s", CONFIG_ENV_OUTPUT,
                     recorder_output());
            on_exit(on_exit_status, NULL);
            pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
            signals_install();
            sample_ms = cfg.sample_ms;
            poller_start(sample_ms, guard_forever);
            recorder_writer_start(guard_forever);
        }
    }
    atomic_store(&started, true);
    guard = 0;
}

/* The end record goes out when both exit paths have run: the on_exit
 * handler (which knows the status) and this library's destructor.  In
 * a preloaded library the destructor runs in _dl_fini, which __libc_start_main
 * registers after memsim's on_exit handler, so it runs first: then the
 * frees of every library destructor are in the trace too. */
static _Atomic int exit_steps;
static int exit_status = -1;

static void exit_step(void)
{
    if (atomic_fetch_add(&exit_steps, 1) == 1) {
        guard = 1;
        poller_stop();
        recorder_end("exit", exit_status, -1);
    }
}

__attribute__((destructor(101))) static void memsim_stop(void) { exit_step(); }

static void on_exit_status(int status, void *arg)
{
    (void)arg;
    exit_status = status & 0xff;
    exit_step();
}

/* ---- the heap ---------------------------------------------------------------------- */

/* The stack, captured in the entry point itself (stacks_grab is inlined
 * into it: the unwinder does not walk memsim's frames), errno kept. */
#define GRAB(raw)                    \
    do {                             \
        int errno_ = errno;          \
        stacks_grab(&(raw));         \
        errno = errno_;              \
    } while (0)

/* The shape of every allocating hook: inside memsim, remember the block
 * as memsim's; untraced, just call; traced, call and record. */
#define ALLOC_HOOK(fn, call, n, align)                           \
    do {                                                         \
        if (guard)                                               \
            return quiet_note((call), (n));                      \
        if (!tracing())                                          \
            return (call);                                       \
        guard = 1;                                               \
        void *p_ = (call);                                       \
        if (p_) {                                                \
            stacks_raw_t raw_;                                   \
            GRAB(raw_);                                          \
            recorder_alloc((fn), p_, (n), (align), &raw_);       \
        }                                                        \
        guard = 0;                                               \
        return p_;                                               \
    } while (0)

EXPORT void *malloc(size_t n) { ALLOC_HOOK(FN_MALLOC, __libc_malloc(n), n, 16); }

EXPORT void free(void *p)
{
    if (p && guard)
        quiet_forget(p);
    if (!p || !tracing()) {
        __libc_free(p);
        return;
    }
    guard = 1;
    stacks_raw_t raw;
    GRAB(raw);
    recorder_free(FN_FREE, p, &raw);
    __libc_free(p);
    guard = 0;
}

EXPORT void *calloc(size_t k, size_t n)
{
    ALLOC_HOOK(FN_CALLOC, __libc_calloc(k, n), k * n, 16);
}

/* Inlined into realloc and reallocarray: the stack is grabbed here. */
static inline __attribute__((always_inline)) void *
move(recorder_fn_t fn, void *old, size_t n, void *(*call)(void *, size_t, size_t), size_t k)
{
    if (guard) {
        if (old)
            quiet_forget(old);
        return quiet_note(call(old, k, n), k * n);
    }
    if (!tracing())
        return call(old, k, n);
    guard = 1;
    void *p;
    size_t bytes = k * n;
    stacks_raw_t raw;
    if (!old) {
        p = call(old, k, n);
        if (p) {
            GRAB(raw);
            recorder_alloc(fn, p, bytes, 16, &raw);
        }
    } else if (bytes == 0 && fn == FN_REALLOC) {
        GRAB(raw);
        recorder_free(fn, old, &raw); /* glibc frees, returns NULL */
        p = call(old, k, n);
    } else {
        recorder_move_t m;
        GRAB(raw);
        recorder_realloc_begin(&m, old, &raw);
        p = call(old, k, n);
        recorder_realloc_end(&m, fn, p, bytes);
    }
    guard = 0;
    return p;
}

static void *call_realloc(void *old, size_t k, size_t n)
{
    (void)k;
    return __libc_realloc(old, n);
}

static void *call_reallocarray(void *old, size_t k, size_t n)
{
    return REAL(reallocarray)(old, k, n);
}

EXPORT void *realloc(void *old, size_t n) { return move(FN_REALLOC, old, n, call_realloc, 1); }

EXPORT void *reallocarray(void *old, size_t k, size_t n)
{
    size_t bytes;
    if (__builtin_mul_overflow(k, n, &bytes)) {
        errno = ENOMEM;
        return NULL;
    }
    return move(FN_REALLOCARRAY, old, n, call_reallocarray, k);
}

EXPORT void *memalign(size_t align, size_t n)
{
    ALLOC_HOOK(FN_MEMALIGN, __libc_memalign(align, n), n, align);
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
    if (guard) {
        int rc = REAL(posix_memalign)(out, align, n);
        if (rc == 0)
            quiet_note(*out, n);
        return rc;
    }
    if (!tracing())
        return REAL(posix_memalign)(out, align, n);
    guard = 1;
    int rc = REAL(posix_memalign)(out, align, n);
    if (rc == 0) {
        stacks_raw_t raw;
        GRAB(raw);
        recorder_alloc(FN_POSIX_MEMALIGN, *out, n, align, &raw);
    }
    guard = 0;
    return rc;
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
    ALLOC_HOOK(FN_ALIGNED_ALLOC, REAL(aligned_alloc)(align, n), n, align);
}

EXPORT void *valloc(size_t n)
{
    ALLOC_HOOK(FN_VALLOC, __libc_valloc(n), n, (size_t)sysconf(_SC_PAGESIZE));
}

EXPORT void *pvalloc(size_t n)
{
    ALLOC_HOOK(FN_PVALLOC, __libc_pvalloc(n), n, (size_t)sysconf(_SC_PAGESIZE));
}

EXPORT size_t malloc_usable_size(void *p)
{
    return REAL(malloc_usable_size)(p);
}

/* ---- mappings -------------------------------------------------------------------------- */

static bool tracing_maps(void) { return track_maps && tracing(); }

static void *map(recorder_fn_t fn, void *(*call)(void *, size_t, int, int, int, off_t),
                 void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (!tracing_maps())
        return call(addr, len, prot, flags, fd, off);
    guard = 1;
    void *p = call(addr, len, prot, flags, fd, off);
    if (p != MAP_FAILED)
        recorder_mmap(fn, p, len, prot, flags, fd);
    guard = 0;
    return p;
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return map(FN_MMAP, REAL(mmap), addr, len, prot, flags, fd, off);
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return map(FN_MMAP64, REAL(mmap64), addr, len, prot, flags, fd, off);
}

EXPORT int munmap(void *addr, size_t len)
{
    if (!tracing_maps())
        return REAL(munmap)(addr, len);
    guard = 1;
    recorder_munmap(addr, len);
    int rc = real.munmap(addr, len);
    guard = 0;
    return rc;
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
    guard = 1;
    recorder_move_t m;
    recorder_mremap_begin(&m, old, old_len);
    void *p = real.mremap(old, old_len, len, flags, new_addr);
    recorder_mremap_end(&m, p, len, flags);
    guard = 0;
    return p;
}

/* ---- processes ---------------------------------------------------------------------------- */

static void atfork_prepare(void)
{
    guard++; /* nothing this thread does until fork returns is recorded */
    recorder_fork_prepare();
}

static void atfork_parent(void)
{
    recorder_fork_parent();
    guard--;
}

static void atfork_child(void)
{
    recorder_fork_child();
    poller_forget(); /* the thread stayed in the parent */
    if (recorder_active()) {
        poller_start(sample_ms, guard_forever);
        recorder_writer_start(guard_forever);
    }
    guard = 0;
}

/* fork itself, only to learn the child's pid for the parent's record;
 * the atfork handlers do the work (they also run for fork() calls
 * made inside libc). */
EXPORT pid_t fork(void)
{
    pid_t pid = REAL(fork)();
    if (pid > 0 && tracing()) {
        int saved = errno;
        guard = 1;
        recorder_forked(pid);
        guard = 0;
        errno = saved;
    }
    return pid;
}

/* exec: the exec and end records go out first; if the exec returns, it
 * failed, and the trace goes on.  The child's environment gets memsim's
 * variables (env_for_child). */
static void exec_begin(bool traced, const char *path, char *const argv[])
{
    if (traced) {
        guard = 1;
        recorder_exec(path, argv);
        guard = 0;
    }
}

static int exec_failed(bool traced, int rc)
{
    if (traced) {
        int e = errno;
        guard = 1;
        recorder_exec_failed(e);
        guard = 0;
        errno = e;
    }
    return rc;
}

#define CHILD_ENV(envp, name)                     \
    char *name##_buf[env_count(envp) + 3];        \
    char *const *name = env_for_child((envp), name##_buf)

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    bool traced = tracing();
    CHILD_ENV(envp, env);
    exec_begin(traced, path, argv);
    return exec_failed(traced, REAL(execve)(path, argv, env));
}

EXPORT int execv(const char *path, char *const argv[])
{
    bool traced = tracing();
    CHILD_ENV(environ, env);
    exec_begin(traced, path, argv);
    return exec_failed(traced, REAL(execve)(path, argv, env));
}

EXPORT int execvp(const char *file, char *const argv[])
{
    bool traced = tracing();
    CHILD_ENV(environ, env);
    exec_begin(traced, file, argv);
    return exec_failed(traced, REAL(execvpe)(file, argv, env));
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    bool traced = tracing();
    CHILD_ENV(envp, env);
    exec_begin(traced, file, argv);
    return exec_failed(traced, REAL(execvpe)(file, argv, env));
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    bool traced = tracing();
    CHILD_ENV(envp, env);
    exec_begin(traced, "", argv);
    return exec_failed(traced, REAL(fexecve)(fd, argv, env));
}

static int spawn(int (*call)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                             const posix_spawnattr_t *, char *const[], char *const[]),
                 pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                 const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    pid_t child;
    CHILD_ENV(envp, env);
    int rc = call(&child, path, fa, attr, argv, env);
    if (rc == 0) {
        if (pid)
            *pid = child;
        if (tracing()) {
            guard = 1;
            recorder_spawned(child, path, argv);
            guard = 0;
        }
    }
    return rc;
}

EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                       const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    return spawn(REAL(posix_spawn), pid, path, fa, attr, argv, envp);
}

EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                        const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    return spawn(REAL(posix_spawnp), pid, file, fa, attr, argv, envp);
}

/* execl, execlp, execle: collect the arguments and go through the
 * execv* hooks above.  The array lives on the stack (glibc does the
 * same), bounded by what a kernel accepts. */
#define EXECL_ARGS(first, argv, ap, envp_out, want_envp_)          \
    size_t n_ = 1;                                                  \
    va_list count_;                                                 \
    va_copy(count_, ap);                                            \
    while (va_arg(count_, char *))                                  \
        n_++;                                                       \
    va_end(count_);                                                 \
    if (n_ > 65536) {                                               \
        errno = E2BIG;                                              \
        return -1;                                                  \
    }                                                               \
    char *argv[n_ + 1];                                             \
    argv[0] = (char *)(first);                                      \
    for (size_t i_ = 1; i_ <= n_; i_++)                             \
        argv[i_] = i_ < n_ ? va_arg(ap, char *) : NULL;             \
    (void)va_arg(ap, char *);                                       \
    envp_out = (want_envp_) ? va_arg(ap, char **) : NULL

EXPORT int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    char **envp;
    EXECL_ARGS(arg, argv, ap, envp, false);
    va_end(ap);
    (void)envp;
    return execv(path, argv);
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    char **envp;
    EXECL_ARGS(arg, argv, ap, envp, false);
    va_end(ap);
    (void)envp;
    return execvp(file, argv);
}

EXPORT int execle(const char *path, const char *arg, ...)
{
    char **envp;
    va_list ap;
    va_start(ap, arg);
    EXECL_ARGS(arg, argv, ap, envp, true);
    va_end(ap);
    return execve(path, argv, envp);
}

EXPORT void _exit(int status)
{
    if (tracing()) {
        guard = 1;
        recorder_end("_exit", status & 0xff, -1);
    }
    REAL(exit_)(status);
    __builtin_unreachable();
}

EXPORT void _Exit(int status)
{
    if (tracing()) {
        guard = 1;
        recorder_end("_exit", status & 0xff, -1);
    }
    REAL(Exit_)(status);
    __builtin_unreachable();
}

/* ---- fatal signals -------------------------------------------------------------------------
 * For every signal whose default action ends the process and which the
 * program left at SIG_DFL, memsim installs a handler that writes the end
 * record, restores SIG_DFL and lets the signal take the process as it
 * would have.  The program never sees the handler: sigaction and signal
 * report SIG_DFL for it, and a handler the program installs replaces it.
 */

static const int fatal_signals[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGILL,  SIGABRT, SIGBUS,
                                    SIGFPE,  SIGUSR1, SIGSEGV, SIGUSR2, SIGPIPE, SIGALRM,
                                    SIGTERM, SIGXCPU, SIGXFSZ, SIGSYS,  SIGVTALRM};
static _Atomic uint64_t ours; /* bit s: memsim's handler is installed for s */

static bool is_ours(int sig) { return sig > 0 && sig < 64 && (ours & (1ull << sig)); }

static void fatal_handler(int sig, siginfo_t *info, void *uctx)
{
    (void)uctx;
    int saved = errno;
    guard = 1;
    recorder_end("signal", -1, sig);
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigemptyset(&dfl.sa_mask);
    REAL(sigaction)(sig, &dfl, NULL);
    ours &= ~(1ull << sig);
    errno = saved;
    /* A fault re-executes the faulting instruction and dies of it; any
     * other signal is sent again, now with its default action. */
    bool fault = (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE) &&
                 info && info->si_code > 0;
    if (!fault) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, sig);
        pthread_sigmask(SIG_UNBLOCK, &set, NULL);
        raise(sig);
    }
}

static void signals_install(void)
{
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++) {
        int sig = fatal_signals[i];
        struct sigaction old;
        if (real.sigaction(sig, NULL, &old) || old.sa_handler != SIG_DFL ||
            (old.sa_flags & SA_SIGINFO))
            continue;
        /* Every signal blocked while the handler writes the end record,
         * and no SA_RESETHAND: with the default action restored on entry,
         * a second SIGTERM (a supervisor forwarding twice) was fatal at
         * the moment it was sent, blocked or not, and killed the process
         * before the end record (1 run in 15).  The handler restores the
         * default itself when done.  A fault inside the handler meets a
         * blocked signal, and the kernel then ends the process. */
        struct sigaction sa = {.sa_sigaction = fatal_handler, .sa_flags = SA_SIGINFO};
        sigfillset(&sa.sa_mask);
        if (real.sigaction(sig, &sa, NULL) == 0)
            ours |= 1ull << sig;
    }
}

EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (!is_ours(sig))
        return REAL(sigaction)(sig, act, old);
    struct sigaction mine;
    int rc = REAL(sigaction)(sig, act, old ? &mine : NULL);
    if (rc == 0) {
        if (old) {
            *old = mine;
            old->sa_handler = SIG_DFL; /* what the program set: nothing */
            old->sa_flags = 0;
            sigemptyset(&old->sa_mask);
        }
        if (act)
            ours &= ~(1ull << sig);
    }
    return rc;
}

EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
    if (!is_ours(sig))
        return REAL(signal)(sig, handler);
    sighandler_t rc = REAL(signal)(sig, handler);
    if (rc == SIG_ERR)
        return rc;
    ours &= ~(1ull << sig);
    return SIG_DFL;
}

/* ---- the memsim API ----------------------------------------------------------------------- */

EXPORT void memsim_phase_begin(const char *name)
{
    if (!tracing())
        return;
    guard = 1;
    recorder_phase(name, true);
    guard = 0;
}

EXPORT void memsim_phase_end(void)
{
    if (!tracing())
        return;
    guard = 1;
    recorder_phase(NULL, false);
    guard = 0;
}
