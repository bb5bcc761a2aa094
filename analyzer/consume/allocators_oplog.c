/*
 * allocators_oplog: the operation file of memsim-analyze --allocators,
 * written as the trace is read.  See allocators_oplog.h.
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
#include "analyzer/consume/allocators_oplog.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "analyzer/read/reader.h"
#include "lib/grow.h"
#include "lib/hashtab.h"
#include "trace/tracefmt.h"

#define WRITE_BUF (1 << 20)
#define THREAD_BITS 10 /* OPLOG_MAX_THREADS == 1 << THREAD_BITS */
_Static_assert(OPLOG_MAX_THREADS == 1 << THREAD_BITS, "a slot's owner packs the thread");

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

alloc_writer_t *alloc_oplog_open(bool all_pages)
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
    w->all_pages = all_pages;
    oplog_header_t h = {0}; /* written for real at the end */
    put(w, &h, sizeof h);
    return w;
}

void alloc_oplog_close(alloc_writer_t *w)
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

int alloc_oplog_finish(alloc_writer_t *w, uint64_t peak_live, oplog_header_t *out)
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

void alloc_oplog_event(alloc_writer_t *w, const event_t *e)
{
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
    default:
        break;
    }
}

const char *alloc_oplog_why(const alloc_writer_t *w) { return w->why; }

int alloc_oplog_fd(const alloc_writer_t *w) { return w->fd; }

unsigned alloc_oplog_kinds(const alloc_writer_t *w) { return w->kinds; }
