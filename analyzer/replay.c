/*
 * replay: a trace through the simulated device.  See replay.h.
 */
#include "analyzer/replay.h"

#include <string.h>
#include <time.h>

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int replay_open(replay_t *r, const char *strategy, uint64_t device_size, char *err,
                size_t errlen)
{
    memset(r, 0, sizeof *r);
    device_config_t cfg = {.total = device_size, .strategy = strategy, .no_timing = true};
    if (device_create(&cfg, &r->dev, err, errlen))
        return -1;
    if (addrmap_init(&r->map, 1024)) {
        device_destroy(r->dev);
        r->dev = NULL;
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

void replay_close(replay_t *r)
{
    device_destroy(r->dev);
    addrmap_fini(&r->map);
    r->dev = NULL;
}

void replay_alloc(replay_t *r, uint64_t addr, uint64_t size, uint64_t align)
{
    uint64_t t0 = now_ns();
    device_result_t res;
    r->requests++;
    /* The device wants a size and a power-of-two alignment; malloc(0)
     * still takes a block. */
    if (align == 0 || (align & (align - 1)))
        align = 16;
    if (device_alloc(r->dev, size ? size : 1, align, 0, &res) == POOL_OK)
        addrmap_put(&r->map, addr, (void *)(uintptr_t)(res.addr + 1));
    else
        r->failed++;
    r->ns += now_ns() - t0;
}

void replay_free(replay_t *r, uint64_t addr)
{
    uint64_t t0 = now_ns();
    void *v = addrmap_remove(&r->map, addr);
    if (v) {
        device_result_t res;
        device_free(r->dev, (uint64_t)(uintptr_t)v - 1, &res);
        r->frees++;
    }
    r->ns += now_ns() - t0;
}

void replay_realloc(replay_t *r, uint64_t old_addr, uint64_t addr, uint64_t size)
{
    replay_free(r, old_addr);
    replay_alloc(r, addr, size, 16);
}

void replay_result(const replay_t *r, replay_result_t *out)
{
    memset(out, 0, sizeof *out);
    out->name = device_strategy(r->dev)->name;
    out->requests = r->requests;
    out->failed = r->failed;
    out->frees = r->frees;
    device_metrics(r->dev, &out->m);
    uint64_t events = r->requests + r->frees;
    out->events_per_s = r->ns ? (double)events * 1e9 / (double)r->ns : 0.0;
}
