/*
 * replay: a trace's allocation sequence through one strategy of the
 * simulated device (core/), to see how the program would have fared.
 *
 * Each alloc is a device allocation of the same size and alignment; each
 * free frees it; a realloc frees the old block and allocates the new one
 * (the device has no in-place growth).  A request the device cannot
 * serve is counted as failed, and its later free is ignored, as is a free
 * of a block allocated before the trace (a fork child's inherited ones).
 * Driving core/ directly with the same sequence gives exactly the same
 * figures.
 */
#ifndef MEMSIM_ANALYZER_REPLAY_H
#define MEMSIM_ANALYZER_REPLAY_H

#include <stdint.h>

#include "core/addrmap.h"
#include "core/device.h"

typedef struct replay_s {
    device_t *dev;
    addrmap_t map;          /* trace address -> device address + 1 */
    uint64_t requests;      /* allocation requests replayed */
    uint64_t failed;        /* requests the device could not serve */
    uint64_t frees;
    uint64_t ns;            /* time spent replaying */
} replay_t;

typedef struct replay_result_s {
    const char *name;
    uint64_t requests, failed, frees;
    device_metrics_t m;
    double events_per_s;
} replay_result_t;

/* 0, or -1 with a message in err. */
int replay_open(replay_t *r, const char *strategy, uint64_t device_size, char *err,
                size_t errlen);
void replay_close(replay_t *r);

void replay_alloc(replay_t *r, uint64_t addr, uint64_t size, uint64_t align);
void replay_free(replay_t *r, uint64_t addr);
void replay_realloc(replay_t *r, uint64_t old_addr, uint64_t addr, uint64_t size);

void replay_result(const replay_t *r, replay_result_t *out);

#endif
