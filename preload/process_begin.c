/*
 * process_begin: a trace for this process.  See process_begin.h.
 */
#include "preload/process_begin.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ipc/clock.h"
#include "lib/strcopy.h"
#include "preload/events.h"
#include "preload/launch.h"
#include "preload/modules.h"
#include "preload/process.h"
#include "preload/real.h"
#include "preload/sandboxed.h"
#include "preload/say.h"

#define START_WAIT_NS 10000000000ull /* a recorder that has not started after 10 s */

config_t process_cfg;
char process_exe[PATH_MAX];

/* Whether the allocator the hooks reach is glibc's (mallinfo2 then
 * describes it).  Asked once an image; a fork's child, which publishes
 * at every fork, inherits the answer. */
static bool glibc_malloc(void)
{
    static _Atomic int known; /* 0: not asked yet, 1: glibc's, 2: another's */
    int k = atomic_load_explicit(&known, memory_order_relaxed);
    if (!k) {
        void *m = (void *)REAL(malloc);
        k = m && real_in_libc(m) ? 1 : 2;
        atomic_store_explicit(&known, k, memory_order_relaxed);
    }
    return k == 1;
}

void process_publish(void *arena, region_t *r, pid_t parent, uint32_t flags, const char *why)
{
    arena_t *a = arena;
    if (flags & REGION_JOINED)
        r->ticket = atomic_fetch_add(&a->tickets, 1) + 1;
    r->parent_pid = parent;
    r->flags = flags | (clock_tsc_ ? REGION_TSC : 0) | (glibc_malloc() ? REGION_GLIBC_MALLOC : 0);
    r->t0 = clock_ns();
    r->start_unix_ns = clock_unix_ns(); /* 0: the recorder takes its own */
    r->cfg = process_cfg;
    /* The strings up to their ends only: a fork's child publishes at
     * every fork, and each page of the region it writes is a fault. */
    str_copy(r->exe, sizeof r->exe, process_exe);
    str_copy(r->note, sizeof r->note, why ? why : "");
    atomic_store(&r->pid, process_self_pid());
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
    sandbox_tsc_at_start(r);
    atomic_store(&p->active, true);
    events_start();
    modules_changed();
}

/* The recorder named in MEMSIM_ARENA ("PID:ID", ID the arena's in hex),
 * which the environment of a program exec'd or spawned by a traced one
 * carries: into l's join fields. */
static void join_from_env(launch_t *l)
{
    const char *v = getenv(PROCESS_ENV_ARENA);
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

int process_begin(bool load_unwinder, pid_t parent, const char *why, char *err, size_t errlen)
{
    launch_t l = {.load_unwinder = load_unwinder,
                  .stack_depth = process_cfg.stack_depth,
                  .unwind_mode = (int)process_cfg.unwind};
    join_from_env(&l);
    if (launch_recorder(&l, err, errlen))
        return -1;
    if (load_unwinder) {
        clock_init(l.tsc);
        if (l.unwind_rc && l.unwind_why) {
            char line[256];
            snprintf(line, sizeof line, "memsim: %s", l.unwind_why);
            say(line);
            process_cfg.stack_depth = 0;
        }
    }
    region_t *r = l.joined ? arena_join(l.arena) : arena_region(l.arena, 0);
    if (!r) { /* every region taken, or the recorder closing: one of our own */
        munmap(l.arena, arena_bytes(l.arena));
        l = (launch_t){.stack_depth = process_cfg.stack_depth,
                       .unwind_mode = (int)process_cfg.unwind};
        if (launch_recorder(&l, err, errlen))
            return -1;
        r = arena_region(l.arena, 0);
    }
    process_publish(l.arena, r, parent, l.joined ? REGION_JOINED : 0, why);
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
