/*
 * state: what the recorder knows of the traced process's heap — its
 * live blocks (address -> size, stack, shadow block, owner) and the
 * shadow device (sim/device.h) replaying them — updated message by
 * message, in the ring's order.  Single-threaded: the recorder's own.
 *
 * A fork's child's trace starts from a copy of its parent's state at the
 * fork (state_fork): the blocks whose owner is the parent's pid are the
 * child's inherited ones.
 */
#ifndef MEMSIM_RECORDER_STATE_H
#define MEMSIM_RECORDER_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sim/device.h"
#include "recorder/livemap.h"

#define STATE_NO_SIM UINT64_MAX /* a simulated address: none */

/* One trace's state.  The functions below work on the current one;
 * a recorder serving several processes (recorder/procs.h) keeps each
 * other trace's in a state_t of its own and swaps it in (state_swap). */
typedef struct state_s {
    device_t *sim;          /* the shadow device, or NULL */
    pid_t pid;
    uint64_t mmap_live;
    uint64_t unknown_frees;
    uint64_t untracked;     /* blocks the live maps had no memory for (state_untracked) */
    uint64_t chunks;        /* glibc's chunk bytes of the live blocks (state_chunk_bytes) */
    uint64_t chunks_peak;   /* their most since state_chunk_mark */
    uint64_t interval;      /* a sampled trace's mean interval, or 0 */
    double est_bytes, est_var, est_blocks; /* the sampled live blocks' weights (lib/sampling.h) */
    livemap_t program;      /* the process's live blocks */
    livemap_t quiet;        /* blocks memsim's own work got from the allocator in it (a
                               free of one, made later on the program's behalf, is no error) */
} state_t;

/* What a free or realloc found. */
typedef struct state_found_s {
    bool known;     /* the block was live */
    bool inherited; /* ...and allocated by the parent before a fork */
    bool quiet;     /* a block memsim's own work made: write nothing */
    bool unsure;    /* not known, but some blocks went untracked: maybe one */
    uint64_t size;  /* its size, when known */
} state_found_t;

/* Start: the shadow device for strategy (NULL or "none": without), of
 * total bytes.  0, or -1 (no device: sim addresses are null). */
int state_init(const char *strategy, uint64_t total, pid_t pid);
/* A fork child's trace, from its parent's state (state_fork): the
 * process is pid now. */
void state_set_pid(pid_t pid);

/* Exchange the current state with *other (a zeroed state_t is an empty
 * one, as before state_init). */
void state_swap(state_t *other);
/* Into *child (zeroed), the current state as a fork's child starts
 * from it: every live block (the parent's pid stays their owner, so
 * they read as inherited), the counters, and a shadow device of its own
 * with the inherited blocks placed in it afresh.  Blocks the copy had
 * no memory for are counted as untracked. */
void state_fork(state_t *child, const char *strategy, uint64_t total);
/* Free a state that is not the current one. */
void state_fini(state_t *st);
bool state_has_device(void);
/* A sampled trace of mean interval bytes (lib/sampling.h): the live
 * figures are estimates (each block weighs what it stands for), and a
 * free or realloc of a block the recorder does not hold is one of the
 * blocks not sampled, no unknown free. */
void state_set_sampled(uint64_t interval);

/* The simulated address of the new block. */
uint64_t state_alloc(uint64_t addr, uint64_t size, uint64_t align, uint32_t stack);
state_found_t state_free(uint64_t addr);
/* A realloc that moved or resized old to addr (addr != 0). */
state_found_t state_realloc(uint64_t old, uint64_t addr, uint64_t size, uint32_t stack,
                            uint64_t *sim);
void state_quiet(uint64_t addr);
/* An alloc, free or realloc of addr comes soon: start loading its slot
 * of the live map (a cache miss per event on a map of a million blocks). */
void state_prefetch(uint64_t addr);
/* Whether the live map has outgrown the caches (state_prefetch pays). */
bool state_map_is_large(void);

/* fn(addr, size, ctx) for every live block of the program's. */
void state_each_live(void (*fn)(uint64_t addr, uint64_t size, void *ctx), void *ctx);

void state_mapped(uint64_t len);
void state_unmapped(uint64_t len);

/* The live bytes and blocks (a sampled trace: their estimates, and the
 * standard error of the bytes'; 0 otherwise). */
uint64_t state_live_bytes(void);
uint64_t state_live_blocks(void);
uint64_t state_live_bytes_se(void);
uint64_t state_mmap_live(void);
uint64_t state_unknown_frees(void);
/* Blocks the live maps had no memory for (the recorder shares the
 * program's RLIMIT_AS): the live figures leave them out, and a free
 * found in neither map is then written as a free (the analyzer matches
 * it against the trace), not as an unknown free. */
uint64_t state_untracked(void);
/* The bytes glibc's malloc would take for the live blocks (their chunks):
 * what brings its own figures, reported at some heap event, up to date. */
uint64_t state_chunk_bytes(void);
/* Their most since state_chunk_mark (what glibc must have reserved since). */
uint64_t state_chunk_peak(void);
void state_chunk_mark(void);
void state_metrics(device_metrics_t *m);

/* Checked builds (make CHECKS=1, -DMEMSIM_CHECKS): the device's and the
 * live maps' invariant walkers, after every operation; a broken one
 * aborts the recorder with its reason. */
void state_check(void);

#endif
