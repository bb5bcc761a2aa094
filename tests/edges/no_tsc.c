/*
 * no_tsc: a program that turns the TSC off for itself,
 * prctl(PR_SET_TSC, PR_TSC_SIGSEGV): from there a rdtsc, and the vDSO's
 * clock_gettime with it (the kernel keeps time with the TSC), is a
 * SIGSEGV in this thread, the threads it creates and its fork's
 * children (and in the programs it would exec: their loader faults
 * natively).  Then it works on the heap.
 *
 *   no_tsc N        N malloc/free pairs here, N in a new thread, N in a
 *                   fork's child (waited for)
 *
 * Each prints its checksum: "main S", "thread S", "child S".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static long n;

static unsigned long pairs(void)
{
    unsigned long sum = 0;
    for (long i = 0; i < n; i++) {
        size_t size = 16 + (size_t)(i % 97) * 8;
        unsigned char *p = malloc(size);
        if (!p)
            return 0;
        memset(p, (int)(i & 0xff), size);
        sum += p[size - 1] + size;
        free(p);
    }
    return sum;
}

static void *thread_main(void *arg)
{
    (void)arg;
    printf("thread %lu\n", pairs());
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    n = atol(argv[1]);
    if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0))
        return 3;
    printf("main %lu\n", pairs());
    pthread_t t;
    if (pthread_create(&t, NULL, thread_main, NULL) || pthread_join(t, NULL))
        return 4;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        printf("child %lu\n", pairs());
        exit(0);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || st != 0)
        return 5;
    return 0;
}
