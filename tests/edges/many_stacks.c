/*
 * many_stacks: a million distinct call stacks, on a heap that stays
 * flat.
 *
 *   many_stacks N [HWM_FILE]
 *
 * For i in 0..N-1, recurses 20 levels deep through one of two functions
 * chosen by bit k of i at level k, and at the bottom mallocs 32 bytes
 * and frees them: each i has a stack of its own (N = 2^20: 1,048,576 of
 * them).  Then the first 4,096 again, the same stacks, long unseen.  Prints the
 * sum of what it read back (the same whatever traces it), writes its
 * peak RSS (VmHWM, kB) into HWM_FILE and exits 0.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEPTH 20

static long step(unsigned long bits, int level);

/* A frame each: no inlining, and work after the call (no tail call). */
static long __attribute__((noinline)) left(unsigned long bits, int level)
{
    return step(bits, level + 1) + 1;
}

static long __attribute__((noinline)) right(unsigned long bits, int level)
{
    return step(bits, level + 1) + 2;
}

static long __attribute__((noinline)) step(unsigned long bits, int level)
{
    if (level == DEPTH) {
        unsigned char *p = malloc(32);
        if (!p)
            return -1000000;
        memset(p, (int)(bits & 0x7f), 32);
        long v = p[3];
        free(p);
        return v;
    }
    return (bits >> level & 1 ? right : left)(bits, level);
}

static long __attribute__((noinline)) run(unsigned long n)
{
    long sum = 0;
    for (unsigned long i = 0; i < n; i++)
        sum += step(i, 0);
    return sum;
}

/* VmHWM from /proc/self/status, in kB; -1 if unreadable. */
static long peak_kb(void)
{
    char buf[4096];
    int fd = open("/proc/self/status", O_RDONLY);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    const char *p = strstr(buf, "VmHWM:");
    return p ? atol(p + 6) : -1;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    unsigned long n = strtoul(argv[1], NULL, 0);
    long sum = 0;
    /* One call site for both passes, so that they make the same stacks:
     * a loop the compiler cannot unroll. */
    static volatile int passes = 2;
    for (int pass = 0; pass < passes; pass++)
        sum += run(pass ? (n < 4096 ? n : 4096) : n);
    printf("%ld\n", sum);
    if (argc > 2) {
        FILE *f = fopen(argv[2], "w");
        if (!f || fprintf(f, "%ld\n", peak_kb()) < 0 || fclose(f))
            return 3;
    }
    return 0;
}
