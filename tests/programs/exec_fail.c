/*
 * exec_fail: exec calls that fail while another thread allocates.
 *
 * A thread allocates and frees tagged blocks (size % 4096 == 777) in a
 * loop, counting them, while main sets PATH to five directories that
 * do not exist and calls execvp("no-such-program-xyz", ...) 20 times
 * (each fails with ENOENT), then stops and joins the thread and prints
 * "execs_failed=20 enoent=20 tagged=N": N the thread's allocations, each
 * of them a tagged allocation in the trace.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static atomic_bool stop;
static atomic_bool going;
static unsigned long tagged;

static void *churn(void *arg)
{
    (void)arg;
    void *keep[16] = {0};
    for (unsigned long n = 0; !atomic_load(&stop); n++) {
        unsigned i = (unsigned)(n % 16);
        free(keep[i]);
        keep[i] = malloc((size_t)4096 * (n % 8) + 777);
        if (!keep[i])
            exit(1);
        memset(keep[i], (int)n, 16);
        tagged++;
        atomic_store(&going, true);
    }
    for (int i = 0; i < 16; i++)
        free(keep[i]);
    return NULL;
}

int main(void)
{
    if (setenv("PATH", "/nonexistent-a:/nonexistent-b:/nonexistent-c:/nonexistent-d:"
                       "/nonexistent-e", 1))
        return 1;
    pthread_t t;
    if (pthread_create(&t, NULL, churn, NULL))
        return 1;
    while (!atomic_load(&going))
        ;
    int failed = 0, enoent = 0;
    char *argv[] = {"no-such-program-xyz", NULL};
    for (int i = 0; i < 20; i++) {
        execvp(argv[0], argv);
        failed++;
        enoent += errno == ENOENT;
    }
    atomic_store(&stop, true);
    pthread_join(t, NULL);
    printf("execs_failed=%d enoent=%d tagged=%lu\n", failed, enoent, tagged);
    return 0;
}
