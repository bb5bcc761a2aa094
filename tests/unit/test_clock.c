/*
 * clock: ticks converted by the recorder agree with CLOCK_MONOTONIC read
 * around them, and conversion keeps their order.
 */
#include <stdatomic.h>
#include <time.h>

#include "ipc/clock.h"
#include "tests/unit/suites.h"

#define SAMPLES 2000

/* A busy pause of about ns. */
static void spin_ns(uint64_t ns)
{
    uint64_t end = clock_ns() + ns;
    while (clock_ns() < end)
        ;
}

START_TEST(ticks_become_monotonic_ns)
{
    clock_init(clock_tsc_usable());
    static uint64_t before[SAMPLES], ticks[SAMPLES], after[SAMPLES];
    for (int i = 0; i < SAMPLES; i++) {
        before[i] = clock_ns();
        ticks[i] = clock_ticks();
        after[i] = clock_ns();
        spin_ns(i % 50 == 0 ? 200000 : 500); /* some gaps of 0.2 ms */
    }
    /* Converted late, in order, as the writer does: each within a
     * microsecond of the clock read around it (the pair's jitter plus
     * the clock's slew over the sample's age), and never backwards. */
    uint64_t last = 0;
    for (int i = 0; i < SAMPLES; i++) {
        uint64_t ns = clock_ticks_ns(ticks[i]);
        ck_assert_msg(ns + 1000 >= before[i] && ns <= after[i] + 1000,
                      "sample %d: %llu not in [%llu, %llu] +- 1 us", i, (unsigned long long)ns,
                      (unsigned long long)before[i], (unsigned long long)after[i]);
        ck_assert_uint_ge(ns, last);
        last = ns;
    }
}
END_TEST

/* Converted at once, as a recorder that keeps up does: most ticks lie
 * past its latest pair and are extrapolated (a pair every 256
 * conversions, or for ticks over 1 ms past it: the 2 ms gaps); each
 * within a microsecond of the clock read around it, never backwards. */
START_TEST(ticks_converted_as_they_come)
{
    clock_init(clock_tsc_usable());
    uint64_t last = 0;
    for (int i = 0; i < SAMPLES * 4; i++) {
        uint64_t before = clock_ns(), ticks = clock_ticks(), after = clock_ns();
        uint64_t ns = clock_ticks_ns(ticks);
        ck_assert_msg(ns + 1000 >= before && ns <= after + 1000,
                      "sample %d: %llu not in [%llu, %llu] +- 1 us", i, (unsigned long long)ns,
                      (unsigned long long)before, (unsigned long long)after);
        ck_assert_uint_ge(ns, last);
        last = ns;
        spin_ns(i % 500 == 0 ? 2000000 : i % 50 == 0 ? 200000 : 300);
    }
}
END_TEST

#if defined(__x86_64__)
/* A counter that jumps when told to, as a VM's TSC does when the VM is
 * restored from a snapshot or moved. */
static _Atomic int64_t jump_by;
static uint64_t jumping_tsc(void) { return __builtin_ia32_rdtsc() + (uint64_t)jump_by; }

/* Convert as they come for ms milliseconds: each within a microsecond of
 * the clock read around it (skip: the first n may not be), never
 * backwards.  Returns the last conversion.  The last sample is taken at
 * ms or after: its conversion leaves a pair at most AHEAD_NS old, so the
 * rate has been measured over ms - 1 and a jump next is judged (JUDGE_NS),
 * however little of the time this thread ran on a loaded machine (a loop
 * that ended on the clock alone could end with the last pair taken 5 ms
 * in: a jump then went unseen, its ticks 250 us off). */
static uint64_t convert_for(uint64_t ms, int skip, uint64_t last)
{
    uint64_t end = clock_ns() + ms * 1000000;
    for (int i = 0;; i++) {
        bool over = clock_ns() >= end;
        uint64_t before = clock_ns(), ticks = jumping_tsc(), after = clock_ns();
        uint64_t ns = clock_ticks_ns(ticks);
        if (i >= skip)
            ck_assert_msg(ns + 1000 >= before && ns <= after + 1000,
                          "sample %d: %llu not in [%llu, %llu] +- 1 us", i, (unsigned long long)ns,
                          (unsigned long long)before, (unsigned long long)after);
        ck_assert_msg(ns <= clock_ns(), "sample %d placed after the moment it was converted", i);
        ck_assert_uint_ge(ns, last);
        last = ns;
        if (over)
            break;
        spin_ns(i % 50 == 0 ? 200000 : 300);
    }
    return last;
}
#endif

/* The TSC jumps forward by 10 s, then back by 30 s: the conversion sees
 * each jump at its first tick across it, starts its rate over, and
 * places every event at most a microsecond from the clock again; no time
 * lies after the moment of its conversion, none goes backwards. */
START_TEST(a_jump_of_the_tsc_is_seen)
{
#if defined(__x86_64__)
    clock_init(true);
    if (!clock_tsc_)
        return;
    clock_test_tsc(jumping_tsc);
    clock_init(true);
    uint64_t last = convert_for(30, 0, 0);
    double per_ns = 2.0; /* ticks a ns, about (the jumps need not be exact) */
    jump_by = (int64_t)(10e9 * per_ns);
    last = convert_for(30, 2, last);
    jump_by -= (int64_t)(30e9 * per_ns);
    convert_for(30, 2, last);
    clock_test_tsc(NULL);
#endif
}
END_TEST

/* The TSC where the kernel keeps time with it, or a KVM guest's
 * kvm-clock on an invariant TSC; never where the kernel fell back to
 * another clock. */
START_TEST(tsc_when_it_can_be_trusted)
{
#if defined(__x86_64__)
    ck_assert(clock_tsc_usable_for("tsc\n", false));
    ck_assert(clock_tsc_usable_for("tsc\n", true));
    ck_assert(clock_tsc_usable_for("kvm-clock\n", true));
    ck_assert(!clock_tsc_usable_for("kvm-clock\n", false));
#endif
    ck_assert(!clock_tsc_usable_for("hpet\n", true));
    ck_assert(!clock_tsc_usable_for("acpi_pm\n", true));
    ck_assert(!clock_tsc_usable_for("tsc-early\n", true));
    ck_assert(!clock_tsc_usable_for("", true));
}
END_TEST

START_TEST(ticks_are_ns_without_the_tsc)
{
    clock_init(clock_tsc_usable());
    if (!clock_tsc_) { /* ticks are ns: conversion is the identity */
        uint64_t t = clock_ticks();
        ck_assert_uint_eq(clock_ticks_ns(t), t);
    }
}
END_TEST

Suite *clock_suite(void)
{
    Suite *s = suite_create("clock");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, ticks_become_monotonic_ns);
    tcase_add_test(tc, tsc_when_it_can_be_trusted);
    tcase_add_test(tc, a_jump_of_the_tsc_is_seen);
    tcase_add_test(tc, ticks_converted_as_they_come);
    tcase_add_test(tc, ticks_are_ns_without_the_tsc);
    suite_add_tcase(s, tc);
    return s;
}
