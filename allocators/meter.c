/*
 * libmemsim-meter.so: the resident memory of a real program's heap, for
 * memsim run --allocator (the "actual" a replay's prediction is checked
 * against).  Preloaded first, ahead of libmemsim.so and the allocator.
 *
 * The heap is the allocator's anonymous memory: in /proc/self/smaps,
 * [heap] and every anonymous private mapping without a name, less what
 * of them is not the allocator's:
 *   - the program's own anonymous mappings: this library's mmap, mmap64,
 *     mremap and munmap keep them in a table (calls from the allocator's
 *     library, MEMSIM_METER_LIB, are the allocator's; glibc's malloc maps
 *     through an internal call no preloaded library sees), and their
 *     resident pages are counted (below);
 *   - memsim's own memory when the run is traced: libmemsim.so's
 *     registry of its mappings, counted here through
 *     memsim_own_resident_by() (ipc/sysmem.h);
 *   - the sampling thread's stack (mapped here; the thread makes no
 *     heap call, so a trace of the run shows no thread of the meter's);
 *   - every loaded object's .bss past its file's last page (mapped
 *     anonymous and unnamed, as the heap is; found by dl_iterate_phdr at
 *     each reading, so that a library loaded later counts too): a program
 *     that writes its static zeroes after start (gcc's cc1: 1.1 MB of its
 *     1.7 MB) does not grow its heap by them.
 * Those resident pages are counted as smaps' Rss counts them, without the
 * pages a program only read (the kernel's page of zeroes, which mincore
 * counts): by PAGEMAP_SCAN (Linux 6.7), else by mincore.
 * Other threads' stacks stay in (glibc maps them unnamed): a few pages
 * each.  The heap's RSS is counted over what it was when the library
 * started (after one malloc, so the allocator's start-up is in both the
 * baseline and a replay's).
 *
 * smaps is read through allocators/smapsum.h, which counts once a mapping
 * the kernel shows twice (one that grew between two pages of smaps).
 *
 * A thread of the library's samples it: /proc/self/statm every
 * MEMSIM_METER_US microseconds (500 by default: the anonymous RSS), and
 * /proc/self/smaps at most every 20 ms and whenever the anonymous RSS
 * passes its highest, for what of it is not the heap.  The heap at a
 * sample is the anonymous RSS less that part, as last read.  At exit
 * (a destructor), or at _exit or _Exit (which run none: this library's
 * come first, then pass on), it writes MEMSIM_METER_OUT/meter.PID.json:
 *   {"pid", "exe", "peak_heap_rss_bytes", "end_heap_rss_bytes",
 *    "base_heap_rss_bytes", "peak_rss_bytes" (VmHWM), "own_untracked",
 *    "samples", "smaps_reads", "resident_by": "pagemap_scan" or "mincore"}
 * Without MEMSIM_METER_OUT it does nothing.  It allocates nothing while
 * it samples (raw reads into static buffers).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "allocators/smapsum.h"
#include "lib/procfs.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_OWN 8192 /* the program's own anonymous mappings tracked */
#define SMAPS_EVERY_NS (20ull * 1000 * 1000)
#define MAX_RANGES 16
#define SAMPLER_STACK (256 * 1024)

static struct {
    bool on;
    char out[4096];
    uintptr_t lo[MAX_RANGES], hi[MAX_RANGES]; /* the allocator's loaded segments */
    size_t nranges;
    long page;
    uint64_t interval_us;
    int statm;
    int pagemap;          /* /proc/self/pagemap for PAGEMAP_SCAN, or -1: mincore */
    uint64_t base;        /* the heap's RSS at start */
    uint64_t nonheap;     /* anonymous RSS that is not the heap, as last read */
    uint64_t anon_max;    /* the highest anonymous RSS seen */
    uint64_t peak;        /* the heap's highest RSS, over base */
    uint64_t last_smaps;
    uint64_t samples, smaps_reads;
    _Atomic bool stop;
    _Atomic bool based;   /* base is set: the thread may sample */
    pthread_t thread;
    bool have_thread;
    pid_t pid;
} M = {.pagemap = -1};

static char smaps_buf[1 << 16];

/* The program's own anonymous mappings: [start, end) each, unordered;
 * taken and changed under own_lock (mmap, munmap, mremap by any thread;
 * the sampler reads). */
static struct {
    uintptr_t start, end;
} own[MAX_OWN];
static size_t nown;
static unsigned long own_untracked;
static pthread_mutex_t own_lock = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t self_stack, self_stack_end; /* the sampler's */
typedef uint64_t (*count_fn_t)(uintptr_t start, uintptr_t end);
static uint64_t (*memsim_own)(count_fn_t count); /* libmemsim.so's memsim_own_resident_by */

static void own_add(uintptr_t start, size_t len)
{
    pthread_mutex_lock(&own_lock);
    if (nown < MAX_OWN)
        own[nown++].start = start, own[nown - 1].end = start + len;
    else
        own_untracked++;
    pthread_mutex_unlock(&own_lock);
}

/* [start, start + len) is no longer mapped: cut it out of every range. */
static void own_remove(uintptr_t start, size_t len)
{
    uintptr_t end = start + len;
    pthread_mutex_lock(&own_lock);
    for (size_t i = 0; i < nown;) {
        uintptr_t a = own[i].start, b = own[i].end;
        if (b <= start || a >= end) {
            i++;
            continue;
        }
        if (a < start && b > end && nown < MAX_OWN) { /* a hole in the middle: two ranges */
            own[i].end = start;
            own[nown].start = end;
            own[nown++].end = b;
            i++;
        } else if (a < start) {
            own[i++].end = start;
        } else if (b > end) {
            own[i++].start = end;
        } else {
            own[i] = own[--nown];
        }
    }
    pthread_mutex_unlock(&own_lock);
}

static bool own_has(uintptr_t p)
{
    bool in = false;
    pthread_mutex_lock(&own_lock);
    for (size_t i = 0; i < nown && !in; i++)
        in = p >= own[i].start && p < own[i].end;
    pthread_mutex_unlock(&own_lock);
    return in;
}

/* PAGEMAP_SCAN, the ioctl of /proc/self/pagemap (Linux 6.7): the pages
 * of a range by category.  Declared here, as the kernel's uapi has it:
 * the build machine's headers may be older than the kernel it runs on. */
struct scan_region_s {
    uint64_t start, end, categories;
};
struct scan_arg_s {
    uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
    uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};
#define SCAN_IOCTL _IOWR('f', 16, struct scan_arg_s)
#define SCAN_PRESENT (1u << 3)
#define SCAN_PFNZERO (1u << 5) /* the shared page of zeroes */

/* The bytes of [start, end) resident and not the page of zeroes, by
 * PAGEMAP_SCAN: 0 and *bytes set, or -1 (not supported: no pagemap, an
 * older kernel). */
static int scan_resident(uintptr_t start, uintptr_t end, uint64_t *bytes)
{
    static struct scan_region_s vec[256];
    struct scan_arg_s a = {
        .size = sizeof a,
        .start = start & ~((uintptr_t)M.page - 1),
        .end = end,
        .vec = (uintptr_t)vec,
        .vec_len = sizeof vec / sizeof vec[0],
        .category_inverted = SCAN_PFNZERO,
        .category_mask = SCAN_PRESENT | SCAN_PFNZERO, /* present, and not zeroes */
        .return_mask = SCAN_PRESENT,
    };
    *bytes = 0;
    while (a.start < a.end) {
        long n = ioctl(M.pagemap, SCAN_IOCTL, &a);
        if (n < 0)
            return -1;
        for (long i = 0; i < n; i++)
            *bytes += vec[i].end - vec[i].start;
        if (a.walk_end <= a.start)
            break;
        a.start = a.walk_end;
    }
    return 0;
}

/* Resident bytes of [start, end), as smaps' Rss counts them: a page the
 * program only read is mapped to the kernel's one page of zeroes, which
 * mincore counts and Rss does not (gcc's cc1 reads 0.45 MB of its own
 * mappings so: subtracted by mincore, they hid as much of its heap).
 * By PAGEMAP_SCAN; without it (Linux before 6.7), mincore. */
static uint64_t resident(uintptr_t start, uintptr_t end)
{
    uint64_t bytes;
    if (M.pagemap >= 0 && !scan_resident(start, end, &bytes))
        return bytes;
    if (M.pagemap >= 0) { /* not supported: mincore from now on */
        close(M.pagemap);
        M.pagemap = -1;
    }
    static unsigned char vec[4096];
    uint64_t pages = 0;
    for (uintptr_t at = start; at < end; at += sizeof vec * (uintptr_t)M.page) {
        size_t len = end - at < sizeof vec * (size_t)M.page ? end - at : sizeof vec * (size_t)M.page;
        if (mincore((void *)at, len, vec))
            continue;
        for (size_t k = 0; k < (len + (size_t)M.page - 1) / (size_t)M.page; k++)
            pages += vec[k] & 1;
    }
    return pages * (uint64_t)M.page;
}

static uint64_t own_resident(void)
{
    uint64_t sum = 0;
    pthread_mutex_lock(&own_lock);
    for (size_t i = 0; i < nown; i++)
        sum += resident(own[i].start, own[i].end);
    pthread_mutex_unlock(&own_lock);
    return sum;
}

static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static void *(*real_mmap64)(void *, size_t, int, int, int, off_t);
static int (*real_munmap)(void *, size_t);
static void *(*real_mremap)(void *, size_t, size_t, int, ...);

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static bool from_allocator(const void *ret)
{
    for (size_t i = 0; i < M.nranges; i++)
        if ((uintptr_t)ret >= M.lo[i] && (uintptr_t)ret < M.hi[i])
            return true;
    return false;
}

static void note_own(void *p, size_t len, int flags, const void *ret)
{
    if (M.on && p != MAP_FAILED && (flags & MAP_ANONYMOUS) && !(flags & MAP_SHARED) &&
        !from_allocator(ret))
        own_add((uintptr_t)p, len);
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (!real_mmap)
        real_mmap = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
    void *p = real_mmap(addr, len, prot, flags, fd, off);
    if (p != MAP_FAILED && (flags & MAP_FIXED))
        own_remove((uintptr_t)p, len); /* what it replaced */
    note_own(p, len, flags, __builtin_return_address(0));
    return p;
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (!real_mmap64)
        real_mmap64 = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap64");
    void *p = real_mmap64(addr, len, prot, flags, fd, off);
    if (p != MAP_FAILED && (flags & MAP_FIXED))
        own_remove((uintptr_t)p, len);
    note_own(p, len, flags, __builtin_return_address(0));
    return p;
}

EXPORT int munmap(void *addr, size_t len)
{
    if (!real_munmap)
        real_munmap = (int (*)(void *, size_t))dlsym(RTLD_NEXT, "munmap");
    int r = real_munmap(addr, len);
    if (!r && M.on)
        own_remove((uintptr_t)addr, len);
    return r;
}

EXPORT void *mremap(void *old, size_t old_len, size_t len, int flags, ...)
{
    if (!real_mremap)
        real_mremap = (void *(*)(void *, size_t, size_t, int, ...))dlsym(RTLD_NEXT, "mremap");
    void *want = NULL;
    if (flags & MREMAP_FIXED) {
        va_list ap;
        va_start(ap, flags);
        want = va_arg(ap, void *);
        va_end(ap);
    }
    bool was_own = M.on && own_has((uintptr_t)old);
    void *p = real_mremap(old, old_len, len, flags, want);
    if (p != MAP_FAILED && was_own) {
        own_remove((uintptr_t)old, old_len);
        own_add((uintptr_t)p, len);
    }
    return p;
}

/* ---- reading /proc --------------------------------------------------------------------- */

static uint64_t anon_now(void)
{
    char buf[128];
    ssize_t n = pread(M.statm, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    unsigned long long size, resident, shared;
    if (sscanf(buf, "%llu %llu %llu", &size, &resident, &shared) != 3)
        return 0;
    return (resident > shared ? resident - shared : 0) * (uint64_t)M.page;
}

/* The resident bytes of every loaded object's .bss past its file's last
 * page (an anonymous mapping without a name, as the heap's are). */
static int bss_of(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    uint64_t *sum = arg;
    uintptr_t pg = (uintptr_t)M.page;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || ph->p_memsz <= ph->p_filesz)
            continue;
        uintptr_t at = info->dlpi_addr + ph->p_vaddr;
        uintptr_t start = (at + ph->p_filesz + pg - 1) & ~(pg - 1);
        uintptr_t end = (at + ph->p_memsz + pg - 1) & ~(pg - 1);
        if (end > start)
            *sum += resident(start, end);
    }
    return 0;
}

static uint64_t bss_resident(void)
{
    uint64_t sum = 0;
    dl_iterate_phdr(bss_of, &sum);
    return sum;
}

/* The heap's RSS and the anonymous RSS, from /proc/self/smaps
 * (allocators/smapsum.h: a mapping the kernel shows twice counts once). */
static void read_smaps(uint64_t *heap, uint64_t *anon)
{
    *heap = *anon = 0;
    int fd = open("/proc/self/smaps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    smapsum_t sum;
    smapsum_init(&sum);
    size_t have = 0;
    for (;;) {
        ssize_t n = read(fd, smaps_buf + have, sizeof smaps_buf - 1 - have);
        if (n <= 0)
            break;
        have += (size_t)n;
        smaps_buf[have] = '\0';
        char *line = smaps_buf, *nl;
        while ((nl = strchr(line, '\n'))) {
            *nl = '\0';
            smapsum_line(&sum, line);
            line = nl + 1;
        }
        have = (size_t)(smaps_buf + have - line);
        memmove(smaps_buf, line, have);
    }
    *heap = sum.heap;
    *anon = sum.anon;
    close(fd);
    M.smaps_reads++;
    uint64_t notheap = own_resident() + (memsim_own ? memsim_own(resident) : 0) +
                       resident(self_stack, self_stack_end) + bss_resident();
    *heap = *heap > notheap ? *heap - notheap : 0;
}

/* The process's peak RSS (VmHWM) in bytes, or 0. */
static uint64_t peak_rss(void)
{
    procfs_status_t st;
    return procfs_read_status(0, &st) ? 0 : st.hwm;
}

/* One sample: the heap now, from statm and the last smaps (read again
 * when due, or when the anonymous RSS is at a new high). */
static void sample(void)
{
    uint64_t anon = anon_now(), t = now_ns();
    if (anon > M.anon_max || t - M.last_smaps >= SMAPS_EVERY_NS) {
        uint64_t heap, anon_s;
        read_smaps(&heap, &anon_s);
        M.nonheap = anon_s > heap ? anon_s - heap : 0;
        M.last_smaps = t;
        anon = anon_s;
        if (anon > M.anon_max)
            M.anon_max = anon;
    }
    uint64_t heap = anon > M.nonheap ? anon - M.nonheap : 0;
    heap = heap > M.base ? heap - M.base : 0;
    if (heap > M.peak)
        M.peak = heap;
    M.samples++;
}

static void *sampler(void *arg)
{
    (void)arg;
    while (!atomic_load(&M.stop)) {
        struct timespec d = {0, (long)M.interval_us * 1000};
        nanosleep(&d, NULL);
        if (atomic_load(&M.based))
            sample();
    }
    return NULL;
}

/* The allocator's loaded segments, by its library's path. */
static int find_lib(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    const char *want = arg, *name = info->dlpi_name;
    const char *wb = strrchr(want, '/'), *nb = strrchr(name, '/');
    if (!name[0] || strcmp(wb ? wb + 1 : want, nb ? nb + 1 : name))
        return 0;
    for (int i = 0; i < info->dlpi_phnum && M.nranges < MAX_RANGES; i++)
        if (info->dlpi_phdr[i].p_type == PT_LOAD) {
            M.lo[M.nranges] = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
            M.hi[M.nranges] = M.lo[M.nranges] + info->dlpi_phdr[i].p_memsz;
            M.nranges++;
        }
    return 1;
}

static void child_after_fork(void)
{
    M.have_thread = false; /* threads do not cross fork: the child has the final reading only */
    M.pid = getpid();
    if (M.pagemap >= 0) { /* the parent's: pagemap is of the process that opened it */
        close(M.pagemap);
        M.pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    }
}

static void (*next_exit)(int), (*next_Exit)(int);

__attribute__((constructor)) static void meter_start(void)
{
    /* _exit and _Exit pass on to these (libmemsim.so's, which end the
     * trace, then libc's), found now: not at the end, in any state */
    next_exit = (void (*)(int))dlsym(RTLD_NEXT, "_exit");
    next_Exit = (void (*)(int))dlsym(RTLD_NEXT, "_Exit");
    const char *out = getenv("MEMSIM_METER_OUT");
    if (!out || !*out || strlen(out) >= sizeof M.out)
        return;
    snprintf(M.out, sizeof M.out, "%s", out);
    const char *lib = getenv("MEMSIM_METER_LIB");
    if (lib && *lib)
        dl_iterate_phdr(find_lib, (void *)lib);
    const char *us = getenv("MEMSIM_METER_US");
    M.interval_us = us && atoi(us) > 0 ? (uint64_t)atoi(us) : 500;
    M.page = sysconf(_SC_PAGESIZE);
    M.statm = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (M.statm < 0)
        return;
    M.pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    M.on = true;
    M.pid = getpid();
    memsim_own = (uint64_t (*)(count_fn_t))dlsym(RTLD_DEFAULT, "memsim_own_resident_by");
    free(malloc(1)); /* the allocator's start-up, in the baseline */
    pthread_atfork(NULL, NULL, child_after_fork);
    /* The sampler's stack is mapped here, by the system call (no
     * wrapper records it as the program's), so that its range is known
     * without asking the thread (pthread_getattr_np mallocs: the trace
     * would show the sampler as a thread of the program, and glibc would
     * give it an arena of its own); the thread itself makes no heap call. */
    void *stack = (void *)syscall(SYS_mmap, NULL, (size_t)SAMPLER_STACK, PROT_READ | PROT_WRITE,
                                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    pthread_attr_t attr;
    if (stack != MAP_FAILED && !pthread_attr_init(&attr)) {
        if (!pthread_attr_setstack(&attr, stack, SAMPLER_STACK)) {
            self_stack = (uintptr_t)stack;
            self_stack_end = (uintptr_t)stack + SAMPLER_STACK;
            M.have_thread = pthread_create(&M.thread, &attr, sampler, NULL) == 0;
        }
        pthread_attr_destroy(&attr);
    }
    usleep(2000); /* the thread has started */
    uint64_t heap, anon;
    read_smaps(&heap, &anon);
    M.base = heap;
    M.nonheap = anon > heap ? anon - heap : 0;
    M.anon_max = anon;
    M.last_smaps = now_ns();
    atomic_store(&M.based, true);
}

__attribute__((destructor)) static void meter_end(void)
{
    /* not in a vfork child: M and the sampler are its parent's */
    if (!M.on || getpid() != M.pid)
        return;
    M.on = false; /* once: _exit, then no destructor; exit, then no _exit */
    if (M.have_thread) {
        atomic_store(&M.stop, true);
        pthread_join(M.thread, NULL);
    }
    M.last_smaps = 0;
    sample();
    uint64_t heap, anon;
    read_smaps(&heap, &anon);
    char path[4200], exe[1024] = "", text[2048];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    for (char *p = exe; *p; p++)
        if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20)
            *p = '?';
    snprintf(path, sizeof path, "%s/meter.%d.json", M.out, (int)getpid());
    int len = snprintf(text, sizeof text,
                       "{\"pid\":%d,\"exe\":\"%s\",\"peak_heap_rss_bytes\":%llu,"
                       "\"end_heap_rss_bytes\":%llu,\"base_heap_rss_bytes\":%llu,"
                       "\"peak_rss_bytes\":%llu,\"own_untracked\":%lu,\"samples\":%llu,"
                       "\"smaps_reads\":%llu,\"resident_by\":\"%s\"}\n",
                       (int)getpid(), exe, (unsigned long long)M.peak,
                       (unsigned long long)(heap > M.base ? heap - M.base : 0),
                       (unsigned long long)M.base, (unsigned long long)peak_rss(),
                       own_untracked, (unsigned long long)M.samples,
                       (unsigned long long)M.smaps_reads, M.pagemap >= 0 ? "pagemap_scan" : "mincore");
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd >= 0) {
        if (write(fd, text, (size_t)len) != len) {
            /* a measurement lost: the caller finds no file and says so */
        }
        close(fd);
    }
}

/* A process that ends by _exit or _Exit runs no destructor: it is
 * measured here, then ends by next (a crash still is not: no code of the
 * meter runs). */
static _Noreturn void measured_exit(void (*next)(int), int status)
{
    meter_end();
    if (next)
        next(status);
    syscall(SYS_exit_group, status);
    __builtin_unreachable();
}

EXPORT void _exit(int status) { measured_exit(next_exit, status); }

EXPORT void _Exit(int status) { measured_exit(next_Exit, status); }
