/*
 * spool: an append-only stream of bytes in an unlinked temporary file,
 * written by one thread and read back at any offset by any number.
 *
 * The file is made in $TMPDIR (else /tmp) with O_TMPFILE, or where the
 * file system has none with mkstemp and an immediate unlink: it has no
 * name, and disappears with the process however it ends.  Appends go
 * through a buffer written out when full; a failed write (a full disk,
 * the file size limit) keeps the bytes not written in the buffer, so
 * the stream stays whole: spool_read reads the file's part, then the
 * buffer's.  After a failure nothing more is appended.
 */
#ifndef MEMSIM_ANALYZER_SPOOL_H
#define MEMSIM_ANALYZER_SPOOL_H

#include <stddef.h>
#include <stdint.h>

typedef struct spool_s {
    int fd;            /* the file, or -1 */
    char dir[256];     /* the directory it is in (for messages) */
    int err;           /* errno of the first failure; 0: none */
    uint8_t *buf;      /* bytes appended, not yet written */
    size_t n, cap;
    uint64_t written;  /* bytes in the file: the stream's first ones */
} spool_t;

/* An empty spool.  0, or -1 with sp->err and sp->dir set. */
int spool_open(spool_t *sp);
/* Room for len more bytes at the stream's end (len <= SPOOL_MAX_APPEND),
 * writing the buffer out first if it must; NULL once a write failed
 * (sp->err) or when nothing is open. */
#define SPOOL_MAX_APPEND (512u << 10)
uint8_t *spool_room(spool_t *sp, size_t len);
/* The first len bytes of the room become the stream's. */
static inline void spool_commit(spool_t *sp, size_t len) { sp->n += len; }
/* Write the buffer out: 0, or -1 with sp->err (what was not written
 * stays in the buffer, and spool_read still reads it). */
int spool_flush(spool_t *sp);
/* The stream's length in bytes. */
static inline uint64_t spool_size(const spool_t *sp) { return sp->written + sp->n; }
/* Up to len bytes of the stream from off into out: the count read (0 at
 * the end), or -1 with errno.  Safe from any thread while nothing is
 * appended. */
long spool_read(const spool_t *sp, uint64_t off, void *out, size_t len);
void spool_close(spool_t *sp);

#endif
