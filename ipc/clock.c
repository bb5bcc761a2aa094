/*
 * clock: TSC ticks for heap events, converted by the writer.  See clock.h.
 */
#include "ipc/clock.h"

#include <fcntl.h>
#include <math.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REFRESH_EVERY 256 /* conversions between two pairs, at most */
#define AHEAD_NS 1000000  /* ticks extrapolated at most this far past the latest pair */
#define PAIR_TRIES 3
#define JUMP_NS 50000       /* the clocks' disagreement between two pairs that is a jump: */
#define JUMP_SHARE 0.01     /* this much, plus this share of the time between them, */
#define JUDGE_NS 10000000   /* once the rate was measured over this long */
#define BEHIND_NS 1000000   /* ticks this far before the conversion before: a jump */

bool clock_tsc_;
__thread const clock_feed_t *clock_fed_ __attribute__((tls_model("initial-exec")));
const clock_feed_t *clock_fed_all_;
clock_feed_t clock_still;
static __thread uint64_t fed_ns, fed_ticks; /* the thread's last readings */

typedef struct pair_s {
    uint64_t tsc, ns;
} pair_t;

static pair_t start, latest;
static double rate;   /* ns per tick since start */
static unsigned uses; /* conversions since the latest pair */
static uint64_t last_ticks, last_out; /* the conversion before */

static uint64_t tsc_now(void)
{
#if defined(__x86_64__)
    return __builtin_ia32_rdtsc();
#else
    return 0;
#endif
}

static uint64_t (*tsc_read)(void) = tsc_now; /* clock_test_tsc replaces it */

void clock_test_tsc(uint64_t (*read)(void)) { tsc_read = read ? read : tsc_now; }

static void prime(bool read)
{
    if (read && !clock_fed_ && !clock_fed_all_) {
        fed_ticks = clock_ticks();
        fed_ns = clock_ns();
    }
}

void clock_feed(const clock_feed_t *f, bool read)
{
    if (f)
        prime(read);
    clock_fed_ = f;
}

void clock_feed_all(const clock_feed_t *f, bool read)
{
    if (f)
        prime(read);
    clock_fed_all_ = f;
}

static inline const clock_feed_t *fed(void)
{
    return clock_fed_ ? clock_fed_ : clock_fed_all_;
}

uint64_t clock_fed_ticks(void)
{
    uint64_t t = atomic_load_explicit(&fed()->ticks, memory_order_relaxed);
    return fed_ticks = t > fed_ticks ? t : fed_ticks + 1;
}

uint64_t clock_ns(void)
{
    if (__builtin_expect(clock_fed_ != NULL || clock_fed_all_ != NULL, 0)) {
        uint64_t t = atomic_load_explicit(&fed()->ns, memory_order_relaxed);
        return fed_ns = t > fed_ns + 100 ? t : fed_ns + 100;
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t clock_unix_ns(void)
{
    if (clock_fed_ || clock_fed_all_)
        return 0;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The TSC and the clock read as closely together as possible: the TSC on
 * both sides of the clock, the tightest of a few tries (an interrupt in
 * between would skew every time converted against the pair). */
static pair_t read_pair(void)
{
    pair_t best = {0, 0};
#if defined(__x86_64__)
    uint64_t width = UINT64_MAX;
    for (int i = 0; i < PAIR_TRIES; i++) {
        uint64_t a = tsc_read();
        uint64_t ns = clock_ns();
        uint64_t b = tsc_read();
        if (b - a < width) {
            width = b - a;
            best = (pair_t){a + (b - a) / 2, ns};
        }
    }
#else
    best.ns = clock_ns();
#endif
    return best;
}

#define CLOCKSOURCE "/sys/devices/system/clocksource/clocksource0/current_clocksource"

/* CPUID 0x80000007, EDX bit 8: the TSC runs at a constant rate in every
 * P-, C- and T-state. */
static bool tsc_invariant(void)
{
#if defined(__x86_64__)
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
        return false;
    __get_cpuid(0x80000007u, &a, &b, &c, &d);
    return (d >> 8) & 1u;
#else
    return false;
#endif
}

bool clock_tsc_usable_for(const char *clocksource, bool invariant_tsc)
{
#if defined(__x86_64__)
    if (strcmp(clocksource, "tsc\n") == 0)
        return true;
    return invariant_tsc && strcmp(clocksource, "kvm-clock\n") == 0;
#else
    (void)clocksource;
    (void)invariant_tsc;
    return false;
#endif
}

bool clock_tsc_usable(void)
{
    char buf[32] = {0};
    int fd = open(CLOCKSOURCE, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    return n > 0 && clock_tsc_usable_for(buf, tsc_invariant());
}

void clock_init(bool tsc)
{
    clock_tsc_ = false;
#if !defined(__x86_64__)
    tsc = false;
#endif
    if (!tsc)
        return;
    if (clock_fed_ || clock_fed_all_) { /* the TSC faults here: the recorder converts */
        clock_tsc_ = true;
        return;
    }
    start = latest = read_pair();
    rate = 0.0;
    uses = REFRESH_EVERY; /* the first conversion reads a pair */
    last_ticks = last_out = 0;
    clock_tsc_ = true;
}

/* Whether the TSC jumped between pairs a and b (a VM restored from a
 * snapshot, or moved to another host): over the time between them the
 * two clocks disagree by more than the rate's error and the clock's slew
 * explain.  A rate measured over less than JUDGE_NS is too rough to
 * judge by. */
static bool jumped(pair_t a, pair_t b)
{
    if (rate == 0.0 || a.ns - start.ns < JUDGE_NS)
        return false;
    double by_ns = (double)(b.ns - a.ns);
    double by_tsc = (double)(int64_t)(b.tsc - a.tsc) * rate;
    return fabs(by_tsc - by_ns) > JUMP_NS + by_ns * JUMP_SHARE;
}

static void refresh(void)
{
    pair_t before = latest;
    latest = read_pair();
    uses = 0;
    if (jumped(before, latest)) {
        /* The rate starts over from here; until the next pair, ticks are
         * placed at this one. */
        start = latest;
        rate = 0.0;
        return;
    }
    if (latest.tsc > start.tsc && latest.ns > start.ns)
        rate = (double)(latest.ns - start.ns) / (double)(latest.tsc - start.tsc);
}

/* How far past the latest pair ticks may be extrapolated: AHEAD_NS, or a
 * 64th of the time the rate was measured over, while that is short (the
 * rate's error, the pairs' jitter over that time, grows with distance). */
static double ahead_ns(void)
{
    double base = (double)(latest.ns - start.ns) / 64.0;
    return base < (double)AHEAD_NS ? base : (double)AHEAD_NS;
}

uint64_t clock_ticks_ns(uint64_t ticks)
{
    if (!clock_tsc_)
        return ticks;
    /* Ticks past the latest pair are extrapolated along the rate, unless
     * they lie more than AHEAD_NS past it or the rate is not known yet: a
     * recorder that keeps up converts ticks read after its latest pair
     * nearly every time, and a pair costs three clock reads. */
    int64_t back = (int64_t)(latest.tsc - ticks); /* < 0: after the pair */
    bool fresh = false;
    if (++uses >= REFRESH_EVERY || rate == 0.0 ||
        (back < 0 && (double)-back * rate > ahead_ns()) ||
        (ticks < last_ticks && (double)(last_ticks - ticks) * rate > BEHIND_NS)) {
        refresh();
        back = (int64_t)(latest.tsc - ticks);
        fresh = true;
    }
    /* Ticks read before now are never placed after it: past a pair just
     * read they can only be a jump's, or another CPU's counter a few
     * ticks ahead. */
    if (fresh && back < 0)
        back = 0;
    int64_t ns = (int64_t)latest.ns - (int64_t)((double)back * rate);
    uint64_t out = ns > 0 ? (uint64_t)ns : 0;
    /* A new pair can put later ticks a few ns before the extrapolation
     * of earlier ones: ticks in order stay in order. */
    if (ticks >= last_ticks && out < last_out)
        out = last_out;
    last_ticks = ticks;
    last_out = out;
    return out;
}
