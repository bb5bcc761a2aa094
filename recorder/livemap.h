/*
 * livemap: address -> (requested size, shadow block, stack, owner), the
 * recorder's table of live blocks: open addressing with linear probing,
 * backward-shift deletion (no tombstones), doubled when half full.  The
 * recorder is single-threaded: no lock.
 *
 * Invariants (livemap_check): every entry sits in the probe run from its
 * home slot with no empty slot before it; count is the number of
 * entries and bytes the sum of their sizes; count * 2 <= capacity.
 */
#ifndef MEMSIM_RECORDER_LIVEMAP_H
#define MEMSIM_RECORDER_LIVEMAP_H

#include <stdbool.h>
#include <stdint.h>

typedef struct livemap_entry_s {
    uint64_t addr;   /* 0: empty slot */
    uint64_t size;   /* bytes requested */
    void *sim_block; /* its block in the shadow device (device_alloc's), or NULL */
    uint32_t stack;  /* stack id of the allocation (the ring's are 32 bits) */
    int32_t owner;   /* pid of the process that allocated it (a fork child inherits) */
} livemap_entry_t;

/* Two to a cache line, never one across two: the table of a program
 * with a million live blocks is tens of megabytes, and an event's entry
 * is a miss. */
_Static_assert(sizeof(livemap_entry_t) == 32, "a live map entry is half a cache line");

typedef struct livemap_s {
    livemap_entry_t *slots; /* capacity is a power of two; NULL until first use */
    uint64_t mask;
    uint64_t count;         /* entries */
    uint64_t bytes;         /* sum of their sizes */
} livemap_t;

#define LIVEMAP_INITIALIZER {0}

/* Insert or replace; false when memory for the table ran out. */
bool livemap_put(livemap_t *m, const livemap_entry_t *e);
/* Remove addr; true and *out filled when it was there. */
bool livemap_take(livemap_t *m, uint64_t addr, livemap_entry_t *out);
/* Start loading addr's home slot, a few events before its put or take. */
void livemap_prefetch(const livemap_t *m, uint64_t addr);
uint64_t livemap_count(const livemap_t *m);
uint64_t livemap_bytes(const livemap_t *m);
void livemap_clear(livemap_t *m);
/* The invariants above; 0, or -1 with *why. */
int livemap_check(const livemap_t *m, const char **why);

/* The traced process's live blocks, and the blocks memsim's own work got
 * from the allocator inside it (a free of one of them, made later on the
 * program's behalf, is no error of the program's). */
extern livemap_t livemap_program;
extern livemap_t livemap_quiet;

#endif
