/*
 * crash: end the process the hard ways.
 *
 *   crash segv | abort | term | exit7
 *
 * segv writes through a NULL pointer, abort calls abort(), term sends
 * itself SIGTERM, exit7 calls _exit(7).  Before that it allocates a few
 * tagged blocks (size % 4096 == 777) and prints "crash: MODE" (flushed).
 * A shell sees exit status 139, 134, 143 and 7.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "segv") && strcmp(mode, "abort") && strcmp(mode, "term") &&
        strcmp(mode, "exit7")) {
        fprintf(stderr, "usage: crash segv|abort|term|exit7\n");
        return 2;
    }
    void *keep[8];
    for (int i = 0; i < 8; i++) {
        keep[i] = malloc((size_t)4096 * i + 777);
        if (!keep[i])
            return 1;
        memset(keep[i], i, 777);
    }
    free(keep[3]);
    printf("crash: %s\n", mode);
    fflush(stdout);
    if (!strcmp(mode, "segv")) {
        /* Through a volatile pointer, so the compiler cannot see the NULL
         * and turn the store into a trap instruction. */
        volatile int *volatile p = NULL;
        *p = 1;
    } else if (!strcmp(mode, "abort")) {
        abort();
    } else if (!strcmp(mode, "term")) {
        kill(getpid(), SIGTERM);
    } else {
        _exit(7);
    }
    /* Not reached; if it is, say so. */
    fprintf(stderr, "crash: still alive after %s\n", mode);
    return 99;
}
