/*
 * exec_list: the exec calls that take their arguments as a list.
 *
 *   exec_list l|lp|le
 *
 * First an execl of a path that does not exist (it returns, ENOENT),
 * then execl, execlp or execle of sh, which prints its arguments (and,
 * for execle, a variable of the environment it was given).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "l";
    int rc = execl("/nonexistent/exec_list", "x", "y", (char *)NULL);
    printf("execl returned %d, %s\n", rc, errno == ENOENT ? "ENOENT" : "another error");
    fflush(stdout);
    if (strcmp(mode, "l") == 0) {
        execl("/bin/sh", "sh", "-c", "echo l: $0 $1 $2", "a0", "a1", "a2", (char *)NULL);
    } else if (strcmp(mode, "lp") == 0) {
        execlp("sh", "sh", "-c", "echo lp: $0 $1", "b0", "b1", (char *)NULL);
    } else if (strcmp(mode, "le") == 0) {
        char *const envp[] = {"EXEC_LIST_VAR=given", "PATH=/bin:/usr/bin", NULL};
        execle("/bin/sh", "sh", "-c", "echo le: $0 $EXEC_LIST_VAR", "c0", (char *)NULL, envp);
    }
    perror("exec_list");
    return 1;
}
