/*
 * killme: allocate forever, to be killed with SIGKILL.
 *
 * Allocates tagged blocks (size % 4096 == 777) in a loop, keeping up to
 * 64 alive.  After 5000 allocations it prints "ready" (flushed) and
 * sleeps until it is killed, so the kill finds it asleep between records
 * however late it comes.  (It used to go on allocating after 300 ms: on a
 * loaded machine the kill then came in the middle of a post, whose claim
 * the recorder rightly counted as dropped, and the test failed.)
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
            for (;;) {
                struct timespec ts = {1, 0};
                nanosleep(&ts, NULL);
            }
        }
    }
}
