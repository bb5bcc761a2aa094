/*
 * launch: the arena and its recorder.  See launch.h.
 */
#include "preload/launch.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ipc/arena.h"
#include "ipc/clock.h"
#include "preload/real.h"
#include "ipc/sysmem.h"
#include "preload/unwind.h"

#define HELPER_STACK (256u << 10)
#define RECORDER_NAME "memsim-recorder"
#define ARENA_FD 3

static char paths[2][PATH_MAX]; /* where memsim-recorder may be, in order */

const char *launch_recorder_path(void) { return paths[0]; }

/* Beside libmemsim.so (the build tree, and an installed one: both in
 * lib/memsim/), or in a memsim/ directory beside it (older installs:
 * lib/libmemsim.so, lib/memsim/memsim-recorder). */
static void find_recorder(void)
{
    Dl_info info;
    char dir[PATH_MAX] = "";
    if (dladdr((void *)find_recorder, &info) && info.dli_fname) {
        const char *so = info.dli_fname;
        size_t at = 0;
        if (so[0] != '/' && getcwd(dir, sizeof dir - 1)) {
            at = strlen(dir);
            dir[at++] = '/';
        }
        size_t n = strnlen(so, sizeof dir - at - 1);
        memcpy(dir + at, so, n);
        dir[at + n] = '\0';
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = '\0';
    }
    /* dir is at most PATH_MAX - 1 bytes: the joined paths may be cut, and
     * then just do not exist. */
    int n0 = snprintf(paths[0], sizeof paths[0], "%s/%s", dir, RECORDER_NAME);
    int n1 = snprintf(paths[1], sizeof paths[1], "%s/memsim/%s", dir, RECORDER_NAME);
    (void)n0;
    (void)n1;
}

static long sys(long nr, long a, long b, long c, long d, long e, long f)
{
    return syscall(nr, a, b, c, d, e, f);
}

/* Every descriptor of the helper's own table (a copy of the process's). */
static void close_all(void)
{
    if (sys(SYS_close_range, 0, (long)~0u, 0, 0, 0, 0) == 0)
        return;
    for (int fd = 0; fd < 65536; fd++) /* kernels before 5.9 */
        close(fd);
}

typedef struct helper_s {
    launch_t *l;
    int rc;          /* 0, or -errno */
    const char *what; /* the step that failed */
    char said[200];   /* what the recorder's loader said, when it could not start */
} helper_t;

#define EXEC_WAIT_NS 10000000000ull /* memsim-recorder's loader is done within this */

/* Whether the hard descriptor limit leaves the recorder's loader too few
 * (the arena's and the three standard ones take four). */
static bool tight_nofile(struct rlimit *rl)
{
    return getrlimit(RLIMIT_NOFILE, rl) == 0 && rl->rlim_max != RLIM_INFINITY &&
           rl->rlim_max < 16;
}

/* Wait until the recorder (the helper's child) runs its main, or is
 * gone: then r0 says why (REC_FAILED), with what its loader printed on
 * the pipe err.  The program waits for the helper, so a recorder that
 * cannot start costs it no more than the loader's time. */
static void wait_exec(region_t *r0, long pid, int err)
{
    uint64_t t0 = clock_ns(); /* ipc/clock.h's: a process without the TSC has no vDSO clock */
    for (;;) {
        uint32_t w = atomic_load(&r0->rec_futex);
        if (atomic_load(&r0->rec_exec) || atomic_load(&r0->rec_state) != REC_STARTING)
            return;
        int st;
        if (waitpid((pid_t)pid, &st, WNOHANG | __WALL) == (pid_t)pid) {
            if (atomic_load(&r0->rec_state) != REC_STARTING)
                return; /* it said why itself (exec failed) */
            char said[200] = "";
            struct rlimit nofile;
            ssize_t n = read(err, said, sizeof said - 1);
            said[n > 0 ? n : 0] = '\0';
            for (char *c = said; *c; c++)
                if (*c == '\n' || (unsigned char)*c < 0x20)
                    *c = *c == '\n' && !c[1] ? '\0' : ' ';
            if (said[0])
                snprintf(r0->error, sizeof r0->error,
                         "memsim: %s could not start: %.300s; tracing is off", RECORDER_NAME,
                         said);
            else if (WIFEXITED(st) && WEXITSTATUS(st) == 127 && tight_nofile(&nofile))
                snprintf(r0->error, sizeof r0->error,
                         "memsim: %s cannot load its libraries under the descriptor limit "
                         "(ulimit -n %llu); tracing is off", RECORDER_NAME,
                         (unsigned long long)nofile.rlim_max);
            else
                snprintf(r0->error, sizeof r0->error,
                         "memsim: %s could not start (%s %d); tracing is off", RECORDER_NAME,
                         WIFSIGNALED(st) ? "signal" : "exit status",
                         WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
            atomic_store(&r0->rec_state, REC_FAILED);
            return;
        }
        if (clock_ns() - t0 > EXEC_WAIT_NS)
            return; /* the program's own wait says so */
        region_wait(&r0->rec_futex, w, 5000000ull);
    }
}

/* The recorder, in the helper's child: never returns.  err: the write
 * end of a pipe the helper reads, made its standard error while the
 * loader runs (what ld.so says when it cannot load a library). */
static void become_recorder(region_t *r0, int err)
{
    setsid(); /* out of the program's process group and terminal */
    if (err >= 0 && err != 2) {
        dup2(err, 2);
        close(err);
    }
    /* The recorder is a process apart: the program's soft limits on
     * descriptors and address space are the program's (a program that
     * lowered RLIMIT_NOFILE to what it uses would leave the loader none);
     * it takes its hard ones.  RLIMIT_FSIZE stays: the trace keeps to it. */
    static const int raised[] = {RLIMIT_NOFILE, RLIMIT_AS, RLIMIT_DATA, RLIMIT_STACK};
    for (size_t i = 0; i < sizeof raised / sizeof raised[0]; i++) {
        struct rlimit rl;
        if (getrlimit(raised[i], &rl) == 0 && rl.rlim_cur != rl.rlim_max) {
            rl.rlim_cur = rl.rlim_max;
            setrlimit(raised[i], &rl);
        }
    }
    char fd[8] = "3", region[8] = "0";
    char *argv[] = {(char *)RECORDER_NAME, fd, region, NULL};
    char *envp[] = {NULL};
    for (int i = 0; i < 2; i++)
        sys(SYS_execve, (long)paths[i], (long)argv, (long)envp, 0, 0, 0);
    int e = errno;
    const char *why = e == ENOENT ? "not found" : strerror(e);
    snprintf(r0->error, sizeof r0->error,
             "memsim: cannot run %s (looked for %.200s and %.200s): %s; tracing is off",
             RECORDER_NAME, paths[0], paths[1], why);
    atomic_store(&r0->rec_state, REC_FAILED);
    region_wake(&r0->rec_futex);
    sys(SYS_exit_group, 127, 0, 0, 0, 0, 0);
}

/* An id for a new arena: what a new image checks before it joins one
 * (a recorder's pid may have been reused). */
static uint64_t arena_id(void)
{
    uint64_t id = 0;
    if (sys(SYS_getrandom, (long)&id, sizeof id, 1 /* GRND_NONBLOCK */, 0, 0, 0) != sizeof id) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        id = ((uint64_t)ts.tv_nsec << 32) ^ (uint64_t)ts.tv_sec ^ (uint64_t)getpid();
    }
    return id | 1; /* never 0: no arena */
}

/* The arena of recorder join_pid, mapped into l->arena: true, or false
 * when it is not there (gone, another user's, another build's, closing,
 * or a reused pid: the id differs). */
static bool join_arena(launch_t *l)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", l->join_pid, ARENA_FD);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return false;
    struct stat st;
    long m = -1;
    if (fstat(fd, &st) == 0 && (size_t)st.st_size >= ARENA_SIZE(1, RING_SLOTS_MIN))
        m = sys(SYS_mmap, 0, (long)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == -1)
        return false;
    arena_t *a = (arena_t *)m;
    if (a->magic != ARENA_MAGIC || a->id != l->join_id || arena_bytes(a) > (size_t)st.st_size ||
        !atomic_load(&a->open) || atomic_load(&a->rec_pid) != l->join_pid) {
        sys(SYS_munmap, m, (long)st.st_size, 0, 0, 0, 0);
        return false;
    }
    l->arena = a;
    l->joined = true;
    return true;
}

/* Join l's recorder from the calling thread, with every signal blocked:
 * true when joined.  No helper: joining starts nothing and holds no
 * descriptor past its return (the unwinder's file, the recorder's memfd
 * and, if it is not joined, the clocksource are each opened and closed
 * here), and a helper's
 * clone and wait cost a short process more than the rest of its join
 * (two scheduler round trips on a busy machine).  It runs in a
 * constructor or a fork's or clone's child, before the program gets
 * control back, with no other thread of the program's that could see
 * the descriptors meanwhile.  When the join fails the unwinder stays
 * loaded, and the helper starts a recorder of its own. */
static bool join_here(launch_t *l)
{
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &old);
    if (l->load_unwinder)
        l->unwind_rc = unwind_init(l->stack_depth, l->unwind_mode, &l->unwind_why);
    bool joined = join_arena(l);
    /* The tree's first process asked: the same machine's answer. */
    l->tsc = joined ? ((arena_t *)l->arena)->tsc != 0 : clock_tsc_usable();
    sigprocmask(SIG_SETMASK, &old, NULL);
    l->load_unwinder = false; /* loaded: not again in the helper */
    return joined;
}

/* The arena's shape under the limits: as many regions (*n) of as many
 * ring slots (*slots) as fit.  fsize: the file size limit (the memfd is a
 * file) below which as many regions as fit (a fork's child then gets an
 * arena of its own), with smaller rings if even one does not; an
 * address-space limit (ulimit -v) gets an eighth of it at most, as many
 * regions as fit in that (at least one).  *n is 0 when none fits. */
static void arena_shape(rlim_t fsize, unsigned *n_out, unsigned *slots_out)
{
    unsigned n = ARENA_REGIONS, slots = RING_SLOTS;
    if (fsize != RLIM_INFINITY) {
        while (slots > RING_SLOTS_MIN && ARENA_SIZE(1, slots) > fsize)
            slots /= 2;
        n = fsize > ARENA_HEADER ? (unsigned)((fsize - ARENA_HEADER) / REGION_SIZE(slots)) : 0;
        if (n > ARENA_REGIONS)
            n = ARENA_REGIONS;
    }
    struct rlimit as;
    if (n && getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
        uint64_t budget = as.rlim_cur / 8;
        while (slots > RING_SLOTS_MIN && ARENA_SIZE(1, slots) > budget)
            slots /= 2;
        uint64_t fit = budget > ARENA_HEADER ? (budget - ARENA_HEADER) / REGION_SIZE(slots) : 0;
        n = fit < 1 ? 1 : fit < n ? (unsigned)fit : n;
    }
    *n_out = n;
    *slots_out = slots;
}

static int helper(void *arg)
{
    helper_t *h = arg;
    launch_t *l = h->l;
    close_all();
    /* Its own descriptor table, and limits: the program's soft limit on
     * descriptors (it may have lowered it to what it uses) is not the
     * helper's concern. */
    struct rlimit nofile;
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
        nofile.rlim_cur = nofile.rlim_max;
        setrlimit(RLIMIT_NOFILE, &nofile);
    }
    /* 0, 1 and 2 are /dev/null in the recorder: nothing it (or a library
     * of it) prints lands in a file it opened. */
    int null = open("/dev/null", O_RDWR);
    if (null == 0) {
        dup2(0, 1);
        dup2(0, 2);
    }
    l->tsc = clock_tsc_usable();
    if (l->load_unwinder)
        l->unwind_rc = unwind_init(l->stack_depth, l->unwind_mode, &l->unwind_why);
    int mfd = (int)sys(SYS_memfd_create, (long)"memsim", 0, 0, 0, 0, 0); /* -1 and errno */
    if (mfd < 0 || (mfd != ARENA_FD && dup2(mfd, ARENA_FD) != ARENA_FD)) {
        h->rc = -errno;
        h->what = "create its memfd";
        return 0;
    }
    if (mfd != ARENA_FD)
        close(mfd);
    /* The memfd is a file: the file size limit (ulimit -f) applies to it.
     * The helper has limits of its own (it is a process apart): lift its
     * soft limit for the arena, and put it back for the recorder, whose
     * trace must keep to it. */
    struct rlimit fsize, lifted;
    getrlimit(RLIMIT_FSIZE, &fsize);
    lifted = (struct rlimit){fsize.rlim_max, fsize.rlim_max};
    setrlimit(RLIMIT_FSIZE, &lifted);
    unsigned n, slots;
    arena_shape(lifted.rlim_cur, &n, &slots);
    int sized = n ? ftruncate(ARENA_FD, (off_t)ARENA_SIZE(n, slots)) : (errno = EFBIG, -1);
    int e = errno;
    setrlimit(RLIMIT_FSIZE, &fsize);
    if (sized) {
        h->rc = -e;
        h->what = e == EFBIG ? "make its arena under the file size limit (ulimit -f)"
                             : "size its arena";
        return 0;
    }
    long m = sys(SYS_mmap, 0, (long)ARENA_SIZE(n, slots), PROT_READ | PROT_WRITE, MAP_SHARED, ARENA_FD, 0);
    if (m == -1) {
        struct rlimit as;
        h->rc = -errno;
        h->what = errno == ENOMEM && getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY
                      ? "map its arena under the address-space limit (ulimit -v)"
                      : "map its arena";
        return 0;
    }
    arena_format((void *)m, n, slots, arena_id());
    ((arena_t *)m)->tsc = l->tsc;
    l->arena = (void *)m;
    region_t *r0 = arena_region((void *)m, 0);
    int err[2] = {-1, -1};
    if (pipe2(err, O_CLOEXEC | O_NONBLOCK))
        err[0] = err[1] = -1;
    /* The recorder: a copy of this helper (no CLONE_VM), no exit signal. */
    long pid = sys(SYS_clone, 0, 0, 0, 0, 0, 0);
    if (pid == 0)
        become_recorder(r0, err[1]);
    if (err[1] >= 0)
        close(err[1]);
    if (pid == -1) {
        h->rc = -errno;
        h->what = "start memsim-recorder";
        sys(SYS_munmap, m, (long)ARENA_SIZE(n, slots), 0, 0, 0, 0);
        l->arena = NULL;
    } else {
        wait_exec(r0, pid, err[0]);
    }
    if (err[0] >= 0)
        close(err[0]);
    return 0;
}

int launch_recorder(launch_t *l, char *err, size_t errlen)
{
    if (!paths[0][0])
        find_recorder();
    l->arena = NULL;
    l->joined = false;
    if (l->join_pid > 0 && join_here(l))
        return 0;
    helper_t h = {.l = l, .rc = 0, .what = NULL};
    char *stack = sysmem_alloc(HELPER_STACK);
    if (!stack) {
        snprintf(err, errlen, "memsim: cannot start %s: out of memory; tracing is off",
                 RECORDER_NAME);
        return -1;
    }
    /* Signals wait until the helper is gone: none may run a handler of
     * the program's on the helper's stack. */
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &old);
    int pid = REAL(clone)(helper, stack + HELPER_STACK, CLONE_VM | CLONE_VFORK, &h);
    int e = errno;
    if (pid > 0) {
        int st;
        while (waitpid(pid, &st, __WCLONE) < 0 && errno == EINTR)
            ;
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    sysmem_free(stack, HELPER_STACK);
    if (pid < 0) {
        snprintf(err, errlen, "memsim: cannot start %s: %s; tracing is off", RECORDER_NAME,
                 strerror(e));
        return -1;
    }
    if (h.rc || !l->arena) {
        snprintf(err, errlen, "memsim: cannot %s: %s; tracing is off", h.what ? h.what : "start",
                 strerror(-h.rc));
        return -1;
    }
    return 0;
}
