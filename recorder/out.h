/*
 * out: the trace file of one traced process, written by its recorder.
 *
 * Records are appended to a buffer and written with write(2) when it
 * fills, when the recorder flushes (recorder.h: REC_FLUSH_NS,
 * REC_FRAME_MIN) and at the end.  Only whole
 * records reach the file.  Compressed (the default), each write is one
 * complete zstd frame: a recorder killed in the middle of one leaves a
 * file whose frames before it all decode.  Room for the end record is always kept: the
 * file is allocated OUT_RESERVE bytes ahead of what is written, no more
 * (fallocate with FALLOC_FL_KEEP_SIZE, from its creation, by blocks: a
 * small disk keeps its room for the program and the other traces), and
 * never grows past the file size limit (ulimit -f) less that reserve.  A record that does not fit
 * (a full disk, a quota, the limit) is counted as dropped, with the
 * cause; the end record still goes in, so readers reach it.  The file
 * holds an exclusive lock (flock) until out_close has given back the
 * room allocated ahead (ftruncate) and closed it: the traced process is
 * let go once its end record is written, before that, so a reader that
 * must know the recorder is done with the file takes a shared lock.
 */
#ifndef MEMSIM_RECORDER_OUT_H
#define MEMSIM_RECORDER_OUT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ipc/config.h"

#define OUT_BUF (1u << 20)      /* bytes buffered before a write */
#define OUT_RESERVE 4096u      /* bytes kept allocated ahead for the end record */
#define OUT_RECORD_MAX 4096     /* the largest record reserve_line hands out at once */

typedef struct out_s {
    int fd;              /* -1: closed */
    char path[PATH_MAX]; /* the trace file */
    char *buf;
    size_t len;          /* bytes buffered */
    uint64_t pending;    /* records buffered */
    uint64_t records;    /* records in the file or buffered */
    uint64_t dropped;    /* records that could not be written */
    uint64_t written;    /* bytes in the file */
    uint64_t allocated;  /* bytes allocated on disk (>= written) */
    uint64_t limit;      /* RLIMIT_FSIZE, or UINT64_MAX */
    int err;             /* why a record was dropped last, or 0 */
    bool full;           /* only the end record may still go in */
    struct ZSTD_CCtx_s *zc; /* compressing, or NULL */
    char *zbuf;          /* a frame */
    size_t zcap;
} out_t;

/* Create the trace of process pid (O_EXCL, mode 0600, never through a
 * symlink; the next counter when a name is taken), compressed when
 * cfg->compress.  0, or -1 with a one-line reason in err. */
int out_create(out_t *o, const config_t *cfg, const char *exe_base, long pid, char *err,
               size_t errlen);

/* Room for one record of at most max bytes (flushing first if needed). */
char *out_line(out_t *o, size_t max);
/* The record just written there is n bytes long (its '\n' included). */
void out_commit(out_t *o, size_t n);

/* Write what is buffered. */
void out_flush(out_t *o);
/* Whether the records buffered and an end record of n bytes fit, as one
 * frame, in what the file has allocated already: out_last then writes
 * them in one frame and one write (no record is dropped but by a failed
 * write), not the records and then the end (a short process's trace was
 * two frames, two compressions and two writes while it waited). */
bool out_last_fits(const out_t *o, size_t n);
/* The end record: whatever the file's state, it goes in. */
void out_last(out_t *o, const char *rec, size_t n);
void out_close(out_t *o);

#endif
