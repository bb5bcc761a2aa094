/*
 * sample: the Poisson process over each thread's allocated bytes.  See
 * sample.h.
 */
#include "preload/sample.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "ipc/clock.h"
#include "lib/rng.h"

__thread uint64_t memsim_sample_left __attribute__((tls_model("initial-exec")));
uint64_t memsim_sample_bytes;
bool memsim_sample_bare;

static __thread rng_t rng __attribute__((tls_model("initial-exec")));
static __thread bool rng_ready __attribute__((tls_model("initial-exec")));
static __thread unsigned seeded_in __attribute__((tls_model("initial-exec"))); /* epoch */

static uint64_t seed_base;
static bool seed_given;
static _Atomic uint64_t threads; /* threads seeded so far in this process */
static unsigned generation;      /* forks on the way to this process: its children reseed */
static unsigned starts;          /* sample_start calls: each starts every thread over */

static void forked(void) { generation++; }

/* What a thread's generator was seeded for: this start, this process. */
static unsigned epoch(void) { return starts * 0x10000u + generation; }

/* A SplitMix64 finalizer: neighbouring inputs, unrelated outputs. */
static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* This thread's generator, for this process: a fork's child draws
 * points of its own, not its parent's again. */
static void seed_thread(void)
{
    uint64_t k = atomic_fetch_add_explicit(&threads, 1, memory_order_relaxed);
    uint64_t s = seed_base;
    if (!seed_given) {
        uint64_t ns = clock_ns(); /* ipc/clock.h's: the recorder's time without the TSC */
        s = ns ^ ns << 32 ^ (uintptr_t)&rng;
    }
    rng_seed(&rng, mix(s ^ mix(k + 1)) ^ mix(generation));
    rng_ready = true;
    seeded_in = epoch();
}

double sample_log(double x)
{
    /* x = m 2^e with m in [sqrt(1/2), sqrt(2)); log m = 2 atanh(s) with
     * s = (m - 1) / (m + 1), |s| < 0.172: the series to s^25 leaves
     * less than 1e-19 out. */
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    int e = (int)((bits >> 52) & 0x7ff) - 1023;
    bits = (bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull;
    double m;
    memcpy(&m, &bits, sizeof m);
    if (m > 0x1.6a09e667f3bcdp+0) {
        m *= 0.5;
        e++;
    }
    double s = (m - 1.0) / (m + 1.0), s2 = s * s, sum = 0.0;
    for (int k = 12; k >= 0; k--)
        sum = sum * s2 + 1.0 / (double)(2 * k + 1);
    return 2.0 * s * sum + (double)e * 0x1.62e42fefa3800p-1 + (double)e * 0x1.ef35793c7673p-45;
}

/* The distance to the next point: exponential of mean T, rounded up to
 * a whole byte (at least 1), so that an allocation of n bytes reaches it
 * exactly when the exponential is below n: with probability 1 - e^(-n/T). */
static uint64_t draw(void)
{
    double u = (double)((rng_next(&rng) >> 11) + 1) * 0x1.0p-53; /* (0, 1] */
    return (uint64_t)(-sample_log(u) * (double)memsim_sample_bytes) + 1;
}

bool sample_take(size_t n)
{
    if (!memsim_sample_bytes)
        return true;
    if (__builtin_expect(!rng_ready || seeded_in != epoch(), 0)) {
        seed_thread();
        memsim_sample_left = 0;
    }
    uint64_t left = memsim_sample_left;
    if (!left)
        left = draw();
    if (n < left) {
        memsim_sample_left = left - n;
        return false;
    }
    memsim_sample_left = draw();
    return true;
}

void sample_start(uint64_t interval, uint64_t seed, bool seeded, bool bare)
{
    memsim_sample_bare = bare; /* before the fast path can be taken */
    seed_base = seed;
    seed_given = seeded;
    atomic_store(&threads, 0);
    if (!starts++)
        pthread_atfork(NULL, NULL, forked);
    __atomic_store_n(&memsim_sample_bytes, interval, __ATOMIC_RELEASE);
}
