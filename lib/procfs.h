/*
 * procfs: what the operating system charges a process, read from /proc.
 *
 * Used by memsim-recorder, which samples the traced process from outside, and
 * by `memsim run` from the parent side, so every reader uses open/read
 * on a caller's stack buffer — never stdio, never malloc — and is safe
 * to call from any thread.  Sizes are in bytes.  A reader returns 0, or
 * -1 when the file cannot be read (the process is gone, no permission)
 * or has no such field; outputs are then zeroed.
 *
 * The parsers behind the readers take the file's text, so tests can feed
 * them fixed samples of what the kernel writes.
 */
#ifndef MEMSIM_LIB_PROCFS_H
#define MEMSIM_LIB_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* /proc/<pid>/status (pid 0: self). */
typedef struct procfs_status_s {
    uint64_t rss;     /* VmRSS */
    uint64_t hwm;     /* VmHWM: peak RSS */
    uint64_t vm_size; /* VmSize */
    uint64_t vm_peak; /* VmPeak */
} procfs_status_t;

int procfs_read_status(pid_t pid, procfs_status_t *out);
int procfs_parse_status(const char *text, size_t len, procfs_status_t *out);

/* /proc/<pid>/smaps_rollup (pid 0: self). */
typedef struct procfs_rollup_s {
    uint64_t rss, pss, pss_anon, pss_file, shared_clean, shared_dirty, private_clean,
        private_dirty, referenced, anonymous, lazyfree, anon_huge_pages, swap, swap_pss;
} procfs_rollup_t;

int procfs_read_smaps_rollup(pid_t pid, procfs_rollup_t *out);
int procfs_parse_smaps_rollup(const char *text, size_t len, procfs_rollup_t *out);

/* Resident bytes of pid from /proc/<pid>/statm (cheap: one short read). */
int procfs_read_rss(pid_t pid, uint64_t *rss);

/* Direct children of pid: the union of /proc/<pid>/task/<tid>/children
 * over its threads.  Up to max pids into out; *n gets how many were
 * found (may exceed max: then out holds the first max). */
int procfs_children(pid_t pid, pid_t *out, size_t max, size_t *n);

/* Every descendant of pid, breadth first, up to max (same *n rule). */
int procfs_descendants(pid_t pid, pid_t *out, size_t max, size_t *n);

/* The memory this process may use: physical memory, or the cgroup's
 * limit (v2 memory.max, v1 memory.limit_in_bytes) when lower. */
int procfs_memory_limit(uint64_t *bytes);

#endif
