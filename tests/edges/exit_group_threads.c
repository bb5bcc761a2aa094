/*
 * exit_group_threads: a process that ends by a raw exit_group while its
 * threads allocate.
 *
 *   exit_group_threads COUNTS THREADS
 *
 * Thread i mallocs and frees blocks of 4096 + i bytes, and after each
 * malloc returns adds one to its counter in COUNTS (a file of THREADS
 * 64-bit counters, mapped shared: it outlives the process).  Main lets
 * them run 50 ms, then calls exit_group(3) by system call: no exit
 * handler, no destructor runs, and the threads stop wherever they are.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t *counts;

static void *work(void *arg)
{
    uintptr_t i = (uintptr_t)arg;
    for (;;) {
        volatile char *p = malloc(4096 + i);
        if (!p)
            abort();
        counts[i]++;
        p[0] = 1;
        free((void *)p);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    int threads = atoi(argv[2]);
    size_t bytes = (size_t)threads * sizeof *counts;
    int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ftruncate(fd, (off_t)bytes))
        return 1;
    counts = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (counts == MAP_FAILED)
        return 1;
    for (int i = 0; i < threads; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, work, (void *)(uintptr_t)i))
            return 1;
    }
    struct timespec ms = {0, 50000000};
    nanosleep(&ms, NULL);
    syscall(SYS_exit_group, 3);
    return 1;
}
