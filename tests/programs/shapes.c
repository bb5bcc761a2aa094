/*
 * shapes: programs whose memory over time has a shape known by
 * construction, for the findings' tests (tests/integration/shapes_checks.sh,
 * on recordings in tests/data/shapes/ and live in bench/shapes.sh).
 *
 *   shapes PATTERN
 *
 * Every pattern first takes a base heap of 8 MiB (4 KiB blocks) and keeps
 * it to the exit; a ticker allocates and frees a 1 KiB block every 10 ms, as a busy
 * program does (which also keeps glibc's figures in the samples fresh).
 * Then, at fixed times from the start (absolute, so a slow machine
 * stretches nothing but the work itself):
 *
 *   long_spike   150 MiB mapped from 1.0 s for 1.5 s of 4 s (37% of the run)
 *   short_spike  200 MiB mapped from 1.5 s for 100 ms of 3 s (3%)
 *   two_spikes   100 MiB mapped at 0.8 s and at 2.65 s, 250 ms each, of 4 s
 *   heap_gap     64 MiB of 16 KiB heap blocks from 0.5 s to 1.5 s, freed
 *                (glibc returns them), then 128 MiB mapped by the system
 *                call itself (no record: the gap's own) from 2.5 s to
 *                3.0 s, of 4 s
 *   step         144 MiB of 64 KiB heap blocks taken at 1.0 s and held to
 *                the end (4 s)
 *   sawtooth     heap blocks of 64 KiB built up to 40 MiB over 400 ms and
 *                all freed, ten times (4 s)
 *   noisy_drift  1 MiB leaked every 100 ms, 40 times (40 MiB over 3.9 s),
 *                under temporaries of 0 to 6 MiB held 0 to 40 ms, every
 *                10 ms; it ends with the last leak
 *   warmup_drift a warm-up that takes 96 MiB (64 KiB blocks) and frees it
 *                at 1.0 s, then 2 MiB leaked every 100 ms, 30 times (60 MiB
 *                over 2.9 s); it ends with the last leak
 *   flat         192 MiB of heap (64 KiB and 16 KiB blocks) taken at the
 *                start and held for 3 s
 *   holes        512 payloads of 48 KiB each followed by a 1 KiB key;
 *                the payloads freed at 1.0 s: 24 MiB the allocator keeps
 *                (the keys pin it) to the end (3.5 s)
 *
 * The shapes must hold on a busy machine, where the kernel may take a
 * second to hand out 100 MiB of new pages.  So a mapping maps an
 * in-memory file (memfd) written before the clock starts: its pages
 * exist already, and mapping them with MAP_POPULATE makes them resident
 * in a few milliseconds.  Heap blocks are not touched (but for the
 * allocator's own header in each): the live heap is what the heap
 * patterns plant, and it changes at once; only the payloads of holes are
 * touched, since fragmentation is memory the allocator keeps resident.
 * Each change is marked as a phase (include/memsim.h) from before its
 * first call to after its last ("up1", "down1", "leak", ...), so a test
 * reads from the trace when it really happened.  The temporaries come
 * from a fixed seed: every run makes the same requests.  Prints one
 * line; exits 0.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "include/memsim.h"

#define MIB (1024ul * 1024)
#define PAGE 4096ul
#define TICK_NS 10000000l /* 10 ms */

static struct timespec start;
static uint64_t seed = 42;

static uint64_t next_random(void) /* SplitMix64 */
{
    uint64_t z = (seed += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void die(const char *what)
{
    perror(what);
    exit(1);
}

/* ---- the clock: sleeping in ticks until a time from the start ------------------ */

static double elapsed(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9;
}

static void *ticker_block;

/* One tick of the program's steady work: a small temporary. */
static void tick_work(void)
{
    ticker_block = malloc(1024);
    if (!ticker_block)
        die("malloc");
    memset(ticker_block, 1, 1024);
    free(ticker_block);
}

/* Works a tick at a time until s seconds from the start; each_tick, when
 * given, runs after each tick's own work. */
static void until(double s, void (*each_tick)(void))
{
    while (elapsed() < s) {
        tick_work();
        if (each_tick)
            each_tick();
        double left = s - elapsed();
        if (left <= 0)
            break;
        long ns = left * 1e9 < TICK_NS ? (long)(left * 1e9) : TICK_NS;
        struct timespec ts = {0, ns};
        while (nanosleep(&ts, &ts))
            ;
    }
}

/* ---- memory ------------------------------------------------------------------------ */

static void touch(void *p, size_t size)
{
    volatile char *c = p;
    for (size_t off = 0; off < size; off += PAGE)
        c[off] = 1;
}

static int file = -1; /* the memfd the mappings map */

/* The memfd, written with size bytes before the clock starts. */
static void file_fill(size_t size)
{
    static char chunk[1 << 20];
    memset(chunk, 0x5a, sizeof chunk);
    if ((file = memfd_create("shapes", 0)) < 0)
        die("memfd_create");
    for (size_t off = 0; off < size; off += sizeof chunk)
        if (write(file, chunk, sizeof chunk) != (ssize_t)sizeof chunk)
            die("write");
}

/* A mapping of size bytes of the memfd, resident at once.  hidden: made
 * by the system call itself, which no interposer sees (as a runtime that
 * maps its own memory does): RSS outside the heap and the recorded
 * mappings, the gap's own. */
static void *map_take(size_t size, bool hidden)
{
    void *p = hidden ? (void *)syscall(SYS_mmap, NULL, size, PROT_READ | PROT_WRITE,
                                       MAP_SHARED | MAP_POPULATE, file, 0)
                     : mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, file, 0);
    if (p == MAP_FAILED)
        die("mmap");
    return p;
}

static void map_drop(void *p, size_t size, bool hidden)
{
    if (hidden)
        syscall(SYS_munmap, p, size);
    else
        munmap(p, size);
}

/* A set of heap blocks. */
typedef struct blocks_s {
    void **v;
    size_t n, size;
} blocks_t;

/* n blocks of size bytes (untouched). */
static blocks_t heap_take(size_t n, size_t size)
{
    blocks_t b = {calloc(n, sizeof(void *)), n, size};
    if (!b.v)
        die("calloc");
    for (size_t i = 0; i < n; i++)
        if (!(b.v[i] = malloc(size)))
            die("malloc");
    return b;
}

static void heap_drop(blocks_t *b)
{
    for (size_t i = 0; i < b->n; i++)
        free(b->v[i]);
    free(b->v);
    b->v = NULL;
    b->n = 0;
}

/* ---- the patterns -------------------------------------------------------------------- */

/* A mapping of size bytes from `at`, held `hold` seconds once made;
 * phases upN, downN. */
static void map_spike(int k, double at, double hold, size_t size, bool hidden)
{
    char up[16], down[16];
    snprintf(up, sizeof up, "up%d", k);
    snprintf(down, sizeof down, "down%d", k);
    until(at, NULL);
    MEMSIM_PHASE_BEGIN(up);
    void *p = map_take(size, hidden);
    MEMSIM_PHASE_END();
    until(elapsed() + hold, NULL);
    MEMSIM_PHASE_BEGIN(down);
    map_drop(p, size, hidden);
    MEMSIM_PHASE_END();
}

static void long_spike(void)
{
    map_spike(1, 1.0, 1.5, 150 * MIB, false);
    until(4.0, NULL);
}

static void short_spike(void)
{
    map_spike(1, 1.5, 0.1, 200 * MIB, false);
    until(3.0, NULL);
}

static void two_spikes(void)
{
    map_spike(1, 0.8, 0.25, 100 * MIB, false);
    map_spike(2, 2.65, 0.25, 100 * MIB, false);
    until(4.0, NULL);
}

static void heap_gap(void)
{
    until(0.5, NULL);
    MEMSIM_PHASE_BEGIN("up1");
    blocks_t b = heap_take(64 * MIB / (16 * 1024), 16 * 1024);
    MEMSIM_PHASE_END();
    until(1.5, NULL);
    MEMSIM_PHASE_BEGIN("down1");
    heap_drop(&b);
    MEMSIM_PHASE_END();
    map_spike(2, 2.5, 0.5, 128 * MIB, true);
    until(4.0, NULL);
}

static void step(void)
{
    until(1.0, NULL);
    MEMSIM_PHASE_BEGIN("up1");
    blocks_t b = heap_take(144 * MIB / (64 * 1024), 64 * 1024);
    MEMSIM_PHASE_END();
    until(4.0, NULL);
    heap_drop(&b);
}

static void sawtooth(void)
{
    for (int k = 0; k < 10; k++) {
        blocks_t b = {calloc(640, sizeof(void *)), 0, 64 * 1024};
        if (!b.v)
            die("calloc");
        double t0 = 0.4 * k;
        for (int i = 0; i < 40; i++) { /* 1 MiB every 10 ms */
            until(t0 + 0.01 * i, NULL);
            for (int j = 0; j < 16; j++)
                if (!(b.v[b.n++] = malloc(b.size)))
                    die("malloc");
        }
        until(t0 + 0.4, NULL);
        heap_drop(&b);
    }
}

static void *leaked[64];
static size_t nleaked;
static void *temps[8];
static int temp_ticks[8];

/* A tick of noisy_drift: each temporary slot is freed when its time is
 * up and refilled with a new one of 0..12 MiB held 0..4 ticks. */
static void temporaries(void)
{
    for (int i = 0; i < 8; i++) {
        if (temp_ticks[i]-- > 0)
            continue;
        free(temps[i]);
        size_t size = next_random() % (6 * MIB / 8);
        if (!(temps[i] = malloc(size)))
            die("malloc");
        temp_ticks[i] = (int)(next_random() % 5);
    }
}

static void leak(size_t size)
{
    void *p = malloc(size);
    if (!p)
        die("malloc");
    leaked[nleaked++ % 64] = p; /* never freed */
}

/* Marks an instant: a phase that ends as it begins. */
static void mark(const char *name)
{
    MEMSIM_PHASE_BEGIN(name);
    MEMSIM_PHASE_END();
}

static void noisy_drift(void)
{
    MEMSIM_PHASE_BEGIN("leak");
    mark("start");
    double t0 = elapsed();
    for (int k = 0; k < 40; k++) {
        leak(1 * MIB);
        if (k == 39) {
            mark("stop"); /* and the end: the growth lasts to the last sample */
            break;
        }
        until(t0 + 0.1 * (k + 1), temporaries);
    }
    MEMSIM_PHASE_END();
    for (int i = 0; i < 8; i++)
        free(temps[i]);
}

static void warmup_drift(void)
{
    MEMSIM_PHASE_BEGIN("up1");
    blocks_t b = heap_take(96 * MIB / (64 * 1024), 64 * 1024);
    MEMSIM_PHASE_END();
    until(1.0, NULL);
    MEMSIM_PHASE_BEGIN("down1");
    heap_drop(&b);
    MEMSIM_PHASE_END();
    MEMSIM_PHASE_BEGIN("leak");
    mark("start");
    double t0 = elapsed();
    for (int k = 0; k < 30; k++) {
        leak(2 * MIB);
        if (k == 29) {
            mark("stop");
            break;
        }
        until(t0 + 0.1 * (k + 1), NULL);
    }
    MEMSIM_PHASE_END();
}

static void flat(void)
{
    blocks_t big = heap_take(160 * MIB / (64 * 1024), 64 * 1024);
    blocks_t small = heap_take(32 * MIB / (16 * 1024), 16 * 1024);
    until(3.0, NULL);
    heap_drop(&small);
    heap_drop(&big);
}

static void holes(void)
{
    blocks_t payload = {calloc(512, sizeof(void *)), 512, 48 * 1024};
    blocks_t keys = {calloc(512, sizeof(void *)), 512, 1024};
    if (!payload.v || !keys.v)
        die("calloc");
    until(0.5, NULL);
    MEMSIM_PHASE_BEGIN("up1");
    for (size_t i = 0; i < 512; i++) {
        if (!(payload.v[i] = malloc(payload.size)) || !(keys.v[i] = malloc(keys.size)))
            die("malloc");
        touch(payload.v[i], payload.size);
        touch(keys.v[i], keys.size);
    }
    MEMSIM_PHASE_END();
    until(1.0, NULL);
    MEMSIM_PHASE_BEGIN("down1");
    heap_drop(&payload); /* a key above each: glibc cannot give the holes back */
    MEMSIM_PHASE_END();
    until(3.5, NULL);
    MEMSIM_PHASE_BEGIN("down2");
    heap_drop(&keys);
    MEMSIM_PHASE_END();
}

static const struct {
    const char *name;
    void (*run)(void);
} patterns[] = {
    {"long_spike", long_spike},   {"short_spike", short_spike},   {"two_spikes", two_spikes},
    {"heap_gap", heap_gap},       {"step", step},                 {"sawtooth", sawtooth},
    {"noisy_drift", noisy_drift}, {"warmup_drift", warmup_drift}, {"flat", flat},
    {"holes", holes},
};

int main(int argc, char **argv)
{
    size_t i = 0, n = sizeof patterns / sizeof patterns[0];
    while (argc == 2 && i < n && strcmp(argv[1], patterns[i].name))
        i++;
    if (argc != 2 || i == n) {
        fprintf(stderr, "usage: shapes PATTERN (long_spike, short_spike, two_spikes, heap_gap, "
                        "step, sawtooth, noisy_drift, warmup_drift, flat, holes)\n");
        return 2;
    }
    file_fill(200 * MIB);
    clock_gettime(CLOCK_MONOTONIC, &start);
    blocks_t base = heap_take(8 * MIB / 4096, 4096);
    patterns[i].run();
    (void)base; /* held to the exit: the last sample sees a drift's last step */
    printf("shapes %s: done in %.2f s\n", patterns[i].name, elapsed());
    return 0;
}
