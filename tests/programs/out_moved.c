/*
 * out_moved: the trace does not depend on its path staying valid.
 *
 *   out_moved DIR
 *
 * Allocates and frees 20000 tagged blocks (size % 4096 == 777), renames
 * DIR (the directory its trace is in, MEMSIM_OUTPUT) to DIR.moved with
 * rename(2), allocates and frees 200000 more (a trace that must grow
 * many times after the move), and prints "tagged=220000 moved=yes".
 * Exit status 0, 1 when the rename or an allocation fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long churn(unsigned long rounds)
{
    void *keep[16] = {0};
    unsigned long done = 0;
    for (unsigned long n = 0; n < rounds; n++) {
        unsigned i = (unsigned)(n % 16);
        free(keep[i]);
        keep[i] = malloc((size_t)4096 * (n % 8) + 777);
        if (!keep[i])
            exit(1);
        memset(keep[i], (int)n, 16);
        done++;
    }
    for (int i = 0; i < 16; i++)
        free(keep[i]);
    return done;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: out_moved DIR\n");
        return 2;
    }
    unsigned long tagged = churn(20000);
    char moved[4096];
    snprintf(moved, sizeof moved, "%s.moved", argv[1]);
    if (rename(argv[1], moved)) {
        perror("out_moved: rename");
        return 1;
    }
    tagged += churn(200000);
    printf("tagged=%lu moved=yes\n", tagged);
    return 0;
}
