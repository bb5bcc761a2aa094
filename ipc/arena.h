/*
 * arena: the memory a traced process shares with its recorder.
 *
 * memsim adds no thread and no descriptor to the program it traces: a
 * second thread alone makes glibc take locks it skips in a
 * single-threaded process (fork from a signal handler then deadlocks,
 * natively too), and any descriptor of ours is one the program may
 * close, reuse or count.  So all of memsim's own work but capturing the
 * events happens in another process, memsim-recorder, and the two share
 * an arena: a memfd mapped MAP_SHARED by both, holding one region per
 * traced process.
 *
 * Glossary:
 *   arena    the memfd: this header, then ARENA_REGIONS regions.  A forked
 *            child inherits the mapping, and a program exec'd or spawned
 *            below maps it again (its recorder's pid and the arena's id
 *            are in its environment: MEMSIM_ARENA), so the arena serves a
 *            whole process tree, up to ARENA_REGIONS processes at once.
 *   region   one traced process's share: who it is, its configuration,
 *            what its recorder says back, and its ring (ipc/ring.h).
 *            A fork's parent reserves one for the child before the fork
 *            (arena_reserve); the recorder of a region gives it back
 *            when its process is gone (arena_release).
 *   recorder the process that reads every region's ring in order and
 *            keeps each process's live map, shadow device and trace file
 *            (recorder/procs.h).  The first traced process of a tree
 *            starts it (preload/launch.h); a fork's child's trace starts
 *            from a copy of its parent's state at the fork.
 *
 * Every field a process and its recorder both touch is atomic or written
 * once before the other side may look (state transitions publish it).
 */
#ifndef MEMSIM_IPC_ARENA_H
#define MEMSIM_IPC_ARENA_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ipc/clock.h"
#include "ipc/config.h"
#include "ipc/ring.h"

/* "memsnra6": the last byte is the layout's version (the Makefile builds
 * a recorder of version 2 for a test). */
#ifndef ARENA_MAGIC
#define ARENA_MAGIC 0x3661726e6d73656dull
#endif
#define ARENA_REGIONS 64u                 /* traced processes one arena serves at once */
#define ARENA_HEADER 4096u
#define REGION_HEADER 16384u              /* region_t's fields, before its slots */
/* The bytes of a region whose ring has slots slots, of an arena of n. */
#define REGION_SIZE(slots) ((size_t)REGION_HEADER + (size_t)(slots) * sizeof(ring_slot_t))
#define ARENA_SIZE(n, slots) ((size_t)ARENA_HEADER + (size_t)(n) * REGION_SIZE(slots))
#define ARENA_BYTES ARENA_SIZE(ARENA_REGIONS, RING_SLOTS)

/* region_t.state */
enum {
    REGION_FREE,        /* nobody's */
    REGION_FORKING,     /* reserved by a parent for the child of a fork under way */
    REGION_LIVE,        /* its process is known (pid set) and posts events */
    REGION_FORK_FAILED, /* the fork it was reserved for failed */
};

/* region_t.rec_state: what the recorder says. */
enum {
    REC_STARTING, /* not attached yet */
    REC_RUNNING,  /* reading the ring; the trace file is open */
    REC_FAILED,   /* gave up: error[] says why; tracing is off */
    REC_DONE,     /* wrote the end record and left */
};

/* region_t.flags */
#define REGION_TSC 1u          /* event times are TSC ticks (ipc/clock.h) */
#define REGION_INHERITED 2u    /* a fork child whose recorder has the parent's state */
#define REGION_GLIBC_MALLOC 4u /* the program's malloc is glibc's: mallinfo2 means it */
#define REGION_JOINED 8u       /* a new image (exec, spawn) that joined the arena */

struct arena_s;

typedef struct region_s {
    /* Written by the process before it publishes state LIVE. */
    uint64_t magic;
    _Atomic uint32_t state;       /* REGION_* */
    _Atomic int32_t pid;          /* the traced process, 0 until it is known */
    _Atomic uint32_t pid_futex;   /* bumped (and woken) when pid or state changes */
    int32_t parent_pid;           /* the process this one was forked from, or 0 */
    uint32_t flags;               /* REGION_* bits */
    uint32_t index;               /* this region's number in the arena */
    uint32_t ticket;              /* REGION_JOINED: its place in the order of joins */
    uint64_t t0;                  /* CLOCK_MONOTONIC ns at the start of tracing */
    uint64_t start_unix_ns;       /* the wall clock then */
    config_t cfg;                 /* MEMSIM_* as the process read them */
    char exe[PATH_MAX];           /* /proc/self/exe at start */
    char note[512];               /* a one-line remark for the meta record, or "" */

    /* The recorder's side. */
    _Atomic uint32_t rec_state;   /* REC_* */
    _Atomic uint32_t rec_futex;   /* bumped (and woken) at every rec_state change and ack */
    _Atomic int32_t rec_pid;
    _Atomic uint32_t rec_exec;    /* 1 once memsim-recorder's main runs (its libraries loaded) */
    clock_feed_t beat;            /* the recorder's time at its last look (ns: its heartbeat);
                                     the clock of a thread that may not read one */
    _Atomic uint64_t acked;       /* ring sequence after the last sync message done */
    _Atomic uint32_t ack_waiters; /* threads in ring_wait_acked: an ack wakes them */
    _Atomic uint64_t rec_dropped; /* records the recorder could not write */
    _Atomic uint64_t records;     /* records in the trace so far */
    /* A cache line of its own: every heap event reads it, and the
     * recorder writes the fields before it (beat, acked) all the
     * time; in one line with them, each of the program's events would
     * wait for the line to come back from the recorder's core. */
    _Atomic uint32_t want_mallinfo __attribute__((aligned(64))); /* set each sample: the next
                                                                   heap event posts MSG_MALLINFO */
    _Atomic uint64_t end_dropped __attribute__((aligned(64))); /* the end record's "dropped",
                                                                  once written */
    _Atomic uint64_t end_untracked; /* the end record's "untracked", once written */
    _Atomic uint64_t end_threadless; /* the end record's "threadless", once written */
    _Atomic uint64_t stackless;   /* events posted without their stack: the stack table
                                     had no memory (stacks_intern); the end record's */
    _Atomic uint32_t interrupted; /* posts a fatal signal cut at their claim, their
                                     slot unknown (ring_settle): holes, not losses */
    int32_t write_errno;          /* why a write failed, or 0 */
    char trace_path[PATH_MAX];    /* the trace file (set before REC_RUNNING) */
    char error[512];              /* why the recorder failed (REC_FAILED) */

    /* Held by a thread of the process across a real exec: the kernel
     * releases a robust mutex's owner-died state at a successful exec,
     * which is how the recorder learns the image is gone. */
    pthread_mutex_t exec_lock;

    ring_ctl_t ring;              /* the ring's counters (ipc/ring.h) */
} region_t;

_Static_assert(sizeof(region_t) <= REGION_HEADER, "region_t outgrew REGION_HEADER");

typedef struct arena_s {
    uint64_t magic;
    uint32_t nregions;                         /* ARENA_REGIONS, or fewer under ulimit -f */
    uint32_t ring_slots;                       /* RING_SLOTS, or fewer under a low ulimit -f */
    _Atomic uint64_t used[ARENA_REGIONS / 64]; /* bit i: region i is reserved */
    uint64_t id;                               /* random: names the arena to a new image */
    _Atomic int32_t rec_pid;                   /* its recorder, once it runs */
    _Atomic uint32_t open;                     /* 1 while the recorder takes new images */
    _Atomic uint32_t joins;                    /* futex: bumped (and woken) at every region
                                                  published */
    _Atomic uint32_t tickets;                  /* joins so far (region_t.ticket) */
    uint32_t tsc; /* 1: the TSC is a usable clock (clock_tsc_usable, asked once a tree: its
                     cpuid takes tens of us in a VM) */
} arena_t;

_Static_assert(sizeof(arena_t) <= ARENA_HEADER, "arena_t outgrew ARENA_HEADER");

/* Lay out a fresh arena of n regions with rings of slots slots in mem
 * (ARENA_SIZE(n, slots), zeroed): the header (id its name), and region 0
 * reserved for the caller. */
void arena_format(void *mem, unsigned n, unsigned slots, uint64_t id);

/* A region for a new image joining the arena (an exec'd or spawned
 * program of the tree): reserved, or NULL when every region is taken or
 * the recorder is closing (arena_t.open: it checks the reserved bits
 * after clearing it, the joiner the flag after reserving, so one of the
 * two sees the other). */
region_t *arena_join(void *arena);

static inline size_t arena_bytes(const void *arena)
{
    const struct arena_s *a = arena;
    return ARENA_SIZE(a->nregions, a->ring_slots);
}

static inline region_t *arena_region(void *arena, unsigned i)
{
    size_t bytes = REGION_SIZE(((struct arena_s *)arena)->ring_slots);
    return (region_t *)((char *)arena + ARENA_HEADER + (size_t)i * bytes);
}

static inline ring_slot_t *region_slots(region_t *r)
{
    return (ring_slot_t *)((char *)r + REGION_HEADER);
}

/* A free region, reserved (state REGION_FORKING, fields cleared), or
 * NULL when every region is taken.  Lock-free: a fork may run in a
 * signal handler. */
region_t *arena_reserve(void *arena);
/* Give region r back (its recorder, when the process is gone), cleared
 * for the next user; slots_zeroed: the caller punched the slots' pages
 * out of the memfd already (they read as zero). */
void arena_release(void *arena, region_t *r, bool slots_zeroed);

/* Initialize a zeroed region's fields (its ring empty, its exec lock
 * robust and shared between processes); its state stays REGION_FREE
 * until the caller sets it.  Touches only the header's first page, not
 * the slots: a fork reserves a region in the parent, whose RSS would
 * count every page it writes. */
void region_init(region_t *r, unsigned index, unsigned slots);

/* Bump a futex word and wake everyone waiting on it (across processes). */
void region_wake(_Atomic uint32_t *word);
/* ...or n of them. */
void region_wake_n(_Atomic uint32_t *word, int n);
/* Wait while *word == seen, at most ns nanoseconds (0: return at once). */
void region_wait(_Atomic uint32_t *word, uint32_t seen, uint64_t ns);

#endif
