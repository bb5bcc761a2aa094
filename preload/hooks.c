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
 * The hooks of processes and sandboxes are in preload/hooks_process.c.
 */
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

#include "include/memsim.h"
#include "preload/cancel.h"
#include "preload/events.h"
#include "preload/guard.h"
#include "preload/hook.h"
#include "preload/modules.h"
#include "preload/process.h"
#include "preload/process_fork.h"
#include "preload/real.h"
#include "preload/sample.h"
#include "preload/sampleset.h"
#include "preload/signals.h"
#include "preload/unwind.h"
#include "ipc/sysmem.h"


__thread int memsim_guard __attribute__((tls_model("initial-exec")));


/* ---- the heap ----------------------------------------------------------------------
 *
 * Each allocating hook is two parts.  Its fast path serves an allocation
 * a sampled trace does not record (preload/sample.h: the thread's count
 * of bytes to the next point, taken down) and a free of a block it did
 * not record (preload/sampleset.h: the block's counter reads 0): the real
 * call, nothing else; a tail call when the allocator is glibc's, else
 * with the guard held around it as for every call memsim records (an
 * allocator that calls mmap or malloc through the program's symbols is
 * not the program).  The rest is the slow path, a function
 * of its own the hook jumps to (the fast path keeps no registers to save):
 * the bootstrap, memsim's own calls, tracing off, every call of a fully
 * traced process (its count stays 0, its set never reads 0) and the
 * sampled ones. */

/* The real call of an unrecorded allocation: bare when the allocator is
 * glibc's (preload/sample.h: memsim_sample_bare; a tail call), else under
 * the guard (nested in one the caller may hold: inside memsim the fast
 * path serves it too). */
#define QUICK(call)                                                                                \
    (__builtin_expect(memsim_sample_bare, 1) ? (call) : __extension__({                            \
        memsim_guard++;                                                                            \
        __typeof__(call) q_ = (call);                                                              \
        memsim_guard--;                                                                            \
        q_;                                                                                        \
    }))

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
        if (__builtin_expect(memsim_sample_bare, 1)) {
            real.free(p);
            return;
        }
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

/* The old block's touched pages (preload/touched.h), counted before a
 * resize, as MSG_REALLOC's e carries them. */
static uint64_t touched_before(const void *old)
{
    uint64_t n = events_touched(old);
    return n <= UINT32_MAX ? n << MSG_REALLOC_TOUCHED_SHIFT : 0;
}

/* realloc or reallocarray of old != NULL in a fully traced process,
 * tracing on and the guard free. */
static void *resize_traced(events_fn_t fn, void *old, size_t k, size_t n, size_t bytes,
                           const void *caller)
{
    GUARD_SCOPE;
    uint64_t touched = touched_before(old);
    if (proc_one_thread()) {
        void *p = real_resize(fn, old, k, n);
        events_realloc_now(fn, old, p, bytes, caller, touched);
        return p;
    }
    events_move_t m;
    events_move_begin(&m, MSG_REALLOC, old);
    m.flags = touched;
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
    uint64_t touched = was ? touched_before(old) : 0;
    if (proc_one_thread()) {
        void *p = real_resize(fn, old, k, n);
        events_realloc_now(fn, old, p, bytes, caller, resized(old, p, bytes, was, take) | touched);
        return p;
    }
    events_move_t m;
    events_move_begin(&m, MSG_REALLOC, old);
    void *p = real_resize(fn, old, k, n);
    m.flags = resized(old, p, bytes, was, take) | touched;
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

/* The last moment the process has one thread: libunwind is loaded here
 * if no stack has needed it yet (preload/unwind.h). */
EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *),
                          void *arg)
{
    {
        GUARD_SCOPE;
        unwind_need();
    }
    return REAL(pthread_create)(thread, attr, fn, arg);
}

/* C11's, which glibc makes without its pthread_create's symbol. */
EXPORT int thrd_create(thrd_t *thread, thrd_start_t fn, void *arg)
{
    {
        GUARD_SCOPE;
        unwind_need();
    }
    return REAL(thrd_create)(thread, fn, arg);
}

/* ---- libraries ------------------------------------------------------------------------------ */

/* Not dlopen: glibc takes a dlopen's search path from its caller. */
EXPORT int dlclose(void *handle)
{
    {
        GUARD_SCOPE;
        unwind_need(); /* after an unload, stacks are walked by libunwind's steps */
    }
    int rc = REAL(dlclose)(handle);
    int saved = errno;
    {
        GUARD_SCOPE;
        /* Posts, and the stack table's lock: no asynchronous cancel inside. */
        bool held = cancel_hold();
        modules_changed();
        cancel_release(held);
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
