/*
 * fork_mt: fork while other threads allocate.
 *
 * Four threads malloc and free in a loop until told to stop; meanwhile
 * the main thread forks 20 times.  Before each fork it allocates a
 * tagged block (size % 4096 == 777) that the child frees (a free of
 * memory the child inherited); each child also allocates and frees a few
 * tagged blocks of its own, then leaves with _exit(0) or exit(0) in
 * turn.  The parent waits for each child, stops the threads and prints
 * "forks=20 ok".  A deadlock in fork handling hangs it: run it under
 * timeout.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADS 4
#define FORKS 20
#define TAGGED(k) ((size_t)4096 * (k) + 777)

static atomic_bool stop;
static atomic_ulong rounds;

static void *churn(void *arg)
{
    uint64_t x = (uintptr_t)arg * 2654435761u + 1;
    void *keep[16] = {0};
    while (!atomic_load(&stop)) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        unsigned i = (unsigned)(x % 16);
        free(keep[i]);
        keep[i] = malloc(16 + (size_t)(x >> 40) % 2000);
        if (keep[i])
            memset(keep[i], (int)i, 16);
        atomic_fetch_add(&rounds, 1);
    }
    for (unsigned i = 0; i < 16; i++)
        free(keep[i]);
    return NULL;
}

static void child(int n, char *inherited)
{
    int ok = inherited[0] == (char)n;
    free(inherited);
    for (unsigned k = 0; k < 4; k++) {
        char *p = malloc(TAGGED(k));
        if (!p)
            _exit(3);
        memset(p, 'c', TAGGED(k));
        ok &= p[TAGGED(k) - 1] == 'c';
        free(p);
    }
    int status = ok ? 0 : 4;
    if (n % 2)
        _exit(status);
    exit(status);
}

int main(void)
{
    pthread_t t[THREADS];
    for (uintptr_t i = 0; i < THREADS; i++)
        if (pthread_create(&t[i], NULL, churn, (void *)i)) {
            fprintf(stderr, "fork_mt: pthread_create failed\n");
            return 1;
        }
    /* Let the threads get going, so the forks land in the middle of it. */
    while (atomic_load(&rounds) < 10000)
        sched_yield();
    fflush(stdout);
    int failures = 0;
    for (int n = 0; n < FORKS; n++) {
        char *block = malloc(TAGGED(n % 16));
        if (!block)
            return 1;
        block[0] = (char)n;
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork_mt: fork");
            return 1;
        }
        if (pid == 0)
            child(n, block);
        free(block);
        int status;
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
            fprintf(stderr, "fork_mt: child %d failed (status 0x%x)\n", n, status);
            failures++;
        }
    }
    atomic_store(&stop, true);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    if (failures)
        return 1;
    printf("forks=%d ok\n", FORKS);
    return 0;
}
