/*
 * spool: an unlinked temporary file of bytes.  See spool.h.
 */
#include "analyzer/consume/spool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SPOOL_BUF (1u << 20) /* written out in writes of about this much */

int spool_open(spool_t *sp)
{
    memset(sp, 0, sizeof *sp);
    sp->fd = -1;
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    snprintf(sp->dir, sizeof sp->dir, "%s", dir);
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
        /* no O_TMPFILE here: a named file, unlinked at once */
        char path[sizeof sp->dir + 32];
        snprintf(path, sizeof path, "%s/memsim-spool.XXXXXX", dir);
        fd = mkostemp(path, O_CLOEXEC);
        if (fd >= 0)
            unlink(path);
    }
    if (fd < 0 || !(sp->buf = malloc(SPOOL_BUF))) {
        sp->err = fd < 0 ? errno : ENOMEM;
        if (fd >= 0)
            close(fd);
        return -1;
    }
    sp->fd = fd;
    sp->cap = SPOOL_BUF;
    return 0;
}

int spool_flush(spool_t *sp)
{
    if (sp->fd < 0 || sp->err)
        return -1;
    size_t done = 0;
    while (done < sp->n) {
        ssize_t k = write(sp->fd, sp->buf + done, sp->n - done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            sp->err = k < 0 ? errno : ENOSPC;
            break;
        }
        done += (size_t)k;
        sp->written += (uint64_t)k;
    }
    memmove(sp->buf, sp->buf + done, sp->n - done);
    sp->n -= done;
    return sp->err ? -1 : 0;
}

uint8_t *spool_room(spool_t *sp, size_t len)
{
    if (sp->fd < 0 || sp->err || len > SPOOL_MAX_APPEND)
        return NULL;
    if (sp->cap - sp->n < len && spool_flush(sp))
        return NULL;
    return sp->buf + sp->n;
}

long spool_read(const spool_t *sp, uint64_t off, void *out, size_t len)
{
    if (off < sp->written) { /* the file's part */
        if (len > sp->written - off)
            len = (size_t)(sp->written - off);
        for (;;) {
            ssize_t k = pread(sp->fd, out, len, (off_t)off);
            if (k >= 0 || errno != EINTR)
                return (long)k;
        }
    }
    uint64_t at = off - sp->written; /* the buffer's */
    if (at >= sp->n)
        return 0;
    if (len > sp->n - at)
        len = (size_t)(sp->n - at);
    memcpy(out, sp->buf + at, len);
    return (long)len;
}

void spool_close(spool_t *sp)
{
    if (sp->fd >= 0)
        close(sp->fd);
    free(sp->buf);
    sp->fd = -1;
    sp->buf = NULL;
    sp->n = sp->cap = 0;
}
