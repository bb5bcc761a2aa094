/*
 * trace: the mapped trace file.  See trace.h.
 */
#include "preload/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "preload/clock.h"

#define TRACE_SPAN (256ull << 30)   /* virtual bytes reserved: the largest trace */
#define TRACE_FIRST (1ull << 20)    /* first file size */
#define TRACE_STEP_MAX (64ull << 20) /* growth: double up to this much at once */
#define MADV_POPULATE_WRITE_ 23     /* <sys/mman.h> of older libcs lacks it */
#define TRACE_AHEAD (1ull << 20)    /* trace_tend: faulted in ahead of the head */
#define TRACE_BEHIND (1ull << 20)   /* trace_tend: kept behind it */

/* The raw system calls: the program's own mmap/munmap are interposed,
 * and these must not be recorded or re-enter the hooks. */
static void *sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    long r = syscall(SYS_mmap, addr, len, prot, flags, fd, off);
    return r < 0 && r > -4096 ? MAP_FAILED : (void *)r;
}

static int sys_munmap(void *addr, size_t len) { return (int)syscall(SYS_munmap, addr, len); }

static int reopen(const trace_t *t)
{
    int fd = open(t->path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) || st.st_dev != t->dev || st.st_ino != t->ino) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Make the file size bytes long, its new part [have, size) allocated on
 * disk: a full disk is then an error here (the records are counted as
 * dropped) instead of a SIGBUS when a writer first touches a page of a
 * hole, and writers skip the filesystem's delayed allocation of every
 * page (ext4: about 2% of memsim's time).  Filesystems without
 * fallocate get a sparse file, as before. */
static int extend(int fd, uint64_t have, uint64_t size)
{
    /* Past the file size limit (ulimit -f) the kernel would send this
     * thread SIGXFSZ, which kills the program: stop short of it. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        size > (uint64_t)rl.rlim_cur) {
        errno = EFBIG;
        return -1;
    }
    int rc;
    do /* a signal may interrupt a long allocation on the program's thread */
        rc = fallocate(fd, 0, (off_t)have, (off_t)(size - have));
    while (rc && errno == EINTR);
    if (rc == 0)
        return 0;
    if (errno != EOPNOTSUPP && errno != ENOSYS)
        return -1;
    do
        rc = ftruncate(fd, (off_t)size);
    while (rc && errno == EINTR);
    return rc;
}

/* Map the file up to `want` bytes (at least).  Called with grow_lock. */
static int grow_locked(trace_t *t, uint64_t want, int fd)
{
    uint64_t have = atomic_load(&t->mapped);
    if (want <= have)
        return 0;
    uint64_t size = have ? have : TRACE_FIRST;
    while (size < want)
        size += size < TRACE_STEP_MAX ? size : TRACE_STEP_MAX;
    if (size > t->span)
        return -1;
    int own = fd < 0;
    if (own && (fd = reopen(t)) < 0) {
        t->grow_errno = errno;
        return -1;
    }
    int rc = -1;
    if (extend(fd, have, size) == 0 &&
        sys_mmap(t->base + have, size - have, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                 fd, (off_t)have) != MAP_FAILED) {
        /* No MAP_POPULATE: resident pages of the trace count in the
         * program's RSS; trace_tend faults in a small window ahead. */
        atomic_store(&t->mapped, size);
        rc = 0;
    } else {
        t->grow_errno = errno;
    }
    if (own)
        close(fd);
    return rc;
}

int trace_open(trace_t *t, const char *path)
{
    memset(t, 0, sizeof *t);
    /* Keep the path absolute: the file is reopened by path to grow it,
     * and the program may change its directory meanwhile. */
    size_t at = 0, n = strlen(path);
    if (path[0] != '/') {
        if (!getcwd(t->path, sizeof t->path))
            return -errno;
        at = strlen(t->path);
        if (at > 1)
            t->path[at++] = '/';
        while (n > 2 && path[0] == '.' && path[1] == '/') {
            path += 2;
            n -= 2;
        }
    }
    if (at + n >= sizeof t->path)
        return -ENAMETOOLONG;
    memcpy(t->path + at, path, n + 1);
    path = t->path;
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    struct stat st;
    if (fstat(fd, &st)) {
        int e = errno;
        close(fd);
        unlink(path);
        return -e;
    }
    t->dev = st.st_dev;
    t->ino = st.st_ino;
    void *base = sys_mmap(NULL, TRACE_SPAN, PROT_NONE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) {
        close(fd);
        unlink(path);
        return -ENOMEM;
    }
    t->base = base;
    t->span = TRACE_SPAN;
    t->populated = t->trimmed = 0;
    pthread_mutex_init(&t->grow_lock, NULL);
    pthread_mutex_init(&t->tend_lock, NULL);
    int rc = grow_locked(t, TRACE_FIRST, fd);
    close(fd);
    if (rc) {
        sys_munmap(base, TRACE_SPAN);
        t->base = NULL;
        unlink(path);
        return -ENOSPC;
    }
    return 0;
}

char *trace_reserve(trace_t *t, size_t len, uint64_t *off)
{
    if (!t->base)
        return NULL;
    uint64_t at = atomic_fetch_add(&t->head, len);
    if (at & TRACE_CLOSED) {
        atomic_fetch_add(&t->after_end, 1); /* other threads, while exiting */
        return NULL;
    }
    if (at + len > atomic_load(&t->mapped)) {
        pthread_mutex_lock(&t->grow_lock);
        int rc = grow_locked(t, at + len, -1);
        pthread_mutex_unlock(&t->grow_lock);
        if (rc) {
            atomic_fetch_add(&t->dropped, 1);
            return NULL;
        }
    }
    if (off)
        *off = at;
    atomic_fetch_add(&t->records, 1);
    return t->base + at;
}

void trace_commit(trace_t *t, size_t len) { atomic_fetch_add(&t->committed, len); }

int trace_append(trace_t *t, const char *rec, size_t len)
{
    char *p = trace_reserve(t, len, NULL);
    if (!p)
        return -1;
    memcpy(p, rec, len);
    trace_commit(t, len);
    return 0;
}

int trace_close_with(trace_t *t, size_t len, trace_fill_fn fill, void *ctx,
                     uint64_t max_wait_ns)
{
    if (!t->base)
        return -1;
    uint64_t at = atomic_load(&t->head);
    do {
        if (at & TRACE_CLOSED)
            return -1;
    } while (!atomic_compare_exchange_weak(&t->head, &at, (at + len) | TRACE_CLOSED));
    uint64_t start = clock_ns();
    /* Another thread may be growing the file right now: wait for its lock,
     * but never block on it (a signal may have interrupted the grower,
     * which may be this very thread). */
    while (at + len > atomic_load(&t->mapped)) {
        if (pthread_mutex_trylock(&t->grow_lock) == 0) {
            int rc = grow_locked(t, at + len, -1);
            pthread_mutex_unlock(&t->grow_lock);
            if (rc)
                return -1;
            break;
        }
        if (clock_ns() - start > max_wait_ns)
            return -1;
        sched_yield();
    }
    /* Every byte below `at` was reserved before the close; wait for the
     * writers still copying (a bounded wait: one may be this very thread,
     * interrupted by the signal that is ending the process). */
    while (atomic_load(&t->committed) < at) {
        if (clock_ns() - start > max_wait_ns)
            break;
        sched_yield();
    }
    uint64_t records = atomic_fetch_add(&t->records, 1) + 1;
    fill(t->base + at, len, records, ctx);
    trace_commit(t, len);
    atomic_store(&t->end_at, at + len);
    return 0;
}

void trace_reopen(trace_t *t)
{
    /* trace_finish cut the file to its end; the mapping beyond must be
     * file again before anything is written there (or it would fault). */
    int fd = reopen(t);
    if (fd < 0 || extend(fd, atomic_load(&t->end_at), atomic_load(&t->mapped))) {
        if (fd >= 0)
            close(fd);
        return; /* stays closed: nothing can be written safely */
    }
    close(fd);
    uint64_t end = atomic_load(&t->end_at);
    uint64_t head = atomic_exchange(&t->head, end);
    (void)head; /* reservations made while closed were refused */
}

void trace_finish(trace_t *t)
{
    uint64_t end = atomic_load(&t->end_at);
    if (!t->base || !(atomic_load(&t->head) & TRACE_CLOSED))
        return;
    int fd = reopen(t);
    if (fd >= 0) {
        if (end < atomic_load(&t->mapped) && ftruncate(fd, (off_t)end)) {
            /* keep the NUL tail: readers stop at it */
        }
        close(fd);
    }
}

void trace_tend(trace_t *t)
{
    if (!t->base || pthread_mutex_trylock(&t->tend_lock))
        return;
    uint64_t head = atomic_load(&t->head) & ~TRACE_CLOSED;
    uint64_t mapped = atomic_load(&t->mapped);
    /* Ahead: the next pages faulted in writable in one call (a fault per
     * page costs about twice as much).  Linux >= 5.14; older kernels
     * fault as the writers go. */
    if (t->populated < head)
        t->populated = head & ~(uint64_t)4095;
    if (t->populated < head + TRACE_AHEAD / 2 && t->populated < mapped) {
        uint64_t to = t->populated + TRACE_AHEAD < mapped ? t->populated + TRACE_AHEAD : mapped;
        madvise(t->base + t->populated, to - t->populated, MADV_POPULATE_WRITE_);
        t->populated = to;
    }
    /* Behind: whole pages below the head, less a margin writers may still
     * be filling, given back; they stay in the file and the page cache (a
     * late writer just faults its page back in). */
    uint64_t upto = head > TRACE_BEHIND ? (head - TRACE_BEHIND) & ~(uint64_t)4095 : 0;
    if (upto >= t->trimmed + TRACE_AHEAD) {
        madvise(t->base + t->trimmed, upto - t->trimmed, MADV_DONTNEED);
        t->trimmed = upto;
    }
    pthread_mutex_unlock(&t->tend_lock);
}

void trace_forget(trace_t *t)
{
    if (t->base)
        sys_munmap(t->base, t->span);
    t->base = NULL;
    atomic_store(&t->head, 0);
    atomic_store(&t->mapped, 0);
    atomic_store(&t->records, 0);
    atomic_store(&t->dropped, 0);
    atomic_store(&t->after_end, 0);
    atomic_store(&t->end_at, 0);
    atomic_store(&t->committed, 0);
    t->populated = t->trimmed = 0;
    t->grow_errno = 0;
    pthread_mutex_init(&t->grow_lock, NULL);
    pthread_mutex_init(&t->tend_lock, NULL);
}
