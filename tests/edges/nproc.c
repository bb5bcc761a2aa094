/*
 * nproc: a program that forks up to its user's process limit.
 *
 *   nproc N
 *
 * Forks N children that all stay until the last is forked (each waits
 * for the end of a pipe), then lets them go and waits for them.  Each
 * child allocates and frees a tagged block (size % 4096 == 777) before
 * it waits.  Prints "forks=N failed=F" (F: forks that failed, with the
 * first failure's errno name) and exits 0 when none failed, 1 otherwise.
 * Run under `ulimit -u` as a user of its own: natively it needs N + 1
 * processes of that user.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    int n = atoi(argv[1]), failed = 0, first = 0;
    int gate[2];
    if (n < 1 || n > 1000 || pipe(gate))
        return 2;
    pid_t *kids = calloc((size_t)n, sizeof *kids);
    if (!kids)
        return 2;
    for (int i = 0; i < n; i++) {
        kids[i] = fork();
        if (kids[i] == 0) {
            close(gate[1]);
            char *p = malloc(4096 + 777);
            if (p)
                memset(p, 1, 64);
            free(p);
            char c;
            while (read(gate[0], &c, 1) < 0 && errno == EINTR)
                ;
            _exit(p ? 0 : 3);
        }
        if (kids[i] < 0 && !failed++)
            first = errno;
    }
    close(gate[1]);
    for (int i = 0; i < n; i++)
        if (kids[i] > 0)
            waitpid(kids[i], NULL, 0);
    printf("forks=%d failed=%d%s%s\n", n, failed, failed ? " " : "",
           failed ? (first == EAGAIN ? "EAGAIN" : strerror(first)) : "");
    free(kids);
    return failed != 0;
}
