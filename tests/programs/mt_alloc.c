/*
 * mt_alloc: many threads, every allocation function, one exact count.
 *
 *   mt_alloc [THREADS [OPS_PER_THREAD [SEED]]]     defaults 16, 62500, 1
 *
 * Each thread runs a seeded mix of malloc, calloc, realloc (growing,
 * shrinking, and realloc(NULL, n)), posix_memalign, aligned_alloc and
 * free over its own 64 slots.  Every size requested is 4096 * k + 777
 * (k in 0..15), so size % 4096 == 777 marks this program's own blocks in
 * a trace.  Blocks carry a pattern that is checked when they move or are
 * freed.  At the end everything is freed and one line is printed:
 *
 *   threads=T ops=N calls=C checksum=X
 *
 * calls is the number of calls that created or moved a block (every
 * successful malloc, calloc, posix_memalign, aligned_alloc and realloc,
 * realloc(NULL, n) included): a trace must hold exactly that many tagged
 * alloc and realloc records.  The output depends only on the arguments.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 64
#define TAG_MOD 4096
#define TAG_REM 777
#define MARK 64 /* bytes of pattern at each end of a block */

typedef struct worker_s {
    unsigned index;
    unsigned long ops;
    uint64_t seed;
    unsigned long calls;
    uint64_t checksum;
    int bad;
    pthread_t thread;
} worker_t;

typedef struct slot_s {
    unsigned char *p;
    size_t size;
    unsigned char fill;
} slot_t;

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static size_t tagged_size(uint64_t r) { return (size_t)TAG_MOD * (r % 16) + TAG_REM; }

static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

/* Pattern on the first and last MARK bytes (they may overlap). */
static void mark(slot_t *s)
{
    size_t n = min_size(MARK, s->size);
    memset(s->p, s->fill, n);
    memset(s->p + s->size - n, s->fill, n);
}

/* Check the pattern of block s over its first `keep` bytes (all of it,
 * or what a realloc preserves): the marked bytes are the first and the
 * last MARK of s->size.  What was read goes into the checksum. */
static void verify(worker_t *w, const unsigned char *p, const slot_t *s, size_t keep)
{
    size_t n = min_size(MARK, s->size);
    for (size_t i = 0; i < n && i < keep; i++) {
        if (p[i] != s->fill)
            w->bad = 1;
        w->checksum = w->checksum * 31 + p[i];
    }
    for (size_t i = s->size - n; i < s->size && i < keep; i++) {
        if (p[i] != s->fill)
            w->bad = 1;
        w->checksum = w->checksum * 31 + p[i];
    }
}

static void place(worker_t *w, slot_t *s, void *p, size_t size)
{
    s->p = p;
    s->size = size;
    s->fill = (unsigned char)splitmix(&w->seed);
    mark(s);
    w->calls++;
}

static void *run(void *arg)
{
    worker_t *w = arg;
    slot_t slots[SLOTS];
    memset(slots, 0, sizeof slots);
    static const size_t aligns[] = {16, 64, 256, 4096};
    for (unsigned long op = 0; op < w->ops; op++) {
        uint64_t r = splitmix(&w->seed);
        slot_t *s = &slots[r % SLOTS];
        unsigned what = (unsigned)((r >> 8) % 8);
        size_t size = tagged_size(r >> 16);
        size_t align = aligns[(r >> 24) % 4];
        if (!s->p) {
            void *p = NULL;
            switch (what % 5) {
            case 0:
                p = malloc(size);
                break;
            case 1:
                p = calloc(1, size);
                if (p) {
                    const unsigned char *c = p;
                    if (c[0] || c[size - 1] || c[size / 2])
                        w->bad = 1;
                }
                break;
            case 2:
                p = realloc(NULL, size);
                break;
            case 3:
                if (posix_memalign(&p, align, size))
                    p = NULL;
                else if ((uintptr_t)p % align)
                    w->bad = 1;
                break;
            default:
                p = aligned_alloc(align, size);
                if (p && (uintptr_t)p % align)
                    w->bad = 1;
                break;
            }
            if (!p) {
                w->bad = 1;
                continue;
            }
            place(w, s, p, size);
        } else if (what < 4) {
            verify(w, s->p, s, s->size);
            free(s->p);
            s->p = NULL;
        } else {
            /* Grow or shrink: never the same size class twice in a row. */
            if (size == s->size)
                size = tagged_size((r >> 16) + 1 + (what & 1) * 6);
            size_t keep = min_size(s->size, size);
            verify(w, s->p, s, keep);
            unsigned char *p = realloc(s->p, size);
            if (!p) {
                w->bad = 1;
                continue;
            }
            verify(w, p, s, keep); /* what the block kept */
            place(w, s, p, size);
        }
    }
    for (unsigned i = 0; i < SLOTS; i++)
        if (slots[i].p) {
            verify(w, slots[i].p, &slots[i], slots[i].size);
            free(slots[i].p);
        }
    return NULL;
}

static unsigned long arg(int argc, char **argv, int i, unsigned long dflt)
{
    if (argc <= i)
        return dflt;
    char *end;
    unsigned long v = strtoul(argv[i], &end, 10);
    if (*argv[i] == '\0' || *end) {
        fprintf(stderr, "mt_alloc: \"%s\" is not a whole number\n", argv[i]);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    unsigned long threads = arg(argc, argv, 1, 16);
    unsigned long ops = arg(argc, argv, 2, 62500);
    unsigned long seed = arg(argc, argv, 3, 1);
    if (threads < 1 || threads > 1024) {
        fprintf(stderr, "mt_alloc: threads must be 1..1024\n");
        return 2;
    }
    /* The workers array itself is allocated by static storage: only the
     * workers' own calls carry the tag. */
    static worker_t workers[1024];
    for (unsigned long i = 0; i < threads; i++) {
        workers[i] = (worker_t){.index = (unsigned)i, .ops = ops,
                                .seed = seed * 0x100000001b3ull + i};
        if (pthread_create(&workers[i].thread, NULL, run, &workers[i])) {
            fprintf(stderr, "mt_alloc: pthread_create failed\n");
            return 1;
        }
    }
    unsigned long calls = 0;
    uint64_t checksum = 0;
    int bad = 0;
    for (unsigned long i = 0; i < threads; i++) {
        pthread_join(workers[i].thread, NULL);
        calls += workers[i].calls;
        checksum = checksum * 1099511628211ull ^ workers[i].checksum;
        bad |= workers[i].bad;
    }
    printf("threads=%lu ops=%lu calls=%lu checksum=%016llx\n", threads, threads * ops, calls,
           (unsigned long long)checksum);
    if (bad) {
        fprintf(stderr, "mt_alloc: a block lost its contents or alignment\n");
        return 1;
    }
    return 0;
}
