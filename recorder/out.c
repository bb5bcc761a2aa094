/*
 * out: the trace file.  See out.h.
 */
#include "recorder/out.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zstd.h>

/* The file is allocated to what is written and OUT_RESERVE past it,
 * in blocks, no more: on a small disk the trace takes no room the
 * program or the other traces of its tree would have had. */
#define ALLOC_STEP 4096u
#define ZSTD_LEVEL 1 /* fast, and about 5 times smaller (docs/preload.md) */

static uint64_t room_for(out_t *o, uint64_t more);

/* Closed traces' buffers, kept for the next ones: a recorder writes a
 * trace for every process of a tree, most of them short (a shell's
 * children), and mapping, compressing tables and all, cost each one.
 * Several: a shell's child's trace is still open when the program it
 * execs opens its own (with one spare kept, that second trace made and
 * freed a context and its buffers at every process of a shell loop). */
#define OUT_SPARES 4
static void *spare_buf[OUT_SPARES];  /* OUT_BUF bytes each, or NULL */
static void *spare_zc[OUT_SPARES];   /* ZSTD_CCtx */
static void *spare_zbuf[OUT_SPARES]; /* ZSTD_compressBound(OUT_BUF) bytes */

/* One of pool's, taken; NULL when it has none. */
static void *spare_take(void **pool)
{
    for (unsigned i = 0; i < OUT_SPARES; i++)
        if (pool[i]) {
            void *p = pool[i];
            pool[i] = NULL;
            return p;
        }
    return NULL;
}

/* p kept in pool; false when it is full. */
static bool spare_keep(void **pool, void *p)
{
    for (unsigned i = 0; i < OUT_SPARES; i++)
        if (!pool[i]) {
            pool[i] = p;
            return true;
        }
    return false;
}

int out_create(out_t *o, const config_t *cfg, const char *exe_base, long pid, char *err,
               size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->fd = -1;
    int e = EEXIST;
    for (unsigned n = 0; n < 10000 && e == EEXIST; n++) {
        if (config_trace_path(cfg, exe_base, pid, n, o->path, sizeof o->path)) {
            e = ENAMETOOLONG;
            break;
        }
        o->fd = open(o->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        e = o->fd < 0 ? errno : 0;
        if (!config_path_has_counter(cfg))
            break;
    }
    if (o->fd < 0) {
        struct rlimit nofile;
        if (e == EMFILE && getrlimit(RLIMIT_NOFILE, &nofile) == 0)
            snprintf(err, errlen, "memsim: cannot create the trace file %.400s: %s (the "
                                  "descriptor limit, ulimit -n, is %llu); tracing is off",
                     o->path, strerror(e), (unsigned long long)nofile.rlim_cur);
        else
            snprintf(err, errlen, "memsim: cannot create the trace file %.400s: %s; tracing is off",
                     o->path, strerror(e));
        return -1;
    }
    /* Held until the file is closed: memsim run knows a trace is
     * finished when it can take a shared lock (cli/run_results.c). */
    if (flock(o->fd, LOCK_EX | LOCK_NB)) {
    }
    o->buf = spare_take(spare_buf);
    if (!o->buf)
        o->buf = mmap(NULL, OUT_BUF, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (o->buf == MAP_FAILED) {
        close(o->fd);
        unlink(o->path);
        o->fd = -1;
        snprintf(err, errlen, "memsim: out of memory for the trace %.400s; tracing is off", o->path);
        return -1;
    }
    /* The file size limit: the recorder's own (the tree's first
     * process's, put back when it started) or the traced process's, the
     * lower: a program exec'd under `ulimit -f` joins the tree's running
     * recorder, and its trace keeps to its limit all the same. */
    struct rlimit rl;
    o->limit = getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
                   ? (uint64_t)rl.rlim_cur
                   : UINT64_MAX;
    if (pid > 0 && prlimit((pid_t)pid, RLIMIT_FSIZE, NULL, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (uint64_t)rl.rlim_cur < o->limit)
        o->limit = (uint64_t)rl.rlim_cur;
    /* The end record's room at once: the disk may fill before the
     * first flush.  On a disk full already, room_for tries again at
     * each flush (the line at exit says what was not written). */
    room_for(o, 0);
    o->err = 0;
    if (cfg->compress) {
        o->zcap = ZSTD_compressBound(OUT_BUF);
        o->zbuf = spare_take(spare_zbuf);
        if (!o->zbuf)
            o->zbuf = malloc(o->zcap);
        o->zc = spare_take(spare_zc);
        if (!o->zc)
            o->zc = ZSTD_createCCtx();
        if (o->zc)
            ZSTD_CCtx_reset(o->zc, ZSTD_reset_session_and_parameters);
        if (!o->zbuf || !o->zc ||
            ZSTD_isError(ZSTD_CCtx_setParameter(o->zc, ZSTD_c_compressionLevel, ZSTD_LEVEL)) ||
            /* A damaged frame is found, not read as records. */
            ZSTD_isError(ZSTD_CCtx_setParameter(o->zc, ZSTD_c_checksumFlag, 1))) {
            out_close(o);
            unlink(o->path);
            snprintf(err, errlen, "memsim: out of memory to compress %.400s; tracing is off",
                     o->path);
            return -1;
        }
    }
    return 0;
}

/* n bytes of records as they go to the file: themselves, or one zstd
 * frame of them; NULL when zstd fails. */
static const char *encoded(out_t *o, const char *p, size_t n, size_t *out)
{
    if (!o->zc) {
        *out = n;
        return p;
    }
    size_t z = ZSTD_compress2(o->zc, o->zbuf, o->zcap, p, n);
    if (ZSTD_isError(z)) {
        o->err = EIO;
        return NULL;
    }
    *out = z;
    return o->zbuf;
}

/* How many of the next `more` bytes the file takes while keeping
 * OUT_RESERVE allocated past them for the end record: all of them, or
 * fewer at the file size limit or when the disk is full (o->err says
 * which). */
static uint64_t room_for(out_t *o, uint64_t more)
{
    uint64_t want = o->written + more + OUT_RESERVE;
    if (o->limit != UINT64_MAX && want > o->limit) {
        o->err = EFBIG;
        want = o->limit;
    }
    if (want > o->allocated) {
        uint64_t to = (want + ALLOC_STEP - 1) / ALLOC_STEP * ALLOC_STEP;
        if (o->limit != UINT64_MAX && to > o->limit)
            to = o->limit;
        int rc;
        do
            rc = fallocate(o->fd, FALLOC_FL_KEEP_SIZE, (off_t)o->allocated,
                           (off_t)(to - o->allocated));
        while (rc && errno == EINTR);
        if (rc == 0)
            o->allocated = to;
        else if (errno == EOPNOTSUPP || errno == ENOSYS) /* no fallocate here: hope */
            o->allocated = UINT64_MAX;
        else
            o->err = errno;
    }
    uint64_t top = want < o->allocated ? want : o->allocated;
    return top > o->written + OUT_RESERVE ? top - o->written - OUT_RESERVE : 0;
}

static bool write_all(out_t *o, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(o->fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            o->err = w < 0 ? errno : EIO;
            return false;
        }
        o->written += (uint64_t)w;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

/* Records (lines) in n bytes of p. */
static uint64_t lines(const char *p, size_t n)
{
    uint64_t k = 0;
    for (const char *q = p; (q = memchr(q, '\n', (size_t)(p + n - q))); q++)
        k++;
    return k;
}

/* The first whole records of p[0, n) whose frame fits in room bytes,
 * written; how many bytes of p they were (0: not even one fits). */
static size_t write_fitting_frames(out_t *o, const char *p, size_t n, size_t room)
{
    size_t done = 0;
    while (done < n) {
        size_t cut = n - done, z = 0;
        const char *bytes = NULL;
        for (;;) {
            bytes = encoded(o, p + done, cut, &z);
            if (!bytes || z <= room)
                break;
            size_t half = cut / 2; /* whole records: back to a '\n' */
            while (half && p[done + half - 1] != '\n')
                half--;
            if (!half)
                return done;
            cut = half;
        }
        if (!bytes || !write_all(o, bytes, z))
            return done;
        done += cut;
        room -= z;
    }
    return done;
}

void out_flush(out_t *o)
{
    if (o->fd < 0 || !o->len)
        return;
    size_t n;
    const char *bytes = encoded(o, o->buf, o->len, &n);
    size_t room = !bytes || o->full ? 0 : (size_t)room_for(o, n);
    if (bytes && room >= n) {
        if (!write_all(o, bytes, n)) {
            o->dropped += lines(o->buf, o->len);
            o->full = true;
        }
    } else if (bytes) {
        /* Whole records only: as many as the file takes, the rest dropped. */
        size_t fit = room;
        if (o->zc) {
            fit = write_fitting_frames(o, o->buf, o->len, room);
        } else {
            while (fit && o->buf[fit - 1] != '\n')
                fit--;
            if (fit && !write_all(o, o->buf, fit))
                fit = 0;
        }
        o->dropped += lines(o->buf + fit, o->len - fit);
        o->full = true;
    } else {
        o->dropped += lines(o->buf, o->len);
        o->full = true;
    }
    o->len = 0;
    o->pending = 0;
}

char *out_line(out_t *o, size_t max)
{
    if (o->len + max > OUT_BUF)
        out_flush(o);
    return o->buf + o->len;
}

void out_commit(out_t *o, size_t n)
{
    o->len += n;
    o->pending++;
    o->records++;
}

bool out_last_fits(const out_t *o, size_t n)
{
    if (o->fd < 0 || o->full || !o->len || o->len + n > OUT_BUF)
        return false;
    uint64_t bound = o->zc ? ZSTD_compressBound(o->len + n) : o->len + n;
    return o->written + bound <= o->allocated;
}

void out_last(out_t *o, const char *rec, size_t n)
{
    if (out_last_fits(o, n)) { /* one frame, one write */
        memcpy(o->buf + o->len, rec, n);
        o->len += n;
        o->records++;
        size_t z;
        const char *bytes = encoded(o, o->buf, o->len, &z);
        if (!bytes || !write_all(o, bytes, z))
            o->dropped += lines(o->buf, o->len);
        o->len = 0;
        o->pending = 0;
        return;
    }
    out_flush(o);
    if (o->fd < 0)
        return;
    o->records++;
    size_t z;
    const char *bytes = encoded(o, rec, n, &z);
    if (!bytes || !write_all(o, bytes, z))
        o->dropped++;
}

void out_close(out_t *o)
{
    out_flush(o);
    if (o->fd >= 0) {
        /* Give back what was allocated ahead and never written. */
        if (ftruncate(o->fd, (off_t)o->written)) {
        }
        close(o->fd);
    }
    o->fd = -1;
    /* Kept for the next traces while there is room (else given back). */
    if (o->zc && !spare_keep(spare_zc, o->zc))
        ZSTD_freeCCtx(o->zc);
    if (o->zbuf && !spare_keep(spare_zbuf, o->zbuf))
        free(o->zbuf);
    if (o->buf && o->buf != MAP_FAILED && !spare_keep(spare_buf, o->buf))
        munmap(o->buf, OUT_BUF);
    o->zc = NULL;
    o->zbuf = NULL;
    o->buf = NULL;
    o->len = 0;
}
