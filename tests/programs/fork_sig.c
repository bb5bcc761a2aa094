/*
 * fork_sig: fork() from a signal handler while the program allocates.
 *
 * A SIGALRM handler (setitimer, every millisecond) forks; the child
 * leaves at once with _exit(0), the parent waits for it in the handler.
 * Meanwhile main mallocs and frees blocks of mixed sizes in a loop
 * until 200 forks are done, then stops the timer and prints "forks=200
 * failed=0" (failed: children that did not exit with status 0, or a
 * fork or waitpid that failed).  It works natively because the program
 * has one thread: glibc's fork then takes none of malloc's locks, which
 * the interrupted main loop may hold.  A deadlock hangs it: run it under
 * timeout.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define FORKS 200

static volatile sig_atomic_t forks, failed;

static void on_alarm(int sig)
{
    (void)sig;
    if (forks >= FORKS)
        return;
    int saved = errno;
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status))
        failed++;
    forks++;
    errno = saved;
}

int main(void)
{
    struct sigaction sa = {.sa_handler = on_alarm, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGALRM, &sa, NULL))
        return 1;
    struct itimerval it = {{0, 1000}, {0, 1000}};
    if (setitimer(ITIMER_REAL, &it, NULL))
        return 1;
    void *keep[64] = {0};
    unsigned x = 7;
    while (forks < FORKS) {
        x = x * 1103515245u + 12345u;
        unsigned i = (x >> 16) % 64;
        free(keep[i]);
        /* small, medium and large (mmapped) blocks */
        size_t size = (x & 7) == 0 ? 200000 : (x & 7) < 3 ? 4000 : 16 + (x >> 8) % 500;
        keep[i] = malloc(size);
        if (keep[i])
            memset(keep[i], (int)i, 16);
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    for (int i = 0; i < 64; i++)
        free(keep[i]);
    printf("forks=%d failed=%d\n", (int)forks, (int)failed);
    return failed ? 1 : 0;
}
