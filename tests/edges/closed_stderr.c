/*
 * closed_stderr: a daemon's start: it closes stderr, and its data file
 * then opens as descriptor 2.
 *
 *   closed_stderr DATA N
 *
 * Writes "begin\n" to DATA (descriptor 2), makes N allocations of mixed
 * sizes from a few call sites (half of them freed at once), writes
 * "end N\n" and exits 0.  Anything else that lands in DATA came from
 * someone else.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *__attribute__((noinline)) site_a(size_t n) { return malloc(n); }
static void *__attribute__((noinline)) site_b(size_t n) { return calloc(1, n); }

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    long n = atol(argv[2]);
    close(2);
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd != 2)
        return 3;
    if (write(2, "begin\n", 6) != 6)
        return 4;
    void *keep[256] = {0};
    for (long i = 0; i < n; i++) {
        size_t size = 16 + (size_t)(i * 7919 % 4000);
        void *p = i % 3 ? site_a(size) : site_b(size);
        if (!p)
            return 5;
        memset(p, 1, 8);
        if (i % 2) {
            free(p);
        } else {
            free(keep[i / 2 % 256]);
            keep[i / 2 % 256] = p;
        }
    }
    for (int i = 0; i < 256; i++)
        free(keep[i]);
    char line[64];
    int k = snprintf(line, sizeof line, "end %ld\n", n);
    if (write(2, line, (size_t)k) != k)
        return 6;
    return 0;
}
