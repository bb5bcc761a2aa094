/*
 * livemap: address -> (requested size, simulated address, stack, owner):
 * the program's live allocations (touched only by the ring's consumer:
 * the _locked calls) and the blocks memsim's own work made (every thread:
 * the locking calls).
 *
 * 64 shards chosen by address hash, each an open-addressing table under
 * its own mutex, so threads rarely meet on a lock and never hold one
 * across the real allocator.  Tables live in sysmem (never malloc) and
 * double when half full.  A fork child inherits the map as it was:
 * livemap_lock_all / unlock_all bracket fork.
 */
#ifndef MEMSIM_RECORDER_LIVEMAP_H
#define MEMSIM_RECORDER_LIVEMAP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define LIVEMAP_NO_SIM UINT64_MAX /* a simulated address: none */

typedef struct livemap_entry_s {
    uint64_t addr;  /* 0: empty slot */
    uint64_t size;  /* bytes requested */
    void *sim_block; /* its block in the shadow device (device_alloc's), or NULL */
    uint64_t stack; /* stack id of the allocation */
    int64_t owner;  /* pid of the process that allocated it (a fork child inherits) */
} livemap_entry_t;

#define LIVEMAP_SHARDS 64

typedef struct livemap_shard_s {
    pthread_mutex_t lock;
    livemap_entry_t *slots; /* capacity is a power of two; NULL until first use */
    uint64_t mask;
    uint64_t count;
} livemap_shard_t;

typedef struct livemap_s {
    livemap_shard_t shards[LIVEMAP_SHARDS];
    _Atomic uint64_t count; /* entries */
    _Atomic uint64_t bytes; /* sum of their sizes */
} livemap_t;

/* A static livemap_t starts out as LIVEMAP_INITIALIZER. */
#define LIVEMAP_INITIALIZER \
    {.shards = {[0 ... LIVEMAP_SHARDS - 1] = {.lock = PTHREAD_MUTEX_INITIALIZER}}}

/* Insert or replace; false when memory for the table ran out. */
bool livemap_put(livemap_t *m, const livemap_entry_t *e);
/* Remove addr; true and *out filled when it was there. */
bool livemap_take(livemap_t *m, uint64_t addr, livemap_entry_t *out);
/* The same for a map whose every user is serialized by the caller (the
 * recorder's live map: only the ring's consumer touches it): no shard
 * lock is taken.  Never mix with the locking calls on one map while
 * other threads use it. */
bool livemap_put_locked(livemap_t *m, const livemap_entry_t *e);
bool livemap_take_locked(livemap_t *m, uint64_t addr, livemap_entry_t *out);
/* Entries and bytes live now. */
uint64_t livemap_count(const livemap_t *m);
uint64_t livemap_bytes(const livemap_t *m);

void livemap_lock_all(livemap_t *m);
void livemap_unlock_all(livemap_t *m);
/* Forget everything (tests). */
void livemap_clear(livemap_t *m);

/* The program's live blocks, as the recorder keeps them. */
extern livemap_t livemap_program;
/* Blocks the real allocator handed out while a thread was inside memsim
 * (memsim's own tables, libunwind's, glibc's thread-local storage of the
 * libunwind memsim loads, which glibc frees later on the program's
 * behalf): a free of one of them is no error of the program's. */
extern livemap_t livemap_quiet;

#endif
