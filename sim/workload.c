/*
 * workload: the seeded random workload.  See workload.h.
 */
#include "sim/workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/rng.h"

int workload_validate(const workload_config_t *cfg, char *err, size_t errlen)
{
    if (cfg->min_size == 0 || cfg->min_size > cfg->max_size) {
        snprintf(err, errlen, "size range %llu..%llu is empty or starts at zero",
                 (unsigned long long)cfg->min_size, (unsigned long long)cfg->max_size);
        return POOL_EINVAL;
    }
    if (!(cfg->free_probability >= 0.0 && cfg->free_probability <= 1.0)) {
        snprintf(err, errlen, "free probability %g is not in [0, 1]", cfg->free_probability);
        return POOL_EINVAL;
    }
    if (cfg->align & (cfg->align - 1)) {
        snprintf(err, errlen, "alignment %llu is not a power of two",
                 (unsigned long long)cfg->align);
        return POOL_EINVAL;
    }
    return POOL_OK;
}

int workload_run(device_t *d, const workload_config_t *cfg, workload_report_t *rep,
                 int check, const char **why)
{
    char msg[128];
    memset(rep, 0, sizeof *rep);
    if (workload_validate(cfg, msg, sizeof msg))
        return POOL_EINVAL;
    uint64_t align = cfg->align ? cfg->align : 16;
    rng_t rng;
    rng_seed(&rng, cfg->seed);
    uint64_t *live = NULL;
    size_t nlive = 0, cap = 0;
    int rc = POOL_OK;
    device_result_t r;
    for (uint64_t i = 0; i < cfg->operations; i++) {
        if (nlive && rng_unit(&rng) < cfg->free_probability) {
            size_t k = (size_t)rng_below(&rng, nlive);
            if (device_free(d, live[k], &r) == POOL_OK) {
                rep->frees++;
                live[k] = live[--nlive];
            } else {
                rep->failed_frees++;
            }
        } else {
            uint64_t size = rng_between(&rng, cfg->min_size, cfg->max_size);
            if (device_alloc(d, size, align, 0, &r) == POOL_OK) {
                if (nlive == cap) {
                    size_t ncap = cap ? cap * 2 : 256;
                    uint64_t *grown = realloc(live, ncap * sizeof *live);
                    if (!grown) {
                        rc = POOL_EHOST;
                        break;
                    }
                    live = grown;
                    cap = ncap;
                }
                live[nlive++] = r.addr;
                rep->allocations++;
                rep->bytes_allocated += size;
            } else {
                rep->failed_allocations++;
            }
        }
        if (check && device_check(d, why)) {
            rc = -1;
            break;
        }
    }
    rep->live_at_end = nlive;
    free(live);
    return rc;
}
