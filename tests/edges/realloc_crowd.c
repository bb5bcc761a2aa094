/*
 * More threads inside realloc at once than memsim's recorder once had
 * room for (256).  Run with libcrowd.so preloaded (after libmemsim.so):
 * each of N threads reallocs a small block to 100 bytes and waits inside
 * the call until every one is there; the main thread then frees N blocks
 * of 100 bytes, which (one arena, no tcache: see realloc_crowd.sh) the
 * waiting reallocs get as their new blocks.  In the trace, each free must
 * come before the realloc that got its block.
 *
 *   realloc_crowd N
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct crowd_gate {
    _Atomic int inside, open;
};

static void *one(void *arg)
{
    (void)arg;
    char *p = malloc(24);
    if (!p)
        return NULL;
    memset(p, 1, 24);
    char *q = realloc(p, 100);
    if (q)
        memset(q, 2, 100);
    return q;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 0;
    struct crowd_gate *gate = dlsym(RTLD_DEFAULT, "crowd_gate");
    if (n < 1 || !gate) {
        fprintf(stderr, "usage: LD_PRELOAD=libcrowd.so realloc_crowd N\n");
        return 2;
    }
    pthread_t *t = calloc((size_t)n, sizeof *t);
    void **had = calloc((size_t)n, sizeof *had), **got = calloc((size_t)n, sizeof *got);
    if (!t || !had || !got)
        return 1;
    for (int i = 0; i < n; i++)
        had[i] = malloc(100);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], &attr, one, NULL) != 0) {
            fprintf(stderr, "realloc_crowd: thread %d not created\n", i);
            return 1;
        }
    while (atomic_load(&gate->inside) < n)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    for (int i = 0; i < n; i++)
        free(had[i]);
    atomic_store(&gate->open, 1);
    int moved = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(t[i], &got[i]);
        moved += got[i] != NULL;
    }
    for (int i = 0; i < n; i++)
        free(got[i]);
    printf("threads %d, reallocs %d\n", n, moved);
    return 0;
}
