/*
 * touched: the live large blocks' pages by /proc/<pid>/pagemap.  See
 * touched.h.
 */
#include "recorder/touched.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "ipc/msg.h"
#include "recorder/records.h"
#include "recorder/state.h"

#define PAGE 4096u
#define BATCH 512u /* pagemap entries a read */
#define PM_PRESENT (1ull << 63)
#define PM_SWAPPED (1ull << 62)

#define NOT_OPEN (-2) /* pagemap is opened at the first large block: most processes have none */

typedef struct end_s {
    out_t *o;
    uint64_t t;
    pid_t pid;
    int fd; /* NOT_OPEN, or -1: no more tries */
} end_t;

/* The whole pages of [addr, addr + size) present or swapped; -1 when
 * pagemap could not be read. */
static int64_t count(int fd, uint64_t addr, uint64_t size)
{
    uint64_t first = (addr + PAGE - 1) / PAGE, end = (addr + size) / PAGE, n = 0;
    uint64_t v[BATCH];
    for (uint64_t at = first; at < end;) {
        size_t want = end - at < BATCH ? (size_t)(end - at) : BATCH;
        ssize_t got = pread(fd, v, want * sizeof *v, (off_t)(at * sizeof *v));
        if (got <= 0 || got % (ssize_t)sizeof *v)
            return -1;
        for (size_t k = 0; k < (size_t)got / sizeof *v; k++)
            n += (v[k] & (PM_PRESENT | PM_SWAPPED)) != 0;
        at += (uint64_t)got / sizeof *v;
    }
    return (int64_t)n;
}

static void one(uint64_t addr, uint64_t size, void *ctx)
{
    end_t *e = ctx;
    if (size < MSG_TOUCHED_MIN_BYTES || e->fd == -1)
        return;
    if (e->fd == NOT_OPEN) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/pagemap", (int)e->pid);
        e->fd = open(path, O_RDONLY | O_CLOEXEC);
        if (e->fd < 0) {
            e->fd = -1;
            return;
        }
    }
    int64_t n = count(e->fd, addr, size);
    if (n < 0) { /* the process went, or pagemap refuses: no more tries */
        close(e->fd);
        e->fd = -1;
        return;
    }
    records_touched(e->o, e->t, e->pid, addr, (uint64_t)n);
}

void touched_at_end(out_t *o, uint64_t t, pid_t pid)
{
    end_t e = {.o = o, .t = t, .pid = pid, .fd = NOT_OPEN};
    state_each_live(one, &e);
    if (e.fd >= 0)
        close(e.fd);
}
