/*
 * libfirstalloc.so: preloaded with async_cancel (untraced), counts the
 * threads that turned PTHREAD_CANCEL_ASYNCHRONOUS on before their first
 * malloc.  glibc sets a thread's heap up in its first allocation, under
 * its arena and free-list locks: a cancel that lands there leaves them
 * held, and the next thread that needs one waits forever.  At exit, on
 * stderr: "firstalloc: E of T threads turned asynchronous cancellation
 * on before their first allocation".  Nothing else is changed.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t n);

static __thread int allocated __attribute__((tls_model("initial-exec")));
static _Atomic unsigned early, turned;
static int (*real_settype)(int, int *);

void *malloc(size_t n)
{
    allocated = 1;
    return __libc_malloc(n);
}

int pthread_setcanceltype(int type, int *old)
{
    if (type == PTHREAD_CANCEL_ASYNCHRONOUS) {
        atomic_fetch_add(&turned, 1);
        if (!allocated)
            atomic_fetch_add(&early, 1);
    }
    return real_settype(type, old);
}

__attribute__((constructor)) static void firstalloc_start(void)
{
    real_settype = (int (*)(int, int *))dlsym(RTLD_NEXT, "pthread_setcanceltype");
}

__attribute__((destructor)) static void firstalloc_report(void)
{
    char line[160];
    int n = snprintf(line, sizeof line,
                     "firstalloc: %u of %u threads turned asynchronous cancellation on before "
                     "their first allocation\n",
                     atomic_load(&early), atomic_load(&turned));
    if (n > 0 && write(2, line, strlen(line)) < 0)
        return;
}
