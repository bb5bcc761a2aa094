/*
 * reallocarray0: reallocarray(p, 0, n), which frees p in glibc.
 *
 * Allocates a tagged block p (size % 4096 == 777) and leaks three more
 * on purpose; reallocarray(p, 0, 8) then frees p and returns NULL (as
 * realloc(p, 0) does in glibc); 100 more tagged blocks of p's size are
 * allocated and freed (the first one likely at p's address).  Prints
 * "reallocarray=NULL leaked=3" with write(2): no stdio, so that the
 * three blocks are all that is live at exit.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *volatile leaked[3];

int main(void)
{
    char *p = malloc(777);
    if (!p)
        return 1;
    memset(p, 1, 777);
    for (int i = 0; i < 3; i++)
        if (!(leaked[i] = malloc((size_t)4096 * (i + 1) + 777)))
            return 1;
    void *q = reallocarray(p, 0, 8);
    for (int i = 0; i < 100; i++) {
        char *r = malloc(777);
        if (!r)
            return 1;
        memset(r, i, 777);
        free(r);
    }
    const char *msg = q ? "reallocarray=non-NULL leaked=3\n" : "reallocarray=NULL leaked=3\n";
    if (write(1, msg, strlen(msg)) < 0)
        return 1;
    return q ? 1 : 0;
}
