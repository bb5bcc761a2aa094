/*
 * sampler: /proc of the traced process.  See sampler.h.
 */
#include "recorder/sampler.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ipc/clock.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

int sampler_init(sampler_t *s, pid_t pid)
{
    s->pid = pid;
    s->peak_rss = 0;
    s->rollup_rss = 0;
    s->rollup_due = false;
    s->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (s->pidfd < 0 && errno == ESRCH)
        return -1;
    /* Read once: a recorder serves process after process, on one
     * machine and in one cgroup. */
    static uint64_t total;
    static bool read;
    if (!read) {
        procfs_memory_limit(&total);
        read = true;
    }
    s->device_total = total;
    return 0;
}

void sampler_fini(sampler_t *s)
{
    if (s->pidfd >= 0)
        close(s->pidfd);
    s->pidfd = -1;
}

bool sampler_gone(sampler_t *s)
{
    if (s->pidfd >= 0) {
        struct pollfd p = {.fd = s->pidfd, .events = POLLIN};
        return poll(&p, 1, 0) > 0;
    }
    return kill(s->pid, 0) && errno == ESRCH;
}

/* The CPU time of the calling thread (ns): what a read cost, however long
 * the recorder waited for a core meanwhile. */
static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The descendants of the process sampled last and their RSS. */
static pid_t tree_pids[SAMPLER_TREE_MAX];
static uint64_t tree_rss[SAMPLER_TREE_MAX];

bool sampler_read(sampler_t *s, records_sample_t *out)
{
    if (procfs_read_status(s->pid, &out->st))
        return false;
    out->device_total = s->device_total;
    out->tree_rss = out->st.rss;
    out->nchildren = 0;
    out->child_pid = tree_pids;
    out->child_rss = tree_rss;
    size_t n = 0;
    if (procfs_descendants(s->pid, tree_pids, SAMPLER_TREE_MAX, &n) == 0) {
        out->nchildren = n < SAMPLER_TREE_MAX ? n : SAMPLER_TREE_MAX;
        for (size_t i = 0; i < out->nchildren; i++) {
            if (procfs_read_rss(tree_pids[i], &tree_rss[i]))
                tree_rss[i] = 0; /* gone meanwhile */
            out->tree_rss += tree_rss[i];
        }
    }
    out->rollup = NULL;
    if (sampler_rollup_due(s, out->st.rss, clock_ns())) {
        uint64_t c0 = thread_cpu_ns();
        if (procfs_read_smaps_rollup(s->pid, &s->rollup) == 0) {
            out->rollup = &s->rollup;
            uint64_t took = thread_cpu_ns() - c0, now = clock_ns();
            sampler_rollup_read(s, out->st.rss, now - took, now);
        }
    }
    return true;
}

/* The last read of any trace's: the pace is the recorder's, whatever
 * the number of processes it serves. */
static struct {
    uint64_t end;  /* when it ended (ns, CLOCK_MONOTONIC) */
    uint64_t took; /* what it took (ns) */
} last_rollup;

bool sampler_rollup_due(sampler_t *s, uint64_t rss, uint64_t now)
{
    if (rss > s->peak_rss) {
        s->peak_rss = rss;
        if (!s->rollup_rss || rss - s->rollup_rss >= s->rollup_rss / SAMPLER_ROLLUP_STEP)
            s->rollup_due = true;
    }
    return s->rollup_due && (now < last_rollup.end ||
                             now - last_rollup.end >= last_rollup.took * SAMPLER_ROLLUP_PACE);
}

void sampler_rollup_read(sampler_t *s, uint64_t rss, uint64_t t0, uint64_t t1)
{
    s->rollup_due = false;
    s->rollup_rss = rss ? rss : 1;
    last_rollup.end = t1;
    last_rollup.took = t1 > t0 ? t1 - t0 : 0;
}

int sampler_exit(const sampler_t *s, int *status, int *signal)
{
    char path[64], buf[2048];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)s->pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    /* Fields after the command name (which may hold spaces and ')'):
     * the state is field 3; exit_code is field 52. */
    char *p = strrchr(buf, ')');
    if (!p || p[1] != ' ' || p[2] != 'Z')
        return -1;
    int field = 2;
    for (p += 1; *p && field < 52; p++)
        if (*p == ' ')
            field++;
    if (field != 52)
        return -1;
    long code = strtol(p, NULL, 10);
    *status = (code & 0x7f) ? -1 : (int)((code >> 8) & 0xff);
    *signal = (int)(code & 0x7f);
    return 0;
}
