/*
 * tree_touch: a process tree whose memory is spread over its children,
 * for the tests of `memsim run` (the RSS of the whole tree counts).
 *
 *   tree_touch N MB HOLD_MS   fork N children; each writes every page of
 *                             MB MiB and holds them HOLD_MS; the parent
 *                             waits for all and exits 0 if all exited 0
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIB ((size_t)1 << 20)
#define PAGE 4096

static int child(size_t mb, long hold_ms)
{
    volatile char *p = malloc(mb * MIB);
    if (!p)
        return 1;
    for (size_t i = 0; i < mb * MIB; i += PAGE)
        p[i] = (char)(i / PAGE + 1);
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
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0)
            return 1;
        if (pid == 0)
            exit(child(mb, hold));
    }
    int bad = 0, st;
    while (wait(&st) > 0)
        bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    return bad;
}
