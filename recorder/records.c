/*
 * records: the bytes of each record.  See records.h.
 */
#include "recorder/records.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/hashtab.h"
#include "include/memsim.h"
#include "ipc/msg.h"
#include "ipc/seccomp.h"
#include "trace/jsonw.h"
#include "trace/recfmt.h"

#define RECORD_MAX 1024 /* every fixed-shape record fits */

/* The functions' names, padded so that the hot records copy a constant
 * 16 bytes. */
static const struct {
    char s[16];
    uint8_t n;
} fn_names[FN_COUNT] = {
#define N(e, name) [e] = {name, sizeof(name) - 1}
    N(FN_MALLOC, "malloc"),
    N(FN_CALLOC, "calloc"),
    N(FN_REALLOC, "realloc"),
    N(FN_REALLOCARRAY, "reallocarray"),
    N(FN_MEMALIGN, "memalign"),
    N(FN_POSIX_MEMALIGN, "posix_memalign"),
    N(FN_ALIGNED_ALLOC, "aligned_alloc"),
    N(FN_VALLOC, "valloc"),
    N(FN_PVALLOC, "pvalloc"),
    N(FN_FREE, "free"),
    N(FN_MMAP, "mmap"),
    N(FN_MMAP64, "mmap64"),
    N(FN_MUNMAP, "munmap"),
    N(FN_MREMAP, "mremap"),
#undef N
};

static const char *fn_name(unsigned fn) { return fn < FN_COUNT ? fn_names[fn].s : "?"; }

/* A failed request may ask for more than any reader's integers hold
 * (jansson's are int64): such sizes are written as INT64_MAX. */
static uint64_t clamp63(uint64_t v) { return v > INT64_MAX ? INT64_MAX : v; }

/* ---- jsonw records --------------------------------------------------------------------- */

/* ---- times and threads ------------------------------------------------------------- */

/* Threads, by their index in the trace: a lib/hashtab table keyed by
 * tid, marked by index + 1. */
typedef struct thread_slot_s {
    uint64_t tid;
    uint64_t index1; /* index + 1; 0: an empty slot */
} thread_slot_t;

static const hashtab_type_t thread_type = {
    .slot_size = sizeof(thread_slot_t),
    .key_off = offsetof(thread_slot_t, tid),
    .mark_off = offsetof(thread_slot_t, index1),
};

static records_ctx_t threads; /* the current trace's */

void records_reset(void) { records_ctx_fini(&threads); }

void records_swap(records_ctx_t *other)
{
    records_ctx_t t = threads;
    threads = *other;
    *other = t;
}

void records_ctx_fini(records_ctx_t *c)
{
    hashtab_fini(&c->tab, &thread_type);
    memset(c, 0, sizeof *c);
}

uint64_t records_threadless(void) { return threads.threadless; }

/* t (ns since the start) in microseconds; it becomes the time the next
 * compact record counts from. */
static uint64_t stamp(uint64_t t)
{
    threads.last_us = t / 1000;
    return threads.last_us;
}

/* {"ev":ev,"t":...,"tid":... */
static void head(jsonw_t *w, const char *ev, uint64_t t, pid_t tid)
{
    jsonw_object_begin(w);
    jsonw_key_str(w, "ev", ev);
    jsonw_key_u64(w, "t", stamp(t));
    jsonw_key_i64(w, "tid", tid);
}

/* ---- the record builder: every JSON record but the end --------------------------- */

/* A record being written: in the output buffer (out_line; one larger
 * than its cap is dropped), or, for those that may be larger than
 * OUT_RECORD_MAX (argv, the child list), in a block of its own, copied
 * in whole at the end. */
typedef struct record_s {
    jsonw_t w;
    char *own; /* the block of its own, or NULL */
} record_t;

/* Open a record of at most cap bytes with its head; own: in a block of
 * its own.  False, the record counted as dropped, when that block found
 * no memory. */
static bool record_begin(out_t *o, record_t *r, bool own, size_t cap, const char *ev, uint64_t t,
                         pid_t tid)
{
    r->own = NULL;
    if (own) {
        r->own = malloc(cap);
        if (!r->own) {
            o->dropped++;
            o->records++;
            return false;
        }
    }
    jsonw_init(&r->w, r->own ? r->own : out_line(o, cap), cap);
    head(&r->w, ev, t, tid);
    return true;
}

/* Close the record and commit it (or count it dropped, when it
 * overflowed its cap, or a block of its own the output buffer). */
static void record_end(out_t *o, record_t *r)
{
    jsonw_t *w = &r->w;
    jsonw_line_end(w);
    if (w->overflow || (r->own && w->len > OUT_BUF)) {
        o->dropped++;
        o->records++;
    } else if (r->own) {
        memcpy(out_line(o, w->len), r->own, w->len);
        out_commit(o, w->len);
    } else {
        out_commit(o, w->len);
    }
    free(r->own);
}

static size_t args_bytes(size_t n) { return n * 6 + 64; }

/* The NUL-separated strings of args (n bytes) as a JSON array. */
static void args_array(jsonw_t *w, const char *key, const char *args, size_t n)
{
    jsonw_key(w, key);
    jsonw_array_begin(w);
    for (size_t at = 0; at < n;) {
        size_t k = strnlen(args + at, n - at);
        jsonw_strn(w, args + at, k);
        at += k + 1;
    }
    jsonw_array_end(w);
}

void records_meta(out_t *o, uint64_t t, pid_t tid, const records_meta_t *m)
{
    size_t cap = 8192 + 6 * (strlen(m->exe) + (m->parent_trace ? strlen(m->parent_trace) : 0) +
                             (m->note ? strlen(m->note) : 0)) +
                 args_bytes(m->argv_len);
    record_t r;
    if (!record_begin(o, &r, true, cap, TRACEFMT_NAME(META), t, tid))
        return;
    jsonw_key_str(&r.w, "format", TRACEFMT_FORMAT);
    jsonw_key_u64(&r.w, "version", TRACEFMT_VERSION);
    jsonw_key_i64(&r.w, "pid", m->pid);
    jsonw_key_i64(&r.w, "ppid", m->ppid);
    jsonw_key_str(&r.w, "exe", m->exe);
    args_array(&r.w, "argv", m->argv, m->argv_len);
    jsonw_key_u64(&r.w, "start_unix_ns", m->start_unix_ns);
    jsonw_key_u64(&r.w, "page_size", (uint64_t)sysconf(_SC_PAGESIZE));
    jsonw_key_str(&r.w, "strategy", m->strategy);
    jsonw_key_u64(&r.w, "device_size", m->device_size);
    jsonw_key_u64(&r.w, "stack_depth", m->stack_depth);
    jsonw_key_bool(&r.w, "mmap", m->mmap);
    if (m->sample_bytes)
        jsonw_key_u64(&r.w, "sample_bytes", m->sample_bytes);
    jsonw_key_str(&r.w, "memsim_version", MEMSIM_VERSION);
    if (m->parent_trace)
        jsonw_key_str(&r.w, "parent_trace", m->parent_trace);
    else
        jsonw_key_null(&r.w, "parent_trace");
    if (m->note && *m->note)
        jsonw_key_str(&r.w, "note", m->note);
    record_end(o, &r);
}

void records_module_load(out_t *o, uint64_t t, pid_t tid, const char *path, size_t n,
                         uint64_t base, uint64_t size)
{
    record_t r;
    record_begin(o, &r, false, RECORD_MAX + 6 * n, TRACEFMT_NAME(MODULE), t, tid);
    jsonw_key_str(&r.w, "op", "load");
    jsonw_key(&r.w, "path");
    jsonw_strn(&r.w, path, n);
    jsonw_key_u64(&r.w, "base", base);
    jsonw_key_u64(&r.w, "size", size);
    record_end(o, &r);
}

void records_module_unload(out_t *o, uint64_t t, pid_t tid, uint64_t base, uint64_t size)
{
    record_t r;
    record_begin(o, &r, false, RECORD_MAX, TRACEFMT_NAME(MODULE), t, tid);
    jsonw_key_str(&r.w, "op", "unload");
    jsonw_key_str(&r.w, "path", "");
    jsonw_key_u64(&r.w, "base", base);
    jsonw_key_u64(&r.w, "size", size);
    record_end(o, &r);
}

void records_stack(out_t *o, uint64_t t, pid_t tid, uint64_t id, const uint64_t *frames,
                   unsigned n)
{
    record_t r;
    record_begin(o, &r, false, 128 + (size_t)n * 22, TRACEFMT_NAME(STACK), t, tid);
    jsonw_key_u64(&r.w, "id", id);
    jsonw_key(&r.w, "frames");
    jsonw_array_begin(&r.w);
    for (unsigned i = 0; i < n; i++)
        jsonw_u64(&r.w, frames[i]);
    jsonw_array_end(&r.w);
    record_end(o, &r);
}

void records_unknown_free(out_t *o, uint64_t t, pid_t tid, unsigned fn, uint64_t addr,
                          uint64_t caller)
{
    record_t r;
    record_begin(o, &r, false, RECORD_MAX, TRACEFMT_NAME(ERROR), t, tid);
    jsonw_key_str(&r.w, "kind", "unknown_free");
    jsonw_key_str(&r.w, "fn", fn_name(fn));
    jsonw_key_u64(&r.w, "addr", addr);
    jsonw_key_u64(&r.w, "caller", caller);
    record_end(o, &r);
}

void records_touched(out_t *o, uint64_t t, pid_t tid, uint64_t addr, uint64_t pages)
{
    record_t r;
    record_begin(o, &r, false, RECORD_MAX, TRACEFMT_NAME(TOUCHED), t, tid);
    jsonw_key_u64(&r.w, "addr", addr);
    jsonw_key_u64(&r.w, "pages", pages);
    record_end(o, &r);
}

void records_mmap(out_t *o, uint64_t t, pid_t tid, unsigned fn, uint64_t addr, uint64_t size,
                  int prot, int flags, int fd, uint32_t stack)
{
    record_t r;
    record_begin(o, &r, false, RECORD_MAX, TRACEFMT_NAME(MMAP), t, tid);
    jsonw_key_str(&r.w, "fn", fn_name(fn));
    jsonw_key_u64(&r.w, "addr", addr);
    jsonw_key_u64(&r.w, "size", size);
    jsonw_key_i64(&r.w, "prot", prot);
    jsonw_key_i64(&r.w, "flags", flags);
    jsonw_key_i64(&r.w, "fd", fd);
    jsonw_key_u64(&r.w, "stack", stack);
    record_end(o, &r);
}

void records_munmap(out_t *o, uint64_t t, pid_t tid, uint64_t addr, uint64_t size,
                    uint32_t stack)
{
    record_t r;
    record_begin(o, &r, false, RECORD_MAX, TRACEFMT_NAME(MUNMAP), t, tid);
    jsonw_key_str(&r.w, "fn", "munmap");
    jsonw_key_u64(&r.w, "addr", addr);
    jsonw_key_u64(&r.w, "size", size);
    jsonw_key_u64(&r.w, "stack", stack);
    record_end(o, &r);
}

void records_mremap(out_t *o, uint64_t t, pid_t tid, uint64_t old, uint64_t old_size,
                    uint64_t addr, uint64_t size, int flags, uint32_t stack)
{
    record_t r;
    bool failed = addr == UINT64_MAX;
    record_begin(o, &r, false, RECORD_MAX,
                 failed ? TRACEFMT_NAME(MREMAP_FAILED) : TRACEFMT_NAME(MREMAP), t, tid);
    jsonw_key_str(&r.w, "fn", "mremap");
    jsonw_key_u64(&r.w, "old_addr", old);
    jsonw_key_u64(&r.w, "old_size", old_size);
    if (failed)
        jsonw_key_null(&r.w, "addr");
    else
        jsonw_key_u64(&r.w, "addr", addr);
    jsonw_key_u64(&r.w, "size", clamp63(size));
    jsonw_key_i64(&r.w, "flags", flags);
    jsonw_key_u64(&r.w, "stack", stack);
    record_end(o, &r);
}

void records_phase(out_t *o, uint64_t t, pid_t tid, bool begin_, const char *name, size_t n)
{
    record_t r;
    record_begin(o, &r, false, RECORD_MAX + 6 * n, TRACEFMT_NAME(PHASE), t, tid);
    jsonw_key_str(&r.w, "op", begin_ ? "begin" : "end");
    if (begin_) {
        jsonw_key(&r.w, "name");
        jsonw_strn(&r.w, name ? name : "", n);
    }
    record_end(o, &r);
}

void records_fork(out_t *o, uint64_t t, pid_t tid, pid_t child)
{
    record_t r;
    record_begin(o, &r, false, RECORD_MAX, TRACEFMT_NAME(FORK), t, tid);
    jsonw_key_i64(&r.w, "child", child);
    record_end(o, &r);
}

void records_launch(out_t *o, uint64_t t, pid_t tid, const char *ev, pid_t child,
                    const char *bytes, size_t n, bool traced)
{
    size_t cap = RECORD_MAX + args_bytes(n);
    record_t r;
    if (!record_begin(o, &r, true, cap, ev, t, tid))
        return;
    if (child > 0)
        jsonw_key_i64(&r.w, "child", child);
    size_t plen = strnlen(bytes, n);
    jsonw_key(&r.w, "path");
    jsonw_strn(&r.w, bytes, plen);
    args_array(&r.w, "argv", bytes + (plen < n ? plen + 1 : n), plen < n ? n - plen - 1 : 0);
    if (!traced)
        jsonw_key_bool(&r.w, "traced", false);
    record_end(o, &r);
}

void records_exec_failed(out_t *o, uint64_t t, pid_t tid, int err)
{
    record_t r;
    record_begin(o, &r, false, RECORD_MAX, TRACEFMT_NAME(EXEC_FAILED), t, tid);
    jsonw_key_i64(&r.w, "errno", err);
    record_end(o, &r);
}

/* SECCOMP_NO_*'s names, bit by bit (docs/trace-format.md). */
static const char *const without_names[] = {"altstack", "memory", "wake",  "signals", "unwinder",
                                            "rusage",   "tid",    "clock", "locks"};
_Static_assert(SECCOMP_NO_LOCKS == 1u << 8, "a name for each of SECCOMP_NO_*");

void records_sandbox(out_t *o, uint64_t t, pid_t tid, uint64_t mode, uint64_t flags,
                     uint64_t without, uint64_t filters)
{
    record_t r;
    record_begin(o, &r, false, RECORD_MAX, TRACEFMT_NAME(SANDBOX), t, tid);
    jsonw_key_str(&r.w, "mode", mode == SANDBOX_MODE_STRICT ? "strict" : "filter");
    jsonw_key_u64(&r.w, "flags", flags & 0xffffffffu);
    jsonw_key_u64(&r.w, "filters", filters);
    jsonw_key_bool(&r.w, "traced", !(flags & MSG_SANDBOX_STOPS));
    jsonw_key(&r.w, "without");
    jsonw_array_begin(&r.w);
    for (unsigned i = 0; i < sizeof without_names / sizeof without_names[0]; i++)
        if (without & (1u << i))
            jsonw_str(&r.w, without_names[i]);
    jsonw_array_end(&r.w);
    record_end(o, &r);
}

static void key_rollup(jsonw_t *w, const procfs_rollup_t *r)
{
    jsonw_key(w, "rollup");
    jsonw_object_begin(w);
    jsonw_key_u64(w, "rss", r->rss);
    jsonw_key_u64(w, "pss", r->pss);
    jsonw_key_u64(w, "pss_anon", r->pss_anon);
    jsonw_key_u64(w, "pss_file", r->pss_file);
    jsonw_key_u64(w, "shared_clean", r->shared_clean);
    jsonw_key_u64(w, "shared_dirty", r->shared_dirty);
    jsonw_key_u64(w, "private_clean", r->private_clean);
    jsonw_key_u64(w, "private_dirty", r->private_dirty);
    jsonw_key_u64(w, "anonymous", r->anonymous);
    jsonw_key_u64(w, "lazyfree", r->lazyfree);
    jsonw_key_u64(w, "anon_huge_pages", r->anon_huge_pages);
    jsonw_key_u64(w, "swap", r->swap);
    jsonw_key_u64(w, "swap_pss", r->swap_pss);
    jsonw_object_end(w);
}

void records_sample(out_t *o, uint64_t t, pid_t tid, const records_sample_t *s)
{
    size_t cap = 2048 + s->nchildren * 64;
    record_t r;
    if (!record_begin(o, &r, true, cap, TRACEFMT_NAME(SAMPLE), t, tid))
        return;
    jsonw_key_u64(&r.w, "rss", s->st.rss);
    jsonw_key_u64(&r.w, "hwm", s->st.hwm);
    jsonw_key_u64(&r.w, "vm_size", s->st.vm_size > s->memsim_vm ? s->st.vm_size - s->memsim_vm : 0);
    jsonw_key_u64(&r.w, "vm_peak", s->st.vm_peak > s->memsim_vm ? s->st.vm_peak - s->memsim_vm : 0);
    jsonw_key_u64(&r.w, "maxrss_self", s->st.hwm);
    jsonw_key_u64(&r.w, "maxrss_children", s->maxrss_children);
    jsonw_key_u64(&r.w, "heap_live", s->heap_live);
    jsonw_key_u64(&r.w, "heap_blocks", s->heap_blocks);
    if (s->sampled)
        jsonw_key_u64(&r.w, "heap_live_se", s->heap_live_se);
    if (s->have_malloc) {
        jsonw_key_u64(&r.w, "malloc_reserved", s->malloc_reserved);
        jsonw_key_u64(&r.w, "malloc_in_use", s->malloc_in_use);
    } else {
        jsonw_key_null(&r.w, "malloc_reserved");
        jsonw_key_null(&r.w, "malloc_in_use");
    }
    jsonw_key_u64(&r.w, "mmap_live", s->mmap_live);
    if (s->have_sim) {
        jsonw_key_u64(&r.w, "sim_live", s->sim_live);
        jsonw_key_u64(&r.w, "sim_reserved", s->sim_reserved);
        jsonw_key_u64(&r.w, "sim_largest_free", s->sim_largest_free);
    } else {
        jsonw_key_null(&r.w, "sim_live");
        jsonw_key_null(&r.w, "sim_reserved");
        jsonw_key_null(&r.w, "sim_largest_free");
    }
    jsonw_key_u64(&r.w, "device_total", s->device_total);
    jsonw_key_u64(&r.w, "tree_rss", s->tree_rss);
    jsonw_key(&r.w, "children");
    jsonw_array_begin(&r.w);
    for (size_t i = 0; i < s->nchildren; i++) {
        jsonw_object_begin(&r.w);
        jsonw_key_i64(&r.w, "pid", s->child_pid[i]);
        jsonw_key_u64(&r.w, "rss", s->child_rss[i]);
        jsonw_object_end(&r.w);
    }
    jsonw_array_end(&r.w);
    if (s->rollup)
        key_rollup(&r.w, s->rollup);
    record_end(o, &r);
}

void records_end(out_t *o, uint64_t t, pid_t tid, const records_end_t *e)
{
    char buf[RECORD_MAX];
    jsonw_t w;
    jsonw_init(&w, buf, sizeof buf);
    head(&w, TRACEFMT_NAME(END), t, tid);
    jsonw_key_str(&w, "reason", e->reason);
    if (e->status >= 0)
        jsonw_key_i64(&w, "status", e->status);
    else
        jsonw_key_null(&w, "status");
    if (e->signal > 0)
        jsonw_key_i64(&w, "signal", e->signal);
    else
        jsonw_key_null(&w, "signal");
    if (!out_last_fits(o, RECORD_MAX))
        out_flush(o); /* what is dropped is known once everything is written */
    jsonw_key_u64(&w, "records", o->records - o->dropped + 1);
    jsonw_key_u64(&w, "dropped", o->dropped + e->dropped);
    jsonw_key_u64(&w, "after_end", e->after_end);
    jsonw_key_u64(&w, "unknown_frees", e->unknown_frees);
    jsonw_key_u64(&w, "live_allocations", e->live_allocations);
    jsonw_key_u64(&w, "live_bytes", e->live_bytes);
    jsonw_key_u64(&w, "stacks", e->stacks);
    if (e->untracked)
        jsonw_key_u64(&w, "untracked", e->untracked);
    if (e->stackless)
        jsonw_key_u64(&w, "stackless", e->stackless);
    if (e->threadless)
        jsonw_key_u64(&w, "threadless", e->threadless);
    jsonw_line_end(&w);
    out_last(o, buf, w.len);
}

/* ---- the compact records -------------------------------------------------------------- */

/* {"ev":"thread",...,"tid":tid,"index":index}: tid 0 for the unknown thread. */
static void thread_record(out_t *o, uint64_t t, pid_t tid, uint32_t index)
{
    record_t r;
    record_begin(o, &r, false, RECORD_MAX, TRACEFMT_NAME(THREAD), t, tid);
    jsonw_key_u64(&r.w, "index", index);
    record_end(o, &r);
}

/* An empty slot for a new thread, or NULL when none is left.  The table
 * doubles at half full; with no memory for that (the recorder shares the
 * program's RLIMIT_AS) it fills on, one slot always left empty so that
 * every probe ends, and growing is tried again RECORDS_GROW_RETRY calls
 * later, not at every event of a thread left out. */
static thread_slot_t *thread_slot(uint64_t tid)
{
    hashtab_t *t = &threads.tab;
    if (!t->slots || (t->count + 1) * 2 > t->mask + 1) {
        if (threads.grow_wait)
            threads.grow_wait--;
        else if (hashtab_grow(t, &thread_type))
            threads.grow_wait = RECORDS_GROW_RETRY;
    }
    if (!t->slots || t->count + 2 > t->mask + 1)
        return NULL;
    return hashtab_place(t, &thread_type, tid);
}

/* The index of the threads that found no slot: one more index, given out
 * at the first such event, whose thread record says tid 0 (no thread's),
 * so that their events are never taken for another thread's; counted for
 * the end record. */
static uint32_t unknown_thread(out_t *o, uint64_t t)
{
    threads.threadless++;
    if (!threads.unknown) {
        threads.unknown = ++threads.n;
        thread_record(o, t, 0, threads.unknown - 1);
    }
    return threads.unknown - 1;
}

/* The index of thread tid in this trace; a thread seen for the first
 * time gets the next one, and its "thread" record goes first.  A known
 * thread is looked up first: its index needs no memory. */
static uint32_t thread_index(out_t *o, uint64_t t, pid_t tid)
{
    const thread_slot_t *known = hashtab_find(&threads.tab, &thread_type, (uint32_t)tid);
    if (__builtin_expect(known != NULL, 1))
        return (uint32_t)known->index1 - 1;
    thread_slot_t *s = thread_slot((uint32_t)tid);
    if (!s)
        return unknown_thread(o, t);
    s->tid = (uint32_t)tid;
    s->index1 = ++threads.n;
    thread_record(o, t, tid, threads.n - 1);
    return threads.n - 1;
}

/* ["x",dt,thread, — the time counted from the record before. */
static char *compact_head(out_t *o, char **start, char tag, uint64_t t, pid_t tid)
{
    uint32_t index = thread_index(o, t, tid);
    uint64_t us = t / 1000;
    char *p = *start = out_line(o, RECFMT_MAX);
    p = RECFMT_LIT(p, "[\"");
    *p++ = tag;
    p = RECFMT_LIT(p, "\",");
    p = recfmt_i64(p, (int64_t)(us - threads.last_us));
    threads.last_us = us;
    *p++ = ',';
    return recfmt_u64(p, index);
}

static char *hex_str(char *p, uint64_t v)
{
    p = RECFMT_LIT(p, ",\"");
    p = recfmt_hex(p, v);
    return RECFMT_LIT(p, "\"");
}

/* ,"name" of fn */
static char *fn_str(char *p, unsigned fn)
{
    p = RECFMT_LIT(p, ",\"");
    memcpy(p, fn_names[fn].s, sizeof fn_names[fn].s);
    p += fn_names[fn].n;
    return RECFMT_LIT(p, "\"");
}

static void compact_end(out_t *o, const char *start, char *p)
{
    p = RECFMT_LIT(p, "]\n");
    out_commit(o, (size_t)(p - start));
}

void records_alloc(out_t *o, uint64_t t, pid_t tid, unsigned fn, uint64_t addr, uint64_t size,
                   uint64_t align, uint32_t stack)
{
    char *start, *p = compact_head(o, &start, TRACEFMT_TAG_ALLOC, t, tid);
    p = hex_str(p, addr);
    *p++ = ',';
    p = recfmt_u64(p, size);
    *p++ = ',';
    p = recfmt_u64(p, stack);
    if (fn >= FN_COUNT)
        fn = FN_MALLOC;
    if (fn != FN_MALLOC || align != TRACEFMT_DEFAULT_ALIGN) {
        p = fn_str(p, fn);
        if (align != TRACEFMT_DEFAULT_ALIGN) {
            *p++ = ',';
            p = recfmt_u64(p, align);
        }
    }
    compact_end(o, start, p);
}

/* ,flags[,"fn"[,touched]] when one is not the default (touched: pages
 * + 1, 0 when not counted; flags and fn are written before it). */
static char *flags_fn(char *p, unsigned flags, unsigned fn, unsigned dflt, uint64_t touched)
{
    if (fn >= FN_COUNT)
        fn = dflt;
    if (!flags && fn == dflt && !touched)
        return p;
    *p++ = ',';
    p = recfmt_u64(p, flags);
    if (fn == dflt && !touched)
        return p;
    p = fn_str(p, fn);
    if (!touched)
        return p;
    *p++ = ',';
    return recfmt_u64(p, touched - 1);
}

void records_free(out_t *o, uint64_t t, pid_t tid, unsigned fn, uint64_t addr, bool inherited,
                  uint64_t touched)
{
    char *start, *p = compact_head(o, &start, TRACEFMT_TAG_FREE, t, tid);
    p = hex_str(p, addr);
    p = flags_fn(p, inherited ? TRACEFMT_F_INHERITED : 0, fn, FN_FREE, touched);
    compact_end(o, start, p);
}

void records_realloc(out_t *o, uint64_t t, pid_t tid, unsigned fn, uint64_t old, uint64_t addr,
                     bool known, uint64_t size, uint32_t stack, bool inherited, uint64_t touched)
{
    char *start, *p = compact_head(o, &start, TRACEFMT_TAG_REALLOC, t, tid);
    p = hex_str(p, old);
    p = hex_str(p, addr);
    *p++ = ',';
    p = recfmt_u64(p, size);
    *p++ = ',';
    p = recfmt_u64(p, stack);
    unsigned flags = (inherited ? TRACEFMT_F_INHERITED : 0) | (known ? 0 : TRACEFMT_F_OLD_UNKNOWN);
    p = flags_fn(p, flags, fn, FN_REALLOC, touched);
    compact_end(o, start, p);
}

void records_realloc_failed(out_t *o, uint64_t t, pid_t tid, unsigned fn, uint64_t addr,
                            uint64_t size, uint32_t stack)
{
    char *start, *p = compact_head(o, &start, TRACEFMT_TAG_REALLOC_FAILED, t, tid);
    p = hex_str(p, addr);
    *p++ = ',';
    p = recfmt_u64(p, clamp63(size));
    *p++ = ',';
    p = recfmt_u64(p, stack);
    if (fn < FN_COUNT && fn != FN_REALLOC)
        p = fn_str(p, fn);
    compact_end(o, start, p);
}
