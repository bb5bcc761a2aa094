/*
 * sampler: what the operating system charges the traced process, read
 * by its recorder from outside (/proc/<pid>), and whether the process is
 * still there.
 *
 * Every sample reads /proc/<pid>/status (RSS, peaks, address space), the
 * process's descendants and their RSS, and /proc/<pid>/smaps_rollup at
 * the first RSS peak and at each one 1/SAMPLER_ROLLUP_STEP above the
 * last it was read at: the kernel walks every page table entry for it
 * (2 ms of CPU a read at gcc's cc1 of 200 MB in 4 KiB pages, 4 ms at 370
 * MB), so a process whose RSS grows by a factor G reads it about ln G ×
 * 16 times, not at every sample.  Nor sooner after the last read than
 * SAMPLER_ROLLUP_PACE times the CPU that read took (at most 1% of a core):
 * a peak that comes sooner leaves the read due, made at the first
 * sample the pace allows, a peak or not (a heap growing by more than
 * 1/16 a sample read it at every one).  The last read is any trace's:
 * the recorder's 1% is for the whole tree (a shell loop's processes,
 * 40-60 us a read each, had one apiece; a process that ends before the
 * pace allows has none).  The process itself opens nothing for it.
 */
#ifndef MEMSIM_RECORDER_SAMPLER_H
#define MEMSIM_RECORDER_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "recorder/records.h"

#define SAMPLER_TREE_MAX 4096 /* descendants listed in one sample */
#define SAMPLER_ROLLUP_STEP 16  /* smaps_rollup again at an RSS 1/16 above the last read's */
#define SAMPLER_ROLLUP_PACE 100 /* ...no sooner than 100 times the last read's time after it */

typedef struct sampler_s {
    pid_t pid;
    int pidfd;               /* -1: watched by kill(pid, 0) */
    uint64_t device_total;   /* physical memory or the cgroup's limit */
    uint64_t peak_rss;
    uint64_t rollup_rss;     /* the RSS smaps_rollup was last read at; 0: never */
    bool rollup_due;         /* a peak asked for a read the pace held back */
    procfs_rollup_t rollup;
} sampler_t;

/* Watch process pid.  0, or -1 when it is gone already. */
int sampler_init(sampler_t *s, pid_t pid);
void sampler_fini(sampler_t *s);

/* The OS's figures into out (its rollup points into s, its child list
 * into the sampler's one list, which the next read overwrites: the
 * recorder has one thread and writes a sample before it reads the next;
 * a list in each trace's sampler made every trace's state 48 KiB larger,
 * zeroed at each process's start).  False when the process is gone. */
bool sampler_read(sampler_t *s, records_sample_t *out);

/* Whether smaps_rollup is to be read at a sample of RSS rss at now (ns):
 * the peaks and the pace above (s->peak_rss taken up to rss; the pace
 * from the last read of any sampler's).  After a read,
 * sampler_rollup_read. */
bool sampler_rollup_due(sampler_t *s, uint64_t rss, uint64_t now);
/* A read at RSS rss that ended at t1 (ns) and cost t1 - t0 (its CPU
 * time: a read the recorder waited through is not dearer). */
void sampler_rollup_read(sampler_t *s, uint64_t rss, uint64_t t0, uint64_t t1);

/* Whether the process has ended (it may still be a zombie). */
bool sampler_gone(sampler_t *s);

/* How a gone process ended, from its zombie's /proc/<pid>/stat, if its
 * parent has not reaped it yet: 0 with *status (or -1) and *signal (or
 * 0), or -1. */
int sampler_exit(const sampler_t *s, int *status, int *signal);

#endif
