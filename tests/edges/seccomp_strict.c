/*
 * seccomp_strict: a program that locks itself in seccomp's strict mode
 * (read, write, exit and sigreturn only; any other system call kills
 * it with SIGKILL), then works on the heap it has.
 *
 *   seccomp_strict HOW N END
 *
 * HOW: "prctl" (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT)) or
 * "seccomp" (syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT)).  Then N
 * malloc/free pairs of small sizes (the heap glibc has suffices: no
 * brk), the checksum written with write(2), and the end END: "exit"
 * leaves with syscall(SYS_exit, 0) (exit_group is forbidden: exit()
 * would be killed), "segv" dies of a SIGSEGV, "term" raises nothing
 * and waits to be killed by a SIGTERM from outside (it writes "ready"
 * first), "libc" calls exit(0), which the sandbox kills (exit_group).
 */
#include <linux/seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static size_t put_num(char *buf, unsigned long v)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    return n;
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    const char *how = argv[1], *end = argv[3];
    long n = atol(argv[2]);
    /* warm the heap up: the loop below must need no brk (volatile: the
     * compiler would drop a malloc freed at once) */
    void *volatile warm = malloc(64 << 10);
    free(warm);
    long rc;
    if (strcmp(how, "prctl") == 0)
        rc = prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0);
    else if (strcmp(how, "seccomp") == 0)
        rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 0, NULL);
    else
        return 2;
    if (rc)
        return 3;
    unsigned long sum = 0;
    for (long i = 0; i < n; i++) {
        size_t size = 16 + (size_t)(i % 97) * 8;
        unsigned char *p = malloc(size);
        if (!p)
            syscall(SYS_exit, 4);
        p[size - 1] = (unsigned char)i;
        sum += p[size - 1] + size;
        free(p);
    }
    char line[64] = "sum ";
    size_t k = 4 + put_num(line + 4, sum);
    line[k++] = '\n';
    if (write(1, line, k) != (ssize_t)k)
        syscall(SYS_exit, 5);
    if (strcmp(end, "segv") == 0) {
        uintptr_t at = (uintptr_t)argc * 4; /* 16: never mapped */
        __asm__("" : "+r"(at));
        *(volatile int *)at = 1;
    } else if (strcmp(end, "term") == 0) {
        if (write(1, "ready\n", 6) != 6)
            syscall(SYS_exit, 5);
        for (;;)
            ;
    } else if (strcmp(end, "libc") == 0) {
        exit(0);
    }
    syscall(SYS_exit, 0);
    return 0;
}
