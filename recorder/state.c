/*
 * state: live blocks and the shadow device.  See state.h.
 */
#include "recorder/state.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/check.h"
#include "lib/sampling.h"
#include "recorder/livemap.h"

static state_t S; /* the current trace's */

/* A sampled block in (sign 1) or out (-1) of the live estimates. */
static void estimate(uint64_t size, double sign)
{
    if (!S.interval)
        return;
    S.est_bytes += sign * sampling_weight(size, S.interval);
    S.est_var += sign * sampling_var(size, S.interval);
    S.est_blocks += sign * sampling_count(size, S.interval);
}

/* The bytes glibc's malloc takes for a request of n: n and its size
 * word rounded up to 16, at least 32; a page-rounded mapping from 128
 * KiB (its default mmap threshold). */
static uint64_t chunk_of(uint64_t n)
{
    if (n >= (128u << 10))
        return (n + 16 + 4095) & ~(uint64_t)4095;
    uint64_t c = (n + 8 + 15) & ~(uint64_t)15;
    return c < 32 ? 32 : c;
}

int state_init(const char *strategy, uint64_t total, pid_t pid)
{
    state_fini(&S);
    S.pid = pid;
    if (!strategy || strcmp(strategy, "none") == 0)
        return 0;
    device_config_t dc = {
        .total = total, .strategy = strategy, .no_timing = true, .handles_only = true};
    char err[256];
    if (device_create(&dc, &S.sim, err, sizeof err)) {
        S.sim = NULL;
        return -1;
    }
    return 0;
}

void state_set_pid(pid_t pid) { S.pid = pid; }

void state_swap(state_t *other)
{
    state_t t = S;
    S = *other;
    *other = t;
}

/* An inherited block, given a block of the child's own device. */
static void place_inherited(livemap_entry_t *e, void *ctx)
{
    device_t *sim = ctx;
    device_result_t r;
    e->sim_block = sim && !device_alloc(sim, e->size ? e->size : 1, 1, 0, &r) ? r.block : NULL;
}

void state_fork(state_t *child, const char *strategy, uint64_t total)
{
    *child = (state_t){.pid = S.pid,
                       .mmap_live = S.mmap_live,
                       .untracked = S.untracked,
                       .chunks = S.chunks,
                       .chunks_peak = S.chunks,
                       .interval = S.interval,
                       .est_bytes = S.est_bytes,
                       .est_var = S.est_var,
                       .est_blocks = S.est_blocks};
    if (S.sim && strategy && strcmp(strategy, "none") != 0) {
        device_config_t dc = {
            .total = total, .strategy = strategy, .no_timing = true, .handles_only = true};
        char err[256];
        if (device_create(&dc, &child->sim, err, sizeof err))
            child->sim = NULL;
    }
    uint64_t left = 0, quiet_left = 0;
    /* Without a device on either side every block's sim_block is NULL
     * already: the copy is the table as it is. */
    livemap_copy(&child->program, &S.program, S.sim || child->sim ? place_inherited : NULL,
                 child->sim, &left);
    livemap_copy(&child->quiet, &S.quiet, NULL, NULL, &quiet_left);
    child->untracked += left + quiet_left;
}

void state_fini(state_t *st)
{
    livemap_clear(&st->program);
    livemap_clear(&st->quiet);
    if (st->sim)
        device_destroy(st->sim);
    memset(st, 0, sizeof *st);
}

void state_set_sampled(uint64_t interval) { S.interval = interval; }
bool state_has_device(void) { return S.sim != NULL; }

/* The simulated address (STATE_NO_SIM when the device could not serve
 * it) and, in *block, the device's block for sim_free. */
static uint64_t sim_alloc(uint64_t size, uint64_t align, void **block)
{
    *block = NULL;
    if (!S.sim)
        return STATE_NO_SIM;
    device_result_t r;
    if (device_alloc(S.sim, size ? size : 1, align ? align : 1, 0, &r))
        return STATE_NO_SIM;
    *block = r.block;
    return r.addr;
}

static void sim_free(void *block)
{
    if (!S.sim || !block)
        return;
    device_result_t r;
    device_free_block(S.sim, block, &r);
}

/* A new live block into the program's map; one not tracked (no memory
 * for the map) is counted, and leaves the shadow device at once: its
 * free will not be known. */
static void track(uint64_t addr, uint64_t size, uint32_t stack, void *block)
{
    livemap_entry_t e = {.addr = addr, .size = size, .stack = stack, .sim_block = block,
                         .owner = S.pid};
    if (!livemap_put(&S.program, &e)) {
        S.untracked++;
        sim_free(block);
        return;
    }
    S.chunks += chunk_of(size);
    estimate(size, 1);
    if (S.chunks > S.chunks_peak)
        S.chunks_peak = S.chunks;
}

/* An address in neither map: an unknown free, or maybe one of the
 * blocks not tracked. */
static void not_found(state_found_t *f)
{
    if (S.interval)
        return; /* a block not sampled */
    if (S.untracked)
        f->unsure = true;
    else
        S.unknown_frees++;
}

uint64_t state_alloc(uint64_t addr, uint64_t size, uint64_t align, uint32_t stack)
{
    livemap_entry_t e;
    if (livemap_take(&S.quiet, addr, &e)) {
        /* memsim's own block was freed unseen (inside memsim); its address
         * is the program's now */
    }
    void *block;
    uint64_t sim = sim_alloc(size, align, &block);
    track(addr, size, stack, block);
    state_check();
    return sim;
}

static state_found_t found(const livemap_entry_t *e)
{
    return (state_found_t){.known = true, .inherited = e->owner != S.pid, .size = e->size};
}

state_found_t state_free(uint64_t addr)
{
    livemap_entry_t e;
    state_found_t f = {0};
    if (livemap_take(&S.program, addr, &e)) {
        f = found(&e);
        sim_free(e.sim_block);
        S.chunks -= chunk_of(e.size);
        estimate(e.size, -1);
    } else if (livemap_take(&S.quiet, addr, &e)) {
        f.quiet = true;
    } else {
        not_found(&f);
    }
    state_check();
    return f;
}

state_found_t state_realloc(uint64_t old, uint64_t addr, uint64_t size, uint32_t stack,
                            uint64_t *sim)
{
    livemap_entry_t e;
    state_found_t f = {0};
    if (livemap_take(&S.program, old, &e)) {
        f = found(&e);
        sim_free(e.sim_block);
        S.chunks -= chunk_of(e.size);
        estimate(e.size, -1);
    } else {
        not_found(&f);
    }
    void *block;
    *sim = sim_alloc(size, 16, &block);
    track(addr, size, stack, block);
    state_check();
    return f;
}

void state_quiet(uint64_t addr)
{
    livemap_entry_t e = {.addr = addr, .size = 0};
    if (!livemap_put(&S.quiet, &e))
        S.untracked++;
}

void state_prefetch(uint64_t addr) { livemap_prefetch(&S.program, addr); }

/* 64k live blocks: a table of 128k slots, 5 MiB, past the L2 caches. */
bool state_map_is_large(void) { return livemap_count(&S.program) >= 65536; }

typedef struct each_s {
    void (*fn)(uint64_t addr, uint64_t size, void *ctx);
    void *ctx;
} each_t;

static void each_one(const livemap_entry_t *e, void *ctx)
{
    const each_t *x = ctx;
    x->fn(e->addr, e->size, x->ctx);
}

void state_each_live(void (*fn)(uint64_t addr, uint64_t size, void *ctx), void *ctx)
{
    each_t x = {fn, ctx};
    livemap_each(&S.program, each_one, &x);
}

void state_mapped(uint64_t len) { S.mmap_live += len; }
void state_unmapped(uint64_t len) { S.mmap_live = S.mmap_live > len ? S.mmap_live - len : 0; }

/* An estimate as a count: rounded, never below 0 (sums of doubles). */
static uint64_t whole(double x) { return x > 0.5 ? (uint64_t)llround(x) : 0; }

uint64_t state_live_bytes(void)
{
    return S.interval ? whole(S.est_bytes) : livemap_bytes(&S.program);
}

uint64_t state_live_blocks(void)
{
    return S.interval ? whole(S.est_blocks) : livemap_count(&S.program);
}

uint64_t state_live_bytes_se(void) { return S.interval ? whole(sqrt(S.est_var)) : 0; }
uint64_t state_mmap_live(void) { return S.mmap_live; }
uint64_t state_unknown_frees(void) { return S.unknown_frees; }
uint64_t state_untracked(void) { return S.untracked; }
uint64_t state_chunk_bytes(void) { return S.chunks; }
uint64_t state_chunk_peak(void) { return S.chunks_peak; }
void state_chunk_mark(void) { S.chunks_peak = S.chunks; }

void state_metrics(device_metrics_t *m)
{
    memset(m, 0, sizeof *m);
    if (S.sim)
        device_metrics(S.sim, m);
}

/* Every invariant walker; a broken one aborts with its reason. */
static __attribute__((unused)) void walk(void)
{
    const char *why = NULL;
    if ((S.sim && device_check(S.sim, &why)) || livemap_check(&S.program, &why) ||
        livemap_check(&S.quiet, &why)) {
        fprintf(stderr, "memsim-recorder: an invariant is broken: %s\n", why);
        abort();
    }
}

void state_check(void) { CHECK_EXPENSIVE(walk()); }
