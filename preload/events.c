/*
 * events: the messages the hooks post.  See events.h.
 */
#include "preload/events.h"

#include <errno.h>
#include <malloc.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "ipc/arena.h"
#include "ipc/clock.h"
#include "preload/modules.h"
#include "ipc/msg.h"
#include "preload/process.h"
#include "preload/real.h"
#include "ipc/ring.h"
#include "preload/sandbox.h"
#include "preload/stacks.h"
#include "preload/thread.h"
#include "preload/unwind.h"

static const char *const fn_names[FN_COUNT] = {
    [FN_MALLOC] = "malloc",
    [FN_CALLOC] = "calloc",
    [FN_REALLOC] = "realloc",
    [FN_REALLOCARRAY] = "reallocarray",
    [FN_MEMALIGN] = "memalign",
    [FN_POSIX_MEMALIGN] = "posix_memalign",
    [FN_ALIGNED_ALLOC] = "aligned_alloc",
    [FN_VALLOC] = "valloc",
    [FN_PVALLOC] = "pvalloc",
    [FN_FREE] = "free",
    [FN_MMAP] = "mmap",
    [FN_MMAP64] = "mmap64",
    [FN_MUNMAP] = "munmap",
    [FN_MREMAP] = "mremap",
};

const char *events_fn_name(events_fn_t fn) { return fn < FN_COUNT ? fn_names[fn] : "?"; }

/* ---- on memsim's stack ------------------------------------------------------------ */

static void post_stack(uint64_t id, const uintptr_t *frames, unsigned n, void *ctx)
{
    (void)ctx;
    ring_slot_t s = {.kind = MSG_STACK, .tid = thread_tid(), .t = clock_ticks(), .a = id, .b = n};
    ring_post(memsim_proc->region, &s, frames, n * sizeof *frames, 0);
}

_Static_assert((UNWIND_MAX_DEPTH + UNWIND_SELF_MAX) * sizeof(uintptr_t) <= THREAD_BT_BYTES,
               "the unwinder's frames fit memsim_on_stack_bt's buffer");

/* The id of the stack the unwinder put in pc.  A new stack may mean a
 * library was loaded: the module list is checked then (a library
 * unloaded and another loaded at its address would look known
 * otherwise). */
static uint32_t stack_id(const uintptr_t *pc, int got)
{
    const uintptr_t *f;
    unsigned n = unwind_frames(pc, got, &f);
    if (!n)
        return 0;
    bool is_new;
    /* A thread that may not wait for the table's lock (a strict seccomp
     * thread among others) finds only the stacks it has seen. */
    stacks_write_fn write = !seccomp_active() || sandbox_may_lock() ? post_stack : NULL;
    uint64_t id = stacks_intern(f, n, write, NULL, &is_new);
    if (__builtin_expect(is_new, 0))
        modules_changed();
    if (__builtin_expect(!id || id > UINT32_MAX, 0)) { /* no memory for it: counted */
        atomic_fetch_add_explicit(&memsim_proc->region->stackless, 1, memory_order_relaxed);
        return 0;
    }
    return (uint32_t)id;
}

/* The recorder asks for glibc's own figures once per sample (they change
 * only with heap events, so the next one reads them).  The message
 * carries when the call began (t) and ended (d): mallinfo2 walks every
 * free chunk of every arena, and the recorder paces its asks by it. */
static __attribute__((noinline)) void mallinfo_post(region_t *r)
{
    uint32_t one = 1;
    if (!atomic_compare_exchange_strong(&r->want_mallinfo, &one, 0))
        return;
    if (!(r->flags & REGION_GLIBC_MALLOC))
        return;
    /* mallinfo2 takes every arena's lock: not where a wait for one is a
     * call the sandbox forbids.  The children's peak stays as last read
     * where getrusage is. */
    if (seccomp_active() && !sandbox_may_lock())
        return;
    static _Atomic uint64_t children;
    uint64_t t0 = clock_ticks();
    struct mallinfo2 mi = mallinfo2();
    uint64_t t1 = clock_ticks();
    struct rusage ru;
    if (seccomp_call(SYS_getrusage, RUSAGE_CHILDREN, (long)&ru, 0, 0, 0, 0) == 0)
        atomic_store_explicit(&children, ru.ru_maxrss > 0 ? (uint64_t)ru.ru_maxrss * 1024 : 0,
                              memory_order_relaxed);
    ring_slot_t s = {.kind = MSG_MALLINFO,
                     .tid = thread_tid(),
                     .t = t0,
                     .a = mi.arena + mi.hblkhd,
                     .b = mi.uordblks + mi.hblkhd,
                     .c = atomic_load_explicit(&children, memory_order_relaxed),
                     .d = t1,
                     .e = mi.ordblks + mi.smblks};
    ring_post(r, &s, NULL, 0, 0);
}

static inline void mallinfo_due(region_t *r)
{
    if (__builtin_expect(atomic_load_explicit(&r->want_mallinfo, memory_order_relaxed) != 0, 0))
        mallinfo_post(r);
}

/* The job's message, with its stack id (0: none). */
static inline void job_post(events_job_t *j, uint32_t stack)
{
    region_t *r = memsim_proc->region;
    ring_slot_t m = {.kind = j->kind, .fn = j->fn, .stack = stack,
                     .a = j->a, .b = j->b, .c = j->c, .d = j->d, .e = j->e};
    m.t = clock_ticks();
    m.tid = thread_tid();
    if (j->flags & EVENTS_JOB_BEGIN) {
        /* Not the figures now: this thread holds a claim until the real
         * call returns, and a post in between could not wait for room. */
        j->claim = ring_begin(r, j->kind, j->a, 0);
        j->stack = m.stack;
        j->t = m.t;
        return;
    }
    if (!ring_post(r, &m, NULL, 0, 0) &&
        atomic_load_explicit(&r->ring.closed, memory_order_relaxed))
        process_recorder_gone();
    mallinfo_due(r);
}

void events_job(void *arg) { job_post(arg, 0); }

void events_stopped(void) { process_release_stopped(); }

void events_job_bt(void *arg, uintptr_t *pc, int got) { job_post(arg, stack_id(pc, got)); }

/* ---- the events --------------------------------------------------------------------- */

typedef struct touched_job_s {
    const void *p;
    size_t usable;
    uint64_t count;
} touched_job_t;

static void touched_job(void *arg)
{
    touched_job_t *j = arg;
    j->count = touched_count(j->p, j->usable);
}

/* The thread's counts: the time they took (ticks), how many, since when. */
static __thread uint64_t touched_spent_ __attribute__((tls_model("initial-exec")));
static __thread uint64_t touched_n_ __attribute__((tls_model("initial-exec")));
static __thread uint64_t touched_t0_ __attribute__((tls_model("initial-exec")));

/* Whether the thread may count now: its counts have taken at most 1% of
 * its time since its first, plus what TOUCHED_BURST counts take (a
 * program freeing large blocks it barely wrote, in a loop, would
 * otherwise pay a system call a free). */
#define TOUCHED_PACE 100u   /* time / the counts' time, at least */
#define TOUCHED_BURST 4096u /* counts never held back */
static bool touched_paced(uint64_t now)
{
    if (!touched_n_) {
        touched_t0_ = now;
        return true;
    }
    uint64_t burst = touched_spent_ / touched_n_ * TOUCHED_BURST;
    return touched_spent_ <= (now - touched_t0_) / TOUCHED_PACE + burst;
}

uint64_t events_touched_count(const void *p, size_t usable)
{
    thread_area_t *a = thread_area();
    uint64_t t0 = clock_ticks();
    if (!a || !touched_paced(t0))
        return 0;
    int saved = errno;
    touched_job_t j = {.p = p, .usable = usable};
    thread_call(a, touched_job, &j); /* the vector on memsim's stack */
    errno = saved;
    touched_spent_ += clock_ticks() - t0;
    touched_n_++;
    return j.count;
}

void events_realloc_end(events_move_t *m, events_fn_t fn, const void *old, const void *p,
                        size_t size, const void *caller)
{
    if (!m->claim) {
        cancel_release(m->held);
        return;
    }
    int saved = errno;
    ring_slot_t s = {.kind = MSG_REALLOC,
                     .fn = (uint8_t)fn,
                     .tid = thread_tid(),
                     .stack = m->stack,
                     .t = m->t,
                     .a = (uintptr_t)old,
                     .b = (uintptr_t)p,
                     .c = size,
                     .d = (uintptr_t)caller,
                     .e = m->flags};
    ring_end(memsim_proc->region, m->claim, &s, 0);
    if (p && p != old) {
        /* Moved: where the new block was had (recorder/reorder.h). */
        events_job_t j = {.kind = MSG_REALLOC_DONE, .a = (uintptr_t)old, .b = (uintptr_t)p};
        events_run(&j);
    }
    errno = saved;
    cancel_release(m->held);
}

void events_mremap_end(events_move_t *m, const void *old, size_t old_len, const void *p,
                       size_t len, int flags)
{
    if (!m->claim) {
        cancel_release(m->held);
        return;
    }
    int saved = errno;
    ring_slot_t s = {.kind = MSG_MREMAP,
                     .fn = FN_MREMAP,
                     .tid = thread_tid(),
                     .stack = m->stack,
                     .t = m->t,
                     .a = (uintptr_t)old,
                     .b = old_len,
                     .c = p == (void *)-1 ? MSG_MAP_FAILED : (uintptr_t)p,
                     .d = len,
                     .e = (uint64_t)(unsigned)flags};
    ring_end(memsim_proc->region, m->claim, &s, 0);
    errno = saved;
    cancel_release(m->held);
}

void events_mmap(events_fn_t fn, const void *p, size_t len, int prot, int flags, int fd)
{
    if (!proc_tracing())
        return;
    events_job_t j = {.kind = MSG_MMAP,
                      .fn = (uint8_t)fn,
                      .flags = EVENTS_JOB_STACK,
                      .a = (uintptr_t)p,
                      .b = len,
                      .c = (uint64_t)(uint32_t)prot | (uint64_t)(uint32_t)flags << 32,
                      .d = (uint64_t)(int64_t)fd};
    events_run(&j);
}

void events_munmap(const void *p, size_t len)
{
    if (!proc_tracing())
        return;
    events_job_t j = {.kind = MSG_MUNMAP, .fn = FN_MUNMAP, .flags = EVENTS_JOB_STACK,
                      .a = (uintptr_t)p, .b = len};
    events_run(&j);
}

/* Blocks got before the ring existed (dlsym's, the unwinder's while it
 * loads): told to the recorder once it runs (events_start). */
#define EARLY_QUIET 256
static uintptr_t early[EARLY_QUIET];
static _Atomic unsigned nearly;

void events_quiet(const void *p)
{
    if (!p)
        return;
    if (!proc_tracing()) {
        unsigned i = atomic_fetch_add(&nearly, 1);
        if (i < EARLY_QUIET)
            early[i] = (uintptr_t)p;
        return;
    }
    int saved = errno;
    ring_slot_t s = {.kind = MSG_QUIET, .tid = thread_tid(), .t = clock_ticks(), .a = (uintptr_t)p};
    ring_post(memsim_proc->region, &s, NULL, 0, 0);
    errno = saved;
}

bool events_touched_on, events_heap_glibc;
extern bool memsim_malloc_reached; /* process_start.c's probe: memsim's malloc is the program's */

void events_start(void)
{
    events_touched_on = memsim_malloc_reached;
    events_heap_glibc = real_heap_is_glibc();
    /* A sampled trace: the set of sampled blocks, then the counts (a
     * fork's child and a copy made by clone() carry on their parent's). */
    const config_t *c = &memsim_proc->region->cfg;
    if (c->sample_bytes && !memsim_sample_bytes && sampleset_start() == 0)
        sample_start(c->sample_bytes, c->sample_seed, c->sample_seeded, real_heap_is_glibc());
    unsigned n = atomic_exchange(&nearly, 0);
    for (unsigned i = 0; i < n && i < EARLY_QUIET; i++)
        events_quiet((void *)early[i]);
}

void events_phase(const char *name, bool begin)
{
    if (!proc_tracing())
        return;
    int saved = errno;
    bool held = cancel_hold(); /* a claim left unpublished would hold every later message */
    size_t n = begin && name ? strnlen(name, 512) : 0;
    ring_slot_t s = {.kind = MSG_PHASE, .tid = thread_tid(), .t = clock_ticks(), .a = begin};
    ring_post(memsim_proc->region, &s, name, n, 0);
    cancel_release(held);
    errno = saved;
}
