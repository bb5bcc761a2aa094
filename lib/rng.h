/*
 * rng: a small seeded pseudo-random generator (SplitMix64, Steele,
 * Lea and Flood 2014) for workloads and tests: same seed, same
 * sequence, on every machine.  Not for anything secret.
 */
#ifndef MEMSIM_LIB_RNG_H
#define MEMSIM_LIB_RNG_H

#include <stdint.h>

typedef struct rng_s {
    uint64_t state;
} rng_t;

static inline void rng_seed(rng_t *r, uint64_t seed) { r->state = seed; }

static inline uint64_t rng_next(rng_t *r)
{
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, n); n > 0.  Lemire's multiply-shift (bias < n / 2^64). */
static inline uint64_t rng_below(rng_t *r, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

/* Uniform in [lo, hi], inclusive like Python's random.randint. */
static inline uint64_t rng_between(rng_t *r, uint64_t lo, uint64_t hi)
{
    return lo + (hi - lo == UINT64_MAX ? rng_next(r) : rng_below(r, hi - lo + 1));
}

/* Uniform in [0, 1). */
static inline double rng_unit(rng_t *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }

#endif
