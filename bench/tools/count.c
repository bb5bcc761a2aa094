/*
 * libbench-count.so: counts a program's heap events, for bench/workloads.sh,
 * apart from either profiler (a trace cut short by a time limit still gets
 * its workload's full count).
 *
 *   LD_PRELOAD=build/libbench-count.so BENCH_COUNT_OUTPUT=FILE COMMAND...
 *
 * A heap event is what memsim records one record for: every call of
 * malloc, calloc, realloc, reallocarray, free, posix_memalign,
 * aligned_alloc, memalign, valloc and pvalloc, but free(NULL) (which
 * memsim does not record).  Each process appends "PID COUNT\n" to FILE
 * when it exits (its destructor; a process that ends otherwise writes
 * nothing).  The calls go to glibc's own functions (__libc_malloc, …),
 * so nothing needs resolving at start: the counter is a relaxed atomic
 * add on top of glibc.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

static unsigned long long events;

static void count(void)
{
    __atomic_fetch_add(&events, 1, __ATOMIC_RELAXED);
}

EXPORT void *malloc(size_t n)
{
    count();
    return __libc_malloc(n);
}

EXPORT void *calloc(size_t n, size_t size)
{
    count();
    return __libc_calloc(n, size);
}

EXPORT void *realloc(void *p, size_t n)
{
    count();
    return __libc_realloc(p, n);
}

EXPORT void *reallocarray(void *p, size_t n, size_t size)
{
    count();
    size_t bytes;
    if (__builtin_mul_overflow(n, size, &bytes)) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_realloc(p, bytes);
}

EXPORT void free(void *p)
{
    if (!p)
        return;
    count();
    __libc_free(p);
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
    count();
    if (align < sizeof(void *) || (align & (align - 1)) != 0)
        return EINVAL;
    void *p = __libc_memalign(align, n);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
    count();
    return __libc_memalign(align, n);
}

EXPORT void *memalign(size_t align, size_t n)
{
    count();
    return __libc_memalign(align, n);
}

EXPORT void *valloc(size_t n)
{
    count();
    return __libc_valloc(n);
}

EXPORT void *pvalloc(size_t n)
{
    count();
    return __libc_pvalloc(n);
}

/* Written with open and write: stdio at exit may be gone already. */
__attribute__((destructor)) static void count_report(void)
{
    const char *path = getenv("BENCH_COUNT_OUTPUT");
    if (!path)
        return;
    char line[64];
    int len = snprintf(line, sizeof line, "%d %llu\n", (int)getpid(),
                       __atomic_load_n(&events, __ATOMIC_RELAXED));
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    ssize_t w = write(fd, line, (size_t)len);
    (void)w;
    close(fd);
}
