/*
 * fork_threads: fork() from three threads at once.
 *
 *   fork_threads
 *
 * Three threads each fork 20 children as fast as they can, together
 * (a barrier lets them go at once).  Before each fork the thread
 * allocates a tagged block (size % 4096 == 777) that the child frees;
 * each child also allocates and frees two tagged blocks of its own and
 * leaves with _exit(0) or exit(0) in turn.  The threads wait for their
 * own children; main prints "forks=60 failed=0" (failed: a fork, a wait
 * or a child's status that went wrong) and exits 0.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADS 3
#define FORKS 20
#define TAGGED(k) ((size_t)4096 * (k) + 777)

static pthread_barrier_t go;
static int failed[THREADS];

static void child(int n, char *inherited)
{
    int ok = inherited[0] == (char)n;
    free(inherited);
    for (unsigned k = 1; k <= 2; k++) {
        char *p = malloc(TAGGED(k));
        if (!p)
            _exit(3);
        memset(p, 'c', TAGGED(k));
        ok &= p[TAGGED(k) - 1] == 'c';
        free(p);
    }
    if (n % 2)
        _exit(ok ? 0 : 4);
    exit(ok ? 0 : 4);
}

static void *forker(void *arg)
{
    int me = (int)(long)arg;
    pid_t kids[FORKS];
    pthread_barrier_wait(&go);
    for (int n = 0; n < FORKS; n++) {
        char *block = malloc(TAGGED(n % 8));
        if (!block) {
            kids[n] = -1;
            failed[me]++;
            continue;
        }
        block[0] = (char)n;
        kids[n] = fork();
        if (kids[n] == 0)
            child(n, block);
        if (kids[n] < 0)
            failed[me]++;
        free(block);
    }
    for (int n = 0; n < FORKS; n++) {
        int status;
        if (kids[n] > 0 && (waitpid(kids[n], &status, 0) != kids[n] || !WIFEXITED(status) ||
                            WEXITSTATUS(status)))
            failed[me]++;
    }
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    pthread_barrier_init(&go, NULL, THREADS);
    for (long i = 0; i < THREADS; i++)
        if (pthread_create(&t[i], NULL, forker, (void *)i)) {
            fprintf(stderr, "fork_threads: pthread_create failed\n");
            return 1;
        }
    int bad = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        bad += failed[i];
    }
    printf("forks=%d failed=%d\n", THREADS * FORKS, bad);
    return bad != 0;
}
