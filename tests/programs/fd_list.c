/*
 * fd_list: the descriptors a program has are the ones it opened.
 *
 * Prints the numbers of its open descriptors (the entries of
 * /proc/self/fd, less the one of the directory being read), sorted, as
 * "start: 0 1 2", then allocates and frees 100000 tagged blocks
 * (size % 4096 == 777) and prints them again as "after: 0 1 2".
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static void list(const char *when)
{
    int fds[1024], n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d) {
        printf("%s: cannot read /proc/self/fd\n", when);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) && n < 1024) {
        if (e->d_name[0] == '.')
            continue;
        int fd = atoi(e->d_name);
        if (fd != dirfd(d))
            fds[n++] = fd;
    }
    closedir(d);
    qsort(fds, (size_t)n, sizeof fds[0], cmp);
    printf("%s:", when);
    for (int i = 0; i < n; i++)
        printf(" %d", fds[i]);
    printf("\n");
}

int main(void)
{
    list("start");
    void *keep[16] = {0};
    for (unsigned long n = 0; n < 100000; n++) {
        unsigned i = (unsigned)(n % 16);
        free(keep[i]);
        keep[i] = malloc((size_t)4096 * (n % 8) + 777);
        if (!keep[i])
            return 1;
        memset(keep[i], (int)n, 16);
    }
    for (int i = 0; i < 16; i++)
        free(keep[i]);
    list("after");
    return 0;
}
