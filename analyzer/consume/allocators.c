/*
 * allocators: a trace through real allocators.  See allocators.h.
 *
 * The operation file is written as the trace is read: a window of
 * operations is gathered in memory (at most OPLOG_WINDOW), then written
 * grouped by thread.  A window ends when it is full, or before an
 * operation on a slot another thread touched in the same window (a free
 * of a block another thread just allocated: the replay must not run the
 * two at once).  Slots freed in a window are given out again only after
 * it, so two threads of one window never share a slot.
 *
 * A block's touched pages come with its free or resize, after the
 * operation that made it: each slot remembers where that operation is
 * (its index in the window being gathered, or its offset in the file
 * once written) and the count is set there, in the buffer or by
 * pread/pwrite of its 16 bytes (the large blocks that carry a count are
 * few).
 */
#include "analyzer/consume/allocators.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "allocators/oplog.h"
#include "analyzer/consumers.h"
#include "analyzer/escape.h"
#include "lib/grow.h"
#include "lib/hashtab.h"

extern char **environ;

#define WRITE_BUF (1 << 20)
#define THREAD_BITS 10 /* OPLOG_MAX_THREADS == 1 << THREAD_BITS */
_Static_assert(OPLOG_MAX_THREADS == 1 << THREAD_BITS, "a slot's owner packs the thread");

/* ---- the operation file ------------------------------------------------------------- */

typedef struct live_s {
    uint64_t addr;
    uint64_t slot1;  /* slot + 1; 0: an empty table slot */
} live_t;

static const hashtab_type_t live_type = {
    .slot_size = sizeof(live_t), .key_off = offsetof(live_t, addr), .mark_off = offsetof(live_t, slot1)};

typedef struct tid_s {
    uint64_t tid;
    uint64_t index1; /* index + 1 */
} tid_t;

static const hashtab_type_t tid_type = {
    .slot_size = sizeof(tid_t), .key_off = offsetof(tid_t, tid), .mark_off = offsetof(tid_t, index1)};

typedef struct alloc_writer_s {
    int fd;                   /* the memfd */
    char *buf;                /* WRITE_BUF bytes not yet written */
    size_t nbuf;
    uint64_t bytes;           /* the file's length so far */
    bool broken;              /* out of memory or a write failed: no replay */
    bool all_pages;           /* --allocators-pages all: the touched counts ignored */
    char why[160];
    hashtab_t live;           /* trace address -> slot */
    hashtab_t tids;           /* tid -> thread index */
    uint32_t ntids;
    uint64_t *owner;          /* per slot: (window + 1) << THREAD_BITS | thread, 0: none */
    size_t cap_owner;
    uint64_t *made;           /* per slot: the operation that made its block, an index in
                                 win while its window is gathered, then its file offset */
    size_t cap_made;
    uint32_t nslots;
    uint32_t *free_slots, *pending; /* free for any window; freed in this one */
    size_t nfree, cap_free, npending, cap_pending;
    oplog_op_t win[OPLOG_WINDOW];
    uint16_t win_thread[OPLOG_WINDOW];
    size_t nwin;
    uint64_t window;          /* the window being gathered */
    uint64_t nops;
    uint32_t counts[OPLOG_MAX_THREADS], at[OPLOG_MAX_THREADS];
    oplog_op_t grouped[OPLOG_WINDOW];
    const catalog_allocator_t *ran_with;
    unsigned kinds;           /* bit per oplog_kind_t written */
} alloc_writer_t;

static void broken(alloc_writer_t *w, const char *why)
{
    if (!w->broken)
        snprintf(w->why, sizeof w->why, "%s", why);
    w->broken = true;
}

/* Write out what the buffer holds. */
static void flush(alloc_writer_t *w)
{
    size_t done = 0;
    while (!w->broken && done < w->nbuf) {
        ssize_t k = write(w->fd, w->buf + done, w->nbuf - done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            broken(w, "cannot write the operation file (out of memory)");
        else
            done += (size_t)k;
    }
    w->nbuf = 0;
}

static void put(alloc_writer_t *w, const void *p, size_t n)
{
    if (w->broken)
        return;
    if (w->nbuf + n > WRITE_BUF)
        flush(w);
    memcpy(w->buf + w->nbuf, p, n);
    w->nbuf += n;
    w->bytes += n;
}

/* Write the window gathered, grouped by thread (parts in the order of
 * each thread's first operation), and start the next. */
static void end_window(alloc_writer_t *w)
{
    if (!w->nwin)
        return;
    uint16_t order[OPLOG_MAX_THREADS];
    uint32_t nparts = 0;
    for (size_t i = 0; i < w->nwin; i++)
        if (!w->counts[w->win_thread[i]]++)
            order[nparts++] = w->win_thread[i];
    oplog_window_t h = {.nparts = nparts, .nops = (uint32_t)w->nwin};
    put(w, &h, sizeof h);
    uint32_t at = 0;
    for (uint32_t k = 0; k < nparts; k++) {
        oplog_part_t p = {.thread = order[k], .count = w->counts[order[k]]};
        put(w, &p, sizeof p);
        w->at[order[k]] = at;
        at += p.count;
    }
    uint64_t base = w->bytes; /* the grouped operations' offset in the file */
    for (size_t i = 0; i < w->nwin; i++) {
        uint32_t g = w->at[w->win_thread[i]]++;
        w->grouped[g] = w->win[i];
        if (w->win[i].kind != OPLOG_FREE)
            w->made[w->win[i].slot] = base + (uint64_t)g * sizeof(oplog_op_t);
    }
    put(w, w->grouped, w->nwin * sizeof *w->grouped);
    for (uint32_t k = 0; k < nparts; k++)
        w->counts[order[k]] = 0;
    w->nops += w->nwin;
    w->nwin = 0;
    w->window++;
    /* the window's frees are free for the next */
    for (size_t i = 0; i < w->npending; i++) {
        if (!grow_room((void **)&w->free_slots, &w->cap_free, w->nfree, sizeof *w->free_slots, 1024)) {
            broken(w, "out of memory");
            return;
        }
        w->free_slots[w->nfree++] = w->pending[i];
    }
    w->npending = 0;
}

static uint32_t thread_index(alloc_writer_t *w, int64_t tid)
{
    bool found = false;
    tid_t *t = hashtab_put(&w->tids, &tid_type, (uint64_t)tid, &found);
    if (!t) {
        broken(w, "out of memory");
        return 0;
    }
    if (!found) {
        t->tid = (uint64_t)tid;
        t->index1 = ++w->ntids;
    }
    return (uint32_t)((t->index1 - 1) % OPLOG_MAX_THREADS);
}

/* A new slot, from those freed in earlier windows or a fresh one. */
static uint32_t new_slot(alloc_writer_t *w)
{
    if (w->nfree)
        return w->free_slots[--w->nfree];
    if (!grow_room((void **)&w->owner, &w->cap_owner, w->nslots, sizeof *w->owner, 4096) ||
        !grow_room((void **)&w->made, &w->cap_made, w->nslots, sizeof *w->made, 4096)) {
        broken(w, "out of memory");
        return 0;
    }
    w->owner[w->nslots] = 0;
    w->made[w->nslots] = 0;
    return w->nslots++;
}

/* Add op by thread t on its slot, ending the window first where the
 * slot is another thread's in it. */
static void add(alloc_writer_t *w, uint32_t t, oplog_op_t op)
{
    if (w->broken)
        return;
    uint64_t mine = (w->window + 1) << THREAD_BITS;
    uint64_t owner = w->owner[op.slot];
    if (w->nwin == OPLOG_WINDOW || (owner >> THREAD_BITS == w->window + 1 && (owner & (OPLOG_MAX_THREADS - 1)) != t)) {
        end_window(w);
        mine = (w->window + 1) << THREAD_BITS;
    }
    w->owner[op.slot] = mine | t;
    if (op.kind != OPLOG_FREE)
        w->made[op.slot] = w->nwin;
    w->kinds |= 1u << op.kind;
    w->win_thread[w->nwin] = (uint16_t)t;
    w->win[w->nwin++] = op;
}

static void release_slot(alloc_writer_t *w, uint32_t slot)
{
    if (!grow_room((void **)&w->pending, &w->cap_pending, w->npending, sizeof *w->pending, 1024)) {
        broken(w, "out of memory");
        return;
    }
    w->pending[w->npending++] = slot;
}

/* The block in slot is going: the program touched touched - 1 of its
 * pages (0: the trace does not say), which the operation that made it
 * is told (before the free or resize is added: that may write the
 * window out). */
static void set_touched(alloc_writer_t *w, uint32_t slot, uint64_t touched)
{
    if (!touched || touched > OPLOG_TOUCHED_MAX || w->broken || w->all_pages)
        return;
    if (w->owner[slot] >> THREAD_BITS == w->window + 1) { /* made in this window */
        w->win[w->made[slot]].touched = (uint32_t)touched;
        return;
    }
    oplog_op_t op;
    uint64_t at = w->made[slot], flushed = w->bytes - w->nbuf;
    if (at >= flushed) { /* still in the buffer */
        memcpy(&op, w->buf + (at - flushed), sizeof op);
        op.touched = (uint32_t)touched;
        memcpy(w->buf + (at - flushed), &op, sizeof op);
        return;
    }
    if (pread(w->fd, &op, sizeof op, (off_t)at) != (ssize_t)sizeof op) {
        broken(w, "cannot read the operation file back");
        return;
    }
    op.touched = (uint32_t)touched;
    if (pwrite(w->fd, &op, sizeof op, (off_t)at) != (ssize_t)sizeof op)
        broken(w, "cannot write the operation file (out of memory)");
}

static void on_free(alloc_writer_t *w, uint32_t t, uint64_t addr, uint64_t touched)
{
    live_t *l = hashtab_find(&w->live, &live_type, addr);
    if (!l)
        return; /* not live in the trace (inherited, unknown): nothing to free */
    uint32_t slot = (uint32_t)(l->slot1 - 1);
    hashtab_erase(&w->live, &live_type, l);
    set_touched(w, slot, touched);
    add(w, t, (oplog_op_t){.slot = slot, .kind = OPLOG_FREE});
    release_slot(w, slot);
}

static uint8_t log2_align(uint64_t align)
{
    if (!align || (align & (align - 1)))
        return 4;
    return (uint8_t)__builtin_ctzll(align);
}

static const uint8_t kind_of_fn[TRACEFMT_FN_COUNT] = {
    [TRACEFMT_FN_MALLOC] = OPLOG_MALLOC,
    [TRACEFMT_FN_CALLOC] = OPLOG_CALLOC,
    [TRACEFMT_FN_REALLOC] = OPLOG_REALLOC,
    [TRACEFMT_FN_REALLOCARRAY] = OPLOG_REALLOC,
    [TRACEFMT_FN_MEMALIGN] = OPLOG_MEMALIGN,
    [TRACEFMT_FN_POSIX_MEMALIGN] = OPLOG_POSIX_MEMALIGN,
    [TRACEFMT_FN_ALIGNED_ALLOC] = OPLOG_ALIGNED_ALLOC,
    [TRACEFMT_FN_VALLOC] = OPLOG_VALLOC,
    [TRACEFMT_FN_PVALLOC] = OPLOG_PVALLOC,
};

/* A block at addr, in a new slot (an address allocated twice without a
 * free in between lets the old block go first). */
static void on_alloc(alloc_writer_t *w, uint32_t t, uint64_t addr, uint64_t size, uint8_t kind,
                     uint8_t align_log2)
{
    if (hashtab_find(&w->live, &live_type, addr))
        on_free(w, t, addr, 0);
    uint32_t slot = new_slot(w);
    bool found;
    live_t *l = hashtab_put(&w->live, &live_type, addr, &found);
    if (!l || w->broken) {
        broken(w, "out of memory");
        return;
    }
    l->addr = addr;
    l->slot1 = (uint64_t)slot + 1;
    add(w, t, (oplog_op_t){.slot = slot, .kind = kind, .align_log2 = align_log2, .size = size});
}

static void on_realloc(alloc_writer_t *w, uint32_t t, uint64_t old, uint64_t addr, uint64_t size,
                       uint64_t touched)
{
    live_t *l = hashtab_find(&w->live, &live_type, old);
    if (!l) { /* the old block is not known: realloc(NULL, size) */
        on_alloc(w, t, addr, size, OPLOG_REALLOC, 4);
        return;
    }
    uint32_t slot = (uint32_t)(l->slot1 - 1);
    hashtab_erase(&w->live, &live_type, l);
    set_touched(w, slot, touched);
    if (addr != old && hashtab_find(&w->live, &live_type, addr))
        on_free(w, t, addr, 0);
    bool found;
    live_t *n = hashtab_put(&w->live, &live_type, addr, &found);
    if (!n) {
        broken(w, "out of memory");
        return;
    }
    n->addr = addr;
    n->slot1 = (uint64_t)slot + 1;
    add(w, t, (oplog_op_t){.slot = slot, .kind = OPLOG_REALLOC, .size = size});
}

static alloc_writer_t *writer_open(void)
{
    alloc_writer_t *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->buf = malloc(WRITE_BUF);
    w->fd = memfd_create("memsim-oplog", MFD_CLOEXEC);
    if (!w->buf || w->fd < 0 || hashtab_init(&w->live, &live_type, 1024) ||
        hashtab_init(&w->tids, &tid_type, 16)) {
        if (w->fd >= 0)
            close(w->fd);
        free(w->buf);
        hashtab_fini(&w->live, &live_type);
        free(w);
        return NULL;
    }
    oplog_header_t h = {0}; /* written for real at the end */
    put(w, &h, sizeof h);
    return w;
}

static void writer_close(alloc_writer_t *w)
{
    if (!w)
        return;
    if (w->fd >= 0)
        close(w->fd);
    free(w->buf);
    hashtab_fini(&w->live, &live_type);
    hashtab_fini(&w->tids, &tid_type);
    free(w->owner);
    free(w->made);
    free(w->free_slots);
    free(w->pending);
    free(w);
}

/* The last window, the buffer and the header: the file is complete. */
static int writer_finish(alloc_writer_t *w, uint64_t peak_live, oplog_header_t *out)
{
    end_window(w);
    flush(w);
    *out = (oplog_header_t){.magic = OPLOG_MAGIC, .version = OPLOG_VERSION,
                            .nthreads = w->ntids ? (w->ntids < OPLOG_MAX_THREADS ? w->ntids : OPLOG_MAX_THREADS) : 1,
                            .nslots = w->nslots ? w->nslots : 1, .nops = w->nops,
                            .nwindows = w->window, .bytes = w->bytes, .peak_live = peak_live};
    if (!w->broken && pwrite(w->fd, out, sizeof *out, 0) != (ssize_t)sizeof *out)
        broken(w, "cannot write the operation file's header");
    return w->broken ? -1 : 0;
}

/* ---- the replays ------------------------------------------------------------------- */

/* memsim-replay: beside this program, or in lib/memsim/ beside its bin/. */
static bool replay_path(char *out, size_t len)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return false;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash)
        return false;
    *slash = '\0';
    snprintf(out, len, "%s/memsim-replay", self);
    if (access(out, X_OK) == 0)
        return true;
    slash = strrchr(self, '/');
    if (slash)
        *slash = '\0';
    snprintf(out, len, "%s/lib/memsim/memsim-replay", self);
    return access(out, X_OK) == 0;
}

typedef struct child_s {
    pid_t pid;
    int out, err;            /* pipes, -1 once closed */
    char *text, *etext;      /* what it printed */
    size_t ntext, cap_text, netext, cap_etext;
    alloc_row_t *row;
} child_t;

static int start_child(const char *replay, int opfd, alloc_row_t *row, const char *lib, child_t *c)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + CATALOG_MAX_ENV + 2, sizeof *env);
    char envbuf[1024], preload[4200], arg[32];
    const char *extra[CATALOG_MAX_ENV];
    if (!env)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!catalog_env_is_setting(environ[i]))
            env[k++] = environ[i];
    if (lib[0]) {
        snprintf(preload, sizeof preload, "LD_PRELOAD=%s", lib);
        env[k++] = preload;
    }
    size_t ne = catalog_env(row->spec, envbuf, sizeof envbuf, extra);
    for (size_t i = 0; i < ne; i++)
        env[k++] = (char *)extra[i];
    env[k] = NULL;
    snprintf(arg, sizeof arg, "fd:%d", opfd);
    char *argv[] = {(char *)replay, "--sample-ms", "10", arg, NULL};
    int po[2], pe[2];
    if (pipe2(po, O_CLOEXEC)) {
        free(env);
        return -1;
    }
    if (pipe2(pe, O_CLOEXEC)) {
        close(po[0]);
        close(po[1]);
        free(env);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        dup2(po[1], 1);
        dup2(pe[1], 2);
        fcntl(opfd, F_SETFD, 0);
        execve(replay, argv, env);
        _exit(127);
    }
    free(env);
    close(po[1]);
    close(pe[1]);
    if (pid < 0) {
        close(po[0]);
        close(pe[0]);
        return -1;
    }
    *c = (child_t){.pid = pid, .out = po[0], .err = pe[0], .row = row};
    return 0;
}

static void drain(int *fd, char **text, size_t *n, size_t *cap)
{
    char buf[65536];
    ssize_t k = read(*fd, buf, sizeof buf);
    if (k <= 0) {
        if (k < 0 && errno == EINTR)
            return;
        close(*fd);
        *fd = -1;
        return;
    }
    if (!grow_room((void **)text, cap, *n + (size_t)k, 1, 65536)) {
        close(*fd);
        *fd = -1;
        return;
    }
    memcpy(*text + *n, buf, (size_t)k);
    *n += (size_t)k;
    (*text)[*n] = '\0';
}

/* Read every child's output until each has closed both pipes. */
static void collect(child_t *c, size_t n)
{
    for (;;) {
        struct pollfd p[2 * CATALOG_MAX_SPECS];
        size_t np = 0;
        for (size_t i = 0; i < n; i++) {
            if (c[i].out >= 0)
                p[np++] = (struct pollfd){.fd = c[i].out, .events = POLLIN};
            if (c[i].err >= 0)
                p[np++] = (struct pollfd){.fd = c[i].err, .events = POLLIN};
        }
        if (!np)
            return;
        if (poll(p, np, -1) < 0 && errno != EINTR)
            return;
        for (size_t i = 0; i < n; i++) {
            for (size_t k = 0; k < np; k++) {
                if (!p[k].revents)
                    continue;
                if (p[k].fd == c[i].out && c[i].out >= 0)
                    drain(&c[i].out, &c[i].text, &c[i].ntext, &c[i].cap_text);
                else if (p[k].fd == c[i].err && c[i].err >= 0)
                    drain(&c[i].err, &c[i].etext, &c[i].netext, &c[i].cap_etext);
            }
        }
    }
}

static int by_time(const void *a, const void *b)
{
    const alloc_point_t *x = a, *y = b;
    return (x->t_s > y->t_s) - (x->t_s < y->t_s);
}

static uint64_t num(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
}

/* The child's JSON into its row. */
static void read_result(child_t *c, int status)
{
    alloc_row_t *r = c->row;
    json_error_t err;
    json_t *o = c->text ? json_loads(c->text, 0, &err) : NULL;
    if (!json_is_object(o) || !WIFEXITED(status) || WEXITSTATUS(status)) {
        r->status = ALLOC_FAILED;
        char line[200] = "";
        if (c->etext) {
            char *nl = strchr(c->etext, '\n');
            snprintf(line, sizeof line, "%.*s", nl ? (int)(nl - c->etext) : (int)c->netext, c->etext);
        }
        if (WIFSIGNALED(status))
            snprintf(r->message, sizeof r->message, "the replay was killed by signal %d (%s)%s%s",
                     WTERMSIG(status), strsignal(WTERMSIG(status)), line[0] ? ": " : "", line);
        else
            snprintf(r->message, sizeof r->message, "the replay failed (exit status %d)%s%s",
                     WIFEXITED(status) ? WEXITSTATUS(status) : -1, line[0] ? ": " : "", line);
        json_decref(o);
        return;
    }
    r->status = ALLOC_OK;
    r->peak_rss = num(o, "peak_rss_bytes");
    r->peak_exact = json_is_true(json_object_get(o, "peak_exact"));
    r->end_rss = num(o, "end_rss_bytes");
    r->minor_faults = num(o, "minor_faults");
    r->major_faults = num(o, "major_faults");
    r->failed = num(o, "failed");
    r->ops = num(o, "ops");
    r->threads = (unsigned)num(o, "threads");
    r->substituted = (unsigned)num(o, "substituted");
    r->cpu_s = json_real_value(json_object_get(o, "cpu_s"));
    r->wall_s = json_real_value(json_object_get(o, "wall_s"));
    const char *lists[] = {"by_count", "by_time"};
    size_t total = 0;
    for (int l = 0; l < 2; l++)
        total += json_array_size(json_object_get(o, lists[l]));
    if (total && (r->series = calloc(total, sizeof *r->series))) {
        for (int l = 0; l < 2; l++) {
            const json_t *a = json_object_get(o, lists[l]);
            for (size_t i = 0; i < json_array_size(a); i++) {
                const json_t *p = json_array_get(a, i);
                r->series[r->nseries++] = (alloc_point_t){
                    .t_s = json_number_value(json_array_get(p, 0)),
                    .ops = (uint64_t)json_integer_value(json_array_get(p, 1)),
                    .rss = (uint64_t)json_integer_value(json_array_get(p, 2))};
            }
        }
        qsort(r->series, r->nseries, sizeof *r->series, by_time);
    }
    json_decref(o);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Whether the line about allocator k's library (missing: the line that
 * installs it) or about memsim-replay (k == catalog_count()) is still to
 * be said: once per analysis, not once per trace of a directory (79
 * traces of a python3 run under pyenv's shims made 158 such lines).  The
 * traces are finished one at a time, on the main thread. */
static bool say_once(size_t k)
{
    static bool said[CATALOG_MAX_SPECS + 1];
    if (k > CATALOG_MAX_SPECS || said[k])
        return false;
    return said[k] = true;
}

/* The same, for what the allocator of the i-th spec said on stderr as
 * its replay ran (jemalloc: "<jemalloc>: Invalid conf value: ..."). */
static bool say_once_spec(size_t i)
{
    static bool said[CATALOG_MAX_SPECS];
    if (i >= CATALOG_MAX_SPECS || said[i])
        return false;
    return said[i] = true;
}

/* The first lines (at most 3) of what a replay that succeeded wrote on
 * stderr: the allocator's own words, about its settings as a rule. */
static void say_stderr(const char *label, const char *text)
{
    for (int k = 0; k < 3 && *text; k++) {
        const char *nl = strchr(text, '\n');
        int n = nl ? (int)(nl - text) : (int)strlen(text);
        escape_line(stderr, "%s: the allocator of %s said: %.*s", ANALYZE_CMD, label, n, text);
        text += n + (nl != NULL);
    }
}

static size_t catalog_index(const catalog_allocator_t *a)
{
    size_t i = 0;
    while (i < catalog_count() && catalog_at(i) != a)
        i++;
    return i;
}

/* Every allocator of the options through the file, in parallel. */
static void run_all(process_t *pr, allocators_t *a, int opfd)
{
    const analyze_opts_t *o = pr->o;
    char replay[4200];
    bool have_replay = replay_path(replay, sizeof replay);
    child_t c[CATALOG_MAX_SPECS];
    size_t nc = 0;
    double t0 = now_s();
    for (size_t i = 0; i < o->nallocators; i++) {
        alloc_row_t *r = &a->rows[a->nrows++];
        *r = (alloc_row_t){.spec = &o->allocators[i]};
        char lib[4096], line[128];
        if (!catalog_library(r->spec->a, lib, sizeof lib)) {
            r->status = ALLOC_MISSING;
            snprintf(r->message, sizeof r->message, "%s",
                     catalog_install_line(r->spec->a, line, sizeof line));
            if (say_once(catalog_index(r->spec->a)))
                fprintf(stderr, "%s: allocator %s is not installed (its library %s): %s\n",
                        ANALYZE_CMD, r->spec->a->name, r->spec->a->sonames[0], r->message);
            continue;
        }
        if (!have_replay) {
            r->status = ALLOC_FAILED;
            snprintf(r->message, sizeof r->message, "memsim-replay is not beside memsim-analyze "
                     "(make builds it)");
            if (say_once(catalog_count()))
                fprintf(stderr, "%s: --allocators: %s\n", ANALYZE_CMD, r->message);
            continue;
        }
        if (start_child(replay, opfd, r, lib, &c[nc])) {
            r->status = ALLOC_FAILED;
            snprintf(r->message, sizeof r->message, "cannot start memsim-replay: %s", strerror(errno));
            continue;
        }
        nc++;
    }
    collect(c, nc);
    for (size_t i = 0; i < nc; i++) {
        int status = 0;
        while (waitpid(c[i].pid, &status, 0) < 0 && errno == EINTR)
            ;
        read_result(&c[i], status);
        c[i].row->substituted &= a->kinds; /* only the kinds the trace has */
        if (c[i].row->status == ALLOC_FAILED)
            escape_line(stderr, "%s: %s: replay through %s: %s", ANALYZE_CMD, pr->path,
                        c[i].row->spec->label, c[i].row->message);
        else if (c[i].netext && say_once_spec((size_t)(c[i].row - a->rows)))
            say_stderr(c[i].row->spec->label, c[i].etext);
        free(c[i].text);
        free(c[i].etext);
    }
    a->wall_s = now_s() - t0;
    /* best first: the lowest peak RSS */
    for (size_t i = 0; i < a->nrows; i++)
        if (a->rows[i].status == ALLOC_OK)
            a->order[a->nordered++] = i;
    for (size_t i = 1; i < a->nordered; i++)
        for (size_t k = i; k > 0 && a->rows[a->order[k]].peak_rss < a->rows[a->order[k - 1]].peak_rss; k--) {
            size_t t = a->order[k];
            a->order[k] = a->order[k - 1];
            a->order[k - 1] = t;
        }
}

/* ---- the consumer ------------------------------------------------------------------ */

static bool wanted(const process_t *pr)
{
    const analyze_opts_t *o = pr->o;
    return o->nallocators && !o->flamegraph && o->collapsed == ANALYZE_NO_COLLAPSED;
}

static int allocators_on_init(process_t *pr)
{
    pr->alloc_writer = NULL;
    pr->allocators = NULL;
    if (!wanted(pr))
        return 0;
    if (!(pr->alloc_writer = writer_open()) || !(pr->allocators = calloc(1, sizeof *pr->allocators))) {
        writer_close(pr->alloc_writer);
        pr->alloc_writer = NULL;
        fprintf(stderr, "%s: out of memory\n", ANALYZE_CMD);
        return -1;
    }
    pr->alloc_writer->ran_with = catalog_find("glibc");
    pr->alloc_writer->all_pages = pr->o->allocators_all_pages;
    return 0;
}

static void allocators_on_event(process_t *pr, const event_t *e)
{
    alloc_writer_t *w = pr->alloc_writer;
    if (__builtin_expect(!w, 1) || pr->s.sample_bytes) /* sampled: see on_finish */
        return;
    switch (e->type) {
    case EV_ALLOC:
        on_alloc(w, thread_index(w, e->tid), e->addr, e->size,
                 kind_of_fn[e->fn < TRACEFMT_FN_COUNT ? e->fn : 0], log2_align(e->align));
        break;
    case EV_FREE:
        on_free(w, thread_index(w, e->tid), e->addr, e->touched);
        break;
    case EV_REALLOC:
        on_realloc(w, thread_index(w, e->tid), e->old_addr, e->addr, e->size, e->touched);
        break;
    case EV_TOUCHED: { /* a block live at the end */
        live_t *l = hashtab_find(&w->live, &live_type, e->addr);
        if (l)
            set_touched(w, (uint32_t)(l->slot1 - 1), e->touched);
        break;
    }
    case EV_MODULE: {
        const char *path = e->json ? json_string_value(json_object_get(e->json, "path")) : NULL;
        const catalog_allocator_t *c = path ? catalog_from_library(path) : NULL;
        if (c)
            w->ran_with = c;
        break;
    }
    default:
        break;
    }
}

static void allocators_on_finish(process_t *pr)
{
    alloc_writer_t *w = pr->alloc_writer;
    if (!w)
        return;
    allocators_t *a = pr->allocators;
    a->ran_with = w->ran_with;
    a->peak_live = pr->s.peak_heap;
    a->all_pages = w->all_pages;
    oplog_header_t h;
    if (pr->s.sample_bytes) {
        /* A sampled trace holds one allocation in many: no sequence of
         * requests to replay (the reports say so, as for the strategies). */
        snprintf(a->problem, sizeof a->problem, "a sampled trace does not hold every request");
    } else if (writer_finish(w, pr->s.peak_heap, &h)) {
        snprintf(a->problem, sizeof a->problem, "%s", w->why);
        escape_line(stderr, "%s: %s: allocators: %s: not replayed", ANALYZE_CMD, pr->path, w->why);
    } else {
        a->ops = h.nops;
        a->nslots = h.nslots;
        a->windows = h.nwindows;
        a->threads = h.nthreads;
        a->kinds = w->kinds;
        run_all(pr, a, w->fd);
    }
    writer_close(w);
    pr->alloc_writer = NULL;
}

static void allocators_on_fini(process_t *pr)
{
    writer_close(pr->alloc_writer);
    pr->alloc_writer = NULL;
    if (pr->allocators)
        for (size_t i = 0; i < pr->allocators->nrows; i++)
            free(pr->allocators->rows[i].series);
    free(pr->allocators);
    pr->allocators = NULL;
}

const consumer_t allocators_consumer = {"allocators", allocators_on_init, allocators_on_event,
                                        allocators_on_finish, allocators_on_fini};

const alloc_row_t *allocators_ran_with_row(const allocators_t *a)
{
    for (size_t i = 0; i < a->nrows; i++)
        if (a->rows[i].status == ALLOC_OK && a->rows[i].spec->a == a->ran_with &&
            !a->rows[i].spec->nsettings)
            return &a->rows[i];
    return NULL;
}

double allocators_ns_per_op(const alloc_row_t *r)
{
    return r->ops ? r->wall_s * 1e9 / (double)r->ops : 0.0;
}
