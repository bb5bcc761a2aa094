/*
 * strategy: the allocation policies of the simulated device, behind one
 * small method table.
 *
 * A strategy decides where a request goes (place) and how a freed block
 * rejoins the free memory (release); the pool (sim/pool.h) supplies the
 * primitives.  Each strategy lives in sim/strategy_<name>.c (the four
 * fits of fit.c's index together in sim/fits.c), keeps all
 * its mutable state in one struct of state_size bytes that the device
 * allocates, and exports one getter returning its constant table.  The
 * list of strategies is sim/strategies.def: adding one is a new file
 * and one line there.
 *
 * Every strategy's place and release run in O(log n) of free blocks
 * (buddy: O(log device size)); creating a segment (caching) may walk the
 * segment list.
 */
#ifndef MEMSIM_SIM_STRATEGY_H
#define MEMSIM_SIM_STRATEGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/pool.h"

typedef struct strategy_request_s {
    uint64_t size;  /* bytes asked for; > 0 */
    uint64_t align; /* power of two, >= 1 */
    int64_t stream; /* requesting stream; never POOL_STREAM_ANY */
} strategy_request_t;

/* What the device hands a strategy when it starts. */
typedef struct strategy_env_s {
    uint64_t base;    /* first device address */
    uint64_t total;   /* device capacity in bytes */
    uint64_t granule; /* fit strategies round sizes and addresses to this */
} strategy_env_t;

/* What counts as the strategy's footprint (memory taken from the device). */
typedef enum strategy_footprint_e {
    STRATEGY_FOOTPRINT_EXTENT,   /* one heap: up to its highest used byte */
    STRATEGY_FOOTPRINT_SEGMENTS, /* the segments it holds reserved */
} strategy_footprint_t;

typedef struct strategy_ops_s {
    const char *name;    /* as given to --strategy and MEMSIM_STRATEGY */
    const char *summary; /* one line for help texts */
    size_t state_size;   /* bytes of state the device allocates (zeroed) */
    strategy_footprint_t footprint;

    /* Set up the pool (create the device segment, index its block).
     * 0 or a POOL_E* code. */
    int (*init)(void *st, pool_t *p, const strategy_env_t *env);
    /* Free anything init allocated outside the pool.  May be NULL. */
    void (*fini)(void *st);
    /* Take a block for req: find one, carve it, mark it allocated.
     * POOL_ENOMEM when nothing fits, POOL_EINVAL for what it can't serve. */
    int (*place)(void *st, pool_t *p, const strategy_request_t *req, block_t **out);
    /* Whether place would succeed now, without changing anything. */
    bool (*can_place)(const void *st, const pool_t *p, const strategy_request_t *req);
    /* b was just marked freed (pool_block_mark_freed): coalesce it as the
     * policy does and put it back into the free index. */
    void (*release)(void *st, pool_t *p, block_t *b);
    /* Size of the largest block a request could get without new segments. */
    uint64_t (*largest_free)(const void *st, const pool_t *p);
    /* Give cached, wholly free segments back to the device; bytes
     * released go to *released.  May be NULL (nothing is cached). */
    void (*trim)(void *st, pool_t *p, uint64_t *released);
    /* Verify the strategy's own invariants (its free index agrees with
     * the block list, ...).  0, or -1 with *why.  O(blocks). */
    int (*check)(const void *st, const pool_t *p, const char **why);
} strategy_ops_t;

/* Number of strategies and the i-th, in the order of strategies.def. */
size_t strategy_count(void);
const strategy_ops_t *strategy_at(size_t i);
/* By name, or NULL. */
const strategy_ops_t *strategy_find(const char *name);
/* Index of a strategy in the table, or -1. */
int strategy_index(const strategy_ops_t *ops);
/* "first-fit, best-fit, ..." into buf, for messages. */
const char *strategy_names(char *buf, size_t len);
/* fmt with its %s as strategy_names' list, into buf: an option's help
 * line (lib/opts.h's format callback; the three commands' --strategy). */
void strategy_names_help(char *buf, size_t len, const char *fmt);

/* One getter per strategy file, declared from the list. */
#define STRATEGY(getter, name) const strategy_ops_t *getter(void);
#include "sim/strategies.def"
#undef STRATEGY

#endif
