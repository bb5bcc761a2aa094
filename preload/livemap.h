/*
 * livemap: the program's live allocations, address -> (requested size,
 * simulated address, stack), shared by all threads.
 *
 * 64 shards chosen by address hash, each an open-addressing table under
 * its own mutex, so threads rarely meet on a lock and never hold one
 * across the real allocator.  Tables live in sysmem (never malloc) and
 * double when half full.  A fork child inherits the map as it was:
 * livemap_lock_all / unlock_all bracket fork.
 */
#ifndef MEMSIM_PRELOAD_LIVEMAP_H
#define MEMSIM_PRELOAD_LIVEMAP_H

#include <stdbool.h>
#include <stdint.h>

#define LIVEMAP_NO_SIM UINT64_MAX

typedef struct livemap_entry_s {
    uint64_t addr;  /* 0: empty slot */
    uint64_t size;  /* bytes requested */
    uint64_t sim;   /* simulated address, LIVEMAP_NO_SIM when it had none */
    uint64_t stack; /* stack id of the allocation */
    int64_t owner;  /* pid of the process that allocated it (a fork child inherits) */
} livemap_entry_t;

/* Insert or replace; false when memory for the table ran out. */
bool livemap_put(const livemap_entry_t *e);
/* Remove addr; true and *out filled when it was there. */
bool livemap_take(uint64_t addr, livemap_entry_t *out);
/* Entries and bytes live now. */
uint64_t livemap_count(void);
uint64_t livemap_bytes(void);

void livemap_lock_all(void);
void livemap_unlock_all(void);
/* Forget everything (tests). */
void livemap_clear(void);

#endif
