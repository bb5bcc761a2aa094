/*
 * ring: the queue between the program's threads and memsim's writer.
 * See ring.h.
 */
#include "preload/ring.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "preload/sysmem.h"

#define MASK (RING_SLOTS - 1)
#define BATCH 256                 /* the writer gives the role up this often */
#define WAKE_BACKLOG (RING_SLOTS / 8)
#define SLEEP_NS 10000000L        /* the idle writer looks again after 10 ms */
#define SPIN_ROUNDS 200           /* empty looks before the writer sleeps */
#define HELP_AFTER_NS 200000      /* a full ring whose tail stood still this long... */
#define HELP_BATCH 1024           /* ...is drained this much by a producer */

static struct {
    ring_slot_t *slots;
    ring_consume_fn consume;
    pthread_mutex_t role;
    bool writer_running;
    void (*enter_guard)(void);
    _Atomic uint64_t head __attribute__((aligned(64))); /* next claim */
    _Atomic uint64_t tail __attribute__((aligned(64))); /* next to consume */
    _Atomic int sleeping __attribute__((aligned(64)));  /* the writer waits on it */
} G = {.role = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP};

static __thread ring_slot_t *pending __attribute__((tls_model("initial-exec")));
static __thread uint64_t pending_seq __attribute__((tls_model("initial-exec")));
static __thread uint64_t seen_tail __attribute__((tls_model("initial-exec")));

static inline void cpu_relax(void) { __builtin_ia32_pause(); }

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int ring_init(ring_consume_fn consume)
{
    G.consume = consume;
    if (G.slots)
        return 0;
    G.slots = sysmem_alloc(RING_SLOTS * sizeof(ring_slot_t));
    return G.slots ? 0 : -1;
}

bool ring_ready(void) { return G.slots != NULL; }

uint64_t ring_claimed(void) { return atomic_load(&G.head); }
uint64_t ring_consumed(void) { return atomic_load(&G.tail); }

/* ---- the consumer ---------------------------------------------------------- */

/* Consume published slots in order, up to (not including) upto, at most
 * max of them; stops at the first slot still being filled unless
 * deadline is set (then waits for it until the deadline).  Returns the
 * number consumed.  The role must be held. */
static uint64_t drain_locked(uint64_t upto, uint64_t max, uint64_t deadline)
{
    uint64_t t = atomic_load_explicit(&G.tail, memory_order_relaxed), done = 0;
    unsigned spins = 0;
    while (t < upto && done < max) {
        ring_slot_t *s = &G.slots[t & MASK];
        if (atomic_load_explicit(&s->seq, memory_order_acquire) != t + 1) {
            if (!deadline)
                break;
            /* A producer between claim and publish: it may be preempted.
             * Let the tail move (producers may be waiting on it). */
            atomic_store_explicit(&G.tail, t, memory_order_release);
            if (++spins < 64) {
                cpu_relax();
            } else {
                if (now_ns() > deadline)
                    break;
                sched_yield();
            }
            continue;
        }
        spins = 0;
        __builtin_prefetch(&G.slots[(t + 4) & MASK]);
        G.consume(s);
        t++;
        done++;
        if ((t & 63) == 0)
            atomic_store_explicit(&G.tail, t, memory_order_release);
    }
    atomic_store_explicit(&G.tail, t, memory_order_release);
    return done;
}

uint64_t ring_flush_locked(uint64_t max_ns)
{
    if (!G.slots)
        return 0;
    uint64_t upto = atomic_load(&G.head);
    drain_locked(upto, UINT64_MAX, now_ns() + max_ns + 1);
    uint64_t t = atomic_load(&G.tail);
    return upto > t ? upto - t : 0;
}

void ring_lock(void) { pthread_mutex_lock(&G.role); }
void ring_unlock(void) { pthread_mutex_unlock(&G.role); }

int ring_lock_timed(uint64_t max_ns)
{
    uint64_t deadline = now_ns() + max_ns;
    while (pthread_mutex_trylock(&G.role) != 0) {
        if (now_ns() > deadline)
            return -1;
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

/* ---- producers ----------------------------------------------------------------- */

static void wake_writer(void)
{
    if (atomic_exchange(&G.sleeping, 0))
        syscall(SYS_futex, (int *)&G.sleeping, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

ring_slot_t *ring_claim(void)
{
    uint64_t s = atomic_fetch_add_explicit(&G.head, 1, memory_order_relaxed);
    if (s - seen_tail >= RING_SLOTS) {
        seen_tail = atomic_load_explicit(&G.tail, memory_order_acquire);
        uint64_t last = seen_tail, since = 0;
        unsigned waits = 0;
        while (s - seen_tail >= RING_SLOTS) {
            /* Full.  While the writer drains, only one thread can: wait for
             * it (consuming here would just stop it).  If the tail has not
             * moved for a while (no writer thread, or it is not running),
             * drain a little ourselves; our own claim is unpublished, so a
             * drain stops before it. */
            wake_writer();
            if (++waits < 64) {
                cpu_relax();
            } else if (!since) {
                since = now_ns();
            } else if (now_ns() - since > HELP_AFTER_NS &&
                       pthread_mutex_trylock(&G.role) == 0) {
                drain_locked(s, HELP_BATCH, 0);
                pthread_mutex_unlock(&G.role);
                since = 0;
            } else {
                sched_yield();
            }
            seen_tail = atomic_load_explicit(&G.tail, memory_order_acquire);
            if (seen_tail != last) {
                last = seen_tail;
                since = 0;
            }
        }
    }
    ring_slot_t *slot = &G.slots[s & MASK];
    pending = slot;
    pending_seq = s;
    return slot;
}

void ring_publish(ring_slot_t *slot)
{
    uint64_t s = pending_seq;
    atomic_store_explicit(&slot->seq, s + 1, memory_order_release);
    pending = NULL;
    if (atomic_load_explicit(&G.sleeping, memory_order_relaxed) &&
        s - seen_tail >= WAKE_BACKLOG) {
        seen_tail = atomic_load_explicit(&G.tail, memory_order_acquire);
        if (s - seen_tail >= WAKE_BACKLOG)
            wake_writer();
    }
}

void ring_abandon_pending(void)
{
    if (!pending)
        return;
    pending->kind = RING_LOST;
    ring_publish(pending);
}

/* ---- the writer thread ---------------------------------------------------------- */

static bool published_at_tail(void)
{
    uint64_t t = atomic_load(&G.tail);
    return atomic_load_explicit(&G.slots[t & MASK].seq, memory_order_acquire) == t + 1;
}

static void *writer(void *arg)
{
    (void)arg;
    if (G.enter_guard)
        G.enter_guard();
    pthread_setname_np(pthread_self(), "memsim-writer");
    unsigned idle = 0;
    for (;;) {
        uint64_t n = 0;
        if (published_at_tail()) {
            pthread_mutex_lock(&G.role);
            n = drain_locked(atomic_load(&G.head), BATCH, 0);
            pthread_mutex_unlock(&G.role);
        }
        if (n) {
            idle = 0;
            continue;
        }
        if (++idle < SPIN_ROUNDS) {
            for (int i = 0; i < 32; i++)
                cpu_relax();
            continue;
        }
        atomic_store(&G.sleeping, 1);
        if (!published_at_tail()) {
            struct timespec ts = {0, SLEEP_NS};
            syscall(SYS_futex, (int *)&G.sleeping, FUTEX_WAIT_PRIVATE, 1, &ts, NULL, 0);
        }
        atomic_store(&G.sleeping, 0);
        idle = SPIN_ROUNDS / 2;
    }
    return NULL;
}

int ring_writer_start(void (*enter_guard)(void))
{
    if (G.writer_running || !G.slots)
        return 0;
    G.enter_guard = enter_guard;
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&th, &attr, writer, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    G.writer_running = rc == 0;
    return rc ? -1 : 0;
}

void ring_fork_child(void)
{
    uint64_t h = atomic_load(&G.head);
    atomic_store(&G.tail, h);
    seen_tail = h;
    pending = NULL;
    G.writer_running = false;
    atomic_store(&G.sleeping, 0);
}
