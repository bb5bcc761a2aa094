/*
 * libmallinfo-meter.so: how much of a process's time goes to mallinfo2.
 * Preloaded ahead of libmemsim.so, its mallinfo2 is the one memsim's
 * call reaches; it times the real one and, at exit, appends
 * "CALLS NS_IN_MALLINFO2 NS_ALIVE\n" to $MALLINFO_METER_OUTPUT.
 *
 *   LD_PRELOAD="libmallinfo-meter.so libmemsim.so" MALLINFO_METER_OUTPUT=F PROGRAM
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

static struct mallinfo2 (*real_mallinfo2)(void);
static uint64_t born, calls, spent;

static uint64_t now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((constructor)) static void meter_start(void)
{
    born = now();
    real_mallinfo2 = (struct mallinfo2 (*)(void))dlsym(RTLD_NEXT, "mallinfo2");
}

EXPORT struct mallinfo2 mallinfo2(void)
{
    uint64_t t0 = now();
    struct mallinfo2 mi = real_mallinfo2();
    __atomic_add_fetch(&spent, now() - t0, __ATOMIC_RELAXED);
    __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
    return mi;
}

__attribute__((destructor)) static void meter_report(void)
{
    const char *path = getenv("MALLINFO_METER_OUTPUT");
    if (!path)
        return;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    char line[96];
    int n = snprintf(line, sizeof line, "%llu %llu %llu\n", (unsigned long long)calls,
                     (unsigned long long)spent, (unsigned long long)(now() - born));
    if (n > 0 && write(fd, line, (size_t)n) < 0) {
        /* nothing to do: the test sees no line */
    }
    close(fd);
}
