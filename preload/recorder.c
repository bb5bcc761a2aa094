/*
 * recorder: the events of one traced process.  See recorder.h; the
 * records themselves are specified in docs/trace-format.md.
 */
#include "preload/recorder.h"

#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/device.h"
#include "core/procfs.h"
#include "include/memsim.h"
#include "preload/clock.h"
#include "preload/jsonw.h"
#include "preload/recfmt.h"
#include "preload/ring.h"
#include "preload/stacks.h"
#include "preload/sysmem.h"
#include "preload/trace.h"

#define TRACE_FORMAT_VERSION 2
#define RECORD_ALIGN 16 /* alloc records leave out "align" when it is this */
#define RECORD_MAX 512   /* every fixed-shape record fits */
#define MOVE_SLOT 320    /* realloc/mremap records, reserved before the call */
#define END_SLOT 400     /* the end record, reserved before its counts are known */
#define MODULES_MAX 4096

static struct {
    _Atomic bool active;
    config_t cfg;
    trace_t trace;
    pid_t pid;
    uint64_t t0;               /* CLOCK_MONOTONIC at start, ns */
    char exe[PATH_MAX];        /* /proc/self/exe */
    char exe_base[256];
    device_t *sim;             /* shadow device, or NULL; the ring's consumer's */
    _Atomic uint64_t unknown_frees;
    struct {
        uintptr_t base, size;
        bool seen;
    } modules[MODULES_MAX];
    size_t nmodules;
    pthread_mutex_t modules_lock;
    _Atomic uint64_t mmap_live;  /* bytes the program has mapped (mmap - munmap) */
    int argc;                  /* the process's arguments, for a fork child's meta */
    char **argv;
} R = {.modules_lock = PTHREAD_MUTEX_INITIALIZER};

static __thread pid_t my_tid __attribute__((tls_model("initial-exec")));

/* The program must see the errno its own call left: every entry point
 * declares KEEP_ERRNO first, and errno comes back on any return. */
static inline void restore_errno(const int *saved) { errno = *saved; }
#define KEEP_ERRNO int saved_errno_ __attribute__((cleanup(restore_errno))) = errno

static void copy_str(char *dst, size_t cap, const char *src)
{
    size_t n = strnlen(src, cap - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* The names, padded so that the hot records copy a constant 16 bytes. */
#define FN_NAME(e, name) [e] = {name, sizeof(name) - 1}
static const struct {
    char s[16];
    uint8_t n;
} fn_names[FN_COUNT] = {
    FN_NAME(FN_MALLOC, "malloc"),
    FN_NAME(FN_CALLOC, "calloc"),
    FN_NAME(FN_REALLOC, "realloc"),
    FN_NAME(FN_REALLOCARRAY, "reallocarray"),
    FN_NAME(FN_MEMALIGN, "memalign"),
    FN_NAME(FN_POSIX_MEMALIGN, "posix_memalign"),
    FN_NAME(FN_ALIGNED_ALLOC, "aligned_alloc"),
    FN_NAME(FN_VALLOC, "valloc"),
    FN_NAME(FN_PVALLOC, "pvalloc"),
    FN_NAME(FN_FREE, "free"),
    FN_NAME(FN_MMAP, "mmap"),
    FN_NAME(FN_MMAP64, "mmap64"),
    FN_NAME(FN_MUNMAP, "munmap"),
    FN_NAME(FN_MREMAP, "mremap"),
};
#undef FN_NAME

const char *recorder_fn_name(recorder_fn_t fn) { return fn < FN_COUNT ? fn_names[fn].s : "?"; }

bool recorder_active(void) { return atomic_load_explicit(&R.active, memory_order_relaxed); }
const char *recorder_trace_path(void) { return R.trace.path; }
const char *recorder_output(void) { return R.cfg.output; }
uint64_t recorder_unknown_frees(void) { return atomic_load(&R.unknown_frees); }

/* ns since the trace started, of a CLOCK_MONOTONIC time (a converted
 * tick may lie a few ns before the start). */
static uint64_t since_start(uint64_t ns) { return ns > R.t0 ? ns - R.t0 : 0; }

static pid_t tid(void)
{
    if (!my_tid)
        my_tid = (pid_t)syscall(SYS_gettid);
    return my_tid;
}

/* {"ev":ev,"t":...,"tid":... */
static void head_at(jsonw_t *w, const char *ev, uint64_t t, pid_t thread)
{
    jsonw_object_begin(w);
    jsonw_key_str(w, "ev", ev);
    jsonw_key_u64(w, "t", since_start(t));
    jsonw_key_i64(w, "tid", thread);
}

/* The calling thread's record. */
static void head(jsonw_t *w, const char *ev, uint64_t t) { head_at(w, ev, t, tid()); }

/* A failed request may ask for more than any reader's integers hold
 * (jansson's are int64): such sizes are written as INT64_MAX. */
static uint64_t clamp63(uint64_t v) { return v > INT64_MAX ? INT64_MAX : v; }

static void emit(jsonw_t *w)
{
    jsonw_line_end(w);
    if (w->overflow)
        atomic_fetch_add(&R.trace.dropped, 1);
    else
        trace_append(&R.trace, w->buf, w->len);
}

/* A record too large for the stack (argv, the child list): formatted in
 * a buffer from sysmem.  big_begin writes its head; false (counted as
 * dropped) when there is no memory.  big_end emits it and frees the buffer. */
static bool big_begin(jsonw_t *w, size_t cap, const char *ev, uint64_t t)
{
    char *buf = sysmem_alloc(cap);
    if (!buf) {
        atomic_fetch_add(&R.trace.dropped, 1);
        return false;
    }
    jsonw_init(w, buf, cap);
    head(w, ev, t);
    return true;
}

static void big_end(jsonw_t *w)
{
    emit(w);
    sysmem_free(w->buf, w->cap);
}

/* emit, after everything the ring holds (see sync_begin). */
static void sync_begin(void);
static void sync_end(void);
static void emit_synced(jsonw_t *w)
{
    sync_begin();
    emit(w);
    sync_end();
}

static void big_end_synced(jsonw_t *w)
{
    emit_synced(w);
    sysmem_free(w->buf, w->cap);
}

/* Copy a formatted record into a slot reserved earlier, padded with
 * spaces (JSON allows them) so that the slot's size never shows. */
static void pad_into(char *slot, size_t size, jsonw_t *w)
{
    jsonw_line_end(w);
    if (w->overflow || w->len > size) {
        memset(slot, ' ', size - 1);
        memcpy(slot, "{\"ev\":\"lost\"}", 13);
    } else {
        memcpy(slot, w->buf, w->len - 1);
        memset(slot + w->len - 1, ' ', size - w->len);
    }
    slot[size - 1] = '\n';
}

static void fill_slot(char *slot, jsonw_t *w)
{
    pad_into(slot, MOVE_SLOT, w);
    trace_commit(&R.trace, MOVE_SLOT);
}

/* ---- stacks -------------------------------------------------------------- */

static void write_stack(uint64_t id, const uintptr_t *frames, unsigned n, void *ctx)
{
    (void)ctx;
    char buf[64 + STACKS_MAX_DEPTH * 22];
    jsonw_t w;
    jsonw_init(&w, buf, sizeof buf);
    head(&w, "stack", clock_ns());
    jsonw_key_u64(&w, "id", id);
    jsonw_key(&w, "frames");
    jsonw_array_begin(&w);
    for (unsigned i = 0; i < n; i++)
        jsonw_u64(&w, frames[i]);
    jsonw_array_end(&w);
    emit(&w);
}

/* The caller's stack id.  A new stack whose frames lie outside every
 * known module means a library was loaded: announce it (the analyzer
 * symbolizes offline from the module records). */
/* The id of the stack in raw, captured by the entry point (or here, when
 * raw is NULL). */
static uint64_t capture_stack(const stacks_raw_t *raw)
{
    stacks_raw_t own;
    if (!raw) {
        stacks_grab(&own);
        raw = &own;
    }
    const uintptr_t *frames;
    unsigned n = stacks_frames(raw, R.cfg.stack_depth, &frames);
    bool is_new;
    uint64_t id = stacks_intern(frames, n, write_stack, NULL, &is_new);
    /* Not only when a frame lies outside every known module: a library
     * unloaded and another loaded at its address look known.  The check
     * costs a look at the loader's counters unless something changed. */
    if (is_new)
        recorder_modules_changed();
    return id;
}

/* ---- the shadow device ------------------------------------------------------ */

/* The device is touched only by the ring's consumer (or with the role
 * held), so it needs no lock of its own. */
/* The simulated address (LIVEMAP_NO_SIM when the device could not serve
 * it) and, in *block, the device's block for sim_free (or NULL). */
static uint64_t sim_alloc(size_t size, size_t align, void **block)
{
    *block = NULL;
    if (!R.sim)
        return LIVEMAP_NO_SIM;
    device_result_t r;
    if (device_alloc(R.sim, size ? size : 1, align ? align : 1, 0, &r))
        return LIVEMAP_NO_SIM;
    *block = r.block;
    return r.addr;
}

/* Free by the block itself: no lookup by address in the device. */
static void sim_free(void *block)
{
    if (!R.sim || !block)
        return;
    device_result_t r;
    device_free_block(R.sim, block, &r);
}

/* ---- heap events: the program's side ------------------------------------------- */

/* A heap event costs the program's thread its stack, its time and a slot
 * in the ring; the consumer (below) does the rest in the ring's order. */
static void post(ring_kind_t kind, recorder_fn_t fn, uint64_t addr, uint64_t size, uint64_t aux,
                 uint64_t stack, uint64_t t)
{
    /* Whole before the claim: a fatal signal's handler can publish it
     * even if it lands between claim and publish (ring_post). */
    ring_slot_t c = {.kind = (uint8_t)kind,
                     .fn = (uint8_t)fn,
                     .tid = tid(),
                     .stack = stack <= UINT32_MAX ? (uint32_t)stack : 0,
                     .t = t,
                     .addr = addr,
                     .size = size,
                     .aux = aux};
    ring_post(&c);
}

void recorder_alloc(recorder_fn_t fn, const void *p, size_t size, size_t align,
                    const stacks_raw_t *raw)
{
    KEEP_ERRNO;
    if (!recorder_active())
        return;
    uint64_t stack = capture_stack(raw);
    post(RING_ALLOC, fn, (uintptr_t)p, size, align, stack, clock_ticks());
}

void recorder_free(recorder_fn_t fn, const void *p, const stacks_raw_t *raw)
{
    KEEP_ERRNO;
    if (!recorder_active())
        return;
    uint64_t stack = capture_stack(raw);
    post(RING_FREE, fn, (uintptr_t)p, 0, 0, stack, clock_ticks());
}

void recorder_realloc_begin(recorder_move_t *m, const void *old, const stacks_raw_t *raw)
{
    KEEP_ERRNO;
    memset(m, 0, sizeof *m);
    if (!recorder_active())
        return;
    m->old.addr = (uintptr_t)old;
    m->stack = capture_stack(raw);
    m->t = clock_ticks(); /* into the ring: the writer converts it */
    /* Claimed before the real call: an allocation that reuses the old
     * address after it is claimed later, so it comes after in the trace. */
    m->ring = ring_claim();
}

void recorder_realloc_end(recorder_move_t *m, recorder_fn_t fn, const void *p, size_t size)
{
    KEEP_ERRNO;
    ring_slot_t *s = m->ring;
    if (!s)
        return; /* begin ran untraced */
    s->kind = RING_REALLOC;
    s->fn = (uint8_t)fn;
    s->tid = tid();
    s->t = m->t;
    s->addr = (uintptr_t)p;
    s->size = size;
    s->aux = m->old.addr;
    s->stack = m->stack <= UINT32_MAX ? (uint32_t)m->stack : 0;
    ring_publish(s);
}

/* ---- heap events: the consumer -------------------------------------------------- */

/* The hot records, formatted with recfmt (their shapes are those of
 * docs/trace-format.md, byte for byte what jsonw would write).  "fn" is
 * left out when it is the record's default (dflt): malloc for alloc,
 * free for free, realloc for realloc. */
static char *hot_head(char *p, const char *ev_lit, size_t ev_len, const ring_slot_t *s,
                      recorder_fn_t dflt)
{
    p = recfmt_lit(p, ev_lit, ev_len);
    p = recfmt_u64(p, since_start(clock_ticks_ns(s->t)));
    p = RECFMT_LIT(p, ",\"tid\":");
    p = recfmt_i64(p, s->tid);
    unsigned fn = s->fn < FN_COUNT ? s->fn : dflt;
    if (fn == dflt)
        return p;
    p = RECFMT_LIT(p, ",\"fn\":\"");
    memcpy(p, fn_names[fn].s, sizeof fn_names[fn].s);
    p += fn_names[fn].n;
    return RECFMT_LIT(p, "\"");
}
#define HOT_HEAD(p, ev, s, dflt)                                                            \
    hot_head((p), "{\"ev\":\"" ev "\",\"t\":", sizeof("{\"ev\":\"" ev "\",\"t\":") - 1, (s), \
             (dflt))

static char *hot_sim(char *p, uint64_t sim)
{
    p = RECFMT_LIT(p, ",\"sim\":");
    return sim == LIVEMAP_NO_SIM ? RECFMT_LIT(p, "null") : recfmt_u64(p, sim);
}

static void hot_emit(const char *buf, char *p)
{
    p = RECFMT_LIT(p, "}\n");
    trace_append(&R.trace, buf, (size_t)(p - buf));
}

/* What the state stage found, for the write stage (ring_slot_t.flags). */
#define SLOT_KNOWN 1     /* free, realloc: the block was live */
#define SLOT_INHERITED 2 /* ...and allocated before a fork */
#define SLOT_QUIET 4     /* free: a block of memsim's own: write nothing */

static uint8_t known_flags(const livemap_entry_t *e)
{
    return SLOT_KNOWN | (e->owner != R.pid ? SLOT_INHERITED : 0);
}

/* The state stage: the live map and the shadow device, in ring order. */
static void state_of(ring_slot_t *s)
{
    livemap_entry_t e, old;
    void *block;
    switch (s->kind) {
    case RING_ALLOC:
        s->sim = sim_alloc(s->size, s->aux, &block);
        e = (livemap_entry_t){.addr = s->addr, .size = s->size, .stack = s->stack,
                              .sim_block = block, .owner = R.pid};
        livemap_put_locked(&livemap_program, &e);
        break;
    case RING_FREE:
        if (livemap_take_locked(&livemap_program, s->addr, &e)) {
            s->flags = known_flags(&e);
            s->size = e.size;
            sim_free(e.sim_block);
        } else if (livemap_take(&livemap_quiet, s->addr, &e)) {
            /* A block memsim's own work made, freed by glibc on the
             * program's behalf (see livemap_quiet): no error. */
            s->flags = SLOT_QUIET;
        } else {
            s->flags = 0;
            atomic_fetch_add(&R.unknown_frees, 1);
        }
        break;
    case RING_REALLOC:
        if (!s->addr)
            break; /* failed: the old block stays */
        if (livemap_take_locked(&livemap_program, s->aux, &old)) {
            s->flags = known_flags(&old);
            s->old_size = old.size;
            sim_free(old.sim_block);
        } else {
            s->flags = 0;
            atomic_fetch_add(&R.unknown_frees, 1);
        }
        s->sim = sim_alloc(s->size, 16, &block);
        e = (livemap_entry_t){.addr = s->addr, .size = s->size, .stack = s->stack,
                              .sim_block = block, .owner = R.pid};
        livemap_put_locked(&livemap_program, &e);
        break;
    default:
        break;
    }
}

/* The write stage: the records, from the slot alone. */
static void write_alloc(const ring_slot_t *s)
{
    char buf[RECFMT_MAX], *p = HOT_HEAD(buf, "alloc", s, FN_MALLOC);
    p = RECFMT_LIT(p, ",\"addr\":");
    p = recfmt_u64(p, s->addr);
    p = RECFMT_LIT(p, ",\"size\":");
    p = recfmt_u64(p, s->size);
    if (s->aux != RECORD_ALIGN) {
        p = RECFMT_LIT(p, ",\"align\":");
        p = recfmt_u64(p, s->aux);
    }
    p = RECFMT_LIT(p, ",\"stack\":");
    p = recfmt_u64(p, s->stack);
    p = hot_sim(p, s->sim);
    hot_emit(buf, p);
}

static void write_unknown_free(const ring_slot_t *s)
{
    char buf[RECORD_MAX];
    jsonw_t w;
    jsonw_init(&w, buf, sizeof buf);
    /* The thread that freed, not the writer. */
    head_at(&w, "error", clock_ticks_ns(s->t), s->tid);
    jsonw_key_str(&w, "kind", "unknown_free");
    jsonw_key_str(&w, "fn", fn_names[s->fn].s);
    jsonw_key_u64(&w, "addr", s->addr);
    jsonw_key_u64(&w, "stack", s->stack);
    emit(&w);
}

static void write_free(const ring_slot_t *s)
{
    if (s->flags & SLOT_QUIET)
        return;
    if (!(s->flags & SLOT_KNOWN)) {
        write_unknown_free(s);
        return;
    }
    char buf[RECFMT_MAX], *p = HOT_HEAD(buf, "free", s, FN_FREE);
    p = RECFMT_LIT(p, ",\"addr\":");
    p = recfmt_u64(p, s->addr);
    p = RECFMT_LIT(p, ",\"size\":");
    p = recfmt_u64(p, s->size);
    p = RECFMT_LIT(p, ",\"stack\":");
    p = recfmt_u64(p, s->stack);
    if (s->flags & SLOT_INHERITED)
        p = RECFMT_LIT(p, ",\"inherited\":true"); /* allocated before a fork */
    hot_emit(buf, p);
}

static void write_realloc(const ring_slot_t *s)
{
    char buf[RECFMT_MAX], *p;
    if (!s->addr) { /* failed: the old block stays */
        p = HOT_HEAD(buf, "realloc_failed", s, FN_REALLOC);
        p = RECFMT_LIT(p, ",\"addr\":");
        p = recfmt_u64(p, s->aux);
        p = RECFMT_LIT(p, ",\"size\":");
        p = recfmt_u64(p, clamp63(s->size));
        p = RECFMT_LIT(p, ",\"stack\":");
        p = recfmt_u64(p, s->stack);
        hot_emit(buf, p);
        return;
    }
    p = HOT_HEAD(buf, "realloc", s, FN_REALLOC);
    p = RECFMT_LIT(p, ",\"old_addr\":");
    p = recfmt_u64(p, s->aux);
    p = RECFMT_LIT(p, ",\"addr\":");
    p = recfmt_u64(p, s->addr);
    p = RECFMT_LIT(p, ",\"old_size\":");
    p = (s->flags & SLOT_KNOWN) ? recfmt_u64(p, s->old_size) : RECFMT_LIT(p, "null");
    p = RECFMT_LIT(p, ",\"size\":");
    p = recfmt_u64(p, s->size);
    p = RECFMT_LIT(p, ",\"stack\":");
    p = recfmt_u64(p, s->stack);
    p = hot_sim(p, s->sim);
    if (s->flags & SLOT_INHERITED)
        p = RECFMT_LIT(p, ",\"inherited\":true");
    hot_emit(buf, p);
}

static void write_of(ring_slot_t *s)
{
    static uint64_t written; /* the write stage is one thread at a time */
    if ((++written & 1023) == 0)
        trace_tend(&R.trace);
    switch (s->kind) {
    case RING_ALLOC:
        write_alloc(s);
        break;
    case RING_FREE:
        write_free(s);
        break;
    case RING_REALLOC:
        write_realloc(s);
        break;
    default: /* RING_LOST */
        atomic_fetch_add(&R.trace.dropped, 1);
        break;
    }
}

/* Records whose place among the heap events matters (mappings, phases,
 * samples, processes) are written with the consumer role held, after
 * everything claimed before them: sync_begin / sync_end. */
static void sync_begin(void)
{
    ring_lock();
    ring_flush_locked(2000000000ull);
}

static void sync_end(void) { ring_unlock(); }

int recorder_writer_start(void (*enter_guard)(void)) { return ring_writer_start(enter_guard); }

void recorder_flush(void)
{
    KEEP_ERRNO;
    if (!ring_ready())
        return;
    sync_begin();
    sync_end();
}

/* ---- mappings ------------------------------------------------------------------ */

void recorder_mmap(recorder_fn_t fn, const void *p, size_t len, int prot, int flags, int fd)
{
    KEEP_ERRNO;
    if (!recorder_active())
        return;
    uint64_t stack = capture_stack(NULL);
    char buf[RECORD_MAX];
    jsonw_t w;
    jsonw_init(&w, buf, sizeof buf);
    head(&w, "mmap", clock_ns());
    jsonw_key_str(&w, "fn", fn_names[fn].s);
    jsonw_key_u64(&w, "addr", (uintptr_t)p);
    jsonw_key_u64(&w, "size", len);
    jsonw_key_i64(&w, "prot", prot);
    jsonw_key_i64(&w, "flags", flags);
    jsonw_key_i64(&w, "fd", fd);
    jsonw_key_u64(&w, "stack", stack);
    emit_synced(&w);
    atomic_fetch_add(&R.mmap_live, len);
}

void recorder_munmap(const void *p, size_t len)
{
    KEEP_ERRNO;
    if (!recorder_active())
        return;
    uint64_t stack = capture_stack(NULL);
    char buf[RECORD_MAX];
    jsonw_t w;
    jsonw_init(&w, buf, sizeof buf);
    uint64_t live = atomic_load(&R.mmap_live);
    while (!atomic_compare_exchange_weak(&R.mmap_live, &live, live > len ? live - len : 0))
        ;
    head(&w, "munmap", clock_ns());
    jsonw_key_str(&w, "fn", "munmap");
    jsonw_key_u64(&w, "addr", (uintptr_t)p);
    jsonw_key_u64(&w, "size", len);
    jsonw_key_u64(&w, "stack", stack);
    emit_synced(&w);
}

void recorder_mremap_begin(recorder_move_t *m, const void *old, size_t old_len)
{
    KEEP_ERRNO;
    memset(m, 0, sizeof *m);
    if (!recorder_active())
        return;
    m->old.addr = (uintptr_t)old;
    m->old.size = old_len;
    m->stack = capture_stack(NULL);
    sync_begin();
    m->slot = trace_reserve(&R.trace, MOVE_SLOT, NULL);
    sync_end();
    m->t = clock_ns();
}

void recorder_mremap_end(recorder_move_t *m, const void *p, size_t len, int flags)
{
    KEEP_ERRNO;
    if (!m->t || !m->slot)
        return;
    char buf[RECORD_MAX];
    jsonw_t w;
    jsonw_init(&w, buf, sizeof buf);
    head(&w, p == MAP_FAILED ? "mremap_failed" : "mremap", m->t);
    jsonw_key_str(&w, "fn", "mremap");
    jsonw_key_u64(&w, "old_addr", m->old.addr);
    jsonw_key_u64(&w, "old_size", m->old.size);
    if (p == MAP_FAILED)
        jsonw_key_null(&w, "addr");
    else
        jsonw_key_u64(&w, "addr", (uintptr_t)p);
    jsonw_key_u64(&w, "size", clamp63(len));
    jsonw_key_i64(&w, "flags", flags);
    jsonw_key_u64(&w, "stack", m->stack);
    fill_slot(m->slot, &w);
}

/* ---- phases and modules --------------------------------------------------------- */

void recorder_phase(const char *name, bool begin)
{
    KEEP_ERRNO;
    if (!recorder_active())
        return;
    char buf[RECORD_MAX + 1024];
    jsonw_t w;
    jsonw_init(&w, buf, sizeof buf);
    head(&w, "phase", clock_ns());
    jsonw_key_str(&w, "op", begin ? "begin" : "end");
    if (begin) {
        size_t n = name ? strnlen(name, 512) : 0;
        jsonw_key(&w, "name");
        jsonw_strn(&w, name ? name : "", n);
    }
    emit_synced(&w);
}

static void write_module(const char *op, const char *path, uintptr_t base, uintptr_t size)
{
    char buf[RECORD_MAX + 6 * PATH_MAX];
    jsonw_t w;
    jsonw_init(&w, buf, sizeof buf);
    head(&w, "module", clock_ns());
    jsonw_key_str(&w, "op", op);
    jsonw_key_str(&w, "path", path);
    jsonw_key_u64(&w, "base", base);
    jsonw_key_u64(&w, "size", size);
    emit(&w);
}

/* A snapshot of the loaded objects, taken without holding any memsim
 * lock: dl_iterate_phdr takes the loader's lock, and a thread inside
 * dlopen holds that lock while it allocates (and so enters memsim). */
#define MODULE_NAME_MAX 512
typedef struct snapshot_s {
    size_t n, cap;
    unsigned long long adds, subs;
    struct {
        uintptr_t base, size;
        char name[MODULE_NAME_MAX];
    } *mods;
} snapshot_t;

static unsigned long long seen_adds, seen_subs;

static int snap_one(struct dl_phdr_info *info, size_t size, void *data)
{
    snapshot_t *s = data;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        s->adds = info->dlpi_adds;
        s->subs = info->dlpi_subs;
    }
    if (!s->mods)
        return 1; /* the counters only: the first object has them */
    if (s->n == s->cap)
        return 0;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        if (ph->p_vaddr < lo)
            lo = ph->p_vaddr;
        if (ph->p_vaddr + ph->p_memsz > hi)
            hi = ph->p_vaddr + ph->p_memsz;
    }
    if (hi <= lo)
        return 0;
    s->mods[s->n].base = info->dlpi_addr + lo;
    s->mods[s->n].size = hi - lo;
    const char *name = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : R.exe;
    char *dst = s->mods[s->n].name;
    size_t at = 0;
    /* dlopen("./lib.so") leaves the name as given: the analyzer runs
     * elsewhere, so make it absolute (against the directory now).  A name
     * without a slash is no file (linux-vdso.so.1). */
    if (name[0] != '/' && strchr(name, '/') && getcwd(dst, MODULE_NAME_MAX - 2)) {
        at = strlen(dst);
        dst[at++] = '/';
        if (name[0] == '.' && name[1] == '/')
            name += 2;
    }
    copy_str(dst + at, MODULE_NAME_MAX - at, name);
    s->n++;
    return 0;
}

void recorder_modules_changed(void)
{
    KEEP_ERRNO;
    if (!recorder_active())
        return;
    snapshot_t snap = {0};
    dl_iterate_phdr(snap_one, &snap); /* counters only */
    if (R.nmodules && snap.adds == seen_adds && snap.subs == seen_subs)
        return;
    snap.cap = MODULES_MAX;
    size_t bytes = snap.cap * sizeof *snap.mods;
    snap.mods = sysmem_alloc(bytes);
    if (!snap.mods)
        return;
    dl_iterate_phdr(snap_one, &snap);
    /* After everything the ring holds: an unload must not overtake the
     * records of allocations made through the library.  (The role before
     * modules_lock, in the order fork takes them.) */
    sync_begin();
    pthread_mutex_lock(&R.modules_lock);
    seen_adds = snap.adds;
    seen_subs = snap.subs;
    for (size_t i = 0; i < R.nmodules; i++)
        R.modules[i].seen = false;
    for (size_t k = 0; k < snap.n; k++) {
        size_t i;
        for (i = 0; i < R.nmodules; i++)
            if (R.modules[i].base == snap.mods[k].base && R.modules[i].size == snap.mods[k].size)
                break;
        if (i < R.nmodules) {
            R.modules[i].seen = true;
            continue;
        }
        if (R.nmodules < MODULES_MAX)
            R.modules[R.nmodules++] =
                (__typeof__(R.modules[0])){.base = snap.mods[k].base, .size = snap.mods[k].size,
                                       .seen = true};
        write_module("load", snap.mods[k].name, snap.mods[k].base, snap.mods[k].size);
    }
    for (size_t i = 0; i < R.nmodules;) {
        if (R.modules[i].seen) {
            i++;
            continue;
        }
        write_module("unload", "", R.modules[i].base, R.modules[i].size);
        R.modules[i] = R.modules[--R.nmodules];
    }
    pthread_mutex_unlock(&R.modules_lock);
    sync_end();
    sysmem_free(snap.mods, bytes);
}

/* ---- samples ------------------------------------------------------------------------ */

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

void recorder_sample(const recorder_os_t *os)
{
    KEEP_ERRNO;
    if (!recorder_active())
        return;
    jsonw_t w;
    if (!big_begin(&w, 2048 + os->nchildren * 64, "sample", clock_ns()))
        return;
    /* The live figures as of this moment: everything claimed before. */
    sync_begin();
    device_metrics_t m = {0};
    if (R.sim)
        device_metrics(R.sim, &m);
    jsonw_key_u64(&w, "rss", os->rss);
    jsonw_key_u64(&w, "hwm", os->hwm);
    /* The trace's reserved address range is memsim's, not the program's. */
    uint64_t reserved = R.trace.base ? R.trace.span : 0;
    jsonw_key_u64(&w, "vm_size", os->vm_size > reserved ? os->vm_size - reserved : 0);
    jsonw_key_u64(&w, "vm_peak", os->vm_peak > reserved ? os->vm_peak - reserved : 0);
    jsonw_key_u64(&w, "maxrss_self", os->maxrss_self);
    jsonw_key_u64(&w, "maxrss_children", os->maxrss_children);
    jsonw_key_u64(&w, "heap_live", livemap_bytes(&livemap_program));
    jsonw_key_u64(&w, "heap_blocks", livemap_count(&livemap_program));
    jsonw_key_u64(&w, "malloc_reserved", os->malloc_reserved);
    jsonw_key_u64(&w, "malloc_in_use", os->malloc_in_use);
    jsonw_key_u64(&w, "mmap_live", atomic_load(&R.mmap_live));
    if (R.sim) {
        jsonw_key_u64(&w, "sim_live", m.live_allocated);
        jsonw_key_u64(&w, "sim_reserved", m.reserved);
        jsonw_key_u64(&w, "sim_largest_free", m.largest_free);
    } else {
        jsonw_key_null(&w, "sim_live");
        jsonw_key_null(&w, "sim_reserved");
        jsonw_key_null(&w, "sim_largest_free");
    }
    jsonw_key_u64(&w, "device_total", os->device_total);
    jsonw_key_u64(&w, "tree_rss", os->tree_rss);
    jsonw_key(&w, "children");
    jsonw_array_begin(&w);
    for (size_t i = 0; i < os->nchildren; i++) {
        jsonw_object_begin(&w);
        jsonw_key_i64(&w, "pid", os->child_pid[i]);
        jsonw_key_u64(&w, "rss", os->child_rss[i]);
        jsonw_object_end(&w);
    }
    jsonw_array_end(&w);
    if (os->rollup)
        key_rollup(&w, os->rollup);
    big_end(&w);
    sync_end();
}

void recorder_trim_trace(void)
{
    if (recorder_active())
        trace_tend(&R.trace);
}

/* ---- start, meta ------------------------------------------------------------------ */

static void write_argv(jsonw_t *w, const char *key, int argc, char *const argv[])
{
    jsonw_key(w, key);
    jsonw_array_begin(w);
    for (int i = 0; argv && (argc < 0 || i < argc) && argv[i]; i++)
        jsonw_str(w, argv[i]);
    jsonw_array_end(w);
}

static size_t argv_bytes(int argc, char *const argv[])
{
    size_t n = 0;
    for (int i = 0; argv && (argc < 0 || i < argc) && argv[i]; i++)
        n += strlen(argv[i]) * 6 + 4; /* worst case escaping */
    return n;
}

static void write_meta(int argc, char **argv, const char *parent_trace)
{
    struct timespec real;
    clock_gettime(CLOCK_REALTIME, &real);
    jsonw_t w;
    if (!big_begin(&w, 4096 + 6 * PATH_MAX + argv_bytes(argc, argv), "meta", R.t0))
        return;
    jsonw_key_str(&w, "format", "memsim-trace");
    jsonw_key_u64(&w, "version", TRACE_FORMAT_VERSION);
    jsonw_key_i64(&w, "pid", R.pid);
    jsonw_key_i64(&w, "ppid", getppid());
    jsonw_key_str(&w, "exe", R.exe);
    write_argv(&w, "argv", argc, argv);
    jsonw_key_u64(&w, "start_unix_ns", (uint64_t)real.tv_sec * 1000000000ull +
                                           (uint64_t)real.tv_nsec);
    jsonw_key_u64(&w, "page_size", (uint64_t)sysconf(_SC_PAGESIZE));
    jsonw_key_str(&w, "strategy", R.sim ? R.cfg.strategy : "none");
    jsonw_key_u64(&w, "device_size", R.cfg.device_size);
    jsonw_key_u64(&w, "stack_depth", R.cfg.stack_depth);
    jsonw_key_bool(&w, "mmap", R.cfg.mmap);
    jsonw_key_str(&w, "memsim_version", MEMSIM_VERSION);
    if (parent_trace)
        jsonw_key_str(&w, "parent_trace", parent_trace);
    else
        jsonw_key_null(&w, "parent_trace");
    big_end(&w);
}


/* Create this process's trace file, trying counters until a free name. */
static int open_trace(char *err, size_t errlen)
{
    char path[PATH_MAX];
    int rc = -EEXIST;
    for (unsigned n = 0; n < 10000 && rc == -EEXIST; n++) {
        if (config_trace_path(&R.cfg, R.exe_base, (long)R.pid, n, path, sizeof path)) {
            rc = -ENAMETOOLONG;
            break;
        }
        rc = trace_open(&R.trace, path);
        if (!config_path_has_counter(&R.cfg))
            break;
    }
    if (rc) {
        /* strerror is not async-signal-safe, but this runs at start or in
         * a fork child, where no other thread runs memsim code. */
        const char *what = strerror(-rc);
        size_t at = 0;
        const char *parts[] = {"memsim: cannot create the trace file ", path, ": ", what,
                               "; tracing is off"};
        for (size_t i = 0; i < sizeof parts / sizeof parts[0] && at + 1 < errlen; i++) {
            size_t k = strnlen(parts[i], errlen - at - 1);
            memcpy(err + at, parts[i], k);
            at += k;
        }
        if (errlen)
            err[at < errlen ? at : errlen - 1] = '\0';
        return -1;
    }
    return 0;
}

/* MEMSIM_OUTPUT relative to the directory the process started in, made
 * absolute once: a forked child that changed directory still writes
 * beside its parent.  (An exec'd program reads the variable afresh.) */
static void absolute_output(config_t *c)
{
    char cwd[PATH_MAX];
    if (c->output[0] == '/' || !getcwd(cwd, sizeof cwd))
        return;
    if (strcmp(c->output, ".") == 0 || strcmp(c->output, "./") == 0)
        c->output[0] = '\0';
    size_t a = strlen(cwd), b = strlen(c->output);
    if (b == 0) {
        memcpy(c->output, cwd, a + 1);
        return;
    }
    if (a + 1 + b >= sizeof c->output)
        return;
    memmove(c->output + a + 1, c->output, b + 1);
    memcpy(c->output, cwd, a);
    c->output[a] = '/';
}

int recorder_start(const config_t *cfg, const char *exe_path, int argc, char **argv,
                   const char *parent_trace, char *err, size_t errlen)
{
    R.cfg = *cfg;
    absolute_output(&R.cfg);
    R.pid = getpid();
    R.argc = argc;
    R.argv = argv;
    clock_init();
    R.t0 = clock_ns();
    copy_str(R.exe, sizeof R.exe, exe_path ? exe_path : "");
    const char *slash = strrchr(R.exe, '/');
    copy_str(R.exe_base, sizeof R.exe_base, slash ? slash + 1 : R.exe);
    if (ring_init(state_of, write_of)) {
        if (errlen)
            copy_str(err, errlen, "memsim: cannot map the event ring; tracing is off");
        return -1;
    }
    if (open_trace(err, errlen))
        return -1;
    const char *why = NULL;
    if (stacks_init(cfg->stack_depth, &why) && why) {
        ssize_t rc = write(2, "memsim: ", 8);
        rc = write(2, why, strlen(why));
        rc = write(2, "\n", 1);
        (void)rc;
        R.cfg.stack_depth = 0;
    }
    /* Live map entries hold blocks of the device: none may outlive it (a
     * process starts the recorder once; a test may start it again). */
    livemap_clear(&livemap_program);
    if (strcmp(cfg->strategy, CONFIG_STRATEGY_NONE) != 0) {
        device_config_t dc = {.total = cfg->device_size, .strategy = cfg->strategy,
                              .no_timing = true};
        char derr[256];
        if (device_create(&dc, &R.sim, derr, sizeof derr))
            R.sim = NULL;
    }
    write_meta(argc, argv, parent_trace);
    atomic_store(&R.active, true);
    recorder_modules_changed();
    return 0;
}

/* ---- processes --------------------------------------------------------------------- */

void recorder_fork_prepare(void)
{
    /* The child inherits the live map and the device as of now: drain
     * the ring first, and keep the role until fork() returns. */
    if (ring_ready())
        sync_begin();
    stacks_lock();
    livemap_lock_all(&livemap_program);
    livemap_lock_all(&livemap_quiet);
    pthread_mutex_lock(&R.modules_lock);
    pthread_mutex_lock(&R.trace.grow_lock);
}

static void fork_unlock(void)
{
    pthread_mutex_unlock(&R.trace.grow_lock);
    pthread_mutex_unlock(&R.modules_lock);
    livemap_unlock_all(&livemap_quiet);
    livemap_unlock_all(&livemap_program);
    stacks_unlock();
    if (ring_ready())
        sync_end();
}

void recorder_fork_parent(void) { fork_unlock(); }

void recorder_forked(pid_t child)
{
    KEEP_ERRNO;
    if (!recorder_active() || child <= 0)
        return;
    char buf[RECORD_MAX];
    jsonw_t w;
    jsonw_init(&w, buf, sizeof buf);
    head(&w, "fork", clock_ns());
    jsonw_key_i64(&w, "child", child);
    emit_synced(&w);
}

void recorder_fork_child(void)
{
    KEEP_ERRNO;
    if (ring_ready())
        ring_fork_child(); /* what the parent's threads claimed is the parent's */
    fork_unlock();
    my_tid = 0;
    if (!recorder_active())
        return;
    char parent[PATH_MAX];
    copy_str(parent, sizeof parent, R.trace.path);
    trace_forget(&R.trace);
    stacks_reset();
    atomic_store(&R.active, false);
    if (!R.cfg.trace_children)
        return;
    R.pid = getpid();
    char err[PATH_MAX + 128];
    if (open_trace(err, sizeof err)) {
        size_t n = strlen(err);
        err[n] = '\n';
        ssize_t rc = write(2, err, n + 1);
        (void)rc;
        return;
    }
    write_meta(R.argc, R.argv, parent); /* a fork child runs the same program */
    for (size_t i = 0; i < R.nmodules; i++)
        R.modules[i].seen = false;
    R.nmodules = 0;
    atomic_store(&R.active, true);
    recorder_modules_changed();
}

/* A spawn or exec record: the child's pid (spawn only), path and argv. */
static void write_launch(const char *ev, pid_t child, const char *path, char *const argv[])
{
    jsonw_t w;
    if (!big_begin(&w, 4096 + 6 * PATH_MAX + argv_bytes(-1, argv), ev, clock_ns()))
        return;
    if (child > 0)
        jsonw_key_i64(&w, "child", child);
    jsonw_key_str(&w, "path", path ? path : "");
    write_argv(&w, "argv", -1, argv);
    big_end_synced(&w);
}

void recorder_spawned(pid_t child, const char *path, char *const argv[])
{
    KEEP_ERRNO;
    if (recorder_active())
        write_launch("spawn", child, path, argv);
}

void recorder_exec(const char *path, char *const argv[])
{
    KEEP_ERRNO;
    if (!recorder_active() || getpid() != R.pid)
        return; /* a vfork child runs on its parent's memory: not ours */
    write_launch("exec", 0, path, argv);
    recorder_end("exec", -1, -1);
}

void recorder_exec_failed(int err)
{
    KEEP_ERRNO;
    if (getpid() != R.pid || !trace_is_open(&R.trace))
        return;
    trace_reopen(&R.trace);
    atomic_store(&R.active, true);
    char buf[RECORD_MAX];
    jsonw_t w;
    jsonw_init(&w, buf, sizeof buf);
    head(&w, "exec_failed", clock_ns());
    jsonw_key_i64(&w, "errno", err);
    emit_synced(&w);
}

typedef struct end_info_s {
    const char *reason;
    int status, signal;
} end_info_t;

/* Formats the end record into its slot, once the records before it are
 * all in (see trace_close_with). */
static void fill_end(char *slot, size_t len, uint64_t records, void *ctx)
{
    const end_info_t *e = ctx;
    char buf[END_SLOT];
    jsonw_t w;
    jsonw_init(&w, buf, sizeof buf);
    head(&w, "end", clock_ns());
    jsonw_key_str(&w, "reason", e->reason);
    if (e->status >= 0)
        jsonw_key_i64(&w, "status", e->status);
    else
        jsonw_key_null(&w, "status");
    if (e->signal > 0)
        jsonw_key_i64(&w, "signal", e->signal);
    else
        jsonw_key_null(&w, "signal");
    jsonw_key_u64(&w, "records", records);
    jsonw_key_u64(&w, "dropped", atomic_load(&R.trace.dropped));
    jsonw_key_u64(&w, "after_end", atomic_load(&R.trace.after_end));
    jsonw_key_u64(&w, "unknown_frees", atomic_load(&R.unknown_frees));
    jsonw_key_u64(&w, "live_allocations", livemap_count(&livemap_program));
    jsonw_key_u64(&w, "live_bytes", livemap_bytes(&livemap_program));
    jsonw_key_u64(&w, "stacks", stacks_count());
    pad_into(slot, len, &w);
}

/* Why the trace could not grow, in words (no strerror: this may run in a
 * signal handler). */
static const char *grow_error(int e)
{
    switch (e) {
    case 0:
        return "records were still queued when the process ended";
    case ENOSPC:
        return "no space left on device";
    case EDQUOT:
        return "disk quota exceeded";
    case EFBIG:
        return "the file size limit, ulimit -f, is reached";
    case ENOMEM:
        return "out of memory";
    default:
        return "the trace file could not grow";
    }
}

/* One line on stderr, once: the trace lacks records. */
static void warn_incomplete(uint64_t dropped)
{
    static _Atomic bool warned;
    if (atomic_exchange(&warned, true))
        return;
    char line[PATH_MAX + 160], *p = line;
    p = RECFMT_LIT(p, "memsim: ");
    size_t n = strnlen(R.trace.path, PATH_MAX);
    p = recfmt_lit(p, R.trace.path, n);
    p = RECFMT_LIT(p, " is incomplete: ");
    p = recfmt_u64(p, dropped);
    p = dropped == 1 ? RECFMT_LIT(p, " record") : RECFMT_LIT(p, " records");
    p = RECFMT_LIT(p, " could not be written (");
    const char *why = grow_error(R.trace.grow_errno);
    p = recfmt_lit(p, why, strlen(why));
    p = RECFMT_LIT(p, ")\n");
    ssize_t rc = write(2, line, (size_t)(p - line));
    (void)rc;
}

void recorder_end(const char *reason, int status, int signal)
{
    KEEP_ERRNO;
    if (!recorder_active() || getpid() != R.pid)
        return;
    end_info_t e = {.reason = reason, .status = status, .signal = signal};
    /* Exiting normally, wait as long as a preempted writer may need on a
     * loaded machine; in a signal handler the writer may be this thread,
     * interrupted: wait briefly. */
    uint64_t wait_ns = signal > 0 ? 100000000ull : 2000000000ull;
    bool role = false;
    if (ring_ready()) {
        /* A signal may have interrupted this thread between claiming a
         * slot and filling it: nobody else will fill it. */
        if (signal > 0)
            ring_abandon_pending();
        role = ring_lock_timed(wait_ns) == 0;
        uint64_t lost = role ? ring_flush_locked(wait_ns)
                             : ring_claimed() - ring_consumed();
        atomic_fetch_add(&R.trace.dropped, lost);
    }
    bool closed = trace_close_with(&R.trace, END_SLOT, fill_end, &e, wait_ns) == 0;
    if (closed) {
        atomic_store(&R.active, false);
        trace_finish(&R.trace);
    }
    uint64_t dropped = atomic_load(&R.trace.dropped) + !closed;
    if (dropped)
        warn_incomplete(dropped);
    if (role)
        ring_unlock();
}
