/*
 * exit_sig: exit() called from a signal handler in the middle of
 * allocations.
 *
 * Arms a one-shot SIGALRM 50 ms ahead (setitimer); its handler calls
 * exit(3).  Meanwhile main mallocs, reallocs and frees blocks of mixed
 * sizes in a loop, so the signal lands inside the allocator most of the
 * time.  Prints nothing; exit status 3 (1 if the loop ever ends).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static void on_alarm(int sig)
{
    (void)sig;
    exit(3);
}

int main(void)
{
    struct sigaction sa = {.sa_handler = on_alarm};
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGALRM, &sa, NULL))
        return 1;
    struct itimerval it = {{0, 0}, {0, 50000}};
    if (setitimer(ITIMER_REAL, &it, NULL))
        return 1;
    void *keep[64] = {0};
    unsigned x = 11;
    for (unsigned long n = 0; n < 4000000000ul; n++) {
        x = x * 1103515245u + 12345u;
        unsigned i = (x >> 16) % 64;
        size_t size = (x & 7) == 0 ? 100000 : 16 + (x >> 8) % 3000;
        if (keep[i] && (x & 8)) {
            void *p = realloc(keep[i], size);
            if (p)
                keep[i] = p;
        } else {
            free(keep[i]);
            keep[i] = malloc(size);
        }
        if (keep[i])
            memset(keep[i], (int)i, 16);
    }
    return 1;
}
