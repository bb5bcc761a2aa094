/*
 * seccomp: memsim's reading of a filter is the kernel's.  A filter that
 * uses every kind of instruction seccomp accepts computes an errno from
 * the call's number and arguments; a child process installs it and makes
 * the calls, and the errno each returns (the call is not made: the filter
 * answers for it) must be the action seccomp_run computes.  Then the
 * judgement of memsim's own calls: held filters, a failed install, a
 * filter that reads the caller's address, strict mode.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipc/seccomp.h"
#include "tests/unit/suites.h"

#define LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#define HI(i) (LO(i) + 4)

/* write, exit and exit_group pass; every other call gets an errno worked
 * out by arithmetic, memory, jumps of each kind, from its number and
 * arguments (never 0: errno 0 would be a success). */
static struct sock_filter busy[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_write, 2, 0),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit_group, 1, 0),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    /* M[0] = nr * 7 + 3 */
    BPF_STMT(BPF_ALU | BPF_MUL | BPF_K, 7),
    BPF_STMT(BPF_ALU | BPF_ADD | BPF_K, 3),
    BPF_STMT(BPF_ST, 0),
    /* X = arg0's low word ^ its high word, >> 3 */
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, LO(0)),
    BPF_STMT(BPF_MISC | BPF_TAX, 0),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, HI(0)),
    BPF_STMT(BPF_ALU | BPF_XOR | BPF_X, 0),
    BPF_STMT(BPF_ALU | BPF_RSH | BPF_K, 3),
    BPF_STMT(BPF_MISC | BPF_TAX, 0),
    /* A = M[0] + X, minus arg1's low byte */
    BPF_STMT(BPF_LD | BPF_MEM, 0),
    BPF_STMT(BPF_ALU | BPF_ADD | BPF_X, 0),
    BPF_STMT(BPF_ST, 1),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, LO(1)),
    BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xff),
    BPF_STMT(BPF_MISC | BPF_TAX, 0),
    BPF_STMT(BPF_LD | BPF_MEM, 1),
    BPF_STMT(BPF_ALU | BPF_SUB | BPF_X, 0),
    /* arg2 with bit 4 set: A = -A; above 1000: A /= 3 (else A <<= 2) */
    BPF_STMT(BPF_ST, 2),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, LO(2)),
    BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x10, 0, 3),
    BPF_STMT(BPF_LD | BPF_MEM, 2),
    BPF_STMT(BPF_ALU | BPF_NEG, 0),
    BPF_STMT(BPF_JMP | BPF_JA, 1),
    BPF_STMT(BPF_LD | BPF_MEM, 2),
    BPF_STMT(BPF_ST, 2),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, LO(2)),
    BPF_STMT(BPF_MISC | BPF_TAX, 0),
    BPF_STMT(BPF_LD | BPF_IMM, 1000),
    BPF_JUMP(BPF_JMP | BPF_JGT | BPF_X, 0, 4, 0), /* 1000 > arg2: no division */
    BPF_STMT(BPF_LD | BPF_MEM, 2),
    BPF_STMT(BPF_ALU | BPF_DIV | BPF_K, 3),
    BPF_STMT(BPF_ST, 2),
    BPF_STMT(BPF_JMP | BPF_JA, 3),
    BPF_STMT(BPF_LD | BPF_MEM, 2),
    BPF_STMT(BPF_ALU | BPF_LSH | BPF_K, 2),
    BPF_STMT(BPF_ST, 2),
    /* arg3's high word >= 5: A |= 0x800; sizeof(seccomp_data) (64) mixed in */
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, HI(3)),
    BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 5, 0, 3),
    BPF_STMT(BPF_LD | BPF_MEM, 2),
    BPF_STMT(BPF_ALU | BPF_OR | BPF_K, 0x800),
    BPF_STMT(BPF_ST, 2),
    BPF_STMT(BPF_LDX | BPF_W | BPF_LEN, 0),
    BPF_STMT(BPF_LD | BPF_MEM, 2),
    BPF_STMT(BPF_ALU | BPF_ADD | BPF_X, 0),
    BPF_STMT(BPF_LDX | BPF_IMM, 5),
    BPF_STMT(BPF_STX, 3),
    BPF_STMT(BPF_LDX | BPF_MEM, 3),
    BPF_STMT(BPF_ALU | BPF_ADD | BPF_X, 0),
    /* the errno: 1 to 4095 */
    BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xffe),
    BPF_STMT(BPF_ALU | BPF_OR | BPF_K, SECCOMP_RET_ERRNO | 1),
    BPF_STMT(BPF_RET | BPF_A, 0),
};

#define NVEC 64

/* The calls the child makes: numbers (valid ones and some no kernel
 * has) and arguments that take each branch. */
static void vectors(long nr[NVEC], long args[NVEC][6])
{
    static const long nrs[] = {0, 2, 3, 9, 10, 11, 13, 39, 62, 131, 157, 200, 317, 435, 999, 4000};
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < NVEC; i++) {
        nr[i] = nrs[i % 16];
        for (int k = 0; k < 6; k++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            args[i][k] = (long)(i & 1 ? x : x >> (i % 40));
        }
        if (i % 4 == 2)
            args[i][2] = 500 + i; /* below 1000 */
        if (i % 8 == 3)
            args[i][3] = (long)(3ull << 32); /* the high word under 5 */
    }
}

START_TEST(the_kernel_agrees)
{
    long nr[NVEC], args[NVEC][6];
    vectors(nr, args);
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        struct sock_fprog prog = {.len = sizeof busy / sizeof busy[0], .filter = busy};
        long got[NVEC];
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
            prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0))
            _exit(3);
        for (int i = 0; i < NVEC; i++)
            got[i] = syscall(nr[i], args[i][0], args[i][1], args[i][2], args[i][3], args[i][4],
                             args[i][5]) == -1 ? errno : 0;
        /* By system call: a sanitizer's _exit makes calls the filter
         * refuses (SANITIZE=1 builds). */
        syscall(SYS_exit_group, write(fds[1], got, sizeof got) == (ssize_t)sizeof got ? 0 : 4);
    }
    close(fds[1]);
    long got[NVEC];
    ssize_t n = read(fds[0], got, sizeof got);
    int status;
    waitpid(child, &status, 0);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: status %d", status);
    ck_assert_int_eq(n, (ssize_t)sizeof got);
    for (int i = 0; i < NVEC; i++) {
        uint32_t act = seccomp_run(busy, sizeof busy / sizeof busy[0], nr[i], args[i]);
        ck_assert_uint_eq(act & SECCOMP_RET_ACTION_FULL, SECCOMP_RET_ERRNO);
        ck_assert_msg((long)(act & SECCOMP_RET_DATA) == got[i],
                      "call %d (nr %ld): memsim reads errno %u, the kernel gave %ld", i, nr[i],
                      act & SECCOMP_RET_DATA, got[i]);
    }
}
END_TEST

/* read, write, mmap, futex, the exits; anything else kills. */
static struct sock_filter whitelist[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_read, 5, 0),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_write, 4, 0),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 3, 0),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_futex, 2, 0),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit_group, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

/* Everything allowed, but by the caller's address. */
static struct sock_filter by_address[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, instruction_pointer) + 4),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

/* getpid logged, kill refused with EPERM, the rest allowed. */
static struct sock_filter logs_getpid[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getpid, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_LOG),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_kill, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

static bool can(long nr) { return seccomp_allows(nr, 0, 0, 0, 0, 0, 0); }

START_TEST(memsims_calls_are_judged)
{
    ck_assert(can(SYS_sigaltstack));
    struct sock_fprog wl = {.len = sizeof whitelist / sizeof whitelist[0], .filter = whitelist};
    struct sock_fprog lg = {.len = sizeof logs_getpid / sizeof logs_getpid[0],
                            .filter = logs_getpid};
    int h = seccomp_hold(getpid(), &wl, false);
    ck_assert_int_ge(h, 0);
    ck_assert(seccomp_active());
    ck_assert(can(SYS_futex) && can(SYS_mmap) && can(SYS_write));
    ck_assert(!can(SYS_sigaltstack) && !can(SYS_gettid) && !can(SYS_getrusage));
    errno = 0;
    ck_assert_int_eq(seccomp_call(SYS_gettid, 0, 0, 0, 0, 0, 0), -1);
    ck_assert_int_eq(errno, ENOSYS);
    /* A second filter cannot be read through the kernel now (the first
     * forbids process_vm_readv): once the kernel installed it, it is
     * read as it is.  Both bind: it forbids kill with an errno, logs
     * getpid. */
    ck_assert_int_eq(seccomp_hold(getpid(), &lg, false), -1);
    ck_assert(seccomp_opaque() && !can(SYS_write));
    seccomp_set_opaque(false);
    int h2 = seccomp_hold(getpid(), &lg, true);
    ck_assert_int_ge(h2, 0);
    ck_assert(!can(SYS_getpid));
    seccomp_void(h); /* its install failed */
    ck_assert(can(SYS_getpid) && can(SYS_sigaltstack) && !can(SYS_kill));
    seccomp_void(h2);
    ck_assert(can(SYS_kill));
    /* A bad pointer is no fault: the view goes opaque. */
    ck_assert_int_eq(seccomp_hold(getpid(), (void *)16, false), -1);
    ck_assert(seccomp_opaque() && !can(SYS_write));
    seccomp_set_opaque(false);
    ck_assert(can(SYS_write));
    /* A filter that tells callers by address cannot be judged by. */
    struct sock_fprog ba = {.len = sizeof by_address / sizeof by_address[0], .filter = by_address};
    ck_assert_int_eq(seccomp_hold(getpid(), &ba, false), -1);
    ck_assert(!can(SYS_write));
    seccomp_set_opaque(false);
}
END_TEST

START_TEST(strict_binds_its_thread)
{
    seccomp_set_strict(true);
    ck_assert(can(SYS_read) && can(SYS_write) && can(SYS_exit) && can(SYS_rt_sigreturn));
    ck_assert(!can(SYS_exit_group) && !can(SYS_futex) && !can(SYS_mmap) && !can(SYS_getpid));
    seccomp_set_strict(false);
    ck_assert(can(SYS_futex));
}
END_TEST

START_TEST(the_thread_id_without_gettid)
{
    pid_t tid = (pid_t)syscall(SYS_gettid);
    ck_assert_int_eq(seccomp_gettid(), tid);
    seccomp_learn_tid(tid);
    seccomp_set_strict(true); /* gettid forbidden: glibc's descriptor answers */
    ck_assert_int_eq(seccomp_gettid(), tid);
    seccomp_set_strict(false);
}
END_TEST

Suite *seccomp_suite(void)
{
    Suite *s = suite_create("seccomp");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, the_kernel_agrees);
    tcase_add_test(tc, memsims_calls_are_judged);
    tcase_add_test(tc, strict_binds_its_thread);
    tcase_add_test(tc, the_thread_id_without_gettid);
    suite_add_tcase(s, tc);
    return s;
}
