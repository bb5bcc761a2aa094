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
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "preload/clock.h"
#include "preload/sysmem.h"

#define MASK (RING_SLOTS - 1)
#define BATCH 256                 /* a stage thread gives its lock up this often */
#define WAKE_BACKLOG (RING_SLOTS / 8)
#define SLEEP_NS 50000000L        /* an idle stage thread looks again after 50 ms */
#define SPIN_ROUNDS 64            /* empty looks before a stage thread sleeps */
#define HELP_AFTER_NS 200000      /* a full ring whose tail stood still this long... */
#define HELP_BATCH 1024           /* ...is drained this much by a producer */
#define ABANDON_WAIT_NS 50000000L /* a signal's handler waits this long for room */
#define HELP_BACKLOG (RING_SLOTS / 4) /* a producer this far ahead of the tail writes */
#define HELP_WRITE_BATCH 256      /* a waiting producer writes this much at a time */
/* Machines with fewer CPUs run both stages on one thread: on two cores
 * (bench/preload.sh, one program thread) the second thread made memsim
 * 14% slower, and 23% with four program threads. */
#define RING_TWO_THREADS_CPUS 4

/* One stage thread's lock and bed. */
typedef struct stage_s {
    pthread_mutex_t lock;
    _Atomic int sleeping;         /* its thread waits on it */
    bool running;
} stage_t;

static struct {
    ring_slot_t *slots;
    ring_stage_fn state_fn, write_fn;
    void (*enter_guard)(void);
    stage_t state __attribute__((aligned(64)));
    stage_t write __attribute__((aligned(64)));
    _Atomic uint64_t head __attribute__((aligned(64)));       /* next claim */
    _Atomic uint64_t state_tail __attribute__((aligned(64))); /* next for the state stage */
    _Atomic uint64_t tail __attribute__((aligned(64)));       /* next for the write stage */
    _Atomic int writing; /* a thread is in the write stage: producers need not try to help */
} G = {.state.lock = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP,
       .write.lock = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP};

static __thread ring_slot_t *pending __attribute__((tls_model("initial-exec")));
static __thread uint64_t pending_seq __attribute__((tls_model("initial-exec")));
/* Claimed (pending_seq) but still waiting for room: the slot is not ours yet. */
static __thread bool claim_waiting __attribute__((tls_model("initial-exec")));
/* What ring_post will put in the pending claim (a signal's handler
 * publishes it if it interrupts the post). */
static __thread const ring_slot_t *pending_content __attribute__((tls_model("initial-exec")));
static __thread uint64_t seen_tail __attribute__((tls_model("initial-exec")));

static inline void cpu_relax(void) { __builtin_ia32_pause(); }


int ring_init(ring_stage_fn state, ring_stage_fn write)
{
    G.state_fn = state;
    G.write_fn = write;
    if (G.slots)
        return 0;
    G.slots = sysmem_alloc(RING_SLOTS * sizeof(ring_slot_t));
    return G.slots ? 0 : -1;
}

bool ring_ready(void) { return G.slots != NULL; }

uint64_t ring_claimed(void) { return atomic_load(&G.head); }
uint64_t ring_consumed(void) { return atomic_load(&G.tail); }

static inline bool published(uint64_t t)
{
    return atomic_load_explicit(&G.slots[t & MASK].seq, memory_order_acquire) == (uint32_t)(t + 1);
}

static void wake(stage_t *st)
{
    if (atomic_exchange(&st->sleeping, 0))
        syscall(SYS_futex, (int *)&st->sleeping, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static bool state_work(void);
static bool write_work(void);
static void settle_waiting_claim(uint64_t deadline);

/* Wake whichever stage thread has work waiting (a full ring). */
static void wake_behind(void)
{
    uint64_t st = atomic_load(&G.state_tail);
    if (st < atomic_load(&G.head))
        wake(&G.state);
    if (atomic_load(&G.tail) < st)
        wake(&G.write);
}

/* ---- the stages ------------------------------------------------------------ */

/* The state stage over published slots in order, up to (not including)
 * upto, at most max; stops at the first slot still being filled.
 * Returns the number done.  The state lock must be held. */
static uint64_t state_locked(uint64_t upto, uint64_t max)
{
    uint64_t t = atomic_load_explicit(&G.state_tail, memory_order_relaxed), done = 0;
    while (t < upto && done < max && published(t)) {
        __builtin_prefetch(&G.slots[(t + 4) & MASK]);
        G.state_fn(&G.slots[t & MASK]);
        t++;
        done++;
        if ((t & 31) == 0)
            atomic_store_explicit(&G.state_tail, t, memory_order_release);
    }
    atomic_store_explicit(&G.state_tail, t, memory_order_release);
    return done;
}

/* The write stage over slots the state stage is done with, up to upto,
 * at most max.  The write lock must be held. */
static uint64_t write_locked(uint64_t upto, uint64_t max)
{
    atomic_store_explicit(&G.writing, 1, memory_order_relaxed);
    uint64_t t = atomic_load_explicit(&G.tail, memory_order_relaxed), done = 0;
    uint64_t ready = atomic_load_explicit(&G.state_tail, memory_order_acquire);
    if (upto > ready)
        upto = ready;
    while (t < upto && done < max) {
        G.write_fn(&G.slots[t & MASK]);
        t++;
        done++;
        if ((t & 63) == 0)
            atomic_store_explicit(&G.tail, t, memory_order_release);
    }
    atomic_store_explicit(&G.tail, t, memory_order_release);
    atomic_store_explicit(&G.writing, 0, memory_order_relaxed);
    return done;
}

/* Both stages, a batch at a time, up to upto and at most max slots (the
 * role held).  With a deadline, waits (until then) for claims still being
 * filled — a producer between claim and publish may be preempted, or be
 * waiting for room, which the write stage makes as it goes. */
static void both_locked(uint64_t upto, uint64_t max, uint64_t deadline)
{
    uint64_t done = 0;
    unsigned spins = 0;
    while (atomic_load(&G.tail) < upto && done < max) {
        uint64_t n = state_locked(upto, max - done < BATCH ? max - done : BATCH);
        uint64_t w = write_locked(upto, UINT64_MAX);
        done += n;
        if (n || w) {
            spins = 0;
            continue;
        }
        if (!deadline)
            break;
        if (++spins < 64) {
            cpu_relax();
        } else {
            if (clock_ns() > deadline)
                break;
            sched_yield();
        }
    }
}

uint64_t ring_flush_locked(uint64_t max_ns)
{
    if (!G.slots)
        return 0;
    uint64_t deadline = clock_ns() + max_ns + 1;
    settle_waiting_claim(deadline);
    uint64_t upto = atomic_load(&G.head);
    both_locked(upto, UINT64_MAX, deadline);
    uint64_t t = atomic_load(&G.tail);
    return upto > t ? upto - t : 0;
}

void ring_lock(void)
{
    pthread_mutex_lock(&G.state.lock);
    pthread_mutex_lock(&G.write.lock);
}

void ring_unlock(void)
{
    pthread_mutex_unlock(&G.write.lock);
    pthread_mutex_unlock(&G.state.lock);
}

static int trylock_both(void)
{
    if (pthread_mutex_trylock(&G.state.lock))
        return -1;
    if (pthread_mutex_trylock(&G.write.lock)) {
        pthread_mutex_unlock(&G.state.lock);
        return -1;
    }
    return 0;
}

int ring_lock_timed(uint64_t max_ns)
{
    /* Wait in the locks' own queues (in the order ring_lock takes them):
     * polling both with trylock could miss them for the whole wait while
     * a busy stage thread and helping producers hand them around. */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    uint64_t ns = (uint64_t)until.tv_nsec + max_ns;
    until.tv_sec += (time_t)(ns / 1000000000ull);
    until.tv_nsec = (long)(ns % 1000000000ull);
    if (pthread_mutex_timedlock(&G.state.lock, &until))
        return -1;
    if (pthread_mutex_timedlock(&G.write.lock, &until)) {
        pthread_mutex_unlock(&G.state.lock);
        return -1;
    }
    return 0;
}

/* ---- producers ----------------------------------------------------------------- */

/* A producer runs a batch of a stage with every signal blocked: the
 * handler of a fatal signal drains the ring itself (recorder_end), and
 * must not find its own thread halfway through a batch, holding the lock
 * it needs (SIGTERM to a busy program lost up to a ring of records).
 * The signal is delivered when the batch is done. */
static void signals_off(sigset_t *old)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, old);
}

static void signals_on(const sigset_t *old) { pthread_sigmask(SIG_SETMASK, old, NULL); }

/* A batch of the write stage, if its lock is free; whether it ran.
 * (Blocking signals costs two system calls: not when another thread is
 * writing anyway.) */
static bool help_write(void)
{
    if (atomic_load_explicit(&G.writing, memory_order_relaxed))
        return false;
    sigset_t old;
    signals_off(&old);
    bool ran = pthread_mutex_trylock(&G.write.lock) == 0;
    if (ran) {
        write_locked(UINT64_MAX, HELP_WRITE_BATCH);
        pthread_mutex_unlock(&G.write.lock);
    }
    signals_on(&old);
    return ran;
}

/* Both stages over a batch before upto, if both locks are free. */
static bool help_both(uint64_t upto)
{
    sigset_t old;
    signals_off(&old);
    bool ran = trylock_both() == 0;
    if (ran) {
        both_locked(upto, HELP_BATCH, 0);
        ring_unlock();
    }
    signals_on(&old);
    return ran;
}

ring_slot_t *ring_claim(void)
{
    uint64_t s = atomic_fetch_add_explicit(&G.head, 1, memory_order_relaxed);
    if (s - seen_tail >= RING_SLOTS) {
        pending_seq = s;
        claim_waiting = true;
        seen_tail = atomic_load_explicit(&G.tail, memory_order_acquire);
        uint64_t last = seen_tail, since = 0;
        unsigned waits = 0;
        while (s - seen_tail >= RING_SLOTS) {
            /* Full.  While the stage threads drain, only they can: wait
             * for them.  If the tail has not moved for a while (no stage
             * threads, or they are not running), drain a little ourselves;
             * our own claim is unpublished, so a drain stops before it. */
            wake_behind();
            if (++waits < 64) {
                cpu_relax();
            } else if (write_work() && help_write()) {
                /* Rather than wait, write what the state stage has done
                 * (the stage threads may be busy with the state stage). */
            } else if (!since) {
                since = clock_ns();
            } else if (clock_ns() - since > HELP_AFTER_NS && help_both(s)) {
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
    pending_seq = s;
    pending = slot;
    claim_waiting = false;
    return slot;
}

/* The slot's content but its sequence number. */
static void fill(ring_slot_t *slot, const ring_slot_t *content)
{
    memcpy((char *)slot + sizeof slot->seq, (const char *)content + sizeof content->seq,
           sizeof *slot - sizeof slot->seq);
}

void ring_post(const ring_slot_t *content)
{
    pending_content = content;
    ring_slot_t *slot = ring_claim();
    fill(slot, content);
    ring_publish(slot);
}

void ring_publish(ring_slot_t *slot)
{
    uint64_t s = pending_seq;
    atomic_store_explicit(&slot->seq, (uint32_t)(s + 1), memory_order_release);
    pending = NULL;
    pending_content = NULL;
    /* Far ahead of the writes: the stage thread cannot keep up (one
     * thread for both stages on a small machine).  Write a batch here
     * instead of waiting for the ring to fill: the program's thread and
     * the stage thread then share the write stage (alloc_heavy on two
     * cores: one thread 220 -> 191 ms, four 1032 -> 903 ms). */
    if (s - seen_tail >= HELP_BACKLOG) {
        seen_tail = atomic_load_explicit(&G.tail, memory_order_acquire);
        if (s - seen_tail >= HELP_BACKLOG && write_work() && help_write())
            seen_tail = atomic_load_explicit(&G.tail, memory_order_acquire);
    }
    if (atomic_load_explicit(&G.state.sleeping, memory_order_relaxed) &&
        s - seen_tail >= WAKE_BACKLOG) {
        seen_tail = atomic_load_explicit(&G.tail, memory_order_acquire);
        if (s - seen_tail >= WAKE_BACKLOG)
            wake(&G.state);
    }
}

/* Publish this thread's claim (its slot, free) as a signal's handler
 * finds it: with ring_post's content, which is whole, or as lost. */
static void settle(ring_slot_t *slot)
{
    if (pending_content)
        fill(slot, pending_content);
    else
        slot->kind = RING_LOST;
    atomic_store_explicit(&slot->seq, (uint32_t)(pending_seq + 1), memory_order_release);
    pending = NULL;
    pending_content = NULL;
    claim_waiting = false;
}

void ring_abandon_pending(void)
{
    if (!pending && claim_waiting) {
        /* Claimed, still waiting for room.  Whoever holds the locks may
         * be flushing up to this very claim (the poller, for a sample):
         * wait for room as the claim would have, draining ourselves when
         * the locks are free, then fill and publish it here. */
        uint64_t s = pending_seq, deadline = clock_ns() + ABANDON_WAIT_NS;
        while (atomic_load(&G.tail) + RING_SLOTS <= s && clock_ns() < deadline) {
            if (trylock_both() == 0) {
                both_locked(s, UINT64_MAX, deadline);
                ring_unlock();
            } else {
                sched_yield();
            }
        }
        if (atomic_load(&G.tail) + RING_SLOTS <= s)
            return; /* no room: ring_flush_locked settles it */
        settle(&G.slots[s & MASK]);
    } else if (pending) {
        settle(pending);
    }
}

/* This thread's claim still waiting for room, when a signal's handler on
 * it flushes: drain what comes before it, then settle it, so the flush
 * can pass it. */
static void settle_waiting_claim(uint64_t deadline)
{
    if (!claim_waiting)
        return;
    uint64_t s = pending_seq;
    both_locked(s, UINT64_MAX, deadline);
    if (atomic_load(&G.tail) + RING_SLOTS > s) /* its slot is free now */
        settle(&G.slots[s & MASK]);
    claim_waiting = false;
    pending_content = NULL;
}

/* ---- the stage threads ---------------------------------------------------------- */

/* Sleep on st until woken or SLEEP_NS passed, unless work arrived. */
static void nap(stage_t *st, bool (*work)(void))
{
    atomic_store(&st->sleeping, 1);
    if (!work()) {
        struct timespec ts = {0, SLEEP_NS};
        syscall(SYS_futex, (int *)&st->sleeping, FUTEX_WAIT_PRIVATE, 1, &ts, NULL, 0);
    }
    atomic_store(&st->sleeping, 0);
}

static bool state_work(void) { return published(atomic_load(&G.state_tail)); }
static bool write_work(void) { return atomic_load(&G.tail) < atomic_load(&G.state_tail); }

static bool any_work(void) { return state_work() || write_work(); }

/* What a stage thread runs: both stages (one thread, on a machine with
 * few cores: the hand-off between two threads costs more than it saves
 * there), or one of them. */
typedef enum run_e { RUN_BOTH, RUN_STATE, RUN_WRITE } run_t;

/* A batch of the state stage, if there is work; the number done. */
static uint64_t state_batch(void)
{
    if (!state_work())
        return 0;
    pthread_mutex_lock(&G.state.lock);
    uint64_t n = state_locked(atomic_load(&G.head), BATCH);
    pthread_mutex_unlock(&G.state.lock);
    if (n) {
        /* A writer thread sets sleeping, then looks at state_tail; we
         * stored state_tail, now look at sleeping: without the fence both
         * could miss the other's store. */
        atomic_thread_fence(memory_order_seq_cst);
        if (atomic_load_explicit(&G.write.sleeping, memory_order_relaxed))
            wake(&G.write);
    }
    return n;
}

/* A batch of the write stage, if there is work.  Unless this thread is
 * the writer, only if the lock is free: a producer waiting for room may
 * be writing while this thread runs the state stage. */
static uint64_t write_batch(bool writer)
{
    if (!write_work())
        return 0;
    if (writer)
        pthread_mutex_lock(&G.write.lock);
    else if (pthread_mutex_trylock(&G.write.lock))
        return 0;
    uint64_t n = write_locked(UINT64_MAX, BATCH);
    pthread_mutex_unlock(&G.write.lock);
    return n;
}

static void *stage_thread(void *arg)
{
    run_t run = (run_t)(uintptr_t)arg;
    stage_t *bed = run == RUN_WRITE ? &G.write : &G.state;
    bool (*work)(void) = run == RUN_BOTH ? any_work : run == RUN_STATE ? state_work : write_work;
    if (G.enter_guard)
        G.enter_guard();
    pthread_setname_np(pthread_self(), run == RUN_STATE ? "memsim-state" : "memsim-writer");
    unsigned idle = 0;
    for (;;) {
        uint64_t n = 0;
        if (run != RUN_WRITE)
            n += state_batch();
        if (run != RUN_STATE)
            n += write_batch(run == RUN_WRITE);
        if (n) {
            idle = 0;
            continue;
        }
        if (++idle < SPIN_ROUNDS) {
            for (int i = 0; i < 32; i++)
                cpu_relax();
            continue;
        }
        nap(bed, work);
        idle = SPIN_ROUNDS; /* no spinning after a nap that found nothing */
    }
    return NULL;
}

static int start_one(run_t run)
{
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&th, &attr, stage_thread, (void *)(uintptr_t)run);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    return rc;
}

int ring_writer_start(void (*enter_guard)(void)) { return ring_writer_start_n(enter_guard, 0); }

int ring_writer_start_n(void (*enter_guard)(void), unsigned threads)
{
    if (!G.slots)
        return 0;
    G.enter_guard = enter_guard;
    if (G.state.running || G.write.running)
        return 0;
    if (!threads)
        threads = sysconf(_SC_NPROCESSORS_ONLN) < RING_TWO_THREADS_CPUS ? 1 : 2;
    if (threads == 1) {
        G.state.running = G.write.running = start_one(RUN_BOTH) == 0;
        return G.state.running ? 0 : -1;
    }
    G.state.running = start_one(RUN_STATE) == 0;
    G.write.running = start_one(RUN_WRITE) == 0;
    return G.state.running && G.write.running ? 0 : -1;
}

void ring_fork_child(void)
{
    uint64_t h = atomic_load(&G.head);
    atomic_store(&G.state_tail, h);
    atomic_store(&G.tail, h);
    seen_tail = h;
    pending = NULL;
    pending_content = NULL;
    claim_waiting = false;
    G.state.running = G.write.running = false;
    atomic_store(&G.state.sleeping, 0);
    atomic_store(&G.write.sleeping, 0);
}
