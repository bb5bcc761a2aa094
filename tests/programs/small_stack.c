/*
 * small_stack: the malloc family on a thread with the smallest stack
 * POSIX allows (PTHREAD_STACK_MIN, set with pthread_attr_setstacksize).
 *
 * The thread calls malloc, calloc, realloc, posix_memalign and free on
 * tagged sizes (size % 4096 == 777), five rounds; main joins it and
 * prints "small_stack: 20 blocks ok".  Exit status 0; a stack overflow
 * is a SIGSEGV.
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *work(void *arg)
{
    int *blocks = arg;
    for (int r = 0; r < 5; r++) {
        char *a = malloc(777);
        char *b = calloc(1, 4096 + 777);
        void *c = NULL;
        if (!a || !b || posix_memalign(&c, 64, 2 * 4096 + 777))
            return NULL;
        a = realloc(a, 3 * 4096 + 777);
        if (!a)
            return NULL;
        memset(a, r, 777);
        memset(c, r, 777);
        free(a);
        free(b);
        free(c);
        *blocks += 4;
    }
    return NULL;
}

int main(void)
{
    pthread_attr_t attr;
    pthread_t t;
    int blocks = 0;
    if (pthread_attr_init(&attr) || pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN) ||
        pthread_create(&t, &attr, work, &blocks) || pthread_join(t, NULL))
        return 1;
    printf("small_stack: %d blocks %s\n", blocks, blocks == 20 ? "ok" : "missing");
    return blocks == 20 ? 0 : 1;
}
