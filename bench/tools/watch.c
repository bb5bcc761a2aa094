/*
 * bench-watch: run a command and report its wall time, and with -i the
 * peak RSS and CPU time of every process it makes, including those that
 * leave its tree (memsim-recorder moves into a session of its own and is
 * reparented: bench-watch makes itself their subreaper, so they come back
 * to it).
 *
 *   bench-watch [-i MS] [-t SECONDS] [-o FILE] [--] COMMAND [ARG]...
 *
 * Without -i: the wall time from fork to the command's exit, nothing
 * else is watched.  With -i MS: every MS milliseconds every descendant's
 * VmHWM (/proc/PID/status) and utime + stime (/proc/PID/stat) are read;
 * a process that ends as a child of bench-watch (the command, and every
 * orphan) is then reaped with wait4, whose rusage gives its exact peak
 * RSS and CPU time; one that ends as another's child keeps its last
 * polled figures (lower bounds, short by at most one interval).  After
 * the command exits, bench-watch waits for the rest (30 s at most).
 *
 * The command runs in a process group of its own.  With -t, the group
 * gets SIGTERM after SECONDS, and SIGKILL 5 s later if the command is
 * still there; SIGINT, SIGTERM and SIGHUP sent to bench-watch go on to
 * the group.
 *
 * The report goes to FILE (default stderr), one item a line:
 *
 *   wall_s 2.181234          command started to command reaped
 *   wall_all_s 2.190001      to the last process reaped (-i only)
 *   status 0                 the command's exit status, 128+N for signal N
 *   timeout 0                1 when -t ended it
 *   command_pid 4242         the command's pid (its "proc" line is the program's)
 *   proc PID COMM HWM_KIB CPU_S exact|polled   (-i only; one per process)
 *
 * A process with a child of another name keeps its polled figures
 * (wait4's rusage would sum in the children it reaped).  Exit status: the
 * command's (as in "status"), 128+N when signal N was passed on; 2 for a
 * usage error, 1 when bench-watch cannot run it.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WATCH_MAX 4096 /* processes tracked over one run */

typedef struct proc_s {
    pid_t pid;
    pid_t ppid;                 /* as last polled */
    unsigned long long start;   /* starttime (clock ticks), tells reused pids apart */
    char comm[32];
    long hwm_kib;               /* peak RSS: polled VmHWM, or ru_maxrss when exact */
    double cpu_s;               /* utime + stime */
    int had_children;           /* seen as a parent: its rusage would sum them in */
    int exact;                  /* figures from wait4's rusage */
    int done;                   /* reaped, or gone */
} proc_t;

static proc_t procs[WATCH_MAX];
static int nprocs;
static long ticks;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double seconds(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* Read /proc/PID/stat: comm, ppid, utime + stime, starttime.  0, or -1
 * when the process is gone. */
static int stat_read(pid_t pid, char *comm, size_t commsz, pid_t *ppid, double *cpu,
                     unsigned long long *start)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *open = strchr(buf, '('), *close = strrchr(buf, ')');
    if (!open || !close || close < open)
        return -1;
    size_t len = (size_t)(close - open - 1);
    if (len >= commsz)
        len = commsz - 1;
    memcpy(comm, open + 1, len);
    comm[len] = '\0';
    /* Fields after the comm: 3 state, 4 ppid, ... 14 utime, 15 stime, ... 22 starttime. */
    char *p = close + 2;
    unsigned long long v[21] = {0};
    int field = 3;
    for (char *tok = strtok(p, " "); tok && field <= 22; tok = strtok(NULL, " "), field++)
        if (field >= 4)
            v[field - 4] = strtoull(tok, NULL, 10);
    *ppid = (pid_t)v[0];
    *cpu = (double)(v[10] + v[11]) / (double)ticks;
    *start = v[18];
    return 0;
}

/* VmHWM of PID in KiB, or -1 (gone, or a zombie: no memory left). */
static long hwm_read(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    long kib = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0) {
            kib = strtol(line + 6, NULL, 10);
            break;
        }
    fclose(f);
    return kib;
}

/* The name as the report prints it: one word (spaces become '_'). */
static void comm_set(proc_t *p, const char *comm)
{
    snprintf(p->comm, sizeof p->comm, "%s", comm);
    for (char *c = p->comm; *c; c++)
        if (*c == ' ' || *c == '\t' || *c == '\n')
            *c = '_';
}

static proc_t *proc_find(pid_t pid, unsigned long long start)
{
    for (int i = nprocs - 1; i >= 0; i--)
        if (procs[i].pid == pid && procs[i].start == start && !procs[i].done)
            return &procs[i];
    return NULL;
}

static proc_t *proc_find_live(pid_t pid)
{
    for (int i = nprocs - 1; i >= 0; i--)
        if (procs[i].pid == pid && !procs[i].done)
            return &procs[i];
    return NULL;
}

/* One pass over /proc: every descendant of bench-watch, its latest figures. */
static void poll_all(pid_t self)
{
    enum { SCAN_MAX = 65536 };
    static pid_t pids[SCAN_MAX], ppids[SCAN_MAX];
    int n = 0;
    DIR *d = opendir("/proc");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) && n < SCAN_MAX) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        char comm[32];
        double cpu;
        unsigned long long start;
        pid_t pid = (pid_t)atoi(e->d_name), ppid;
        if (stat_read(pid, comm, sizeof comm, &ppid, &cpu, &start) != 0)
            continue;
        pids[n] = pid;
        ppids[n++] = ppid;
    }
    closedir(d);
    for (int i = 0; i < n; i++) {
        /* Is pids[i] below self?  Walk up its parents (at most n steps). */
        pid_t up = ppids[i];
        int steps = 0;
        while (up != self && up > 1 && steps++ < n) {
            int j;
            for (j = 0; j < n && pids[j] != up; j++)
                ;
            up = j < n ? ppids[j] : 0;
        }
        if (up != self)
            continue;
        char comm[32];
        double cpu;
        unsigned long long start;
        pid_t ppid;
        if (stat_read(pids[i], comm, sizeof comm, &ppid, &cpu, &start) != 0)
            continue;
        long hwm = hwm_read(pids[i]);
        proc_t *p = proc_find(pids[i], start);
        if (!p) {
            if (nprocs == WATCH_MAX)
                continue;
            p = &procs[nprocs++];
            memset(p, 0, sizeof *p);
            p->pid = pids[i];
            p->start = start;
        }
        comm_set(p, comm);
        p->ppid = ppid;
        if (hwm > p->hwm_kib)
            p->hwm_kib = hwm;
        if (cpu > p->cpu_s)
            p->cpu_s = cpu;
    }
    /* A child of another name (not a copy of the process: memsim's
     * start-up helper is one) would be summed into its parent's rusage. */
    for (int i = 0; i < nprocs; i++)
        for (int j = 0; j < nprocs; j++)
            if (j != i && !procs[j].done && procs[j].ppid == procs[i].pid &&
                strcmp(procs[j].comm, procs[i].comm) != 0)
                procs[i].had_children = 1;
}

/* Reap every child that has ended.  Returns the number reaped; *cmd_status
 * is set when the command is among them. */
static int reap(pid_t cmd, int *cmd_status, double *cmd_end, int watching)
{
    int reaped = 0;
    for (;;) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | (watching ? WNOWAIT : 0)) != 0 ||
            si.si_pid == 0)
            return reaped;
        pid_t pid = si.si_pid;
        char comm[32] = "?";
        proc_t *p = NULL;
        if (watching) {
            /* A zombie still has its stat: its name, before it goes. */
            pid_t ppid;
            double cpu;
            unsigned long long start;
            if (stat_read(pid, comm, sizeof comm, &ppid, &cpu, &start) == 0)
                p = proc_find(pid, start);
            if (!p)
                p = proc_find_live(pid);
            if (!p && nprocs < WATCH_MAX) {
                p = &procs[nprocs++];
                memset(p, 0, sizeof *p);
                p->pid = pid;
                comm_set(p, comm);
            }
        }
        int status = 0;
        struct rusage ru;
        if (watching && wait4(pid, &status, 0, &ru) != pid)
            continue;
        if (!watching)
            status = si.si_code == CLD_EXITED ? si.si_status << 8 : si.si_status;
        if (p) {
            if (!p->had_children) {
                p->hwm_kib = ru.ru_maxrss;
                p->cpu_s = seconds(ru.ru_utime) + seconds(ru.ru_stime);
                p->exact = 1;
            }
            p->done = 1;
        }
        if (pid == cmd) {
            *cmd_end = now_s();
            *cmd_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
        reaped++;
    }
}

static int usage(void)
{
    fprintf(stderr,
            "usage: bench-watch [-i MS] [-t SECONDS] [-o FILE] [--] COMMAND [ARG]...\n\n"
            "examples:\n"
            "  bench-watch -o t.txt ./prog 1 1000             wall time only\n"
            "  bench-watch -i 20 -o t.txt ./prog 1 1000       and every process's peak RSS, CPU\n"
            "  bench-watch -t 60 -o t.txt ./prog 1 1000       SIGTERM to its group after 60 s\n");
    return 2;
}

/* The figures, into out (stderr when NULL): 0, or 1 after one line on
 * stderr.  t_all < 0: not watching (no wall_all_s). */
static int write_report(const char *out, double t0, double cmd_end, double t_all, int status,
                        int timed_out, pid_t cmd)
{
    FILE *f = out ? fopen(out, "w") : stderr;
    if (!f) {
        fprintf(stderr, "bench-watch: %s: %s\n", out, strerror(errno));
        return 1;
    }
    fprintf(f, "wall_s %.6f\n", cmd_end - t0);
    if (t_all >= 0)
        fprintf(f, "wall_all_s %.6f\n", t_all - t0);
    fprintf(f, "status %d\n", status);
    fprintf(f, "timeout %d\n", timed_out ? 1 : 0);
    fprintf(f, "command_pid %d\n", (int)cmd);
    for (int i = 0; i < nprocs; i++)
        fprintf(f, "proc %d %s %ld %.3f %s\n", (int)procs[i].pid, procs[i].comm, procs[i].hwm_kib,
                procs[i].cpu_s, procs[i].exact ? "exact" : "polled");
    if (f != stderr)
        fclose(f);
    return 0;
}

int main(int argc, char **argv)
{
    long interval_ms = 0;
    double limit_s = 0;
    const char *out = NULL;
    int opt;
    while ((opt = getopt(argc, argv, "+i:t:o:")) != -1) {
        if (opt == 'i') {
            interval_ms = strtol(optarg, NULL, 10);
            if (interval_ms < 1 || interval_ms > 10000)
                return usage();
        } else if (opt == 't') {
            limit_s = strtod(optarg, NULL);
            if (!(limit_s > 0))
                return usage();
        } else if (opt == 'o') {
            out = optarg;
        } else {
            return usage();
        }
    }
    if (optind >= argc)
        return usage();
    ticks = sysconf(_SC_CLK_TCK);
    int watching = interval_ms > 0;
    if (watching && prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
        perror("bench-watch: prctl(PR_SET_CHILD_SUBREAPER)");
        return 1;
    }
    /* Children's ends and the signals passed on to the command's group
     * are all taken by sigtimedwait. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, NULL);

    double t0 = now_s();
    pid_t cmd = fork();
    if (cmd < 0) {
        perror("bench-watch: fork");
        return 1;
    }
    if (cmd == 0) {
        setpgid(0, 0); /* a group of its own: a timeout ends all of it */
        sigprocmask(SIG_UNBLOCK, &set, NULL);
        execvp(argv[optind], argv + optind);
        fprintf(stderr, "bench-watch: %s: %s\n", argv[optind], strerror(errno));
        _exit(127);
    }
    setpgid(cmd, cmd);
    int status = -1, timed_out = 0, passed = 0;
    double cmd_end = 0, deadline = 0, kill_at = 0;
    pid_t self = getpid();
    for (;;) {
        if (watching)
            poll_all(self);
        reap(cmd, &status, &cmd_end, watching);
        double t = now_s();
        if (status >= 0 && deadline == 0)
            deadline = t + 30;
        if (status >= 0) {
            siginfo_t si;
            if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) != 0 && errno == ECHILD)
                break; /* nothing left */
            if (!watching || t > deadline)
                break;
        } else if (limit_s > 0 && !timed_out && t - t0 > limit_s) {
            kill(-cmd, SIGTERM);
            timed_out = 1;
            kill_at = t + 5;
        } else if (timed_out == 1 && t > kill_at) {
            kill(-cmd, SIGKILL);
            timed_out = 2;
        }
        /* Sleep until a child ends, a signal comes or the interval passes. */
        long ms = watching ? interval_ms : 100;
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        int sig = sigtimedwait(&set, NULL, &ts);
        if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
            if (status < 0)
                kill(-cmd, sig);
            passed = sig;
        }
    }
    double t_all = now_s();

    if (write_report(out, t0, cmd_end, watching ? t_all : -1, status, timed_out, cmd))
        return 1;
    return passed ? 128 + passed : status;
}
