/*
 * demo_workload: the program `make demo` runs under memsim run.  Each of
 * its four phases shows one kind of answer of memsim-analyze:
 *
 *   warmup    steady small allocations: a working set of about 1 MiB, a
 *             quarter of it replaced every tick (a calm baseline)
 *   fragment  1,536 records, each a large payload (16-48 KiB) and a small
 *             key (256 B-1 KiB) allocated after it; every payload is then
 *             freed: about 48 MiB of holes that malloc keeps (a live key
 *             sits above each one, so the heap cannot shrink), resident
 *             but unused: fragmentation, from here to the end
 *   spike     a 352 MiB in-memory file (memfd) mapped and read through,
 *             held for about one sample and unmapped: the RSS jumps while
 *             malloc's heap does not, a transient spike of the gap
 *             between what the OS charges and what the allocator holds
 *   leak      3 s of requests, each tick leaking four 80 KiB blocks (too
 *             big for the holes, so most of them stay): the live heap
 *             rises by 31 MiB/s, a persistent drift and the leaks at exit
 *
 * Then it frees everything but the leak.  About 4 seconds, about 360 MiB
 * resident at the spike and under 200 MiB otherwise; sizes come from a
 * fixed seed, so every run makes the same requests.  It uses the phase
 * markers of include/memsim.h and runs without memsim too (the symbols
 * are weak).
 *
 * Tuned for memsim-analyze's detectors (analyzer/consume/findings.h), which look
 * at each sampled series over the whole run:
 *   - the spike is mapped, not malloc'd: a heap spike big enough to stand
 *     out (z-score above 3) would spoil the straight-line fit (R² at least
 *     0.7) of the live heap's drift, the leak;
 *   - it is steep and short: its pages exist before they are mapped, so
 *     the RSS rises in a few tens of milliseconds however slowly the
 *     kernel hands out new pages (an anonymous buffer filled at page-fault
 *     speed took from 0.2 to 1 s on a busy VM, and its ramp alone could
 *     pull the z-score under 4); held one tick among about 200 samples at
 *     20 ms, its z-score is about 10;
 *   - the gap findings (spike, fragmentation) need a gap of at least 1%
 *     of the machine's memory somewhere: the spike's 352 MiB is that on
 *     machines of up to about 36 GB;
 *   - the holes last from the fragment phase to the end, so the mean of
 *     (reserved - in use) / reserved over all samples stays above 0.3
 *     even when writing the spike's file takes long (the samples until
 *     then count too); nothing else is allocated while they are watched
 *     or during the spike, so the finding's most fragmented sample (the
 *     first of equals) is in the fragment phase.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "include/memsim.h"


#define MIB (1024 * 1024)

#define TICK_MS 10                /* the program's pace; memsim samples every 20 ms in the demo */
#define WARMUP_TICKS 50           /* 0.5 s */
#define WORKING_SET 512           /* warmup blocks, 64 B..4 KiB each */
#define SPIKE_BYTES (352ul * MIB) /* written, mapped, read, unmapped */
#define SPIKE_HOLD_TICKS 2        /* held for about one sample */
#define RECORDS 1536              /* fragment: payload + key pairs */
#define FRAGMENT_TICKS 30         /* the holes, watched for 0.3 s */
#define LEAK_TICKS 300            /* 3 s of requests, or twice what came before */
#define LEAK_PER_TICK 4           /* blocks leaked per tick... */
#define LEAK_BLOCK (80 * 1024)    /* ...of this size: 31 MiB/s */

static uint64_t seed = 2026; /* SplitMix64: the same sizes on every run */

static uint64_t next_random(void)
{
    uint64_t z = (seed += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A size in [lo, hi]. */
static size_t between(size_t lo, size_t hi) { return lo + next_random() % (hi - lo + 1); }

static struct timespec started; /* main's start */

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts))
        ;
}

static void tick(void) { sleep_ms(TICK_MS); }

static long ms_since_start(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - started.tv_sec) * 1000 + (now.tv_nsec - started.tv_nsec) / 1000000;
}

/* malloc that gives up the whole program when the host is out of memory,
 * and touches what it returns (resident, as a real program's data). */
static void *filled(size_t size)
{
    char *p = malloc(size);
    if (!p) {
        fprintf(stderr, "demo_workload: out of memory (%zu bytes)\n", size);
        exit(1);
    }
    memset(p, 0x5a, size);
    return p;
}

/* A request's temporary buffer: allocated, used, freed at once. */
static unsigned scratch(size_t size)
{
    unsigned char *p = filled(size);
    unsigned sum = p[size / 2];
    free(p);
    return sum;
}

static void *working[WORKING_SET];

static void warmup(void)
{
    for (int i = 0; i < WORKING_SET; i++)
        working[i] = filled(between(64, 4096));
    for (int t = 0; t < WARMUP_TICKS; t++) {
        for (int k = 0; k < WORKING_SET / 4; k++) {
            size_t i = next_random() % WORKING_SET;
            free(working[i]);
            working[i] = filled(between(64, 4096));
        }
        scratch(between(1024, 8192));
        tick();
    }
}

static void *keys[RECORDS];

/* Returns the bytes left in holes. */
static size_t fragment(void)
{
    void *payload[RECORDS];
    size_t holes = 0;
    for (int i = 0; i < RECORDS; i++) {
        size_t size = between(16 * 1024, 48 * 1024);
        payload[i] = filled(size);
        keys[i] = filled(between(256, 1024));
        holes += size;
    }
    for (int i = 0; i < RECORDS; i++)
        free(payload[i]); /* every other block of the heap: a key sits between two holes */
    for (int t = 0; t < FRAGMENT_TICKS; t++)
        tick(); /* no other allocation: the holes stay as they are */
    return holes;
}

/* The spike: an in-memory file (memfd) of SPIKE_BYTES, written with
 * write(2), is not yet the process's memory; mapped and read through, it
 * is, all at once (its pages exist already, so mapping them is quick):
 * the RSS jumps, malloc sees nothing.  It is dropped a tick later.  A
 * program that maps a large file to parse it does the same.  Returns a
 * checksum of what it read. */
static unsigned long spike(void)
{
    static char block[1 << 20];
    memset(block, 0x33, sizeof block);
    int fd = memfd_create("demo_workload-spike", 0);
    if (fd < 0) {
        perror("demo_workload: memfd_create");
        exit(1);
    }
    for (size_t off = 0; off < SPIKE_BYTES; off += sizeof block)
        if (write(fd, block, sizeof block) != (ssize_t)sizeof block) {
            perror("demo_workload: write");
            exit(1);
        }
    const unsigned char *map = mmap(NULL, SPIKE_BYTES, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
        perror("demo_workload: mmap");
        exit(1);
    }
    unsigned long sum = 0;
    for (size_t off = 0; off < SPIKE_BYTES; off += 4096)
        sum += map[off];
    for (int t = 0; t < SPIKE_HOLD_TICKS; t++)
        tick();
    munmap((void *)map, SPIKE_BYTES);
    close(fd);
    return sum;
}

/* The leak lasts at least twice as long as all that came before (3 s
 * when they take 1.2 s, as on an idle machine; longer on a loaded one,
 * where writing the spike's file may take seconds): the live heap's
 * straight-line fit over the run then has R² above 0.9, whatever the
 * load (a flat third, then the ramp), where a fixed 3 s after a slow
 * spike left it under 0.7 and the drift unreported.  The same blocks
 * either way, only further apart. */
static void leak(void)
{
    long pace = 2 * ms_since_start() / LEAK_TICKS;
    if (pace < TICK_MS)
        pace = TICK_MS;
    for (int t = 0; t < LEAK_TICKS; t++) {
        for (int k = 0; k < LEAK_PER_TICK; k++) {
            void *lost = filled(LEAK_BLOCK);
            (void)lost; /* never freed: the leak */
        }
        scratch(between(1024, 8192));
        sleep_ms(pace);
    }
}

int main(void)
{
    clock_gettime(CLOCK_MONOTONIC, &started);
    MEMSIM_PHASE_BEGIN("warmup");
    warmup();
    MEMSIM_PHASE_END();

    MEMSIM_PHASE_BEGIN("fragment");
    size_t holes = fragment();
    MEMSIM_PHASE_END();

    MEMSIM_PHASE_BEGIN("spike");
    unsigned long sum = spike();
    MEMSIM_PHASE_END();

    MEMSIM_PHASE_BEGIN("leak");
    leak();
    MEMSIM_PHASE_END();

    for (int i = 0; i < RECORDS; i++)
        free(keys[i]);
    for (int i = 0; i < WORKING_SET; i++)
        free(working[i]);
    printf("demo_workload: warmup, fragment (%zu MiB in holes), spike (%lu MiB mapped, checksum "
           "%lu), leak (%lu MiB)\n", holes / MIB, SPIKE_BYTES / MIB, sum,
           (unsigned long)LEAK_TICKS * LEAK_PER_TICK * LEAK_BLOCK / MIB);
    return 0;
}
