/*
 * killme: allocate forever, to be killed with SIGKILL.
 *
 * Allocates tagged blocks (size % 4096 == 777) in a loop, keeping up to
 * 64 alive.  After 5000 allocations it prints "ready" (flushed) and
 * sleeps 300 ms once, so a test that kills it within that window finds
 * the process asleep between records; then it goes on until killed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KEEP 64

int main(void)
{
    void *keep[KEEP] = {0};
    uint64_t x = 88172645463325252ull;
    for (unsigned long n = 1;; n++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        size_t size = (size_t)4096 * (x % 16) + 777;
        unsigned i = (unsigned)(n % KEEP);
        free(keep[i]);
        keep[i] = malloc(size);
        if (!keep[i])
            return 1;
        memset(keep[i], (int)n, 64);
        if (n == 5000) {
            puts("ready");
            fflush(stdout);
            struct timespec ts = {0, 300 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
}
