/*
 * small_disk: a program on a small disk, alone or as a tree.
 *
 *   small_disk DIR        the room DIR's filesystem says it has (statvfs),
 *                         then a file of 896 KiB written there
 *   small_disk DIR N      a tree of N processes (the first and N - 1
 *                         children, all alive at once), each making 2,000
 *                         allocations from a few call sites
 *
 * On a 1 MiB filesystem, alone: prints "room: yes" (at least 960 KiB
 * free at the start) and "wrote 917504 bytes", and exits 0; it says
 * what failed and exits 1 otherwise.  As a tree: prints "N processes"
 * once all have exited 0.  Either output is the same wherever its
 * traces go, if memsim takes none of the room.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#define NEED (960u << 10)
#define WRITE (896u << 10)
#define PIECE (64u << 10)

static void *__attribute__((noinline)) site_a(size_t n) { return malloc(n); }
static void *__attribute__((noinline)) site_b(size_t n) { return calloc(1, n); }

static int alone(const char *dir)
{
    struct statvfs fs;
    if (statvfs(dir, &fs)) {
        printf("statvfs: %s\n", strerror(errno));
        return 1;
    }
    unsigned long long room = (unsigned long long)fs.f_bavail * fs.f_frsize;
    printf("room: %s\n", room >= NEED ? "yes" : "no");
    char path[4096];
    snprintf(path, sizeof path, "%s/data", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        printf("open: %s\n", strerror(errno));
        return 1;
    }
    size_t done = 0;
    while (done < WRITE) {
        char *piece = site_a(PIECE); /* a heap event per piece */
        if (!piece)
            return 1;
        memset(piece, 'a' + (int)(done / PIECE % 26), PIECE);
        ssize_t w = write(fd, piece, PIECE);
        free(piece);
        if (w != (ssize_t)PIECE) {
            printf("write at %zu: %s\n", done, w < 0 ? strerror(errno) : "short");
            close(fd);
            return 1;
        }
        done += PIECE;
    }
    if (fsync(fd) || close(fd)) {
        printf("close: %s\n", strerror(errno));
        return 1;
    }
    printf("wrote %zu bytes\n", done);
    return 0;
}

static int work(void)
{
    void *keep[64] = {0};
    for (int i = 0; i < 2000; i++) {
        size_t size = 16 + (size_t)(i * 7919 % 2000);
        void *p = i % 3 ? site_a(size) : site_b(size);
        if (!p)
            return 1;
        free(keep[i % 64]);
        keep[i % 64] = p;
    }
    for (int i = 0; i < 64; i++)
        free(keep[i]);
    return 0;
}

static int tree(int n)
{
    int go[2];
    if (pipe(go))
        return 1;
    for (int i = 1; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0)
            return 1;
        if (pid == 0) { /* wait until every process of the tree is alive */
            close(go[1]);
            char c;
            _exit(read(go[0], &c, 1) != 0 || work() ? 1 : 0);
        }
    }
    close(go[0]);
    close(go[1]);
    int bad = work();
    for (int i = 1; i < n; i++) {
        int st;
        if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
            bad = 1;
    }
    if (bad)
        return 1;
    printf("%d processes\n", n);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2)
        return alone(argv[1]);
    if (argc == 3 && atoi(argv[2]) > 0)
        return tree(atoi(argv[2]));
    fprintf(stderr, "usage: small_disk DIR [N]\n");
    return 2;
}
