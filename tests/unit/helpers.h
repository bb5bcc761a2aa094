/* Small helpers shared by the unit tests. */
#ifndef MEMSIM_TESTS_UNIT_HELPERS_H
#define MEMSIM_TESTS_UNIT_HELPERS_H

#include <check.h>

#include "sim/device.h"
#include "tests/unit/expect.h"

#define KiB 1024ull
#define MiB (1024ull * KiB)
#define GiB (1024ull * MiB)

/* A device of `total` bytes under `strategy`, or the test fails. */
static inline device_t *test_device(const char *strategy, uint64_t total)
{
    char err[256] = "";
    device_t *d = NULL;
    device_config_t cfg = {.total = total, .strategy = strategy};
    ck_assert_msg(device_create(&cfg, &d, err, sizeof err) == POOL_OK, "device_create: %s", err);
    return d;
}

/* Like ck_assert_msg, but silent when it holds (see expect.h). */
#define REQUIRE(cond, ...) EXPECT(cond, __VA_ARGS__)

/* Pool and strategy invariants hold, or the test fails with the reason. */
#define ck_assert_device_ok(d)                                                  \
    do {                                                                        \
        const char *why_ = NULL;                                                \
        REQUIRE(device_check((d), &why_) == 0, "invariant: %s", why_);          \
    } while (0)

/* Allocate or fail the test; returns the address. */
static inline uint64_t test_alloc(device_t *d, uint64_t size, uint64_t align, int64_t stream)
{
    device_result_t r;
    ck_assert_msg(device_alloc(d, size, align, stream, &r) == POOL_OK, "alloc %llu: %s",
                  (unsigned long long)size, r.error);
    ck_assert(r.ok);
    return r.addr;
}

static inline void test_free(device_t *d, uint64_t addr)
{
    device_result_t r;
    ck_assert_msg(device_free(d, addr, &r) == POOL_OK, "free 0x%llx: %s",
                  (unsigned long long)addr, r.error);
}

#endif
