/*
 * process: one trace's pass.  See process.h.
 */
#include "analyzer/process.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "analyzer/consumers.h"
#include "analyzer/escape.h"
#include "analyzer/progress.h"
#include "lib/sampling.h"

uint64_t process_peak_rss(const process_t *pr)
{
    return summary_peak_rss(&pr->s);
}

/* The first record must be the meta record on the first line: anything
 * else is not a memsim trace (or a compressed one cut or damaged before
 * it: said as such), said in one line (the reader is quiet
 * until then, so that a file of random bytes gets one line, not one per
 * line). */
static bool first_record(process_t *pr, event_t *e)
{
    pr->r.quiet = true;
    int got = reader_next(&pr->r, e);
    pr->r.quiet = false;
    if (got && e->type == EV_META && pr->r.lineno == 1) {
        if (pr->r.version > READER_FORMAT_VERSION) /* what the quiet reader did not say */
            escape_line(stderr, "%s: %s:1: trace format version %d is newer than this "
                        "analyzer's %d; reading what it knows", ANALYZE_CMD, pr->path,
                        pr->r.version, READER_FORMAT_VERSION);
        return true;
    }
    const char *err = pr->r.in ? tracein_error(pr->r.in) : NULL;
    bool cut = pr->r.in && tracein_cut(pr->r.in);
    if (!got && !pr->r.lineno && err) /* zstd's data, damaged within its first frame */
        escape_line(stderr, "%s: %s: damaged: its compressed data cannot be decoded (%s) before "
                    "the first record", ANALYZE_CMD, pr->path, err);
    else if (!got && !pr->r.lineno && cut) /* zstd's magic, then the data stops */
        escape_line(stderr, "%s: %s: truncated or damaged: its compressed data stops inside "
                    "the first frame, before the first record", ANALYZE_CMD, pr->path);
    else if (!got && !pr->r.lineno)
        escape_line(stderr, "%s: %s: empty trace: not a memsim trace", ANALYZE_CMD, pr->path);
    else
        escape_line(stderr, "%s: %s: not a memsim trace (its first line is not a meta record)",
                    ANALYZE_CMD, pr->path);
    return false;
}

/* An allocation of a sampled trace as the consumers take it: the bytes
 * it stands for, and their variance (lib/sampling.h). */
static __attribute__((noinline)) void weigh(const process_t *pr, const event_t *e, event_t *w)
{
    uint64_t interval = pr->s.sample_bytes;
    *w = *e;
    w->request = e->size;
    w->size = (uint64_t)llround(sampling_weight(e->size, interval));
    w->var = sampling_var(e->size, interval);
}

/* Record e through every consumer (and the progress line now and then). */
static inline void take(process_t *pr, const event_t *e, uint64_t *records, progress_t *prog,
                        FILE *under)
{
    if ((++*records & 0xffff) == 0) {
        off_t at = under ? ftello(under) : 0;
        progress_update(prog, at > 0 ? (uint64_t)at : 0, *records);
    }
    event_t w;
    if (__builtin_expect(pr->s.sample_bytes != 0, 0) &&
        (e->type == EV_ALLOC || e->type == EV_REALLOC)) {
        weigh(pr, e, &w);
        e = &w;
    }
    for (size_t i = 0; i < nconsumers; i++)
        consumers[i]->event(pr, e);
}

int process_analyze(process_t *pr, const char *path, const analyze_opts_t *o, symbols_t *store)
{
    memset(pr, 0, sizeof *pr);
    snprintf(pr->path, sizeof pr->path, "%s", path);
    pr->o = o;
    pr->store = store;
    if (reader_open(&pr->r, pr->path))
        return -1;
    size_t inited = 0;
    for (; inited < nconsumers; inited++)
        if (consumers[inited]->init(pr))
            break;
    event_t e;
    if (inited < nconsumers || !first_record(pr, &e)) {
        for (size_t i = inited; i-- > 0;)
            consumers[i]->fini(pr);
        reader_close(&pr->r);
        return -1;
    }
    struct stat st;
    progress_t prog;
    FILE *under = tracein_file(pr->r.in);
    progress_begin(&prog, o->progress, pr->path,
                   under && fstat(fileno(under), &st) == 0 && S_ISREG(st.st_mode)
                       ? (uint64_t)st.st_size : 0);
    /* Records are taken one at a time while the live blocks are few:
     * they stay in the caches.  Once there are AHEAD_MIN_LIVE of them,
     * records are read AHEAD of the one the consumers take, so that the
     * summary can start loading the live blocks they touch (see
     * summary_prefetch_slots), in two steps, at AHEAD and at AHEAD / 2
     * (on alloc_heavy's 1,024 live blocks, the window and its prefetching
     * would only cost: 174 instructions a record).  A record with a JSON
     * object ends the window until it is taken: the reader's next read
     * frees the object. */
    enum { AHEAD = 16, AHEAD_MIN_LIVE = 16384 };
    uint64_t records = 0;
    bool more = true;
    while (more && pr->s.live.count < AHEAD_MIN_LIVE) {
        take(pr, &e, &records, &prog, under);
        more = reader_next(&pr->r, &e);
    }
    event_t win[AHEAD];
    size_t head = 0, n = more;
    win[0] = e;
    for (;;) {
        while (more && n < AHEAD && (!n || !win[(head + n - 1) % AHEAD].json)) {
            event_t *next = &win[(head + n) % AHEAD];
            if (!(more = reader_next(&pr->r, next)))
                break;
            summary_prefetch_slots(&pr->s, next);
            n++;
        }
        if (!n)
            break;
        if (n > AHEAD / 2)
            summary_prefetch_block(&pr->s, &win[(head + AHEAD / 2) % AHEAD]);
        take(pr, &win[head], &records, &prog, under);
        head = (head + 1) % AHEAD;
        n--;
    }
    progress_end(&prog);
    for (size_t i = 0; i < nconsumers; i++)
        consumers[i]->finish(pr);
    /* The tree's peak is never below the process's own (VmHWM is a true
     * peak; the tree is only sampled). */
    if (pr->s.peak_tree_rss < process_peak_rss(pr))
        pr->s.peak_tree_rss = process_peak_rss(pr);
    findings_analyze(&pr->s, &pr->maps, &o->findings, &pr->findings);
    if (pr->s.dropped)
        escape_line(stderr, "%s: %s: its end record says %" PRIu64 " records could not be "
                    "written (a full disk, the file size limit): the figures are of what was",
                    ANALYZE_CMD, pr->path, pr->s.dropped);
    pr->ok = true;
    return 0;
}

void process_fini(process_t *pr)
{
    if (pr->ok)
        for (size_t i = nconsumers; i-- > 0;)
            consumers[i]->fini(pr);
    reader_close(&pr->r);
    pr->ok = false;
}
