/*
 * A signal handler that allocates, interrupting the thread's switches
 * between asynchronous and deferred cancellation.  memsim holds
 * asynchronous cancellation off inside its hooks and sets it back after;
 * a handler's hook that ran just after the real pthread_setcanceltype
 * turned it off, before memsim noted so, set it back on behind the
 * program's back.  After each switch to deferred, the type must read
 * deferred.
 *
 *   cancel_signal SWITCHES
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static volatile sig_atomic_t signals;

static void on_alarm(int sig)
{
    (void)sig;
    void *volatile p = malloc(48);
    free(p);
    signals++;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 0;
    if (n < 1) {
        fprintf(stderr, "usage: cancel_signal SWITCHES\n");
        return 2;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval every = {{0, 20}, {0, 20}}; /* as often as the kernel will */
    setitimer(ITIMER_REAL, &every, NULL);
    long wrong = 0;
    for (long i = 0; i < n; i++) {
        int was;
        pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
        pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, NULL);
        pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &was);
        wrong += was != PTHREAD_CANCEL_DEFERRED;
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    printf("switches %ld, asynchronous after a switch to deferred: %ld\n", n, wrong);
    return wrong != 0;
}
