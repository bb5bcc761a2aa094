/*
 * main_exit: main ends with pthread_exit, the process with its last thread.
 *
 * main prints "main: started" and starts one thread, then calls
 * pthread_exit(NULL).  The thread allocates and frees 1000 tagged
 * blocks (size % 4096 == 777), prints "thread: 1000 blocks" and
 * returns; the process then exits with status 0, as when the last
 * thread of a process ends.  stdout is never flushed by hand: the
 * output appears only if exit's stdio flush runs.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *work(void *arg)
{
    (void)arg;
    int n = 0;
    for (int i = 0; i < 1000; i++) {
        char *p = malloc((size_t)4096 * (i % 4) + 777);
        if (!p)
            exit(1);
        memset(p, i, 777);
        free(p);
        n++;
    }
    printf("thread: %d blocks\n", n);
    return NULL;
}

int main(void)
{
    printf("main: started\n");
    pthread_t t;
    if (pthread_create(&t, NULL, work, NULL))
        return 1;
    pthread_exit(NULL);
}
