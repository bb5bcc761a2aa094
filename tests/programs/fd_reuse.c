/*
 * fd_reuse: the lowest free descriptor is the program's to take.
 *
 *   fd_reuse LOG [MS]          MS defaults to 1500
 *
 * For MS milliseconds the main thread loops: close fd 3, open LOG with
 * O_APPEND (POSIX: the lowest free number, which must be 3; otherwise it
 * prints "got fd N" and counts a mismatch), write the line "line K"
 * through it, dup2() it onto fd 4 (a failure such as EBUSY or EBADF is
 * printed as "dup2: ERRNO-NAME" and counted) and close both.  A second
 * thread mallocs and frees meanwhile.  Then it reads LOG back and checks
 * it holds exactly "line 1" .. "line K" in order, with no NUL byte.
 * Prints "mismatches=N dup2_failures=N writes_failed=N log=ok" (or
 * log=bad: WHY); exit status 0 when all are zero and the log is right.
 * The number of lines K goes to LOG.count, not to stdout, so that the
 * output does not depend on the speed of the machine.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static atomic_bool stop;

static void *churn(void *arg)
{
    (void)arg;
    void *keep[64] = {0};
    unsigned x = 1;
    while (!atomic_load(&stop)) {
        x = x * 1103515245u + 12345u;
        unsigned i = (x >> 16) % 64;
        free(keep[i]);
        keep[i] = malloc(16 + (x >> 8) % 2000);
        struct timespec ts = {0, 20000}; /* 20 us: a steady, modest trace */
        if (i % 8 == 0)
            nanosleep(&ts, NULL);
    }
    for (int i = 0; i < 64; i++)
        free(keep[i]);
    return NULL;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static const char *ename(int e)
{
    switch (e) {
    case EBUSY: return "EBUSY";
    case EBADF: return "EBADF";
    case EINTR: return "EINTR";
    case EMFILE: return "EMFILE";
    default: return "other";
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: fd_reuse LOG [MS]\n");
        return 2;
    }
    const char *log = argv[1];
    double ms = argc > 2 ? atof(argv[2]) : 1500;
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || close(fd))
        return 1;
    pthread_t t;
    if (pthread_create(&t, NULL, churn, NULL))
        return 1;
    long lines = 0, mismatches = 0, dup2_failures = 0, writes_failed = 0;
    double end = now_ms() + ms;
    while (now_ms() < end) {
        close(3);
        fd = open(log, O_WRONLY | O_APPEND);
        if (fd < 0) {
            printf("open: %s\n", strerror(errno));
            mismatches++;
            continue;
        }
        if (fd != 3) {
            printf("got fd %d\n", fd);
            mismatches++;
        }
        char line[32];
        int n = snprintf(line, sizeof line, "line %ld\n", lines + 1);
        if (write(fd, line, (size_t)n) == n)
            lines++;
        else
            writes_failed++;
        int rc = dup2(fd, 4);
        if (rc != 4) {
            printf("dup2: %s\n", ename(errno));
            dup2_failures++;
        }
        close(fd);
        close(4);
    }
    atomic_store(&stop, true);
    pthread_join(t, NULL);

    /* Read it back. */
    const char *why = NULL;
    FILE *f = fopen(log, "r");
    if (!f) {
        why = "cannot reopen it";
    } else {
        char buf[64];
        long k = 0;
        size_t len;
        while (!why && fgets(buf, sizeof buf, f)) {
            len = strlen(buf);
            char want[32];
            snprintf(want, sizeof want, "line %ld\n", ++k);
            if (memchr(buf, '\0', len + 1) != buf + len || strcmp(buf, want))
                why = "a line out of place (or a NUL byte)";
        }
        if (!why && ferror(f))
            why = "read error";
        if (!why && k != lines)
            why = "a line count that is not the number written";
        fclose(f);
    }
    char cpath[4096];
    snprintf(cpath, sizeof cpath, "%s.count", log);
    FILE *c = fopen(cpath, "w");
    if (c) {
        fprintf(c, "%ld\n", lines);
        fclose(c);
    }
    printf("mismatches=%ld dup2_failures=%ld writes_failed=%ld log=%s%s\n", mismatches,
           dup2_failures, writes_failed, why ? "bad: " : "ok", why ? why : "");
    return mismatches || dup2_failures || writes_failed || why ? 1 : 0;
}
