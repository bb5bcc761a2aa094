/*
 * fd_limit: every descriptor the limit allows is the program's.
 *
 * Allocates and frees a few tagged blocks (size % 4096 == 777), then
 * opens /dev/null until open fails, and prints "opened N (errno NAME)":
 * N is the limit (ulimit -n) less the descriptors open at start (13
 * under `ulimit -n 16` with only 0, 1 and 2 open), NAME is EMFILE.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    for (int i = 0; i < 8; i++) {
        void *p = malloc((size_t)4096 * i + 777);
        if (!p)
            return 1;
        memset(p, i, 777);
        free(p);
    }
    int n = 0;
    while (open("/dev/null", O_RDONLY) >= 0)
        n++;
    printf("opened %d (errno %s)\n", n, errno == EMFILE ? "EMFILE" : strerror(errno));
    return 0;
}
