/*
 * poller: the sampling thread.  See poller.h.
 */
#include "preload/poller.h"

#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "core/procfs.h"
#include "preload/recorder.h"
#include "preload/sysmem.h"

#define TREE_MAX 4096 /* descendants listed in one sample */

static struct {
    pthread_t thread;
    bool running;
    unsigned interval_ms;
    poller_guard_fn enter_guard;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool stop;
} P = {.lock = PTHREAD_MUTEX_INITIALIZER};

static uint64_t kb_to_bytes(long kb) { return kb > 0 ? (uint64_t)kb * 1024 : 0; }

static void sample(uint64_t device_total, uint64_t *peak_rss, pid_t *pids, uint64_t *rss)
{
    recorder_os_t os = {.device_total = device_total, .child_pid = pids, .child_rss = rss};
    procfs_status_t st;
    if (procfs_read_status(0, &st) == 0) {
        os.rss = st.rss;
        os.hwm = st.hwm;
        os.vm_size = st.vm_size;
        os.vm_peak = st.vm_peak;
    }
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        os.maxrss_self = kb_to_bytes(ru.ru_maxrss);
    if (getrusage(RUSAGE_CHILDREN, &ru) == 0)
        os.maxrss_children = kb_to_bytes(ru.ru_maxrss);
    struct mallinfo2 mi = mallinfo2();
    os.malloc_reserved = mi.arena + mi.hblkhd;
    os.malloc_in_use = mi.uordblks + mi.hblkhd;
    size_t n = 0;
    os.tree_rss = os.rss;
    if (procfs_descendants(getpid(), pids, TREE_MAX, &n) == 0) {
        os.nchildren = n < TREE_MAX ? n : TREE_MAX;
        for (size_t i = 0; i < os.nchildren; i++) {
            if (procfs_read_rss(pids[i], &rss[i]))
                rss[i] = 0; /* gone meanwhile */
            os.tree_rss += rss[i];
        }
    }
    procfs_rollup_t rollup;
    if (os.rss > *peak_rss) {
        *peak_rss = os.rss;
        if (procfs_read_smaps_rollup(0, &rollup) == 0)
            os.rollup = &rollup;
    }
    recorder_sample(&os);
}

static void *run(void *arg)
{
    (void)arg;
    P.enter_guard();
    uint64_t device_total = 0, peak_rss = 0;
    procfs_memory_limit(&device_total);
    pid_t *pids = sysmem_alloc(TREE_MAX * sizeof *pids);
    uint64_t *rss = sysmem_alloc(TREE_MAX * sizeof *rss);
    if (!pids || !rss)
        return NULL;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    pthread_mutex_lock(&P.lock);
    while (!P.stop) {
        pthread_mutex_unlock(&P.lock);
        sample(device_total, &peak_rss, pids, rss);
        recorder_trim_trace();
        pthread_mutex_lock(&P.lock);
        /* Fixed rate: the next tick from the last one, not from now; but
         * ticks missed while this thread was held up (a loaded machine, a
         * long page fault) are skipped, not fired back to back with the
         * same figures. */
        next.tv_nsec += (long)(P.interval_ms % 1000) * 1000000L;
        next.tv_sec += P.interval_ms / 1000 + next.tv_nsec / 1000000000L;
        next.tv_nsec %= 1000000000L;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (next.tv_sec < now.tv_sec || (next.tv_sec == now.tv_sec && next.tv_nsec < now.tv_nsec))
            next = now;
        while (!P.stop && pthread_cond_timedwait(&P.wake, &P.lock, &next) == 0)
            ;
    }
    pthread_mutex_unlock(&P.lock);
    /* A last sample at exit: a program shorter than one interval still
     * gets its peak (VmHWM) into the trace. */
    sample(device_total, &peak_rss, pids, rss);
    sysmem_free(pids, TREE_MAX * sizeof *pids);
    sysmem_free(rss, TREE_MAX * sizeof *rss);
    return NULL;
}

int poller_start(unsigned interval_ms, poller_guard_fn enter_guard)
{
    if (P.running || !interval_ms)
        return 0;
    P.interval_ms = interval_ms;
    P.enter_guard = enter_guard;
    P.stop = false;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&P.wake, &ca);
    pthread_condattr_destroy(&ca);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&P.thread, NULL, run, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    P.running = rc == 0;
    return rc ? -1 : 0;
}

void poller_stop(void)
{
    if (!P.running)
        return;
    pthread_mutex_lock(&P.lock);
    P.stop = true;
    pthread_cond_signal(&P.wake);
    pthread_mutex_unlock(&P.lock);
    if (!pthread_equal(pthread_self(), P.thread))
        pthread_join(P.thread, NULL);
    P.running = false;
}

void poller_forget(void)
{
    P.running = false;
    pthread_mutex_init(&P.lock, NULL);
}
