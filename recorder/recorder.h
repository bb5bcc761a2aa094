/*
 * recorder: one traced process's trace, as memsim-recorder keeps it
 * (recorder/procs.h runs every trace of a tree in one loop).
 *
 * It opens its region once it is published, creates the trace file and
 * writes the meta record, then takes the region's messages in the ring's
 * order (ipc/ring.h; past a claim not yet published where it may:
 * recorder/intake.h), keeps the live map and the shadow device
 * (recorder/state.h) and writes each record (recorder/records.h).  Every
 * MEMSIM_SAMPLE_MS it adds a sample of what the OS charges
 * (recorder/sampler.h), the first 1 ms after it opens, the last with the
 * end; every 50 ms it flushes the file (up to a second
 * while a compressed trace's records come slowly: REC_FRAME_MIN).  At a
 * fork of the process the child's trace is made from a copy of its state then
 * (rec_fork); at an exec it writes the exec record and watches for the
 * exec's outcome (the region's robust exec lock); at the end it writes
 * the end record and acknowledges it.  When the process vanishes
 * (SIGKILL, the OOM killer, an exit no hook saw) it writes everything
 * that was published and an end record saying so.
 *
 * The functions take the trace's state explicitly so that unit tests
 * can drive a region in one process, without LD_PRELOAD.
 */
#ifndef MEMSIM_RECORDER_RECORDER_H
#define MEMSIM_RECORDER_RECORDER_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ipc/arena.h"
#include "recorder/intake.h"
#include "recorder/out.h"
#include "recorder/records.h"
#include "recorder/reorder.h"
#include "recorder/sampler.h"
#include "recorder/stackids.h"
#include "recorder/state.h"

#define REC_FLUSH_NS 50000000ull /* the flush interval */
/* The first sample this long after the trace opens, not at once: a
 * shell's child that execs at once, and a program done within it, have
 * their end's sample only (each sample's /proc reads cost the recorder
 * 50-60 us, at 2-3 a process of a shell loop). */
#define REC_FIRST_SAMPLE_NS 1000000ull
/* A compressed trace whose records come slowly (a sampled trace, a quiet
 * program) is written in frames of REC_FRAME_MIN bytes of records, or
 * after REC_FLUSH_MAX_NS: each zstd frame starts without a history, so a
 * small one compresses poorly (a sampled sqlite3 trace: 66 KB in frames
 * of 50 ms, 43 KB in frames of a second). */
#define REC_FRAME_MIN (64u << 10)
#define REC_FLUSH_MAX_NS 1000000000ull

typedef struct rec_module_s {
    uint64_t base, size;
    char *path;
} rec_module_t;

typedef struct rec_s {
    void *arena;
    int memfd;                 /* the arena's, or -1 (tests) */
    region_t *r;
    out_t out;
    sampler_t smp;
    pid_t pid, ppid;
    char exe_base[256];
    char parent_trace[PATH_MAX]; /* the trace of the process this one was forked from */
    uint64_t next_sample, last_flush;
    uint64_t sample_due;       /* a sample waits for the program's malloc figures until then */
    bool mallinfo_seen;        /* ...which came (MSG_MALLINFO) */
    uint64_t mallinfo_asked;   /* when they were last asked for */
    uint64_t mallinfo_end;     /* when the last call returned (ns), */
    uint64_t mallinfo_took;    /* what it took (ns), */
    uint64_t mallinfo_chunks;  /* the free chunks it walked */
    uint64_t mallinfo_live;    /* and the live blocks then */
    bool mallinfo_pending;     /* asked for, not yet come */
    uint64_t heap_since;       /* heap events taken since they came */
    bool exec_pending;         /* an exec record is out; its outcome is not known */
    bool done;                 /* the end record is written */
    bool untraced;             /* the process stopped tracing in a sandbox (MSG_SANDBOX) */
    bool watch;                /* the process is watched (sampler); tests may turn it off */
    uint64_t stacks;           /* stack records written */
    uint64_t lost;             /* messages lost on the producers' side */
    reorder_t ro;              /* the ring's messages go through it (recorder/reorder.h) */
    intake_t in;               /* which message comes next (recorder/intake.h) */
    bool have_malloc;          /* the latest MSG_MALLINFO */
    uint64_t malloc_reserved, malloc_in_use, maxrss_children;
    uint64_t chunks_then;      /* state_chunk_bytes() when they came */
    rec_module_t *mods;        /* loaded objects, for a forked child's trace */
    size_t nmods, capmods;
    char *bytes;               /* a message's bytes */
    size_t bytes_cap;
    /* Its own state while another trace's is current (rec_use). */
    state_t st;
    records_ctx_t rs;
    stackids_t ids;
    /* A fork of the process: called at the fork message with the
     * region reserved for the child (recorder/procs.h makes its trace). */
    void (*on_fork)(struct rec_s *parent, unsigned region, void *ctx);
    void *on_fork_ctx;
    /* The end message (recorder/take.h passes it on): the last sample,
     * then the end record. */
    void (*on_end)(struct rec_s *rc, const ring_slot_t *m);
    uint64_t gone_look;        /* when the process was last looked for (ns) */
} rec_t;

/* Attach to region r of arena: wait for it to be published, create the
 * trace, write meta (and, for a forked child, the modules it inherits).
 * 0, or -1 with r->error set and rec_state REC_FAILED. */
int rec_attach(rec_t *rc, void *arena, region_t *r, int memfd);
/* The same for a region already published (REGION_LIVE). */
int rec_open(rec_t *rc, void *arena, region_t *r, int memfd);

/* Make rc's trace the current one (the state, records and stackids
 * modules work on one trace at a time). */
void rec_use(rec_t *rc);

/* At the fork message of parent's process: child (zeroed) becomes the
 * trace of the child's region k, starting from parent's state as of
 * now, and is opened (rec_open) once the child has published its pid. */
void rec_fork(rec_t *parent, rec_t *child, unsigned k);

/* What a turn of the loop found (rec_turn). */
typedef struct rec_turn_s {
    unsigned taken;   /* messages */
    bool full;        /* it took the most a turn takes: more may be waiting */
    bool hole;        /* held at a claim still being filled (recorder/intake.h) */
} rec_turn_t;

/* One turn for rc's process: its messages, sample, flush, the exec under
 * way.  Sets rc->done at the end of the trace. */
rec_turn_t rec_turn(rec_t *rc, uint64_t now);

/* Whether the process is gone: then what is left is taken, the holes as
 * lost, and the end written (for a trace not ended yet). */
bool rec_gone(rec_t *rc);

/* rc's trace is finished: its state (the live map, the shadow device,
 * the stack ids) is freed at once, though the region stays its process's
 * until rec_release.  The live map's table is then there for the next
 * fork's copy (recorder/livemap.h): a child that exits or execs soon
 * after its fork gives it back before its parent forks again. */
void rec_ended(rec_t *rc);

/* The region is nobody's: give it back, and free what rc holds. */
void rec_release(rec_t *rc);

/* Take up to max published messages; returns how many. */
unsigned rec_step(rec_t *rc, unsigned max);


/* What the next mallinfo2 call may cost (ns), from the last one's: it
 * walks every free chunk of every arena, so it costs what the last did
 * per chunk, with the chunks then (chunks) and those a burst of frees
 * may have left since: live blocks that went (live_then - live_now). */
uint64_t rec_mallinfo_cost(uint64_t took, uint64_t chunks, uint64_t live_then, uint64_t live_now);

/* Whether glibc's figures may be asked for at now (ns): not while an ask
 * is unanswered (for a second), nor before MALLINFO_PACE times what the
 * next call may cost has passed since the last one returned. */
bool rec_mallinfo_may_ask(const rec_t *rc, uint64_t now);

/* The process vanished: write what was published, and the end record. */
void rec_vanished(rec_t *rc);

/* A sample now: the OS's figures from read(ctx, s) (/proc through the
 * sampler in the recorder; tests give their own), the live figures from
 * the events taken around it (all published before, when drain).  Not
 * written when read fails (the process is gone), nor while an exec taken
 * is under way (/proc/<pid> may describe the next image already: a
 * shell's child that execs at once has no sample in its trace). */
typedef bool (*rec_read_fn)(void *ctx, records_sample_t *s);
void rec_sample(rec_t *rc, bool drain, rec_read_fn read, void *ctx);

#endif
