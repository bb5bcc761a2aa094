/*
 * sample: which allocations a sampled trace records (MEMSIM_SAMPLE_BYTES),
 * decided on the hooks' fast path.
 *
 * Each thread counts down the bytes it allocates to the next point of a
 * Poisson process over its allocated bytes, of mean interval T
 * (lib/sampling.h: an allocation of s bytes is sampled with probability
 * 1 - e^(-s/T), independently of every other).  The count is one
 * initial-exec thread-local word, memsim_sample_left: an allocation of n
 * bytes with n < left takes n off it and goes on unrecorded (the hooks'
 * fast path: a compare, a subtraction, a branch); one that reaches the
 * point is sampled, and the thread draws the distance to the next point
 * (exponential, mean T: memoryless, so it counts from the end of the
 * sampled allocation).
 *
 * A word of 0 means "no point drawn": a thread's first allocation, and
 * every allocation when tracing records everything (MEMSIM_SAMPLE_BYTES
 * unset), take sample_take, which answers true then.  So the fast path
 * is never taken before sampling has started, and in a fully traced
 * process it costs the compare alone.
 *
 * The points are drawn from a per-thread SplitMix64 generator seeded
 * from MEMSIM_SAMPLE_SEED (and the thread's order of first allocation
 * in its process: the same seed gives the same samples to a program
 * that allocates the same way), or from the clock and the thread.
 */
#ifndef MEMSIM_PRELOAD_SAMPLE_H
#define MEMSIM_PRELOAD_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes to the next point; 0: none drawn (use sample_skip). */
extern __thread uint64_t memsim_sample_left __attribute__((tls_model("initial-exec")));
/* T, the mean interval in bytes; 0: every allocation is recorded. */
extern uint64_t memsim_sample_bytes;
/* The fast path calls the real function bare, without the guard: set
 * when sampling starts if the real allocator is glibc's, which calls
 * nothing through the program's symbols (so nothing it does inside could
 * be taken for the program's).  Another allocator may (an mmap through
 * the PLT): its fast-path calls stay under the guard. */
extern bool memsim_sample_bare;

/* The fast path: an allocation of n bytes that is not sampled (n taken
 * off the count), or false when sample_take must decide. */
static inline bool sample_skip(size_t n)
{
    uint64_t left = memsim_sample_left;
    if (__builtin_expect(n < left, 1)) {
        memsim_sample_left = left - n;
        return true;
    }
    return false;
}

/* Whether an allocation of n bytes that sample_skip did not take is
 * recorded: always when every allocation is; otherwise when it reaches
 * the next point (a thread's first call draws its first point). */
bool sample_take(size_t n);

/* The natural logarithm of x, a normal number in (0, 1] (the draws'
 * uniform variates): libm's log to within a few units in the last
 * place, computed here so that libmemsim.so needs no libm (one library
 * fewer for the loader to map in each traced program that does not). */
double sample_log(double x);

/* Start sampling at mean interval bytes (> 0), the generators seeded
 * from seed when seeded (else from the clock); bare: memsim_sample_bare.
 * Called once tracing is on; the set of sampled blocks
 * (preload/sampleset.h) is set up first. */
void sample_start(uint64_t interval, uint64_t seed, bool seeded, bool bare);

#endif
