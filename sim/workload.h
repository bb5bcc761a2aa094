/*
 * workload: the Python simulator's simulate_workload — a seeded random sequence of
 * allocations and frees run through a device.
 *
 * Each operation frees a random live block with probability
 * free_probability (when any is live), and otherwise allocates a size
 * drawn uniformly from [min_size, max_size].  A failed allocation adds
 * nothing to the live set, as in the Python simulator.  The same seed gives the same
 * requests on every strategy as long as allocations succeed.
 */
#ifndef MEMSIM_SIM_WORKLOAD_H
#define MEMSIM_SIM_WORKLOAD_H

#include <stdint.h>

#include "sim/device.h"

typedef struct workload_config_s {
    uint64_t operations;     /* default 100 */
    uint64_t min_size;       /* default 64 */
    uint64_t max_size;       /* default 4096 */
    double free_probability; /* in [0, 1]; default 0.3 */
    uint64_t seed;
    uint64_t align;          /* every request's alignment; 0: 16 */
} workload_config_t;

#define WORKLOAD_DEFAULTS \
    {.operations = 100, .min_size = 64, .max_size = 4096, .free_probability = 0.3, .seed = 1}

typedef struct workload_report_s {
    uint64_t allocations, failed_allocations;
    uint64_t frees, failed_frees;
    uint64_t bytes_allocated;
    uint64_t live_at_end; /* blocks the workload still holds */
} workload_report_t;

/* Check a configuration; 0, or POOL_EINVAL with a message in err. */
int workload_validate(const workload_config_t *cfg, char *err, size_t errlen);

/* Run the workload on d.  0, POOL_EINVAL for a bad configuration, or
 * POOL_EHOST when the host runs out of memory for the live set.  With
 * check set, device_check runs after every operation and a violation
 * stops the run with -1 and its reason in *why. */
int workload_run(device_t *d, const workload_config_t *cfg, workload_report_t *rep,
                 int check, const char **why);

#endif
