/*
 * sampleset: the blocks a sampled trace recorded and the program has not
 * freed yet, so that a free knows whether to post, without a lookup in
 * anything bigger than a byte on its fast path.
 *
 * A table holds 2^k one-byte counters and as many slots, in buckets of 8
 * slots (one cache line) per 8 counters.  A block's address hashes
 * (multiplicatively) to a counter, and the block goes in that counter's
 * bucket, or the next bucket that has room (the full one marked as
 * spilled: a search goes on past it).  The counter counts the blocks
 * that hash to it, raised before the block is placed and lowered after
 * it is taken out, so it is never below the blocks present:
 *
 *     counter[i] == 0  =>  no block of the set hashes to i
 *
 * which is the fast path of every free (sampleset_absent: a multiply, a
 * shift, a byte load).  The set holds at most a counter in 8 (table_max),
 * so about 7 frees in 8 of unsampled blocks stop there; the rest look
 * through a bucket.  A counter that reaches 255 stays there (the set then
 * only errs on the side of "maybe").
 *
 * The set may hold more than the sampled blocks, never fewer: a block
 * the program freed while memsim could not look (inside memsim's own
 * work) stays, and the next free of its address finds it and posts a
 * free the recorder ignores (it knows the sampled blocks exactly).  So a
 * free of a sampled block is never missed, and a stale entry goes at the
 * next free of its address.
 *
 * Lock-free: counters and slots change by atomic operations.  A set that
 * outgrows its table moves to one twice the size: each slot of the old
 * one is marked moved (which stops every insertion and removal there) and
 * copied, by whichever threads come (each finishes the whole move, so a
 * thread stopped or forked away mid-move holds nobody up), and the new
 * table is published once every slot is across.  An insertion waits for
 * (helps) the move to end; a removal that finds its block marked removes
 * it from the new table.  Old tables are never unmapped (a free may still
 * be reading one): they add up to less than the newest.  Memory: 9 bytes
 * a counter, at least 72 bytes a block, from 10 KiB.  Nothing here
 * allocates with malloc or takes a lock.
 */
#ifndef MEMSIM_PRELOAD_SAMPLESET_H
#define MEMSIM_PRELOAD_SAMPLESET_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sampleset_table_s sampleset_table_t;

struct sampleset_table_s {
    unsigned shift;                     /* counter of p: hash(p) >> shift; 2^(64-shift) counters */
    uint64_t ncounters;
    _Atomic uint64_t *slots;            /* ncounters; 0 empty, else an address | SAMPLESET_MOVED */
    _Atomic uint8_t *spill;             /* per bucket: a search goes on to the next one */
    _Atomic(sampleset_table_t *) next;  /* the table it moves to, once a move began */
    _Atomic uint64_t blocks;            /* entries placed and not taken (stale ones too) */
    size_t bytes;                       /* of the mapping, this header included */
    _Alignas(64) _Atomic uint8_t counters[]; /* ncounters, from the header's end */
};

#define SAMPLESET_HASH 0x9E3779B97F4A7C15ull

/* The table in use: a static one of two counters that never read 0
 * until sampleset_start, so that every free takes the slow path then. */
extern _Atomic(sampleset_table_t *) sampleset_cur_;

/* Whether p is surely no block of the set: a free's fast path. */
static inline bool sampleset_absent(const void *p)
{
    const sampleset_table_t *t = atomic_load_explicit(&sampleset_cur_, memory_order_acquire);
    uint64_t i = ((uintptr_t)p * SAMPLESET_HASH) >> t->shift;
    return atomic_load_explicit(&t->counters[i], memory_order_relaxed) == 0;
}

/* The first table (sampling starts).  0, or -1 without memory. */
int sampleset_start(void);
/* p, a block just sampled, into the set.  false without memory (the
 * block is then not recorded: its free could not be told). */
bool sampleset_add(const void *p);
/* Take p out of the set: true when it was there (a sampled block, or a
 * stale entry of its address). */
bool sampleset_take(const void *p);

#endif
