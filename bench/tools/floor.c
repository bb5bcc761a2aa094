/*
 * bench-floor: what a good allocator pays for a trace's heap operations.
 *
 *   bench-floor [--write] TRACE [COPIES]
 *
 * Reads the trace's allocs, frees and reallocs (memsim-analyze's reader,
 * any format version, compressed or not) into memory, as the replay
 * resolves them: a realloc is a free of the old block and an alloc of the
 * new one, a free of an address not live is dropped.  Then it runs that
 * sequence COPIES times (default 6, the default analysis's strategies)
 * through glibc's malloc and free, on one core, and prints one line:
 *
 *   floor: N heap operations, L live at most: glibc X ns an operation
 *   (median of COPIES; CPU Y); COPIES replays at that cost: C s on one
 *   core, C/2 on two
 *
 * With --write the operations are memsim-replay's (allocators/replay.c),
 * for the allocator's own time on them: a realloc is a realloc (one
 * operation: its block's slot kept, the allocator copying), the table
 * of blocks holds each one's pointer and size as the replay's does, and
 * each block is written as the replay writes it (its first 64 bytes, a
 * byte in every page after, its last byte; of a block whose touched
 * pages the trace gives, only as many; a realloc: the part past the old
 * size).  bench/allocators.sh runs it with each allocator preloaded
 * (the line still says "glibc": it is whichever malloc the process has).
 * A replay starts on fresh pages, so before each timed run the allocator
 * is asked to give back the free memory the reading of the trace left it
 * (malloc_trim, jemalloc's arena purge, mi_collect, tcmalloc's
 * ReleaseFreeMemory: whichever the process has): otherwise an allocator
 * that keeps freed pages would run on resident ones and pay none of the
 * page faults the replay pays.
 *
 * (bench/analyze.sh prints it beside heaptrack_print's time on the same
 * program).  The replay's six strategies cannot cost less than six
 * allocators as fast as glibc's: this is the floor under the target of
 * an analysis no slower than heaptrack_print.  Exit 0, 1 when the trace
 * cannot be read or memory runs out, 2 for a usage error.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyzer/read/reader.h"
#include "lib/grow.h"
#include "lib/hashtab.h"

/* One operation: alloc size bytes into slot (size >= 1), free slot
 * (size 0), or (resize, --write only) realloc slot's block to size. */
typedef struct op_s {
    uint64_t size;
    uint32_t slot;
    uint32_t align : 31; /* alloc: its alignment when over 16, else 0 */
    uint32_t resize : 1; /* a realloc */
    uint64_t touched;    /* alloc, realloc: the block's touched pages + 1 (the trace's), 0: all */
} op_t;

typedef struct live_s {
    uint64_t addr;
    uint64_t slot1; /* slot + 1; 0: empty */
    uint64_t op;    /* its alloc's index in ops */
} live_t;

static const hashtab_type_t live_type = {
    .slot_size = sizeof(live_t),
    .key_off = offsetof(live_t, addr),
    .mark_off = offsetof(live_t, slot1),
};

typedef struct seq_s {
    op_t *ops;
    size_t n, cap;
    uint32_t *free_slots;
    size_t nfree, cap_free;
    uint32_t nslots;
    size_t live, max_live;
    hashtab_t map;
} seq_t;

static int push(seq_t *q, op_t op)
{
    if (!grow_room((void **)&q->ops, &q->cap, q->n, sizeof *q->ops, 1 << 16))
        return -1;
    q->ops[q->n++] = op;
    return 0;
}

/* The block at addr was touched on touched - 1 pages (0: not said). */
static void on_touched(seq_t *q, uint64_t addr, uint64_t touched)
{
    live_t *s = hashtab_find(&q->map, &live_type, addr);
    if (s && touched)
        q->ops[s->op].touched = touched;
}

static int on_free(seq_t *q, uint64_t addr, uint64_t touched)
{
    live_t *s = hashtab_find(&q->map, &live_type, addr);
    if (!s)
        return 0; /* not live: the replay drops it too */
    if (touched)
        q->ops[s->op].touched = touched;
    uint32_t slot = (uint32_t)(s->slot1 - 1);
    hashtab_erase(&q->map, &live_type, s);
    if (!grow_room((void **)&q->free_slots, &q->cap_free, q->nfree, sizeof *q->free_slots, 1024))
        return -1;
    q->free_slots[q->nfree++] = slot;
    q->live--;
    return push(q, (op_t){.size = 0, .slot = slot});
}

static int on_alloc(seq_t *q, uint64_t addr, uint64_t size, uint64_t align)
{
    bool found = false;
    live_t *s = hashtab_put(&q->map, &live_type, addr, &found);
    if (!s)
        return -1;
    if (found) { /* an address allocated twice: the old block is let go */
        if (!grow_room((void **)&q->free_slots, &q->cap_free, q->nfree, sizeof *q->free_slots,
                       1024))
            return -1;
        q->free_slots[q->nfree++] = (uint32_t)(s->slot1 - 1);
        if (push(q, (op_t){.size = 0, .slot = (uint32_t)(s->slot1 - 1)}))
            return -1;
        s = hashtab_find(&q->map, &live_type, addr);
        q->live--;
    }
    uint32_t slot = q->nfree ? q->free_slots[--q->nfree] : q->nslots++;
    s->addr = addr;
    s->slot1 = (uint64_t)slot + 1;
    s->op = q->n;
    if (++q->live > q->max_live)
        q->max_live = q->live;
    return push(q, (op_t){.size = size ? size : 1,
                          .slot = slot,
                          .align = align > 16 && !(align & (align - 1)) ? (uint32_t)align : 0});
}

/* --write: a realloc of old to addr, as memsim-analyze writes it for the
 * replay (analyzer/consume/allocators.c): the old block's slot kept; an
 * old block not live is a realloc(NULL, size), an alloc. */
static int on_realloc(seq_t *q, uint64_t old, uint64_t addr, uint64_t size, uint64_t touched)
{
    live_t *s = hashtab_find(&q->map, &live_type, old);
    if (!s)
        return on_alloc(q, addr, size, 16);
    if (touched)
        q->ops[s->op].touched = touched;
    uint32_t slot = (uint32_t)(s->slot1 - 1);
    hashtab_erase(&q->map, &live_type, s);
    if (addr != old && hashtab_find(&q->map, &live_type, addr) && on_free(q, addr, 0))
        return -1;
    bool found = false;
    s = hashtab_put(&q->map, &live_type, addr, &found);
    if (!s)
        return -1;
    s->addr = addr;
    s->slot1 = (uint64_t)slot + 1;
    s->op = q->n;
    return push(q, (op_t){.size = size, .slot = slot, .resize = 1});
}

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}

static int by_value(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* As memsim-replay fills [from, size) of block p (allocators/replay.c). */
static void fill(char *p, uint64_t from, uint64_t size, uint64_t touched)
{
    if (!p || size <= from)
        return;
    uintptr_t lo = (uintptr_t)p + from, hi = (uintptr_t)p + size;
    uintptr_t first = ((uintptr_t)p + 4095) & ~(uintptr_t)4095, end = hi & ~(uintptr_t)4095;
    uint64_t head = size - from < 64 ? size - from : 64;
    if (touched && end > first && touched - 1 < (end - first) / 4096) {
        if (lo < first)
            memset((char *)lo, 0x5a, head < first - lo ? head : first - lo);
        uintptr_t stop = first + (uintptr_t)(touched - 1) * 4096;
        for (uintptr_t a = lo > first ? ((lo - 1) | 4095) + 1 : first; a < stop; a += 4096)
            *(volatile char *)a = 1;
        return;
    }
    memset(p + from, 0x5a, head);
    for (uintptr_t a = (lo | 4095) + 1; a < hi; a += 4096)
        *(volatile char *)a = 1;
    p[size - 1] = 1;
}

/* A block in the --write table, as the replay's. */
typedef struct block_s {
    char *p;
    uint64_t size;
} block_t;

/* One timed run of the operations, --write: memsim-replay's calls. */
static uint64_t run_written(const seq_t *q, block_t *tab)
{
    uint64_t t0 = now_ns();
    for (size_t i = 0; i < q->n; i++) {
        const op_t *op = &q->ops[i];
        block_t *b = &tab[op->slot];
        if (op->resize) {
            char *p = realloc(b->p, op->size);
            if (!p && op->size)
                continue; /* the old block stays */
            uint64_t old = b->p ? b->size : 0;
            *b = (block_t){p, op->size};
            fill(p, old, op->size, op->touched);
        } else if (!op->size) {
            free(b->p);
            b->p = NULL;
        } else {
            b->p = op->align ? aligned_alloc(op->align, (op->size + op->align - 1) &
                                                            ~(uint64_t)(op->align - 1))
                             : malloc(op->size);
            b->size = op->size;
            fill(b->p, 0, op->size, op->touched);
        }
    }
    return now_ns() - t0;
}

/* Each allocator's call that returns its free memory to the system,
 * those the process has (--write). */
static void give_back(void)
{
    int (*trim)(size_t) = (int (*)(size_t))dlsym(RTLD_DEFAULT, "malloc_trim");
    int (*mallctl)(const char *, void *, size_t *, void *, size_t) =
        (int (*)(const char *, void *, size_t *, void *, size_t))dlsym(RTLD_DEFAULT, "mallctl");
    void (*mi_collect)(bool) = (void (*)(bool))dlsym(RTLD_DEFAULT, "mi_collect");
    void (*tc_release)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "MallocExtension_ReleaseFreeMemory");
    if (trim)
        trim(0);
    if (mallctl)
        mallctl("arena.4096.purge", NULL, NULL, NULL, 0); /* 4096: MALLCTL_ARENAS_ALL */
    if (mi_collect)
        mi_collect(true);
    if (tc_release)
        tc_release();
}

int main(int argc, char **argv)
{
    bool write = argc > 1 && !strcmp(argv[1], "--write");
    if (write) {
        argv++;
        argc--;
    }
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: bench-floor [--write] TRACE [COPIES]\n");
        return 2;
    }
    char *end;
    long copies = argc == 3 ? strtol(argv[2], &end, 10) : 6;
    if (argc == 3 && (*end || copies < 1 || copies > 64)) {
        fprintf(stderr, "bench-floor: COPIES must be 1 to 64, not '%s'\n", argv[2]);
        return 2;
    }
    reader_t r;
    if (reader_open(&r, argv[1]))
        return 1;
    seq_t q = {0};
    event_t e;
    int bad = 0;
    while (!bad && reader_next(&r, &e)) {
        if (e.type == EV_ALLOC)
            bad = on_alloc(&q, e.addr, e.size, e.align);
        else if (e.type == EV_FREE)
            bad = on_free(&q, e.addr, e.touched);
        else if (e.type == EV_REALLOC && write)
            bad = on_realloc(&q, e.old_addr, e.addr, e.size, e.touched);
        else if (e.type == EV_REALLOC)
            bad = on_free(&q, e.old_addr, e.touched) || on_alloc(&q, e.addr, e.size, 16);
        else if (e.type == EV_TOUCHED)
            on_touched(&q, e.addr, e.touched);
    }
    reader_close(&r);
    hashtab_fini(&q.map, &live_type);
    void **ptr = calloc(q.nslots ? q.nslots : 1, sizeof *ptr);
    block_t *tab = write ? calloc(q.nslots ? q.nslots : 1, sizeof *tab) : NULL;
    uint64_t *ns = calloc((size_t)copies, sizeof *ns), *cpu = calloc((size_t)copies, sizeof *cpu);
    if (bad || !ptr || !ns || !cpu || (write && !tab)) {
        fprintf(stderr, "bench-floor: out of memory\n");
        return 1;
    }
    if (!q.n) {
        fprintf(stderr, "bench-floor: %s: no heap operations\n", argv[1]);
        return 1;
    }
    /* After a run, exactly the slots whose last operation was an alloc
     * hold blocks: those are freed (untimed) before the next. */
    uint8_t *last_alloc = calloc(q.nslots, 1);
    if (!last_alloc) {
        fprintf(stderr, "bench-floor: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < q.n; i++)
        last_alloc[q.ops[i].slot] = q.ops[i].size != 0;
    for (long c = 0; c < copies && write; c++) {
        memset(tab, 0, q.nslots * sizeof *tab);
        give_back();
        uint64_t c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
        ns[c] = run_written(&q, tab);
        cpu[c] = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - c0;
        for (uint32_t i = 0; i < q.nslots; i++)
            free(tab[i].p);
    }
    for (long c = 0; c < copies && !write; c++) {
        memset(ptr, 0, q.nslots * sizeof *ptr);
        uint64_t t0 = now_ns(), c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
        for (size_t i = 0; i < q.n; i++) {
            const op_t *op = &q.ops[i];
            if (!op->size)
                free(ptr[op->slot]);
            else if (op->align)
                ptr[op->slot] = aligned_alloc(
                    op->align, (op->size + op->align - 1) & ~(uint64_t)(op->align - 1));
            else
                ptr[op->slot] = malloc(op->size);
        }
        ns[c] = now_ns() - t0;
        cpu[c] = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - c0;
        for (uint32_t i = 0; i < q.nslots; i++)
            if (last_alloc[i])
                free(ptr[i]);
    }
    uint64_t sum = 0;
    for (long c = 0; c < copies; c++)
        sum += ns[c];
    qsort(ns, (size_t)copies, sizeof *ns, by_value);
    qsort(cpu, (size_t)copies, sizeof *cpu, by_value);
    double per = (double)ns[copies / 2] / (double)q.n;
    double per_cpu = (double)cpu[copies / 2] / (double)q.n;
    double all = (double)sum / 1e9;
    printf("floor: %zu heap operations, %zu live at most: glibc %.1f ns an operation (median of "
           "%ld; CPU %.1f); %ld replays at that cost: %.2f s on one core, %.2f on two\n",
           q.n, q.max_live, per, copies, per_cpu, copies, all, all / 2);
    free(last_alloc);
    free(ns);
    free(cpu);
    free(ptr);
    free(tab);
    free(q.ops);
    free(q.free_slots);
    return 0;
}
