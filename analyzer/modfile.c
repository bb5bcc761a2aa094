/*
 * modfile: see modfile.h.
 */
#include "analyzer/modfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What a file that is not regular is, for a message. */
static const char *kind(mode_t mode)
{
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISSOCK(mode))
        return "a socket";
    return "a special file";
}

static int refuse(mode_t mode, char *why, size_t len)
{
    snprintf(why, len, "%s, not a regular file", kind(mode));
    return -1;
}

int modfile_open(const char *path, char *why, size_t len)
{
    struct stat st;
    /* Looked at first, so that anything but a regular file is never
     * opened at all (opening is what a device acts on). */
    if (stat(path, &st)) {
        snprintf(why, len, "cannot open it: %s", strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode))
        return refuse(st.st_mode, why, len);
    /* The path may be replaced in between, so what was opened is checked
     * again.  O_NONBLOCK: a FIFO put there opens at once instead of
     * waiting for a writer (reading a regular file ignores the flag);
     * O_NOCTTY: a terminal put there does not become ours. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        snprintf(why, len, "cannot open it: %s", strerror(errno));
        return -1;
    }
    if (fstat(fd, &st)) {
        snprintf(why, len, "cannot open it: %s", strerror(errno));
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return refuse(st.st_mode, why, len);
    }
    return fd;
}
