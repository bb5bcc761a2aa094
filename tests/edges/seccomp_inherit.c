/*
 * seccomp_inherit: a launcher that locks itself in a seccomp filter and
 * executes a program, which starts under the filter it inherits (as a
 * service under systemd's SystemCallFilter or in a container does).
 *
 *   seccomp_inherit PROGRAM ARGS...
 *
 * The filter allows every system call but a few no program of these
 * tests (nor memsim) makes: acct fails with EPERM, and kexec_load,
 * init_module and reboot kill the process.  Exits 126 when the exec
 * fails, 3 when the filter cannot be installed.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define RET_IF(nr, action)                                \
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1),      \
    BPF_STMT(BPF_RET | BPF_K, (action))

static struct sock_filter filter[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
    RET_IF(SYS_acct, SECCOMP_RET_ERRNO | EPERM),
    RET_IF(SYS_kexec_load, SECCOMP_RET_KILL_PROCESS),
    RET_IF(SYS_init_module, SECCOMP_RET_KILL_PROCESS),
    RET_IF(SYS_reboot, SECCOMP_RET_KILL_PROCESS),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    struct sock_fprog prog = {.len = sizeof filter / sizeof filter[0], .filter = filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0))
        return 3;
    execv(argv[1], argv + 1);
    perror("seccomp_inherit: exec");
    return 126;
}
