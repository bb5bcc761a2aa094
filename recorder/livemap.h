/*
 * livemap: address -> (requested size, shadow block, stack, owner), the
 * recorder's table of live blocks: open addressing with linear probing,
 * backward-shift deletion (no tombstones), doubled when half full.  The
 * recorder is single-threaded: no lock.
 *
 * Doubling moves the entries a little at a time (as Redis's dict does),
 * never all at once: at a million live blocks the table is 64 MiB, and
 * moving it into a new one of 128 MiB took the recorder 400 ms, in which
 * it took no message and the program waited for room in the ring (perl:
 * 1.0 s of its run, over the doublings from 2^14 to 2^20 live blocks).
 * While a table is being moved, the new one takes every insert and each
 * operation moves LIVEMAP_MOVE_STEP slots of the old one, in order, from
 * its cursor on; the old table's layout never changes (a key taken from
 * it is marked gone, not shifted), so a key is looked for in the new
 * table, then in the old one from its home, as long as it sits at or
 * past the cursor.  The move ends long before the new table is half
 * full: the old table's 2^k slots are moved within 2^k / 16 operations,
 * and the new one has room for 2^k / 2 more entries.
 *
 * Tables of LIVEMAP_MAPPED bytes and more are mappings of their own, on
 * huge pages where the kernel gives them, their pages made present
 * ahead (livemap.c says why: page faults and TLB misses are what a large
 * table costs on a VM); the next one is mapped at 7/16 load and made
 * present a piece at a time, so that no operation waits for all of it.
 * The table of a map cleared (livemap_clear) is kept, one at most, for
 * the next copy of its size (livemap_copy writes over it whole).
 *
 * Invariants (livemap_check): every entry of the new table sits in the
 * probe run from its home slot with no empty slot before it; count is
 * the number of entries (those of the new table and those of the old
 * one at or past the cursor, not gone) and bytes the sum of their
 * sizes; the new table's entries * 2 <= its capacity (* 16 <= 15 times
 * it while crowded: growing found no memory); no key is in both.
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
    int32_t owner;   /* pid of the process that allocated it (a fork child inherits);
                        LIVEMAP_GONE in the old table: taken since */
} livemap_entry_t;

#define LIVEMAP_GONE INT32_MIN /* no pid: a taken entry of the table being moved */
#define LIVEMAP_MOVE_STEP 16   /* old slots moved at each put or take */
#define LIVEMAP_MAPPED (1u << 20) /* a table this large is mapped, its pages made present */
#define LIVEMAP_READY_EVERY 1024u  /* operations between 2 MiB of the next table made present */
#define LIVEMAP_GROW_RETRY 1024u   /* puts between tries to grow, after one found no memory */

/* Two to a cache line, never one across two: the table of a program
 * with a million live blocks is tens of megabytes, and an event's entry
 * is a miss. */
_Static_assert(sizeof(livemap_entry_t) == 32, "a live map entry is half a cache line");

typedef struct livemap_s {
    livemap_entry_t *slots; /* capacity is a power of two; NULL until first use */
    uint64_t mask;
    uint64_t used;          /* entries in slots */
    livemap_entry_t *old;   /* the table being moved into slots, or NULL */
    uint64_t old_mask;
    uint64_t old_next;      /* its slots below this are moved */
    uint64_t old_left;      /* its entries at or past old_next, not gone */
    uint64_t bytes;         /* sum of all entries' sizes */
    void *next;             /* the table to move into next, being made ready, or NULL */
    uint64_t next_bytes;
    uint64_t next_ready;    /* its bytes made present */
    uint64_t next_tick;     /* operations since it was mapped */
    uint64_t grow_wait;     /* puts before growing is tried again (it found no memory) */
    bool crowded;           /* over half full: growing found no memory */
} livemap_t;

#define LIVEMAP_INITIALIZER {0}

/* Insert or replace; false when memory for the table ran out and the
 * table is full.  With no memory to double into, a table fills on past
 * half, to 15/16 (longer probes, but no block left out), and growing is
 * tried again every LIVEMAP_GROW_RETRY puts. */
bool livemap_put(livemap_t *m, const livemap_entry_t *e);
/* Remove addr; true and *out filled when it was there. */
bool livemap_take(livemap_t *m, uint64_t addr, livemap_entry_t *out);
/* Start loading addr's home slot, a few events before its put or take. */
void livemap_prefetch(const livemap_t *m, uint64_t addr);
uint64_t livemap_count(const livemap_t *m);
uint64_t livemap_bytes(const livemap_t *m);
/* Whether a table is being moved (for the tests). */
bool livemap_moving(const livemap_t *m);
void livemap_clear(livemap_t *m);
/* The invariants above; 0, or -1 with *why. */
int livemap_check(const livemap_t *m, const char **why);

/* fn(entry, ctx) for every entry (a move under way is ended first), in
 * no particular order; fn must not change the map. */
void livemap_each(livemap_t *m, void (*fn)(const livemap_entry_t *e, void *ctx), void *ctx);

/* Make to (an empty map) a copy of from: a table of the same capacity,
 * its slots copied as they are (a move under way in from is ended
 * first), then each entry passed through fix when fix is not NULL (a
 * fork child's copy of its parent's blocks, given blocks of its own
 * shadow device).  false when there was no memory for the table: to
 * stays empty, and *left_out counts the entries. */
bool livemap_copy(livemap_t *to, livemap_t *from, void (*fix)(livemap_entry_t *e, void *ctx),
                  void *ctx, uint64_t *left_out);

#endif
