/*
 * spawn_env: posix_spawn with a large environment from a thread with a
 * modest stack.
 *
 * Builds an environment of 40000 variables (VAR_n=n), then, on a thread
 * with a 256 KiB stack (pthread_attr_setstacksize), posix_spawn()s
 * /bin/true with it and waits for it.  Prints "spawn=0 child=0" (what
 * posix_spawn returned, then the child's exit status, -1 if it did not
 * exit normally).  Exit status 0 when both are 0.
 */
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#define VARS 40000

static char **env;
static int spawn_rc = -1, child = -1;

static void *run(void *arg)
{
    (void)arg;
    char *argv[] = {"true", NULL};
    pid_t pid;
    spawn_rc = posix_spawn(&pid, "/bin/true", NULL, NULL, argv, env);
    int status;
    if (spawn_rc == 0 && waitpid(pid, &status, 0) == pid)
        child = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return NULL;
}

int main(void)
{
    env = calloc(VARS + 1, sizeof *env);
    if (!env)
        return 1;
    for (int i = 0; i < VARS; i++) {
        char *v = malloc(24);
        if (!v)
            return 1;
        snprintf(v, 24, "VAR_%d=%d", i, i);
        env[i] = v;
    }
    pthread_attr_t attr;
    pthread_t t;
    if (pthread_attr_init(&attr) || pthread_attr_setstacksize(&attr, 256 * 1024) ||
        pthread_create(&t, &attr, run, NULL) || pthread_join(t, NULL))
        return 1;
    printf("spawn=%d child=%d\n", spawn_rc, child);
    return spawn_rc || child ? 1 : 0;
}
