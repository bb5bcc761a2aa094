/*
 * tree_touch: a process tree whose memory is spread over its children,
 * for the tests of `memsim run` (the RSS of the whole tree counts).
 *
 *   tree_touch N MB HOLD_MS   fork N children; each writes every page of
 *                             MB MiB; once all have, each holds them
 *                             HOLD_MS; the parent waits for all and exits
 *                             0 if all exited 0
 *
 * The children hold together however the machine schedules them (each
 * says it is done on a pipe, the parent lets all go at once on another):
 * the tree's RSS reaches N * MB MiB for HOLD_MS.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIB ((size_t)1 << 20)
#define PAGE 4096

static int done[2], go[2]; /* child to parent: touched; parent to children: hold */

static int child(size_t mb, long hold_ms)
{
    close(done[0]);
    close(go[1]);
    volatile char *p = malloc(mb * MIB);
    if (!p)
        return 1;
    for (size_t i = 0; i < mb * MIB; i += PAGE)
        p[i] = (char)(i / PAGE + 1);
    char c = 1;
    if (write(done[1], &c, 1) != 1)
        return 1;
    close(done[1]); /* the parent's read ends once every child has written or gone */
    if (read(go[0], &c, 1) != 1)
        return 1;
    struct timespec ts = {hold_ms / 1000, (hold_ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
    free((char *)p);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: tree_touch N MB HOLD_MS\n");
        return 2;
    }
    int n = atoi(argv[1]);
    size_t mb = strtoul(argv[2], NULL, 10);
    long hold = strtol(argv[3], NULL, 10);
    if (pipe(done) || pipe(go))
        return 1;
    int forked = 0;
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0)
            break;
        if (pid == 0)
            exit(child(mb, hold));
        forked++;
    }
    /* A child that failed (no memory) closes its end as it exits, the
     * others once they have written: no read waits for a child gone. */
    close(done[1]);
    char c;
    for (int i = 0; i < forked && read(done[0], &c, 1) == 1; i++)
        ;
    close(go[0]);
    for (int i = 0; i < forked; i++)
        if (write(go[1], &c, 1) != 1)
            break;
    close(go[1]);
    int bad = forked < n, st;
    while (wait(&st) > 0)
        bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    return bad;
}
