/*
 * symopen: opening a module's file, here or on the store's thread.  See
 * symopen.h.
 */
#include "analyzer/read/symopen.h"

#include "analyzer/escape.h"
#include "analyzer/read/modfile.h"

#include <gelf.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

/* The store's thread, opening modules ahead of their first lookup. */
struct symbols_ahead_s {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;    /* a job queued or done, or stopping */
    symopen_t *head, *tail; /* queued jobs (and taken ones, skipped) */
    bool stop;
};

static char *debuginfo_path; /* NULL: the standard places */
static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = modfile_find_debuginfo, /* never blocks on a path the trace chose */
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

/* ---- memory for libdw --------------------------------------------------------- */

/* libdw ends the program when an allocation fails inside it (its
 * __libdw_oom calls error(EXIT_FAILURE)), and the analysis would lose
 * its report.  That happens only under a limit on the address space or
 * the data segment (ulimit -v, -d): without one, Linux hands out address
 * space and the OOM killer decides.  Under such a limit the store calls
 * into libdw only while HEADROOM more bytes could still be mapped, and
 * once they cannot, never again: frames print as module+offset from
 * there, with one line that says so. */
#define HEADROOM (4u << 20)

static bool limited;         /* an address-space or data limit is set (symopen_limits) */
static atomic_bool starved;  /* HEADROOM could not be had once */

static bool rlimit_set(int resource)
{
    struct rlimit rl;
    return getrlimit(resource, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY;
}

void symopen_limits(void)
{
    limited = rlimit_set(RLIMIT_AS) || rlimit_set(RLIMIT_DATA);
}

/* Whether libdw may be called now.  Both threads of the store ask. */
bool symopen_room(const symbols_t *s)
{
    if (!limited)
        return true;
    if (atomic_load_explicit(&starved, memory_order_relaxed))
        return false;
    /* Mapped and given back untouched: it costs address space, never
     * pages. */
    void *p = mmap(NULL, HEADROOM, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p != MAP_FAILED) {
        munmap(p, HEADROOM);
        return true;
    }
    if (!atomic_exchange(&starved, true) && !s->quiet)
        escape_line(stderr, "memsim-analyze: out of memory for symbols (under ulimit -v or -d): "
                    "frames from here on print as module+0x…");
    return false;
}

/* The span [*lo, *hi) of the loadable segments of the file open on fd,
 * as the preload measured it in memory.  0, or -1 with the reason in why.
 * fd stays open. */
static int elf_span(int fd, uint64_t *lo, uint64_t *hi, char *why, size_t len)
{
    int rc = -1;
    size_t n = 0;
    Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    if (!e || elf_kind(e) != ELF_K_ELF || elf_getphdrnum(e, &n)) {
        snprintf(why, len, "not an ELF file");
        goto out;
    }
    *lo = UINT64_MAX;
    *hi = 0;
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
            continue;
        if (ph.p_vaddr < *lo)
            *lo = ph.p_vaddr;
        if (ph.p_vaddr + ph.p_memsz > *hi)
            *hi = ph.p_vaddr + ph.p_memsz;
    }
    if (*hi <= *lo)
        snprintf(why, len, "no loadable segment");
    else
        rc = 0;
out:
    if (e)
        elf_end(e);
    return rc;
}

/* Open job's file: a Dwfl of its own with the file reported at the
 * recorded bias, and the debug information and symbol table its first
 * lookup would load (libdw inflates compressed debug sections then: most
 * of what a module costs); or, mod NULL, why not (a warning when
 * job->warn).  It touches nothing but job, so that the store's thread can
 * run it while the main thread goes on. */
void symopen_run(symopen_t *job)
{
    job->dwfl = NULL;
    job->mod = NULL;
    job->warn = false;
    memset(&job->names, 0, sizeof job->names);
    /* A name without a slash is no file (linux-vdso.so.1): no warning. */
    if (!strchr(job->path, '/'))
        return;
    uint64_t lo, hi;
    int fd = modfile_open(job->path, job->why, sizeof job->why);
    if (fd < 0 || elf_span(fd, &lo, &hi, job->why, sizeof job->why)) {
        job->warn = true;
        if (fd >= 0)
            close(fd);
        return;
    }
    if (hi - lo != job->size) {
        snprintf(job->why, sizeof job->why, "it spans %" PRIu64 " bytes, the traced one %" PRIu64
                 " (rebuilt since the trace?)", hi - lo, job->size);
        job->warn = true;
        close(fd);
        return;
    }
    if (!symopen_room(job->store)) { /* said once, for every module */
        close(fd);
        return;
    }
    job->dwfl = dwfl_begin(&callbacks);
    if (job->dwfl) {
        dwfl_report_begin(job->dwfl);
        /* The bias is the recorded base less the lowest segment's address
         * (add_p_vaddr: elfutils adds the segments' own addresses).  The
         * file is given as fd, never by name: libdwfl would open the path
         * again, as it is now, blocking and whatever it is. */
        job->mod = dwfl_report_elf(job->dwfl, job->name, job->path, fd, job->base - lo, true);
        dwfl_report_end(job->dwfl, NULL, NULL);
    }
    if (!job->mod) {
        /* On success dwfl_end closes fd; on failure it is still ours
         * (libdwfl closes a descriptor it was given only after inflating
         * a compressed file, and elf_span has just read this one as
         * plain ELF). */
        close(fd);
        snprintf(job->why, sizeof job->why, "%s", job->dwfl ? dwfl_errmsg(-1) : "out of memory");
        job->warn = true;
        return;
    }
    Dwarf_Addr bias;
    dwfl_module_getdwarf(job->mod, &bias); /* NULL without debug information: kept as such */
    symnames_build(job->mod, &job->names);
}

/* ---- opening ahead ------------------------------------------------------------ */

/* The store's thread: runs queued jobs in order until told to stop
 * (jobs still queued then are never run). */
static void *ahead_main(void *arg)
{
    symbols_ahead_t *a = arg;
    pthread_mutex_lock(&a->mu);
    while (!a->stop) {
        symopen_t *job = a->head;
        if (!job) {
            pthread_cond_wait(&a->cv, &a->mu);
            continue;
        }
        a->head = job->next;
        if (!a->head)
            a->tail = NULL;
        job->state = SYMOPEN_RUNNING;
        pthread_mutex_unlock(&a->mu);
        symopen_run(job);
        pthread_mutex_lock(&a->mu);
        job->state = SYMOPEN_DONE;
        pthread_cond_broadcast(&a->cv);
    }
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

/* The store's thread started; -1 when it cannot be (then nothing is
 * opened ahead). */
static int ahead_start(symbols_t *s)
{
    if (s->ahead_failed)
        return -1;
    symbols_ahead_t *a = calloc(1, sizeof *a);
    if (!a) {
        s->ahead_failed = true;
        return -1;
    }
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->cv, NULL);
    if (pthread_create(&a->thread, NULL, ahead_main, a)) {
        pthread_cond_destroy(&a->cv);
        pthread_mutex_destroy(&a->mu);
        free(a);
        s->ahead_failed = true;
        return -1;
    }
    s->ahead = a;
    return 0;
}

/* Stop the store's thread (after the job it runs, if any) and join it. */
void symopen_ahead_stop(symbols_t *s)
{
    symbols_ahead_t *a = s->ahead;
    if (!a)
        return;
    pthread_mutex_lock(&a->mu);
    a->stop = true;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    pthread_join(a->thread, NULL);
    pthread_cond_destroy(&a->cv);
    pthread_mutex_destroy(&a->mu);
    free(a);
    s->ahead = NULL;
}

/* job, queued on the store's thread, for the caller: run there (wait
 * for it), or, when the thread has not started it, taken off the queue
 * and run here. */
void symopen_ahead_claim(symbols_t *s, symopen_t *job)
{
    symbols_ahead_t *a = s->ahead;
    pthread_mutex_lock(&a->mu);
    if (job->state == SYMOPEN_QUEUED) {
        symopen_t **at = &a->head, *last = NULL;
        while (*at != job) {
            last = *at;
            at = &(*at)->next;
        }
        *at = job->next;
        if (a->tail == job)
            a->tail = last;
        job->state = SYMOPEN_TAKEN;
    }
    while (job->state == SYMOPEN_RUNNING)
        pthread_cond_wait(&a->cv, &a->mu);
    pthread_mutex_unlock(&a->mu);
    if (job->state == SYMOPEN_TAKEN)
        symopen_run(job);
}

int symopen_ahead_queue(symbols_t *s, symopen_t *job)
{
    if (!s->ahead && ahead_start(s))
        return -1;
    symbols_ahead_t *a = s->ahead;
    job->state = SYMOPEN_QUEUED;
    pthread_mutex_lock(&a->mu);
    if (a->tail)
        a->tail->next = job;
    else
        a->head = job;
    a->tail = job;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    return 0;
}
