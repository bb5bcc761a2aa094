/*
 * memsim-replay: a trace's heap operations through the allocator of this
 * process (the one LD_PRELOAD put ahead of glibc's, or glibc's), to
 * measure what that allocator costs in memory and time.
 *
 *   memsim-replay [--mallopt NAME=VALUE]... [--sample-ms MS] OPLOG
 *
 * OPLOG is an operation file (allocators/oplog.h): a path, or fd:N for a
 * descriptor the parent left open.  memsim-analyze --allocators starts
 * one memsim-replay per allocator, all at once (analyzer/consume/allocators.c).
 *
 * How it measures only the allocator:
 *   - Everything of its own is set up before the replay starts: the
 *     operation file is mapped and read in whole (MAP_POPULATE), the
 *     table of live pointers is a shared mapping touched in whole, every
 *     replay thread exists and has touched its stack, and every page of
 *     the loaded objects' files is read (prefault_object).  Then the
 *     peak RSS is reset to the current RSS (/proc/self/clear_refs, 5),
 *     which is the baseline.  During the replay nothing but the allocator and the
 *     blocks it hands out changes the RSS: this program allocates
 *     nothing itself (no stdio, no malloc) until the replay has ended.
 *   - Peak RSS: VmHWM at the end minus the baseline (the kernel's own
 *     peak: no sample can miss it).  RSS over time: /proc/self/statm
 *     read after every `every` operations (by count) and every MS
 *     milliseconds by a sampling thread (by time, default 10; the
 *     interval doubles when its table fills).  The RSS held at the end
 *     (after the last free: the trace's leaks still live) likewise.
 *   - Each block is written once as it is handed out, so that its pages
 *     are resident as the program's were: its first 64 bytes, one byte
 *     in every page after, and its last byte (a realloc: the part past
 *     the old size; the allocator copies the rest); a large block whose
 *     touched pages the trace gives (oplog.h), only as many pages, the
 *     first (fill).
 *   - Threads: one per trace thread, trace thread 0 (the program's main
 *     thread: the first to allocate) on this process's main thread, the
 *     others on threads it starts, so that an allocator that treats the
 *     main thread apart (glibc's main arena, grown by brk; the others get
 *     mapped arenas) sees the program's structure.  Windows (oplog.h) replay one after
 *     the other; inside one, each thread replays its part in the trace's
 *     order while the others replay theirs.  The thread that finishes a
 *     window's last part starts the next, waking only that window's
 *     threads (a futex each): a trace of one thread replays without a
 *     system call between operations.
 *   - A function the preloaded allocator does not define (jemalloc has
 *     no pvalloc, say) would come from glibc and mix two heaps: such a
 *     call is made through the allocator's posix_memalign instead, with
 *     the same alignment and size (counted in "substituted").
 *
 * Output: one JSON object on stdout (fields in docs/analysis-format.md,
 * "allocators"); exit 0.  A bad operation file: one line on stderr,
 * exit 2.  Out of memory before the replay: one line, exit 1.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <linux/futex.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lib/procfs.h"
#include "allocators/oplog.h"

#define CMD "memsim-replay"
#define MAX_MALLOPT 16
#define TIME_SAMPLES 4096  /* the sampling thread's table; thinned by half when full */
#define COUNT_SAMPLES 2048 /* samples by operation count, at most */
#define SPIN 16            /* polls of the window before sleeping (allocators-2026-12-05f.txt) */

/* ---- the file ---------------------------------------------------------------------- */

/* One thread's part of one window. */
typedef struct entry_s {
    uint64_t window;
    const oplog_op_t *ops;
    uint32_t count;
} entry_t;

typedef struct slot_s {
    char *p;        /* the live block, or NULL */
    uint64_t size;  /* its size, as asked */
} slot_t;

typedef struct sample_s {
    uint64_t ns;    /* since the replay started */
    uint64_t ops;   /* operations done then (by all threads) */
    uint64_t rss;   /* bytes over the baseline */
} sample_t;

/* A word of its own cache line: each thread sleeps on one. */
typedef struct wake_s {
    _Atomic uint32_t word;
    char pad[60];
} wake_t;

static struct {
    const oplog_header_t *h;
    const oplog_window_t **windows;   /* each window's header */
    entry_t **entries;                /* per thread: its parts, in window order */
    uint64_t *nentries;               /* per thread */
    slot_t *table;                    /* nslots */
    _Atomic uint32_t *remaining;      /* per window: parts not yet replayed */
    wake_t *wake;                     /* per thread */
    _Atomic uint64_t cur;             /* the window being replayed */
    _Atomic uint32_t go;              /* 1: the replay started */
    _Atomic uint64_t done_ops;
    _Atomic uint64_t failed;
    uint64_t every;                   /* operations between samples by count */
    sample_t *count_samples;
    _Atomic uint32_t ncount;
    sample_t *time_samples;
    uint32_t ntime;
    _Atomic uint32_t finished;        /* the sampling thread stops */
    uint64_t sample_ms;
    int statm;                        /* /proc/self/statm, open */
    long page;
    uint64_t base_rss;
    struct timespec t0;
    /* the calls, from the allocator malloc comes from */
    void *(*f_memalign)(size_t, size_t);
    int (*f_posix_memalign)(void **, size_t, size_t);
    void *(*f_aligned_alloc)(size_t, size_t);
    void *(*f_valloc)(size_t);
    void *(*f_pvalloc)(size_t);
    unsigned substituted;             /* bit per oplog_kind_t made through posix_memalign */
} R;

static void *map_anon(uint64_t bytes, bool shared)
{
    void *p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE,
                   (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static __attribute__((noreturn)) void bad(const char *what)
{
    fprintf(stderr, "%s: %s\n", CMD, what);
    exit(2);
}

/* Map the file and index it: each thread's parts.  Every count, slot,
 * thread and kind is checked here, once, so the replay can trust them. */
static void load(int fd)
{
    struct stat st;
    if (fstat(fd, &st) || st.st_size < (off_t)sizeof(oplog_header_t))
        bad("the operation file is shorter than its header");
    const char *base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (base == MAP_FAILED)
        bad("cannot map the operation file");
    const oplog_header_t *h = (const void *)base;
    if (h->magic != OPLOG_MAGIC || h->version != OPLOG_VERSION)
        bad("not an operation file of this version (allocators/oplog.h)");
    if (h->bytes != (uint64_t)st.st_size || !h->nthreads || h->nthreads > OPLOG_MAX_THREADS ||
        h->nslots >= UINT32_MAX)
        bad("the operation file's header does not match its length or limits");
    R.h = h;
    R.windows = map_anon(h->nwindows * sizeof *R.windows, false);
    R.nentries = map_anon(h->nthreads * sizeof *R.nentries, false);
    R.entries = map_anon(h->nthreads * sizeof *R.entries, false);
    R.remaining = map_anon(h->nwindows * sizeof *R.remaining, false);
    R.wake = map_anon(h->nthreads * sizeof *R.wake, false);
    if (!R.windows || !R.nentries || !R.entries || !R.remaining || !R.wake) {
        fprintf(stderr, "%s: out of memory\n", CMD);
        exit(1);
    }
    /* two passes: count each thread's parts, then fill them in */
    for (int pass = 0; pass < 2; pass++) {
        uint64_t at = sizeof *h, ops = 0;
        for (uint64_t w = 0; w < h->nwindows; w++) {
            if (at + sizeof(oplog_window_t) > h->bytes)
                bad("the operation file ends inside a window");
            const oplog_window_t *win = (const void *)(base + at);
            uint64_t parts_end = at + sizeof *win + (uint64_t)win->nparts * sizeof(oplog_part_t);
            if (!win->nparts || win->nparts > h->nthreads || parts_end > h->bytes ||
                parts_end + (uint64_t)win->nops * sizeof(oplog_op_t) > h->bytes)
                bad("a window's parts do not fit the operation file");
            const oplog_part_t *parts = (const void *)(win + 1);
            const oplog_op_t *op = (const void *)(base + parts_end);
            uint64_t sum = 0;
            for (uint32_t k = 0; k < win->nparts; k++) {
                const oplog_part_t *p = &parts[k];
                if (p->thread >= h->nthreads || !p->count)
                    bad("a window's part names no thread of the file, or no operation");
                if (pass == 0) {
                    R.nentries[p->thread]++;
                    for (uint32_t i = 0; i < p->count; i++) {
                        const oplog_op_t *o = &op[sum + i];
                        if (o->slot >= h->nslots || o->kind >= OPLOG_KINDS || o->align_log2 > 40)
                            bad("an operation with a slot, kind or alignment out of range");
                    }
                } else {
                    R.entries[p->thread][R.nentries[p->thread]++] =
                        (entry_t){.window = w, .ops = op + sum, .count = p->count};
                }
                sum += p->count;
            }
            if (sum != win->nops)
                bad("a window's parts do not add up to its operations");
            if (pass == 0) {
                R.windows[w] = win;
                R.remaining[w] = win->nparts;
            }
            at = parts_end + sum * sizeof(oplog_op_t);
            ops += sum;
        }
        if (ops != h->nops || at != h->bytes)
            bad("the operation file's windows do not add up to its header");
        if (pass == 0)
            for (uint32_t t = 0; t < h->nthreads; t++) {
                R.entries[t] = map_anon(R.nentries[t] * sizeof(entry_t), false);
                if (!R.entries[t]) {
                    fprintf(stderr, "%s: out of memory\n", CMD);
                    exit(1);
                }
                R.nentries[t] = 0;
            }
    }
}

/* ---- measuring --------------------------------------------------------------------- */

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)(t.tv_sec - R.t0.tv_sec) * 1000000000ull + (uint64_t)t.tv_nsec -
           (uint64_t)R.t0.tv_nsec;
}

/* The resident bytes now (statm's second field): no allocation. */
static uint64_t rss_now(void)
{
    char buf[128];
    ssize_t n = pread(R.statm, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    const char *p = strchr(buf, ' ');
    return p ? strtoull(p + 1, NULL, 10) * (uint64_t)R.page : 0;
}

static uint64_t over_base(uint64_t rss) { return rss > R.base_rss ? rss - R.base_rss : 0; }

/* The process's peak RSS (VmHWM) in bytes, or 0. */
static uint64_t peak_rss(void)
{
    procfs_status_t st;
    return procfs_read_status(0, &st) ? 0 : st.hwm;
}

static void sample_by_count(uint64_t before, uint64_t after)
{
    if (before / R.every == after / R.every)
        return;
    uint32_t i = atomic_fetch_add(&R.ncount, 1);
    if (i < COUNT_SAMPLES)
        R.count_samples[i] = (sample_t){now_ns(), after, over_base(rss_now())};
}

static void *sampler(void *arg)
{
    (void)arg;
    uint64_t ms = R.sample_ms;
    while (!atomic_load(&R.go))
        usleep(100);
    while (!atomic_load(&R.finished)) {
        struct timespec d = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};
        nanosleep(&d, NULL);
        if (atomic_load(&R.finished))
            break;
        if (R.ntime == TIME_SAMPLES) { /* keep every other one; sample half as often */
            for (uint32_t i = 0; i < TIME_SAMPLES / 2; i++)
                R.time_samples[i] = R.time_samples[2 * i + 1];
            R.ntime = TIME_SAMPLES / 2;
            ms *= 2;
        }
        R.time_samples[R.ntime++] =
            (sample_t){now_ns(), atomic_load(&R.done_ops), over_base(rss_now())};
    }
    return NULL;
}

/* ---- replaying --------------------------------------------------------------------- */

/* Write [from, size) of block p as a program fills it: its first 64
 * bytes, a byte in every page after, the last byte.  touched (the
 * operation's: oplog.h), when not 0 and short of the block's interior
 * pages (the whole pages inside it, preload/touched.h), holds it to the
 * part of the head page the 64 bytes reach before the interior and the
 * first touched - 1 interior pages: a block the program wrote from its
 * start and left the rest of, as a buffer or an obstack chunk does
 * (where the untouched pages lie matters only to an allocator that
 * backs part of a block, and to none that backs whole pages). */
static inline void fill(char *p, uint64_t from, uint64_t size, uint32_t touched)
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
    uintptr_t next_page = (lo | 4095) + 1;
    for (uintptr_t a = next_page; a < hi; a += 4096)
        *(volatile char *)a = 1;
    p[size - 1] = 1;
}

static void *aligned(const oplog_op_t *op)
{
    size_t align = (size_t)1 << op->align_log2, size = (size_t)op->size;
    void *p = NULL;
    switch (op->kind) {
    case OPLOG_MEMALIGN:
        if (R.f_memalign)
            return R.f_memalign(align, size);
        break;
    case OPLOG_ALIGNED_ALLOC:
        if (R.f_aligned_alloc)
            return R.f_aligned_alloc(align, size);
        break;
    case OPLOG_VALLOC:
        if (R.f_valloc)
            return R.f_valloc(size);
        align = (size_t)R.page;
        break;
    case OPLOG_PVALLOC:
        if (R.f_pvalloc)
            return R.f_pvalloc(size);
        align = (size_t)R.page;
        size = (size + align - 1) & ~(align - 1);
        break;
    default:
        break;
    }
    if (align < sizeof(void *))
        align = sizeof(void *);
    return R.f_posix_memalign(&p, align, size) ? NULL : p;
}

static void run_op(const oplog_op_t *op, uint64_t *failed)
{
    slot_t *s = &R.table[op->slot];
    void *p;
    switch (op->kind) {
    case OPLOG_FREE:
        free(s->p);
        s->p = NULL;
        return;
    case OPLOG_MALLOC:
        p = malloc(op->size);
        break;
    case OPLOG_CALLOC:
        p = calloc(1, op->size);
        break;
    case OPLOG_REALLOC: {
        p = realloc(s->p, op->size);
        if (!p && op->size) {
            (*failed)++;
            return; /* the old block stays */
        }
        uint64_t old = s->p ? s->size : 0;
        s->p = p;
        s->size = op->size;
        fill(p, old, op->size, op->touched);
        return;
    }
    default:
        p = aligned(op);
        break;
    }
    if (!p)
        (*failed)++;
    s->p = p;
    s->size = op->size;
    fill(p, 0, op->size, op->touched);
}

static void futex_wait(_Atomic uint32_t *w, uint32_t seen)
{
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *w)
{
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Until window w is the one being replayed. */
static void wait_turn(uint32_t t, uint64_t w)
{
    for (int i = 0; i < SPIN; i++) {
        if (atomic_load_explicit(&R.cur, memory_order_acquire) == w)
            return;
        __builtin_ia32_pause();
    }
    for (;;) {
        uint32_t seen = atomic_load(&R.wake[t].word);
        if (atomic_load_explicit(&R.cur, memory_order_acquire) == w)
            return;
        futex_wait(&R.wake[t].word, seen);
    }
}

/* Thread t is done with its part of window w: the last part starts the next. */
static void finish_window(uint32_t t, uint64_t w)
{
    if (atomic_fetch_sub_explicit(&R.remaining[w], 1, memory_order_acq_rel) != 1)
        return;
    atomic_store_explicit(&R.cur, w + 1, memory_order_release);
    if (w + 1 >= R.h->nwindows)
        return;
    const oplog_window_t *next = R.windows[w + 1];
    const oplog_part_t *parts = (const void *)(next + 1);
    for (uint32_t k = 0; k < next->nparts; k++)
        if (parts[k].thread != t) {
            atomic_fetch_add(&R.wake[parts[k].thread].word, 1);
            futex_wake(&R.wake[parts[k].thread].word);
        }
}

/* Stack the thread touches before the baseline, so that it is part of it. */
#define STACK_TOUCH (64 * 1024)

static __attribute__((noinline)) void touch_stack(void)
{
    volatile char pad[STACK_TOUCH];
    for (size_t i = 0; i < sizeof pad; i += 4096)
        pad[i] = 0;
}

/* Every loaded object's file-backed pages (its code and read-only data,
 * the file's part of its data), read once before the baseline: a page
 * of code first run during the replay (the allocator's own: some 130
 * KiB of tcmalloc's on sqlite3's trace) would count in the peak RSS as
 * if the allocator held it, where a real run's heap RSS counts only
 * the allocator's anonymous memory (allocators/meter.c). */
static int prefault_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size, (void)arg;
    uintptr_t pg = (uintptr_t)R.page;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_R) || !ph->p_filesz)
            continue;
        uintptr_t at = (info->dlpi_addr + ph->p_vaddr) & ~(pg - 1);
        uintptr_t end = info->dlpi_addr + ph->p_vaddr + ph->p_filesz;
        for (; at < end; at += pg)
            (void)*(volatile const char *)at;
    }
    return 0;
}

static _Atomic uint32_t ready;

/* Thread t's parts, window by window, once the replay has started. */
static void replay_parts(uint32_t t)
{
    uint64_t failed = 0;
    for (uint64_t i = 0; i < R.nentries[t]; i++) {
        const entry_t *e = &R.entries[t][i];
        wait_turn(t, e->window);
        for (uint32_t k = 0; k < e->count; k++)
            run_op(&e->ops[k], &failed);
        uint64_t before = atomic_fetch_add(&R.done_ops, e->count);
        sample_by_count(before, before + e->count);
        finish_window(t, e->window);
    }
    atomic_fetch_add(&R.failed, failed);
}

/* A started thread: trace thread arg, from when the replay starts. */
static void *replayer(void *arg)
{
    uint32_t t = (uint32_t)(uintptr_t)arg;
    touch_stack();
    atomic_fetch_add(&ready, 1);
    while (!atomic_load(&R.go)) {
        uint32_t seen = atomic_load(&R.wake[t].word);
        if (atomic_load(&R.go))
            break;
        futex_wait(&R.wake[t].word, seen);
    }
    replay_parts(t);
    return NULL;
}

/* ---- set-up --------------------------------------------------------------------------- */

static const struct {
    const char *name;
    int param;
} mallopts[] = {
    {"M_ARENA_MAX", M_ARENA_MAX},       {"M_ARENA_TEST", M_ARENA_TEST},
    {"M_MMAP_THRESHOLD", M_MMAP_THRESHOLD}, {"M_MMAP_MAX", M_MMAP_MAX},
    {"M_TRIM_THRESHOLD", M_TRIM_THRESHOLD}, {"M_TOP_PAD", M_TOP_PAD},
    {"M_MXFAST", M_MXFAST},             {"M_PERTURB", M_PERTURB},
};

static int apply_mallopt(const char *spec)
{
    const char *eq = strchr(spec, '=');
    if (!eq)
        return -1;
    for (size_t i = 0; i < sizeof mallopts / sizeof mallopts[0]; i++)
        if (strlen(mallopts[i].name) == (size_t)(eq - spec) &&
            !strncmp(spec, mallopts[i].name, (size_t)(eq - spec))) {
            char *end;
            long v = strtol(eq + 1, &end, 10);
            if (*end || end == eq + 1)
                return -1;
            return mallopt(mallopts[i].param, (int)v) == 1 ? 0 : -1;
        }
    return -1;
}

/* The object that defines fn, by dladdr. */
static const char *owner(void *fn)
{
    Dl_info info;
    return fn && dladdr(fn, &info) && info.dli_fname ? info.dli_fname : "";
}

/* fn when it comes from the same object as malloc, else NULL (and its
 * kind's bit in substituted). */
static void *same_heap(const char *name, unsigned kind_bit)
{
    void *fn = dlsym(RTLD_DEFAULT, name);
    if (fn && !strcmp(owner(fn), owner((void *)malloc)))
        return fn;
    R.substituted |= kind_bit;
    return NULL;
}

static void find_calls(void)
{
    R.f_posix_memalign = (int (*)(void **, size_t, size_t))dlsym(RTLD_DEFAULT, "posix_memalign");
    if (!R.f_posix_memalign)
        R.f_posix_memalign = posix_memalign;
    R.f_memalign = (void *(*)(size_t, size_t))same_heap("memalign", 1u << OPLOG_MEMALIGN);
    R.f_aligned_alloc = (void *(*)(size_t, size_t))same_heap("aligned_alloc", 1u << OPLOG_ALIGNED_ALLOC);
    R.f_valloc = (void *(*)(size_t))same_heap("valloc", 1u << OPLOG_VALLOC);
    R.f_pvalloc = (void *(*)(size_t))same_heap("pvalloc", 1u << OPLOG_PVALLOC);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: %s [--mallopt NAME=VALUE]... [--sample-ms MS] OPLOG\n"
               "Replay an operation file (memsim-analyze --allocators writes it) through this\n"
               "process's allocator; print its figures as one JSON object.\n", CMD);
}

static uint64_t field_us(struct timeval tv)
{
    return (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
}

static double secs(uint64_t ns) { return (double)ns / 1e9; }

static void print_samples(const char *name, const sample_t *v, uint32_t n)
{
    printf(",\"%s\":[", name);
    for (uint32_t i = 0; i < n; i++)
        printf("%s[%.6f,%llu,%llu]", i ? "," : "", secs(v[i].ns), (unsigned long long)v[i].ops,
               (unsigned long long)v[i].rss);
    printf("]");
}

/* The command line: settings into opts, the operation file's descriptor
 * into *fd.  Returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, const char **opts, int *nopts, int *fd)
{
    R.sample_ms = 10;
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
        if (!strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        }
        if (i + 1 >= argc) {
            usage(stderr);
            return 2;
        }
        if (!strcmp(argv[i], "--mallopt") && *nopts < MAX_MALLOPT) {
            opts[(*nopts)++] = argv[++i];
        } else if (!strcmp(argv[i], "--sample-ms")) {
            char *end;
            R.sample_ms = strtoull(argv[++i], &end, 10);
            if (*end || !R.sample_ms || R.sample_ms > 60000)
                bad("--sample-ms: 1 to 60000 milliseconds");
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (i != argc - 1) {
        usage(stderr);
        return 2;
    }
    if (!strncmp(argv[i], "fd:", 3))
        *fd = atoi(argv[i] + 3);
    else if ((*fd = open(argv[i], O_RDONLY | O_CLOEXEC)) < 0) {
        fprintf(stderr, "%s: %s: %s\n", CMD, argv[i], strerror(errno));
        return 2;
    }
    for (int k = 0; k < *nopts; k++)
        if (apply_mallopt(opts[k])) {
            fprintf(stderr, "%s: --mallopt %s: not a mallopt this glibc takes\n", CMD, opts[k]);
            return 2;
        }
    return -1;
}

/* The table of live pointers and the samples' tables, resident before
 * the baseline.  0, or -1 (a line said why). */
static int set_up(void)
{
    const oplog_header_t *h = R.h;
    R.every = h->nops / (COUNT_SAMPLES / 2) > OPLOG_WINDOW ? h->nops / (COUNT_SAMPLES / 2)
                                                           : OPLOG_WINDOW;
    R.table = map_anon(h->nslots * sizeof *R.table, true);
    R.count_samples = map_anon(COUNT_SAMPLES * sizeof(sample_t), false);
    R.time_samples = map_anon(TIME_SAMPLES * sizeof(sample_t), false);
    if ((R.statm = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)) < 0 || !R.table ||
        !R.count_samples || !R.time_samples) {
        fprintf(stderr, "%s: out of memory (or no /proc/self/statm)\n", CMD);
        return -1;
    }
    for (uint64_t b = 0; b < h->nslots * sizeof *R.table; b += 4096)
        ((volatile char *)R.table)[b] = 0;
    memset(R.count_samples, 0, COUNT_SAMPLES * sizeof(sample_t));
    memset(R.time_samples, 0, TIME_SAMPLES * sizeof(sample_t));
    return 0;
}

/* Threads 1 .. nthreads - 1 (thread 0 is this one) and the sampling
 * thread, each with its stack touched.  0, or -1 (a line said why). */
static int start_threads(pthread_t *th, pthread_t *tsampler, bool *have_sampler)
{
    uint32_t n = R.h->nthreads, started = 1;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 1 << 20);
    for (; th && started < n; started++)
        if (pthread_create(&th[started], &attr, replayer, (void *)(uintptr_t)started))
            break;
    *have_sampler = pthread_create(tsampler, &attr, sampler, NULL) == 0;
    pthread_attr_destroy(&attr);
    if (started < n) {
        fprintf(stderr, "%s: cannot start %u threads (%u started)\n", CMD, n, started);
        return -1;
    }
    touch_stack();
    dl_iterate_phdr(prefault_object, NULL);
    while (atomic_load(&ready) < n - 1)
        usleep(100);
    return 0;
}

/* What the replay measured, taken once it has ended. */
typedef struct result_s {
    uint64_t wall_ns, cpu_us, peak, end_rss;
    long minflt, majflt;
    bool exact;   /* peak from VmHWM reset at the baseline */
} result_t;

/* The baseline, then the replay: thread 0 here, the others on theirs. */
static void replay(pthread_t *th, result_t *out)
{
    struct rusage ru0, ru1;
    int clear = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
    out->exact = clear >= 0 && write(clear, "5", 1) == 1;
    if (clear >= 0)
        close(clear);
    R.base_rss = rss_now();
    getrusage(RUSAGE_SELF, &ru0);
    clock_gettime(CLOCK_MONOTONIC, &R.t0);
    atomic_store(&R.go, 1);
    for (uint32_t t = 1; t < R.h->nthreads; t++) {
        atomic_fetch_add(&R.wake[t].word, 1);
        futex_wake(&R.wake[t].word);
    }
    replay_parts(0);
    for (uint32_t t = 1; t < R.h->nthreads; t++)
        pthread_join(th[t], NULL);
    out->wall_ns = now_ns();
    getrusage(RUSAGE_SELF, &ru1);
    out->end_rss = rss_now();
    uint64_t hwm = peak_rss();
    out->cpu_us = field_us(ru1.ru_utime) + field_us(ru1.ru_stime) - field_us(ru0.ru_utime) -
                  field_us(ru0.ru_stime);
    out->minflt = ru1.ru_minflt - ru0.ru_minflt;
    out->majflt = ru1.ru_majflt - ru0.ru_majflt;
    out->peak = out->exact ? over_base(hwm) : 0;
}

/* The JSON object on stdout (the replay is over: this may allocate). */
static int report(const result_t *r)
{
    const oplog_header_t *h = R.h;
    uint64_t peak = r->peak;
    uint32_t nc = atomic_load(&R.ncount);
    nc = nc < COUNT_SAMPLES ? nc : COUNT_SAMPLES;
    for (uint32_t k = 0; k < nc; k++)
        if (R.count_samples[k].rss > peak)
            peak = R.count_samples[k].rss; /* without clear_refs: the samples' peak */
    for (uint32_t k = 0; k < R.ntime; k++)
        if (R.time_samples[k].rss > peak)
            peak = R.time_samples[k].rss;
    printf("{\"ops\":%llu,\"threads\":%u,\"windows\":%llu,\"peak_rss_bytes\":%llu,"
           "\"peak_exact\":%s,\"end_rss_bytes\":%llu,\"base_rss_bytes\":%llu,"
           "\"minor_faults\":%ld,\"major_faults\":%ld,\"cpu_s\":%.6f,\"wall_s\":%.6f,"
           "\"failed\":%llu,\"substituted\":%u,\"malloc_from\":\"",
           (unsigned long long)h->nops, h->nthreads, (unsigned long long)h->nwindows,
           (unsigned long long)peak, r->exact ? "true" : "false",
           (unsigned long long)over_base(r->end_rss), (unsigned long long)R.base_rss, r->minflt,
           r->majflt, (double)r->cpu_us / 1e6, secs(r->wall_ns),
           (unsigned long long)atomic_load(&R.failed), R.substituted);
    for (const char *p = owner((void *)malloc); *p; p++) /* a path: escape what JSON needs */
        printf((unsigned char)*p < 0x20 || *p == '"' || *p == '\\' ? "\\u%04x" : "%c", *p);
    printf("\"");
    print_samples("by_count", R.count_samples, nc);
    print_samples("by_time", R.time_samples, R.ntime);
    printf("}\n");
    return fflush(stdout) ? 1 : 0;
}

int main(int argc, char **argv)
{
    const char *opts[MAX_MALLOPT];
    int nopts = 0, fd = -1;
    int status = parse_args(argc, argv, opts, &nopts, &fd);
    if (status >= 0)
        return status;
    R.page = sysconf(_SC_PAGESIZE);
    load(fd);
    find_calls();
    if (set_up())
        return 1;
    pthread_t *th = map_anon(R.h->nthreads * sizeof *th, false), tsampler;
    bool have_sampler = false;
    if (start_threads(th, &tsampler, &have_sampler))
        return 1;
    result_t r;
    replay(th, &r);
    atomic_store(&R.finished, 1);
    if (have_sampler)
        pthread_join(tsampler, NULL);
    return report(&r);
}
