/*
 * qexit: quick_exit after some allocations.
 *
 * Registers an at_quick_exit handler that prints "qexit: handler"
 * (flushed: quick_exit does not flush stdio), allocates 8 tagged blocks
 * (size % 4096 == 777, one freed), prints "qexit: leaving" (flushed)
 * and calls quick_exit(5): exit status 5.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void on_quick_exit(void)
{
    printf("qexit: handler\n");
    fflush(stdout);
}

int main(void)
{
    if (at_quick_exit(on_quick_exit))
        return 1;
    void *keep[8];
    for (int i = 0; i < 8; i++) {
        keep[i] = malloc((size_t)4096 * i + 777);
        if (!keep[i])
            return 1;
        memset(keep[i], i, 777);
    }
    free(keep[3]);
    printf("qexit: leaving\n");
    fflush(stdout);
    quick_exit(5);
}
