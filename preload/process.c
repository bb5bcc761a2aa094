/*
 * process: start-up, exit, fork, exec, spawn and clone copies.  See
 * process.h.
 */
#include "preload/process.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ipc/arena.h"
#include "ipc/childenv.h"
#include "ipc/clock.h"
#include "preload/events.h"
#include "preload/guard.h"
#include "preload/launch.h"
#include "preload/modules.h"
#include "preload/real.h"
#include "preload/release.h"
#include "ipc/ring.h"
#include "preload/sandbox.h"
#include "preload/say.h"
#include "ipc/seccomp.h"
#include "preload/signals.h"
#include "preload/stacks.h"
#include "ipc/sysmem.h"
#include "preload/thread.h"

#define START_WAIT_NS 10000000000ull   /* a recorder that has not started after 10 s */
#define END_STALL_NS 5000000000ull     /* exit waits while the recorder makes progress */
#define END_UNSURE_NS 100000000ull     /* ...less when it may be stuck at our own claim */
#define ENV_AHEAD "MEMSIM_AHEAD"       /* the allocator ahead of memsim, said in this tree */

static proc_t off; /* all zeros: nothing is traced */
proc_t *memsim_proc = &off;
pid_t memsim_traced_pid;
bool memsim_track_maps;
_Atomic bool memsim_shared_clone;

static config_t cfg;            /* MEMSIM_* as read at start */
static char exe[PATH_MAX];      /* /proc/self/exe */
static char env_output[PATH_MAX + 32]; /* MEMSIM_OUTPUT=<absolute>, for children */
static char env_root[48];       /* MEMSIM_ROOT_PID=<pid> with MEMSIM_TRACE_CHILDREN=0 */
static char note[512];          /* a remark for the meta record and stderr, or "" */
static char env_ahead[PATH_MAX + 16]; /* MEMSIM_AHEAD=<library>: the note said in the tree */
static bool note_said;          /* an ancestor said the same note: not again */
static char gone_line[PATH_MAX + 100]; /* process_recorder_gone's line for the end, or "" */
static _Atomic pid_t gone_pid;  /* the process whose recorder went, 0: none */

#define ENV_ARENA "MEMSIM_ARENA"   /* the tree's recorder, for the programs it execs */

/* ---- start-up -------------------------------------------------------------------- */

/* MEMSIM_OUTPUT relative to the directory the process started in, made
 * absolute once: a forked child that changed directory still writes
 * beside its parent, and exec'd programs get the absolute form. */
static void absolute_output(config_t *c)
{
    char cwd[PATH_MAX];
    if (c->output[0] == '/' || !getcwd(cwd, sizeof cwd))
        return;
    if (strcmp(c->output, ".") == 0 || strcmp(c->output, "./") == 0)
        c->output[0] = '\0';
    size_t a = strlen(cwd), b = strlen(c->output);
    if (b == 0) {
        memcpy(c->output, cwd, a + 1);
        return;
    }
    if (a + 1 + b >= sizeof c->output)
        return;
    memmove(c->output + a + 1, c->output, b + 1);
    memcpy(c->output, cwd, a);
    c->output[a] = '/';
}

/* MEMSIM_TRACE_CHILDREN=0: whether a process below the first one. */
static bool below_root(void)
{
    const char *root = getenv("MEMSIM_ROOT_PID");
    char pid[24];
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    if (root && *root)
        return strcmp(root, pid) != 0;
    snprintf(env_root, sizeof env_root, "MEMSIM_ROOT_PID=%s", pid);
    return false;
}

extern bool memsim_malloc_probe, memsim_malloc_reached;

/* Whether the program's malloc is memsim's: another allocator preloaded
 * ahead of it (or the executable's own) gets the calls, and memsim sees
 * none of them.  Asked by calling it: the address alone misleads (an
 * executable that takes malloc's address has a stub of its own that
 * leads to memsim's). */
static void check_interposed(void)
{
    void *(*m)(size_t) = (void *(*)(size_t))dlsym(RTLD_DEFAULT, "malloc");
    void (*f)(void *) = (void (*)(void *))dlsym(RTLD_DEFAULT, "free");
    if (!m || !f)
        return;
    memsim_malloc_probe = true;
    memsim_malloc_reached = false;
    f(m(1));
    memsim_malloc_probe = false;
    if (memsim_malloc_reached)
        return;
    Dl_info info;
    const char *who = dladdr(m, &info) && info.dli_fname && *info.dli_fname ? info.dli_fname
                                                                              : "another library";
    snprintf(note, sizeof note,
             "memsim: malloc is %s's, found ahead of libmemsim.so: the heap events it serves "
             "are not recorded (put libmemsim.so first in LD_PRELOAD)",
             who);
    /* Said once for a tree: the traced children of this process (and the
     * program an exec replaces it with) get MEMSIM_AHEAD naming the
     * library, and one that finds the same library ahead keeps quiet
     * (its meta record still has the note). */
    const char *said = getenv(ENV_AHEAD);
    note_said = said && strcmp(said, who) == 0;
    snprintf(env_ahead, sizeof env_ahead, "%s=%s", ENV_AHEAD, who);
}

/* Whether the allocator the hooks reach is glibc's (mallinfo2 then
 * describes it). */
static bool glibc_malloc(void)
{
    Dl_info info;
    return dladdr((void *)REAL(malloc), &info) && info.dli_fname &&
           strstr(info.dli_fname, "/libc.so");
}

/* The page the hooks test, marked to read as zeros in unprepared copies. */
static proc_t *proc_page(void)
{
    if (memsim_proc != &off)
        return memsim_proc;
    proc_t *p = sysmem_alloc(4096);
    if (!p)
        return NULL;
    if (madvise(p, 4096, MADV_WIPEONFORK)) {
        /* Linux < 4.14: copies made by clone() write into the parent's
         * ring as before; everything else works. */
    }
    memsim_proc = p;
    return p;
}

/* The process's id.  In a sandbox that forbids getpid, the calling
 * thread's id, which is the process's where this is asked: a fork's
 * child and a clone's copy have that one thread. */
static pid_t self_pid(void)
{
    if (!seccomp_active())
        return getpid();
    long r = seccomp_call(SYS_getpid, 0, 0, 0, 0, 0, 0);
    return r > 0 ? (pid_t)r : seccomp_gettid();
}

static uint64_t unix_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Fill r for this process and publish it (its recorder waits for it). */
static void region_publish(void *arena, region_t *r, pid_t parent, uint32_t flags,
                           const char *why)
{
    arena_t *a = arena;
    if (flags & REGION_JOINED)
        r->ticket = atomic_fetch_add(&a->tickets, 1) + 1;
    r->parent_pid = parent;
    r->flags = flags | (clock_tsc_ ? REGION_TSC : 0) | (glibc_malloc() ? REGION_GLIBC_MALLOC : 0);
    r->t0 = clock_ns();
    r->start_unix_ns = unix_ns();
    r->cfg = cfg;
    memcpy(r->exe, exe, sizeof r->exe);
    snprintf(r->note, sizeof r->note, "%s", why ? why : "");
    atomic_store(&r->pid, self_pid());
    atomic_store(&r->state, REGION_LIVE);
    region_wake(&r->pid_futex);
    region_wake(&a->joins);
}

/* Wait for r's recorder to open the trace: 0, or -1 with err set. */
static int recorder_ready(region_t *r, char *err, size_t errlen)
{
    uint64_t start = clock_ns();
    for (;;) {
        uint32_t w = atomic_load(&r->rec_futex);
        uint32_t st = atomic_load(&r->rec_state);
        if (st == REC_RUNNING)
            return 0;
        if (st == REC_FAILED || st == REC_DONE) {
            snprintf(err, errlen, "%s", r->error[0] ? r->error : "memsim: the recorder failed");
            return -1;
        }
        if (clock_ns() - start > START_WAIT_NS) {
            snprintf(err, errlen, "memsim: %s did not start within 10 s; tracing is off",
                     launch_recorder_path());
            return -1;
        }
        region_wait(&r->rec_futex, w, 100000000ull);
    }
}

/* Tracing is on in this process, through region r. */
static void go_live(region_t *r, void *arena)
{
    proc_t *p = memsim_proc;
    p->pid = getpid();
    p->region = r;
    p->arena = arena;
    memsim_traced_pid = p->pid;
    atomic_store(&p->active, true);
    events_start();
    modules_changed();
}

/* The recorder named in MEMSIM_ARENA ("PID:ID", ID the arena's in hex),
 * which the environment of a program exec'd or spawned by a traced one
 * carries: into l's join fields. */
static void join_from_env(launch_t *l)
{
    const char *v = getenv(ENV_ARENA);
    char *end;
    if (!v || !*v)
        return;
    long pid = strtol(v, &end, 10);
    if (pid <= 0 || pid > INT_MAX || *end != ':')
        return;
    unsigned long long id = strtoull(end + 1, &end, 16);
    if (*end || !id)
        return;
    l->join_pid = (int)pid;
    l->join_id = id;
}

/* "MEMSIM_ARENA=PID:ID" of this process's arena into buf, for the
 * environment of a program it execs or spawns (which then joins the same
 * recorder); "" when it has none. */
static void env_arena(char *buf, size_t len)
{
    buf[0] = '\0';
    if (!proc_tracing())
        return;
    arena_t *a = memsim_proc->arena;
    int32_t pid = atomic_load(&a->rec_pid);
    if (pid > 0 && atomic_load(&a->open))
        snprintf(buf, len, "%s=%ld:%llx", ENV_ARENA, (long)pid, (unsigned long long)a->id);
}

/* An arena and a region for this process: the recorder's of the tree
 * when MEMSIM_ARENA names one that takes it, else a new arena and
 * recorder.  0, or -1 with err set. */
static int start_fresh(bool load_unwinder, pid_t parent, const char *why, char *err,
                       size_t errlen)
{
    launch_t l = {.load_unwinder = load_unwinder,
                  .stack_depth = cfg.stack_depth,
                  .unwind_mode = (int)cfg.unwind};
    join_from_env(&l);
    if (launch_recorder(&l, err, errlen))
        return -1;
    if (load_unwinder) {
        clock_init(l.tsc);
        if (l.unwind_rc && l.unwind_why) {
            char line[256];
            snprintf(line, sizeof line, "memsim: %s", l.unwind_why);
            say(line);
            cfg.stack_depth = 0;
        }
    }
    region_t *r = l.joined ? arena_join(l.arena) : arena_region(l.arena, 0);
    if (!r) { /* every region taken, or the recorder closing: one of our own */
        munmap(l.arena, arena_bytes(l.arena));
        l = (launch_t){.stack_depth = cfg.stack_depth, .unwind_mode = (int)cfg.unwind};
        if (launch_recorder(&l, err, errlen))
            return -1;
        r = arena_region(l.arena, 0);
    }
    region_publish(l.arena, r, parent, l.joined ? REGION_JOINED : 0, why);
    /* A recorder that runs already takes the region when it comes to it
     * (the ring holds the events meanwhile); one that cannot open its
     * trace says so at the end (process_end).  A new one must show it
     * started: the program runs untraced otherwise. */
    if (!l.joined && recorder_ready(r, err, errlen)) {
        munmap(l.arena, arena_bytes(l.arena)); /* the recorder has a mapping of its own */
        return -1;
    }
    go_live(r, l.arena);
    return 0;
}

/* Tracing is over for good in this process: memsim_proc back to the
 * static page of zeros, the traced pid forgotten (no hook takes the
 * process for a copy to trace), the address space given back. */
static void stop_for_good(void *arena)
{
    memsim_proc = &off;
    memsim_traced_pid = 0;
    release_all(arena);
}

static void on_exit_status(int status, void *arg);
static void on_quick_exit(void);
static void atfork_prepare(void);
static void atfork_child(void);

__attribute__((constructor(101))) static void memsim_start(int argc, char **argv, char **envp)
{
    (void)argc;
    (void)argv;
    (void)envp;
    GUARD_SCOPE;
    say_init();
    real_resolve();
    check_interposed();
    if (getauxval(AT_SECURE)) /* setuid and friends: stay passive */
        return;
    static char err[PATH_MAX + 256];
    if (config_load(&cfg, NULL, err, sizeof err)) {
        say(err);
        return;
    }
    absolute_output(&cfg);
    if (!cfg.trace_children && below_root())
        return; /* MEMSIM_TRACE_CHILDREN=0: a program started below the first one */
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    modules_init(exe);
    snprintf(env_output, sizeof env_output, "%s=%s", CONFIG_ENV_OUTPUT, cfg.output);
    if (thread_init() || !proc_page()) {
        stop_for_good(NULL);
        say("memsim: out of memory at start; tracing is off");
        return;
    }
    if (start_fresh(true, getppid(), note, err, sizeof err)) {
        stop_for_good(NULL);
        say(err);
        return;
    }
    memsim_track_maps = cfg.mmap;
    on_exit(on_exit_status, NULL);
    at_quick_exit(on_quick_exit);
    pthread_atfork(atfork_prepare, NULL, atfork_child);
    signals_install();
    if (note[0] && !note_said)
        say(note);
}

/* ---- the end ----------------------------------------------------------------------- */

/* Why records are missing, in words (no strerror: this may run in a
 * signal handler). */
static const char *write_error(int e)
{
    switch (e) {
    case 0:
        return "events were lost";
    case ENOSPC:
        return "no space left on device";
    case EDQUOT:
        return "disk quota exceeded";
    case EFBIG:
        return "the file size limit, ulimit -f, is reached";
    case ENOMEM:
        return "out of memory";
    default:
        return "the trace file could not be written";
    }
}

static void warn_incomplete(region_t *r, bool acked)
{
    char line[PATH_MAX + 200];
    uint64_t dropped = atomic_load(&r->end_dropped);
    if (!acked)
        snprintf(line, sizeof line,
                 "memsim: %s may be incomplete: its recorder did not finish with it", r->trace_path);
    else if (dropped)
        snprintf(line, sizeof line,
                 "memsim: %s is incomplete: %llu record%s could not be written (%s)",
                 r->trace_path, (unsigned long long)dropped, dropped == 1 ? "" : "s",
                 write_error(r->write_errno));
    else
        return;
    say(line);
}

/* "memsim: TRACE: WHO ran out of memory for ITS TABLE: N events were
 * recorded without their WHAT", when n is not 0. */
static void say_without(const region_t *r, uint64_t n, const char *ran_out, const char *what)
{
    if (!n)
        return;
    char line[PATH_MAX + 200];
    snprintf(line, sizeof line, "memsim: %s: %s: %llu event%s recorded without %s %s",
             r->trace_path, ran_out, (unsigned long long)n, n == 1 ? " was" : "s were",
             n == 1 ? "its" : "their", what);
    say(line);
}

/* Memory that ran out on the way, each in one line: the recorder's for
 * some live blocks (its samples' live figures leave them out; the heap
 * records are whole) and for some threads (their events are recorded
 * as an unknown thread's), the process's own for some stacks (those
 * events are recorded without one). */
static void warn_short_of_memory(region_t *r)
{
    uint64_t n = atomic_load(&r->end_untracked);
    if (n) {
        char line[PATH_MAX + 200];
        snprintf(line, sizeof line,
                 "memsim: %s: the recorder ran out of memory for its live-block map: %llu block%s "
                 "untracked, so its samples undercount the live heap (the heap records are whole)",
                 r->trace_path, (unsigned long long)n, n == 1 ? " was" : "s were");
        say(line);
    }
    say_without(r, atomic_load(&r->end_threadless),
                "the recorder ran out of memory for its thread table", "thread");
    say_without(r, atomic_load(&r->stackless),
                "memsim ran out of memory for its stack table in the process", "stack");
}

/* The thread that posts the end; 0: none yet.  Another that comes to the
 * end meanwhile (a second SIGTERM, handled on another thread) posts no
 * second end, which the recorder, done with the first, would never
 * acknowledge (and the program would print "may be incomplete"): it
 * settles a post of its own the signal cut, waits for the first end to
 * be written, then goes on to end as it would natively. */
static _Atomic pid_t ending_tid;

static void wait_for_end(proc_t *p)
{
    uint64_t start = clock_ns();
    while (atomic_load(&p->active) && clock_ns() - start < END_STALL_NS + END_UNSURE_NS)
        sandbox_nap(1000000);
}

void process_recorder_gone(void)
{
    proc_t *p = memsim_proc;
    pid_t none = 0;
    if (!proc_tracing() || sandbox_getpid() != p->pid ||
        !atomic_compare_exchange_strong(&gone_pid, &none, p->pid))
        return;
    snprintf(gone_line, sizeof gone_line,
             "memsim: %s may be incomplete: its recorder did not finish with it",
             p->region->trace_path);
    atomic_store(&p->active, false);
}

void process_release_stopped(void)
{
    proc_t *p = memsim_proc;
    if (p != &off && p->pid && atomic_load(&gone_pid) == p->pid && proc_one_thread() &&
        !ring_posting() && sandbox_getpid() == p->pid)
        stop_for_good(p->arena);
}

void process_end(msg_end_t reason, int status, int sig)
{
    proc_t *p = memsim_proc;
    if (!proc_tracing() && gone_line[0] && atomic_load(&gone_pid) == sandbox_getpid()) {
        if (atomic_exchange(&gone_pid, -1) > 0) /* once */
            say(gone_line);
        return;
    }
    if (!proc_tracing() || sandbox_getpid() != p->pid)
        return; /* a vfork child runs on its parent's memory: not its trace */
    pid_t none = 0, me = thread_tid();
    if (!atomic_compare_exchange_strong(&ending_tid, &none, me)) {
        if (none != me) { /* not the same thread again (a handler inside its own end) */
            /* A post of ours this signal cut is a hole the first end's
             * recorder would wait at: publish it first. */
            if (ring_settle(p->region))
                atomic_fetch_add(&p->region->interrupted, 1);
            wait_for_end(p);
        }
        return;
    }
    int saved = errno;
    GUARD_SCOPE;
    region_t *r = p->region;
    /* A signal may have interrupted this thread between the claim and the
     * publish of a post: nobody else will publish it.  If it cannot tell
     * whether it had claimed, the recorder may be stuck at a hole of ours
     * until the process is gone: then it finishes the trace on its own. */
    bool unsure = ring_settle(r) != 0;
    if (unsure) /* the event of a call that never returns: not a lost record */
        atomic_fetch_add(&r->interrupted, 1);
    ring_slot_t m = {.kind = MSG_END,
                     .tid = thread_tid(),
                     .t = clock_ticks(),
                     .a = (uint64_t)reason,
                     .b = (uint64_t)(int64_t)status,
                     .c = (uint64_t)(sig > 0 ? sig : 0)};
    uint32_t cut = atomic_load(&r->interrupted);
    uint64_t end = ring_post(r, &m, NULL, 0, RING_SYNC);
    /* Waited for in slices: another thread's handler (a second signal)
     * may cut a post of its own meanwhile, whose claim, if it took one,
     * is a hole before the end that no ack passes while the process
     * lives.  Then it is unsure too: the recorder finishes the trace once
     * the process is gone, and no "may be incomplete" is owed. */
    bool acked = false;
    for (uint64_t waited = 0; end && !acked;) {
        uint64_t slice = unsure ? END_UNSURE_NS : END_UNSURE_NS < END_STALL_NS - waited
                                                      ? END_UNSURE_NS : END_STALL_NS - waited;
        acked = ring_wait_acked(r, end, slice) == 0;
        waited += slice;
        if (!unsure && atomic_load(&r->interrupted) != cut)
            unsure = true;
        else if (unsure || waited >= END_STALL_NS)
            break;
    }
    atomic_store(&p->active, false);
    if (atomic_load(&r->rec_state) == REC_FAILED) /* a joined recorder could not open it */
        say(r->error);
    else if (acked || !unsure)
        warn_incomplete(r, acked);
    if (acked)
        warn_short_of_memory(r);
    errno = saved;
}

void process_end_by(long nr, msg_end_t reason, int status)
{
    /* A sandbox that forbids the exit kills the process in it: the
     * recorder sees it vanish, as natively it dies. */
    if (seccomp_allows(nr, status, 0, 0, 0, 0, 0))
        process_end(reason, status, 0);
}

static _Atomic int exit_steps;
static int exit_status = -1;

static void exit_step(void)
{
    if (atomic_fetch_add(&exit_steps, 1) == 1)
        process_end_by(SYS_exit_group, END_EXIT, exit_status);
}

__attribute__((destructor(101))) static void memsim_stop(void) { exit_step(); }

static void on_exit_status(int status, void *arg)
{
    (void)arg;
    exit_status = status & 0xff;
    exit_step();
}

static int quick_status = -1;

void process_quick_exit(int status) { quick_status = status & 0xff; }

static void on_quick_exit(void) { process_end_by(SYS_exit_group, END_QUICK_EXIT, quick_status); }

/* ---- fork ---------------------------------------------------------------------------- */

/* Per thread: glibc runs the fork handlers of several threads' forks at
 * once (it drops its lock around each handler), and the child is a copy
 * of the thread that forked, whose values it reads. */
static __thread proc_t forking __attribute__((tls_model("initial-exec"))); /* the parent's page
                                                                             as it was */
static __thread region_t *fork_region __attribute__((tls_model("initial-exec"))); /* the child's,
                                                                      reserved before the fork */

/* Before fork (any fork: glibc's own for daemon() and forkpty too; maybe
 * in a signal handler: nothing here locks). */
static void atfork_prepare(void)
{
    forking = *memsim_proc;
    fork_region = NULL;
    if (!proc_tracing() || sandbox_getpid() != forking.pid)
        return;
    GUARD_SCOPE;
    region_t *r = forking.region;
    /* A fork from a signal handler that interrupted one of this thread's
     * posts: the recorder stops at that post until the handler returns,
     * which may wait for the child (waitpid).  The child then gets a
     * recorder of its own rather than one the parent's would fork. */
    if (cfg.trace_children && !ring_posting())
        fork_region = arena_reserve(forking.arena);
    /* The recorder forks itself here, in the ring's order: the child's
     * recorder starts from the live map and the device as of now. */
    ring_slot_t m = {.kind = MSG_FORK,
                     .tid = thread_tid(),
                     .t = clock_ticks(),
                     .a = fork_region ? fork_region->index : MSG_NO_REGION};
    if (!ring_post(r, &m, NULL, 0, RING_SYNC) && fork_region) {
        arena_release(forking.arena, fork_region, true); /* nobody will take it */
        fork_region = NULL;
    }
}

/* A fork that failed with EAGAIN under a process limit (RLIMIT_NPROC):
 * the tree's recorder is one of the user's processes it counts, so the
 * limit may have been reached because of it.  Said once.  Its calls are
 * asked of a seccomp sandbox first (seccomp_call). */
static void say_nproc(void)
{
    static _Atomic bool said;
    struct rlimit rl;
    if (seccomp_call(SYS_getuid, 0, 0, 0, 0, 0, 0) <= 0 || /* root (no limit), or forbidden */
        seccomp_call(SYS_prlimit64, 0, RLIMIT_NPROC, 0, (long)&rl, 0, 0) ||
        rl.rlim_cur == RLIM_INFINITY || atomic_exchange(&said, true))
        return;
    char line[200];
    snprintf(line, sizeof line,
             "memsim: fork failed (EAGAIN) under the process limit (ulimit -u %llu), which "
             "counts memsim's recorder as one of this user's processes",
             (unsigned long long)rl.rlim_cur);
    say(line);
}

void process_forked(pid_t pid)
{
    int e = errno;
    if (!proc_tracing() || sandbox_getpid() != memsim_proc->pid)
        return;
    GUARD_SCOPE;
    if (pid < 0 && e == EAGAIN)
        say_nproc();
    region_t *child = fork_region;
    if (pid < 0 && child) {
        atomic_store(&child->state, REGION_FORK_FAILED);
        region_wake(&child->pid_futex);
    }
    ring_slot_t m = {.kind = MSG_FORK_DONE,
                     .tid = thread_tid(),
                     .t = clock_ticks(),
                     .a = child ? child->index : MSG_NO_REGION,
                     .b = pid > 0 ? (uint64_t)pid : 0};
    ring_post(memsim_proc->region, &m, NULL, 0, 0);
}

static void atfork_child(void)
{
    pid_t pid = self_pid();
    proc_t *p = memsim_proc; /* wiped by the kernel, if it is the page */
    atomic_store(&ending_tid, 0); /* the child's end is its own */
    p->pid = pid;
    p->arena = forking.arena;
    p->region = NULL;
    atomic_store(&p->active, false);
    memsim_traced_pid = pid;
    thread_forget_tid();
    ring_forget_thread();
    if (!forking.active || forking.pid == 0) {
        /* The parent was not traced; or it was, and stopped (its recorder
         * gone) with threads that kept it from giving its arena back:
         * this copy has one thread. */
        if (forking.pid != 0 && forking.arena)
            stop_for_good(forking.arena);
        return;
    }
    GUARD_SCOPE;
    stacks_reset(); /* the child's trace numbers its stacks afresh */
    if (!cfg.trace_children) {
        stop_for_good(forking.arena);
        return;
    }
    if (fork_region) {
        /* The parent's recorder forked a recorder for this region, with
         * its state: it waits for our pid. */
        region_publish(forking.arena, fork_region, forking.pid, REGION_INHERITED, NULL);
        p->region = fork_region;
        memsim_traced_pid = pid;
        atomic_store(&p->active, true);
        return;
    }
    /* No region left in the arena: a recorder of our own, without the
     * parent's live blocks (frees of them are unknown to it).  Not in a
     * seccomp sandbox, whose filters bind the child too: starting one
     * makes calls the program never makes (clone, memfd_create, ...). */
    if (seccomp_active()) {
        stop_for_good(forking.arena);
        say("memsim: a child forked in a seccomp sandbox found no free region: it is not traced");
        return;
    }
    char err[PATH_MAX + 256];
    modules_reset();
    if (start_fresh(false, forking.pid, "forked without a free region: blocks allocated before "
                                        "the fork are unknown",
                    err, sizeof err)) {
        stop_for_good(forking.arena);
        say(err);
    }
}

/* ---- clone() without fork -------------------------------------------------------- */

void process_clone_copy(void)
{
    GUARD_SCOPE;
    pid_t parent = memsim_traced_pid;
    memsim_proc->pid = self_pid(); /* once: the next hook sees a prepared page */
    memsim_traced_pid = memsim_proc->pid;
    thread_forget_tid();
    ring_forget_thread();
    stacks_reset();
    modules_reset();
    if (seccomp_active()) { /* as a fork's child without a region */
        say("memsim: a copy made by clone() in a seccomp sandbox is not traced");
        return;
    }
    char why[128], err[PATH_MAX + 256];
    snprintf(why, sizeof why,
             "a copy of process %ld made by clone() without fork: blocks allocated before the "
             "copy are unknown",
             (long)parent);
    if (start_fresh(false, parent, why, err, sizeof err)) {
        char line[PATH_MAX + 400];
        snprintf(line, sizeof line,
                 "memsim: process %ld, made by clone() without fork, is not traced: %s",
                 (long)memsim_proc->pid, err);
        say(line);
    }
}

/* ---- children's environment, exec, spawn ------------------------------------------- */

/* envp as a child should get it: with memsim's variables when it will be
 * traced too (it keeps libmemsim.so in LD_PRELOAD), else unchanged.  The
 * array lives in *mem (*len bytes, from sysmem), never on the stack: an
 * environment may be large and the thread's stack small. */
static char *const *child_env(char *const *envp, void **mem, size_t *len, char *arena)
{
    *mem = NULL;
    *len = 0;
    if (!env_output[0] || !childenv_preloads_memsim(envp))
        return envp;
    char *set[] = {env_output, env_root[0] ? env_root : NULL, env_ahead[0] ? env_ahead : NULL,
                   arena[0] ? arena : NULL};
    *len = (childenv_count(envp) + 5) * sizeof(char *);
    *mem = sysmem_alloc(*len);
    if (!*mem)
        return envp;
    return childenv_merge(envp, NULL, 0, set, 4, *mem);
}

/* path NUL arg0 NUL arg1 NUL ... into a sysmem block: *len bytes of it
 * used, *cap mapped; NULL without memory. */
static char *launch_bytes(const char *path, char *const argv[], size_t *len, size_t *cap,
                          uint64_t *argc)
{
    size_t n = strlen(path ? path : "") + 1;
    *argc = 0;
    for (size_t i = 0; argv && argv[i]; i++, (*argc)++)
        n += strlen(argv[i]) + 1;
    *cap = n;
    char *buf = sysmem_alloc(n), *w = buf;
    if (!buf)
        return NULL;
    size_t k = strlen(path ? path : "") + 1;
    memcpy(w, path ? path : "", k);
    w += k;
    for (size_t i = 0; argv && argv[i]; i++) {
        k = strlen(argv[i]) + 1;
        memcpy(w, argv[i], k);
        w += k;
    }
    *len = n;
    return buf;
}

static void post_launch(uint8_t kind, pid_t child, const char *path, char *const argv[],
                        bool traced_child, bool sync)
{
    region_t *r = memsim_proc->region;
    size_t len = 0, cap = 0;
    uint64_t argc;
    char *bytes = launch_bytes(path, argv, &len, &cap, &argc);
    ring_slot_t m = {.kind = kind,
                     .tid = thread_tid(),
                     .t = clock_ticks(),
                     .a = child > 0 ? (uint64_t)child : 0,
                     .b = argc,
                     .c = traced_child};
    ring_post(r, &m, bytes, bytes ? len : 0, sync ? RING_SYNC : 0);
    sysmem_free(bytes, cap);
}

int process_exec(const char *path, char *const argv[], char *const envp[], process_exec_fn call,
                 void *ctx)
{
    void *mem;
    size_t len;
    char arena[64];
    env_arena(arena, sizeof arena);
    char *const *env = child_env(envp, &mem, &len, arena);
    bool traced = proc_tracing() && sandbox_getpid() == memsim_proc->pid; /* not a vfork child */
    region_t *r = memsim_proc->region;
    bool locked = false;
    if (traced) {
        GUARD_SCOPE;
        /* Held across the real exec: a successful one releases it as its
         * owner dies (robust mutex), which the recorder sees. */
        int rc = pthread_mutex_lock(&r->exec_lock);
        if (rc == EOWNERDEAD)
            pthread_mutex_consistent(&r->exec_lock);
        locked = rc == 0 || rc == EOWNERDEAD;
        post_launch(MSG_EXEC, 0, path, argv, env != envp || childenv_preloads_memsim(envp), true);
    }
    int rc = call(ctx, env);
    int e = errno;
    if (traced) {
        GUARD_SCOPE;
        ring_slot_t m = {.kind = MSG_EXEC_FAILED,
                         .tid = thread_tid(),
                         .t = clock_ticks(),
                         .a = (uint64_t)e};
        ring_post(r, &m, NULL, 0, RING_SYNC);
        if (locked)
            pthread_mutex_unlock(&r->exec_lock);
    }
    sysmem_free(mem, len);
    errno = e;
    return rc;
}

int process_spawn(const char *path, char *const argv[], char *const envp[], pid_t *pid,
                  process_spawn_fn call, void *ctx)
{
    void *mem;
    size_t len;
    char arena[64];
    env_arena(arena, sizeof arena);
    char *const *env = child_env(envp, &mem, &len, arena);
    pid_t child = 0;
    int rc = call(ctx, &child, env);
    if (rc == 0) {
        if (pid)
            *pid = child;
        if (proc_tracing()) {
            GUARD_SCOPE;
            post_launch(MSG_SPAWN, child, path, argv, env != envp, false);
        }
    }
    sysmem_free(mem, len);
    return rc;
}
