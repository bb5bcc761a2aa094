/*
 * clock: the time of heap events, read cheaply on the program's thread.
 *
 * CLOCK_MONOTONIC costs about 20 ns through the vDSO (29 ns with a KVM
 * guest's kvm-clock), a tenth of what a heap event costs the program's
 * thread; the CPU's time-stamp counter costs 8 to 12.  When the TSC can
 * be trusted (clock_tsc_usable), events read it (clock_ticks) and
 * the recorder turns ticks into CLOCK_MONOTONIC nanoseconds
 * (clock_ticks_ns) against pairs (TSC, CLOCK_MONOTONIC) it reads as it
 * goes: ns = ns_c - (tsc_c - ticks) * rate, where (tsc_c, ns_c) is its
 * latest pair and rate the ratio of the two clocks since memsim started.
 * A new pair is read every 256 conversions, and for ticks more than 1 ms
 * past the latest one; ticks up to 1 ms past it are extrapolated (a
 * recorder that keeps up would otherwise read a pair, three clock reads,
 * for nearly every event).  The error is the pair's own jitter (tens of
 * ns) plus the clock's slew over the distance from the pair (NTP slews
 * by at most 500 ppm: under a microsecond within 2 ms).  Ticks converted
 * in order stay in order.  Otherwise ticks are nanoseconds.
 */
#ifndef MEMSIM_IPC_CLOCK_H
#define MEMSIM_IPC_CLOCK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

extern bool clock_tsc_; /* set by clock_init */

/* The time as the recorder last looked (ns, and ticks of the traced
 * process's kind), for a thread that may not read a clock: seccomp's
 * strict mode and prctl(PR_SET_TSC, PR_TSC_SIGSEGV) make the TSC fault,
 * and the vDSO's clock_gettime with it. */
typedef struct clock_feed_s {
    _Atomic uint64_t ns, ticks;
} clock_feed_t;

/* The calling thread's feed (seccomp's strict mode binds one thread),
 * or NULL: the process's (PR_SET_TSC binds the thread and those it
 * creates, and stays across exec), or NULL: it reads the clock. */
extern __thread const clock_feed_t *clock_fed_ __attribute__((tls_model("initial-exec")));
extern const clock_feed_t *clock_fed_all_;

/* From here the calling thread (clock_feed), or every thread
 * (clock_feed_all), takes its time from f (NULL: from the clock again),
 * each reading past the one before: ticks by one at least, ns by 100 (a
 * wait that times out still does when the recorder stops looking).
 * read: the clock may still be read, to continue from (the calling
 * thread's readings; in a thread that may not, the feed's own). */
void clock_feed(const clock_feed_t *f, bool read);
void clock_feed_all(const clock_feed_t *f, bool read);
uint64_t clock_fed_ticks(void);

/* A feed nobody writes: time moves only by the steps above (a process
 * before its recorder looks). */
extern clock_feed_t clock_still;

/* CLOCK_MONOTONIC, ns. */
uint64_t clock_ns(void);

/* CLOCK_REALTIME, ns; 0 in a thread that takes its time from a feed
 * (below): the feed has no wall clock. */
uint64_t clock_unix_ns(void);

/* Choose the source: the TSC when tsc is set (the kernel keeps time
 * with it: its clocksource is "tsc", which preload/launch.c reads where
 * its descriptor is none of the program's), and take the first pair.
 * Before it, and without the TSC, ticks are ns.  The traced process and
 * its recorder each call it, with the same answer. */
void clock_init(bool tsc);

/* Whether events may read the TSC: the kernel keeps time with it (its
 * clocksource is "tsc": the counter is then invariant and synchronized
 * across CPUs), or the kernel is a KVM guest keeping time with kvm-clock
 * (itself the TSC, scaled by the host) on a CPU whose TSC is invariant
 * (CPUID 0x80000007, EDX bit 8: a constant rate in every power state).
 * Such a guest may distrust the TSC for its own clock because a
 * snapshot restored elsewhere can make it jump.  The conversion sees a
 * jump (two pairs whose clocks disagree by more than 50 us + 1% of the
 * time between them, or ticks over 1 ms before the ones converted just
 * before) and starts its rate over from the new pair; the events read
 * across the jump are placed at that pair, never after the moment they
 * are converted nor before the event converted before them.  Any other
 * clocksource (hpet, acpi_pm: the kernel found the TSC unstable) keeps
 * events on CLOCK_MONOTONIC.  It opens a file in /sys: not on a thread
 * of the traced program's, whose descriptors it would take
 * (preload/launch.c asks from its own table). */
bool clock_tsc_usable(void);

/* The rule of clock_tsc_usable, for the kernel's clocksource as
 * current_clocksource reads (newline included) and the CPU's answer. */
bool clock_tsc_usable_for(const char *clocksource, bool invariant_tsc);

/* Now, in ticks. */
static inline uint64_t clock_ticks(void)
{
    if (__builtin_expect(clock_fed_ != NULL || clock_fed_all_ != NULL, 0))
        return clock_fed_ticks();
#if defined(__x86_64__)
    if (clock_tsc_)
        return __builtin_ia32_rdtsc();
#endif
    return clock_ns();
}

/* Ticks read at most a little before now, as CLOCK_MONOTONIC ns.  Not
 * thread-safe: one caller at a time (the ring's write stage). */
uint64_t clock_ticks_ns(uint64_t ticks);

/* For tests: the counter the conversion's pairs read in place of the TSC
 * (NULL: the TSC again), to make it jump.  Before clock_init. */
void clock_test_tsc(uint64_t (*read)(void));

#endif
