/*
 * say: one-line messages, only to the stderr the process started with.
 * See say.h.
 */
#include "preload/say.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ipc/seccomp.h"

static bool had;    /* descriptor 2 was open at start */
static dev_t dev;   /* ...and was this file */
static ino_t ino;

void say_init(void)
{
    struct stat st;
    had = fstat(2, &st) == 0;
    if (had) {
        dev = st.st_dev;
        ino = st.st_ino;
    }
}

/* glibc's fstat is newfstatat(fd, "", buf, AT_EMPTY_PATH): asked as such
 * of a seccomp sandbox, as is the write. */
bool say_can(void)
{
    struct stat st;
    return had && seccomp_allows(SYS_newfstatat, 2, (long)"", (long)&st, AT_EMPTY_PATH, 0, 0) &&
           seccomp_allows(SYS_write, 2, 4096, 1, 0, 0, 0) && fstat(2, &st) == 0 &&
           st.st_dev == dev && st.st_ino == ino;
}

void say(const char *line)
{
    if (!say_can())
        return;
    size_t n = strlen(line);
    ssize_t rc = write(2, line, n);
    if (n && line[n - 1] != '\n')
        rc = write(2, "\n", 1);
    (void)rc;
}
