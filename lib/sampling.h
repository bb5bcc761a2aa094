/*
 * sampling: what a sampled allocation stands for, shared by the
 * interposer's documentation, the recorder and every reader of a sampled
 * trace (docs/trace-format.md, "Sampled traces").
 *
 * The allocated bytes of a thread are a stream on which points fall as a
 * Poisson process of mean interval T bytes (the trace's sample_bytes): an
 * allocation is sampled when at least one point falls in its bytes,
 * which happens with probability
 *
 *     p(s) = 1 - e^(-s/T)                      (s: its size in bytes)
 *
 * independently of every other allocation (the process has no memory).
 * A sampled allocation of s bytes stands for
 *
 *     w(s) = s / p(s)  bytes  and  1 / p(s)  allocations,
 *
 * so a sum of w over the sampled allocations of any set (a site's, the
 * blocks live at an instant) has the set's true bytes as its expected
 * value (Horvitz-Thompson).  The variance of one allocation's term is
 * s^2 (1 - p) / p; its unbiased estimate from a sampled one is
 *
 *     v(s) = w(s) (w(s) - s),
 *
 * and the variances of a sum add (independence): the standard error of
 * an estimate is the square root of the sum of v over its sampled
 * allocations.  w(s) is about T + s/2 for s much smaller than T, and s
 * itself (v about 0) for s much larger: such allocations are always
 * sampled.
 */
#ifndef MEMSIM_LIB_SAMPLING_H
#define MEMSIM_LIB_SAMPLING_H

#include <math.h>
#include <stdint.h>

/* The largest mean interval MEMSIM_SAMPLE_BYTES takes, and the one
 * `memsim run --sample` chooses (docs/preload.md, "Sampled traces", says
 * why). */
#define SAMPLING_BYTES_MAX (1ull << 30)
#define SAMPLING_BYTES_DEFAULT (512ull << 10)

/* p(s): the probability that an allocation of size bytes is sampled at
 * mean interval bytes (interval > 0). */
static inline double sampling_prob(uint64_t size, uint64_t interval)
{
    return -expm1(-(double)size / (double)interval);
}

/* w(s): the bytes one sampled allocation of size bytes stands for (0 for
 * size 0, which is never sampled). */
static inline double sampling_weight(uint64_t size, uint64_t interval)
{
    if (!size)
        return 0;
    double p = sampling_prob(size, interval);
    return p > 0 ? (double)size / p : (double)interval;
}

/* 1 / p(s): the allocations one sampled allocation stands for. */
static inline double sampling_count(uint64_t size, uint64_t interval)
{
    double p = size ? sampling_prob(size, interval) : 0;
    return p > 0 ? 1 / p : 1;
}

/* v(s): the estimated variance of one sampled allocation's term. */
static inline double sampling_var(uint64_t size, uint64_t interval)
{
    double w = sampling_weight(size, interval);
    double d = w - (double)size;
    return d > 0 ? w * d : 0;
}

/* Cross-fitting: an estimate of the most of a series (the peak heap)
 * taken as the largest of its estimates is biased high, by the noise of
 * the moment chosen (the highest of many noisy values).  The cure is to
 * choose the moment on one sample and estimate it on another,
 * independent one.  The points of the Poisson process of mean interval T,
 * each given to one of two halves by a fair coin, are two independent
 * Poisson processes of mean interval 2T; a sampled allocation of s bytes
 * has at least one point, and lies in half A only, in B only, or in both
 * with probabilities
 *
 *     (1 - p2) / (2 - p2),  (1 - p2) / (2 - p2),  p2 / (2 - p2)
 *
 * (p2 = p(s) at 2T; p(s) = p2 (2 - p2)), and in a half it stands for w(s)
 * at 2T.  An allocation much larger than T lies in both (it is in every
 * sample).  A reader draws the halves after the fact, from a hash of
 * what identifies the block: the recording is not changed. */

/* Which halves a sampled allocation of size bytes lies in, drawn from
 * key (any 64 bits that identify the block, hashed here): bit 0 half
 * A, bit 1 half B, at least one. */
static inline unsigned sampling_halves(uint64_t key, uint64_t size, uint64_t interval)
{
    key = (key ^ (key >> 30)) * 0xBF58476D1CE4E5B9ull;
    key = (key ^ (key >> 27)) * 0x94D049BB133111EBull;
    key ^= key >> 31;
    double u = (double)(key >> 11) * 0x1.0p-53;
    double p2 = sampling_prob(size, 2 * interval);
    double both = p2 / (2 - p2), one = (1 - p2) / (2 - p2);
    return u < both ? 3u : u < both + one ? 1u : 2u;
}

/* The size of a sampled block from what a reader keeps of it: its weight
 * rounded (w) and that weight's variance (v = w (w - s)), so that a
 * block's free recomputes exactly what its allocation computed. */
static inline uint64_t sampling_size_of(uint64_t w, double v)
{
    double s = w ? (double)w - v / (double)w : 0;
    return s > 0 ? (uint64_t)llround(s) : 0;
}

#endif
