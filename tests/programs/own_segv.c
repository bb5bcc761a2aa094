/*
 * own_segv: a program with its own SIGSEGV handler, which dies of it.
 *
 * Installs a SIGSEGV handler with sigaction, allocates 8 tagged blocks
 * (size % 4096 == 777, one freed), prints "own_segv: faulting" (flushed)
 * and writes through a NULL pointer.  The handler writes "own_segv:
 * handler" with write(2), restores SIG_DFL with signal() and re-raises
 * the signal with raise(), as crash reporters do: the process dies of
 * SIGSEGV (a shell sees status 139).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void on_segv(int sig)
{
    static const char msg[] = "own_segv: handler\n";
    ssize_t rc = write(1, msg, sizeof msg - 1);
    (void)rc;
    signal(sig, SIG_DFL);
    raise(sig);
}

int main(void)
{
    struct sigaction sa = {.sa_handler = on_segv};
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, NULL))
        return 1;
    void *keep[8];
    for (int i = 0; i < 8; i++) {
        keep[i] = malloc((size_t)4096 * i + 777);
        if (!keep[i])
            return 1;
        memset(keep[i], i, 777);
    }
    free(keep[3]);
    printf("own_segv: faulting\n");
    fflush(stdout);
    volatile int *volatile p = NULL;
    *p = 1;
    fprintf(stderr, "own_segv: still alive\n");
    return 99;
}
