/*
 * churn: allocation churn of a realistic shape, for bench/workloads.sh.
 * T threads share 80,000 slots (each owns 80,000 / T of them), filled to
 * 62.5% before the churn starts, so about 50,000 blocks are live at every
 * moment.  Each of OPS operations per thread picks one of the thread's
 * slots at random:
 *
 *   empty slot  allocate (malloc, one in ten calloc)          37.5% of ops
 *   full slot   0.4: realloc it (a new size, see below)       25%
 *               0.6: free it: three in four by this thread,   37.5%
 *                    one in four by the next thread (the block
 *                    goes through that thread's inbox, a locked
 *                    queue drained every 64 operations)
 *
 * The shares follow from the steady state: a fraction f of slots full,
 * (1 - f) = 0.6 f, so f = 0.625 and reallocs are 0.4 f = 25%.
 *
 * Sizes (sizes_draw): 88% 8..256 B (most of them under 64), 10% 256 B..4 KiB,
 * 1.6% 4..64 KiB, 0.35% 64 KiB..1 MiB, 0.05% 1..4 MiB: 2% over 4 KiB.  A
 * realloc draws a fresh size half the time and otherwise scales the
 * block by 2^u, u uniform in [-1, 1] (a buffer that grows or shrinks).
 * Every block's first bytes are written (up to 64) and carry a tag; a
 * free reads the tag of the block it frees.
 *
 * With one thread the "next thread" is the thread itself: the same share
 * of frees is deferred through its own inbox, so the mix of calls is the
 * same at every thread count.  Deterministic: each thread's calls depend
 * on its own seed only, and the checksum (the sum of the tags of every
 * block freed, which is every block) does not depend on which thread
 * freed what.  Heap events: T * OPS plus 2 * 50,000 (the fill and the
 * final frees), each a malloc, calloc, realloc or free.
 *
 *   churn THREADS OPS_PER_THREAD
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHURN_SLOTS 80000   /* over all threads */
#define CHURN_INBOX 4096    /* blocks waiting in one thread's inbox, at most (64 to 128 do) */
#define CHURN_BATCH 64      /* blocks handed over at once; operations between drains */
#define CHURN_MAX_THREADS 512

typedef struct block_s {
    uint64_t tag; /* written at allocation; summed at the free */
} block_t;

typedef struct inbox_s {
    pthread_mutex_t lock;
    block_t *item[CHURN_INBOX];
    size_t head, count; /* count items from head, modulo CHURN_INBOX */
} inbox_t;

typedef struct worker_s {
    int id;
    pthread_t thread;
    uint64_t rng;
    size_t nslots;
    block_t **slot;
    size_t *size;       /* what each slot's block was allocated with */
    block_t *out[CHURN_BATCH];
    size_t nout;        /* blocks waiting to go to the next thread */
    uint64_t freed_sum; /* tags of the blocks this thread freed */
    uint64_t calls;     /* heap calls this thread made */
} worker_t;

static int nthreads;
static long ops;
static inbox_t inbox[CHURN_MAX_THREADS];
static worker_t workers[CHURN_MAX_THREADS];

static uint64_t rng_next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* A size from the mix above. */
static size_t sizes_draw(uint64_t *x)
{
    uint64_t r = rng_next(x), u = r >> 32;
    unsigned p = (unsigned)(r % 10000);
    if (p < 8800) /* small, most under 64 B: u^2 leans toward 8 */
        return 8 + (size_t)((u % 249) * (u % 249) / 248);
    if (p < 9800)
        return 256 + (size_t)(u % (4096 - 256));
    if (p < 9960)
        return 4097 + (size_t)(u % (65536 - 4096));
    if (p < 9995)
        return 65537 + (size_t)(u % (1048576 - 65536));
    return 1048577 + (size_t)(u % (3 * 1048576));
}

static size_t sizes_resize(uint64_t *x, size_t old)
{
    uint64_t r = rng_next(x);
    if (r & 1)
        return sizes_draw(x);
    /* old * 2^u, u in [-1, 1], in 1/16 steps */
    int step = (int)((r >> 1) % 33) - 16;
    size_t s = step >= 0 ? old + old * (size_t)step / 16 : old - old * (size_t)(-step) / 32;
    return s < 8 ? 8 : s > 4u * 1048576 ? 4u * 1048576 : s;
}

static void block_fill(block_t *b, size_t size, uint64_t tag)
{
    memset(b, (int)(tag & 0xff), size < 64 ? size : 64);
    b->tag = tag;
}

static void block_free(worker_t *w, block_t *b)
{
    w->freed_sum += b->tag;
    w->calls++;
    free(b);
}

/* Hand the batch to the next thread; what its inbox cannot take is freed here. */
static void out_flush(worker_t *w)
{
    inbox_t *in = &inbox[(w->id + 1) % nthreads];
    size_t i = 0;
    pthread_mutex_lock(&in->lock);
    for (; i < w->nout && in->count < CHURN_INBOX; i++)
        in->item[(in->head + in->count++) % CHURN_INBOX] = w->out[i];
    pthread_mutex_unlock(&in->lock);
    for (; i < w->nout; i++)
        block_free(w, w->out[i]);
    w->nout = 0;
}

static void inbox_drain(worker_t *w)
{
    inbox_t *in = &inbox[w->id];
    block_t *take[CHURN_BATCH * 4];
    for (;;) {
        size_t n = 0;
        pthread_mutex_lock(&in->lock);
        while (n < sizeof take / sizeof take[0] && in->count > 0) {
            take[n++] = in->item[in->head];
            in->head = (in->head + 1) % CHURN_INBOX;
            in->count--;
        }
        pthread_mutex_unlock(&in->lock);
        for (size_t i = 0; i < n; i++)
            block_free(w, take[i]);
        if (n < sizeof take / sizeof take[0])
            return;
    }
}

static uint64_t tag_make(const worker_t *w, long i)
{
    return ((uint64_t)w->id << 40) ^ (uint64_t)i * 0x9E3779B97F4A7C15ull;
}

static void slot_alloc(worker_t *w, size_t k, long i)
{
    size_t size = sizes_draw(&w->rng);
    block_t *b = (rng_next(&w->rng) % 10 == 0) ? calloc(1, size) : malloc(size);
    if (!b) {
        fprintf(stderr, "churn: out of memory (%zu bytes)\n", size);
        exit(1);
    }
    block_fill(b, size, tag_make(w, i));
    w->slot[k] = b;
    w->size[k] = size;
    w->calls++;
}

static void *work(void *arg)
{
    worker_t *w = arg;
    long fill = 0;
    for (size_t k = 0; k < w->nslots; k++)
        if (rng_next(&w->rng) % 8 < 5) /* 62.5% */
            slot_alloc(w, k, -1 - fill++);
    for (long i = 0; i < ops; i++) {
        uint64_t r = rng_next(&w->rng);
        size_t k = (size_t)(r % w->nslots);
        unsigned choice = (unsigned)((r >> 32) % 20);
        if (!w->slot[k]) {
            slot_alloc(w, k, i);
        } else if (choice < 8) { /* 0.4: realloc */
            size_t size = sizes_resize(&w->rng, w->size[k]);
            block_t *b = realloc(w->slot[k], size);
            if (!b) {
                fprintf(stderr, "churn: out of memory (%zu bytes)\n", size);
                exit(1);
            }
            memset((char *)b + sizeof b->tag, (int)i, size < 64 ? size - sizeof b->tag : 56);
            w->slot[k] = b;
            w->size[k] = size;
            w->calls++;
        } else if (choice < 17) { /* 0.45 of the full slots: free here */
            block_free(w, w->slot[k]);
            w->slot[k] = NULL;
        } else { /* 0.15: freed by the next thread */
            w->out[w->nout++] = w->slot[k];
            w->slot[k] = NULL;
            if (w->nout == CHURN_BATCH)
                out_flush(w);
        }
        if (i % CHURN_BATCH == CHURN_BATCH - 1)
            inbox_drain(w);
    }
    out_flush(w);
    for (size_t k = 0; k < w->nslots; k++)
        if (w->slot[k])
            block_free(w, w->slot[k]);
    return NULL;
}

int main(int argc, char **argv)
{
    nthreads = argc > 1 ? atoi(argv[1]) : 1;
    ops = argc > 2 ? atol(argv[2]) : 1000000;
    if (argc > 3 || nthreads < 1 || nthreads > CHURN_MAX_THREADS || ops < 1) {
        fprintf(stderr, "usage: churn THREADS OPS_PER_THREAD\n");
        return 2;
    }
    for (int t = 0; t < nthreads; t++) {
        worker_t *w = &workers[t];
        pthread_mutex_init(&inbox[t].lock, NULL);
        w->id = t;
        w->rng = 0x9E3779B97F4A7C15ull * (uint64_t)(t + 1);
        w->nslots = CHURN_SLOTS / (size_t)nthreads;
        w->slot = calloc(w->nslots, sizeof *w->slot);
        w->size = calloc(w->nslots, sizeof *w->size);
        if (!w->slot || !w->size) {
            fprintf(stderr, "churn: out of memory\n");
            return 1;
        }
    }
    for (int t = 0; t < nthreads; t++)
        pthread_create(&workers[t].thread, NULL, work, &workers[t]);
    for (int t = 0; t < nthreads; t++)
        pthread_join(workers[t].thread, NULL);
    /* Blocks handed over after their receiver's last drain. */
    for (int t = 0; t < nthreads; t++)
        inbox_drain(&workers[t]);
    uint64_t sum = 0, calls = 0;
    for (int t = 0; t < nthreads; t++) {
        sum += workers[t].freed_sum;
        calls += workers[t].calls;
        free(workers[t].slot);
        free(workers[t].size);
    }
    printf("checksum %llu calls %llu\n", (unsigned long long)sum, (unsigned long long)calls);
    return 0;
}
