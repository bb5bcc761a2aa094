/*
 * seccomp_whitelist: a program that locks itself in a seccomp filter of
 * the common kind (a whitelist: read, write, the memory calls, futex,
 * the exits; anything else kills the process), then works.
 *
 *   seccomp_whitelist HOW N [THREADS [cold]]
 *
 * HOW says how the filter goes in: "prctl" (prctl(PR_SET_SECCOMP)),
 * "seccomp" (syscall(SYS_seccomp), as libseccomp does), "tsync" (the
 * same with SECCOMP_FILTER_FLAG_TSYNC) or "none" (no filter: the work
 * alone, for a sandbox its parent set).  After it, N allocations
 * (malloc, calloc, realloc; about half freed at once, the rest in a
 * ring of 4096) on the main thread, or on THREADS threads created
 * after the filter (the whitelist then allows what pthread_create,
 * a thread's start and end and pthread_join need).  Prints one
 * checksum line per thread and a total, and exits 0 by returning from
 * main.  The filter is written by hand in classic BPF: no libseccomp.
 *
 * Before the filter a thread allocates and frees enough for its arena
 * to give memory back: glibc reads /proc/sys/vm/overcommit_memory (an
 * openat, which the whitelist forbids) the first time a thread's arena
 * shrinks, once a process, and whether a thread made inside the
 * sandbox shrinks its arena depends on which threads' arenas it reuses,
 * that is on timing.  "cold" leaves that out: natively the program is
 * then killed (SIGSYS) as soon as a thread's arena shrinks inside the
 * sandbox, as with 1 thread and N of 20000 or more.  HOW "none" has no
 * filter of its own to warm up for, and leaves it out too.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ALLOW(nr)                                         \
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1),      \
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

static struct sock_filter filter[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
    ALLOW(SYS_read),
    ALLOW(SYS_write),
    ALLOW(SYS_mmap),
    ALLOW(SYS_munmap),
    ALLOW(SYS_mprotect),
    ALLOW(SYS_mremap),
    ALLOW(SYS_futex),
    ALLOW(SYS_brk),
    ALLOW(SYS_madvise),
    ALLOW(SYS_exit),
    ALLOW(SYS_exit_group),
    ALLOW(SYS_rt_sigreturn),
    /* what threads need: pthread_create, a thread's start and end */
    ALLOW(SYS_clone),
    ALLOW(SYS_clone3),
    ALLOW(SYS_rt_sigprocmask),
    ALLOW(SYS_set_robust_list),
    ALLOW(SYS_rseq),
    ALLOW(SYS_rt_sigaction),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
};

static unsigned long work(unsigned long seed, long n)
{
    enum { RING = 4096 };
    void **ring = calloc(RING, sizeof *ring);
    unsigned long sum = 0, x = seed;
    for (long i = 0; i < n; i++) {
        x = x * 6364136223846793005ul + 1442695040888963407ul;
        size_t size = 8 + (x >> 33) % 600;
        char *p = (i % 3 == 0) ? calloc(1, size) : malloc(size);
        if (!p)
            return 0;
        p[0] = (char)i;
        sum += (unsigned char)p[0] + size;
        if (i % 2 == 0) {
            free(p);
            continue;
        }
        if (i % 5 == 1) {
            char *q = realloc(p, size * 2);
            if (!q)
                return 0;
            p = q;
            sum += (unsigned char)p[0];
        }
        size_t k = (size_t)(x >> 20) % RING;
        free(ring[k]);
        ring[k] = p;
    }
    for (size_t k = 0; k < RING; k++)
        free(ring[k]);
    free(ring);
    return sum;
}

typedef struct job_s {
    unsigned long seed, sum;
    long n;
} job_t;

static void *run(void *arg)
{
    job_t *j = arg;
    j->sum = work(j->seed, j->n);
    return NULL;
}

/* A thread whose arena shrinks as it ends (everything freed, the top
 * chunk far over the trim threshold): glibc's one look at
 * /proc/sys/vm/overcommit_memory, made while it is allowed. */
static void *shrink(void *arg)
{
    enum { BLOCKS = 20000 };
    static void *blocks[BLOCKS];
    (void)arg;
    for (int i = 0; i < BLOCKS; i++)
        blocks[i] = malloc(500);
    for (int i = BLOCKS - 1; i >= 0; i--)
        free(blocks[i]);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    const char *how = argv[1];
    long n = atol(argv[2]);
    int threads = argc > 3 ? atoi(argv[3]) : 0;
    bool cold = argc > 4 && strcmp(argv[4], "cold") == 0;
    /* stdout's buffer before the filter: its first printf asks fstat */
    printf("seccomp_whitelist %s %ld %d\n", how, n, threads);
    fflush(stdout);
    pthread_t warm;
    if (!cold && strcmp(how, "none") != 0 && /* "none": no filter of its own to warm up for */
        (pthread_create(&warm, NULL, shrink, NULL) || pthread_join(warm, NULL)))
        return 5;
    struct sock_fprog prog = {.len = sizeof filter / sizeof filter[0], .filter = filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
        return 3;
    long rc = 0;
    if (strcmp(how, "none") == 0)
        ;
    else if (strcmp(how, "prctl") == 0)
        rc = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
    else if (strcmp(how, "seccomp") == 0)
        rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
    else if (strcmp(how, "tsync") == 0)
        rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
    else
        return 2;
    if (rc)
        return 4;
    unsigned long total = 0;
    if (threads <= 0) {
        total = work(1, n);
        printf("main %lu\n", total);
    } else {
        job_t *jobs = calloc((size_t)threads, sizeof *jobs);
        pthread_t *tids = calloc((size_t)threads, sizeof *tids);
        for (int i = 0; i < threads; i++) {
            jobs[i] = (job_t){.seed = (unsigned long)i + 1, .n = n / threads};
            if (pthread_create(&tids[i], NULL, run, &jobs[i]))
                return 5;
        }
        for (int i = 0; i < threads; i++) {
            pthread_join(tids[i], NULL);
            printf("thread %d %lu\n", i, jobs[i].sum);
            total += jobs[i].sum;
        }
        free(jobs);
        free(tids);
    }
    printf("total %lu\n", total);
    return 0;
}
