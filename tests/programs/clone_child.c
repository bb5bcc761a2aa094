/*
 * clone_child: a child process made with clone() rather than fork().
 *
 * Calls clone(fn, stack, SIGCHLD, NULL) (no CLONE_VM: the child gets a
 * copy of the parent's memory, as with fork, but pthread_atfork
 * handlers do not run).  The child's fn sleeps 20 ms, allocates and
 * frees 1000 tagged blocks (size % 4096 == 777) and returns 0, which
 * ends the child.  The parent waits for it, then allocates and frees 1000
 * tagged blocks of its own and prints "child=0 parent=1000" (the
 * child's exit status, the parent's blocks).
 */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#define STACK (1u << 20)

static int churn(int n)
{
    int done = 0;
    for (int i = 0; i < n; i++) {
        char *p = malloc((size_t)4096 * (i % 4) + 777);
        if (!p)
            return done;
        memset(p, i, 777);
        free(p);
        done++;
    }
    return done;
}

static int child(void *arg)
{
    (void)arg;
    /* A while first: the parent's side of memsim gets on with its work
     * (samples, with MEMSIM_SAMPLE_MS=1) before the child allocates. */
    struct timespec ts = {0, 20000000};
    nanosleep(&ts, NULL);
    return churn(1000) == 1000 ? 0 : 1;
}

int main(void)
{
    char *stack = mmap(NULL, STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (stack == MAP_FAILED)
        return 1;
    fflush(stdout);
    pid_t pid = clone(child, stack + STACK, SIGCHLD, NULL);
    if (pid < 0) {
        perror("clone_child: clone");
        return 1;
    }
    int status, code = -1;
    if (waitpid(pid, &status, 0) == pid && WIFEXITED(status))
        code = WEXITSTATUS(status);
    int mine = churn(1000);
    printf("child=%d parent=%d\n", code, mine);
    return code == 0 && mine == 1000 ? 0 : 1;
}
