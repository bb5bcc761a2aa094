/*
 * fork_timer: a timer's signal handler forks while the program works.
 *
 *   fork_timer MS ROUNDS [paced]
 *
 * An interval timer (ITIMER_REAL) fires every MS milliseconds; its
 * SIGALRM handler forks, and the child leaves at once with _exit(0)
 * (it may be a copy of the program inside malloc: nothing else is safe
 * there); the handler waits for it.  Meanwhile main makes ROUNDS rounds of tagged
 * allocations (a few sizes, kept a round, freed the next), sleeping a
 * millisecond in each.  Then it stops the timer and prints "rounds=N
 * failed=0" (failed: a fork, a wait or a child that went wrong), exit 0.
 * The number of forks depends on the timing: it goes to stderr.  A fork
 * that costs more than MS leaves main no time: the program never ends.
 * Paced, a tick forks only once main has made a round since the last
 * fork (the others pass as an interruption alone): the program ends
 * however long a fork takes, after ROUNDS forks at most.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TAGGED(k) ((size_t)4096 * (k) + 777)

static volatile sig_atomic_t forks, failed, paced, round_done;

static void on_alarm(int sig)
{
    (void)sig;
    if (paced && !round_done)
        return;
    round_done = 0;
    int saved = errno;
    pid_t pid = fork();
    if (pid == 0) /* a copy of a process inside malloc, maybe: nothing but _exit */
        _exit(0);
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status))
        failed++;
    forks++;
    errno = saved;
}

int main(int argc, char **argv)
{
    if (argc != 3 && !(argc == 4 && strcmp(argv[3], "paced") == 0))
        return 2;
    paced = argc == 4;
    long ms = atol(argv[1]), rounds = atol(argv[2]);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{ms / 1000, (ms % 1000) * 1000}, {ms / 1000, (ms % 1000) * 1000}};
    setitimer(ITIMER_REAL, &it, NULL);
    void *kept[4] = {0};
    for (long r = 0; r < rounds; r++) {
        for (int k = 0; k < 4; k++) {
            free(kept[k]);
            kept[k] = malloc(TAGGED(k + (r % 3)));
            if (kept[k])
                memset(kept[k], 2, 64);
        }
        struct timespec nap = {0, 1000000};
        while (nanosleep(&nap, &nap) && errno == EINTR)
            ;
        round_done = 1;
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    for (int k = 0; k < 4; k++)
        free(kept[k]);
    printf("rounds=%ld failed=%d\n", rounds, (int)failed);
    fprintf(stderr, "forks=%d\n", (int)forks);
    return failed != 0;
}
