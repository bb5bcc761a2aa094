/*
 * as_limit: a program under an address-space limit (ulimit -v) that
 * allocates until malloc fails.
 *
 *   as_limit libs      prints the KiB of address space that the images of
 *                      libmemsim.so and the libraries it may bring
 *                      (libm, libunwind, liblzma) take: their file
 *                      mappings and the zeroed data right after each
 *   as_limit [MODE]    allocates 1 MiB blocks until malloc fails, then
 *                      maps single pages until mmap fails, and prints
 *                      how many of each it got: the address space left
 *                      to it, to the page
 *
 * MODE: "plain" (the default); "threads", after 4 threads that each
 * malloc and free once have come and gone; "fork", in a forked child
 * (the parent waits and exits with its status); "wait", after a line
 * read from stdin (time for the test to do something to the process)
 * and 100,000 mallocs of 64 bytes, each kept until the 1,000th after
 * it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static int is_lib(const char *path)
{
    static const char *const libs[] = {"/libmemsim.so", "/libm.so.", "/libunwind.so.",
                                       "/liblzma.so."};
    for (size_t i = 0; i < sizeof libs / sizeof *libs; i++)
        if (strstr(path, libs[i]))
            return 1;
    return 0;
}

static long libs_kib(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    unsigned long total = 0, lib_end = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi, inode;
        char path[4096] = "";
        if (sscanf(line, "%lx-%lx %*s %*s %*s %lu %4095s", &lo, &hi, &inode, path) < 3)
            continue;
        if (is_lib(path)) {
            total += hi - lo;
            lib_end = hi;
        } else {
            if (!path[0] && inode == 0 && lo == lib_end) /* the library's zeroed data */
                total += hi - lo;
            lib_end = 0;
        }
    }
    if (f)
        fclose(f);
    return (long)(total / 1024);
}

static void *touch(void *arg)
{
    free(malloc(64));
    return arg;
}

static int count(void)
{
    free(malloc(1)); /* as every program does: the heap is there */
    long n = 0;
    while (n < 1000000) {
        char *p = malloc(1 << 20);
        if (!p)
            break;
        p[0] = 1;
        n++;
    }
    long pages = 0;
    while (pages < 1000000 &&
           mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) != MAP_FAILED)
        pages++;
    printf("%ld %ld\n", n, pages);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "plain";
    setvbuf(stdout, NULL, _IONBF, 0); /* no buffer to allocate at the first printf */
    if (strcmp(mode, "libs") == 0) {
        printf("%ld\n", libs_kib());
        return 0;
    }
    if (strcmp(mode, "threads") == 0) {
        pthread_t t[4];
        for (int i = 0; i < 4; i++)
            if (pthread_create(&t[i], NULL, touch, NULL))
                return 3;
        for (int i = 0; i < 4; i++)
            pthread_join(t[i], NULL);
    } else if (strcmp(mode, "fork") == 0) {
        pid_t pid = fork();
        if (pid < 0)
            return 4;
        if (pid == 0)
            return count();
        int st;
        if (waitpid(pid, &st, 0) != pid)
            return 5;
        return WIFEXITED(st) ? WEXITSTATUS(st) : 6;
    } else if (strcmp(mode, "wait") == 0) {
        char c;
        if (read(0, &c, 1) != 1)
            return 7;
        static void *kept[1000];
        for (int i = 0; i < 100000; i++) {
            free(kept[i % 1000]);
            kept[i % 1000] = malloc(64);
        }
    } else if (strcmp(mode, "plain") != 0) {
        return 2;
    }
    return count();
}
