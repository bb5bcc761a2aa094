/*
 * walk: stacks by cached frame rules.  See walk.h.
 *
 * The table maps a return address to its packed rule.  A slot's key is
 * set once (compare-and-swap from 0) and never changes; its rule word
 * is written after, and carries the table's generation, so that a rule
 * of an older generation (walk_forget) or not yet written reads as
 * absent and is worked out again (ehframe_rule is pure: two threads
 * racing on one slot write the same word).  When probes find no room
 * the rule is worked out and not kept.
 */
#include "preload/walk.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "preload/ehframe.h"
#include "preload/say.h"
#include "ipc/seccomp.h"
#include "ipc/sysmem.h"
#include "preload/thread.h"

#define SLOTS (1u << 16)     /* 1 MiB of address space, touched as used */
#define PROBES 16
#define MAX_FRAMES 272       /* memsim_on_stack_bt's buffer (THREAD_BT_BYTES) */
#define LOWEST_PC 0x4000     /* libunwind's end of a stack too */

/* The rule word: valid, last, kind, generation, %rbp's offset, the
 * CFA's.  28 bits of generation: a rule of 2^28 unloads ago would read
 * as current again.  A rule whose offsets do not fit is not kept. */
#define R_VALID (1ull << 63)
#define R_LAST (1ull << 62)
#define R_KIND_SHIFT 60
#define R_GEN_SHIFT 32
#define R_GEN_MASK 0xfffffffull
#define R_RBP_SHIFT 20
#define R_RBP_BITS 12
#define R_CFA_BITS 20

typedef struct slot_s {
    _Atomic uint64_t pc;
    _Atomic uint64_t rule;
} slot_t;

static slot_t *table;
static walk_mode_t mode;
static walk_general_t general;   /* read once have_general is */
static _Atomic bool have_general;
static walk_demand_t demand;
static _Atomic bool unloaded; /* a library was: general.stepped walks */
static _Atomic uint64_t generation;
static _Atomic uint64_t mismatches, fallbacks, cuts;
static _Atomic bool told;

int walk_backtrace(void **buffer, int size);
int memsim_walk_from(void **buffer, int size, uintptr_t *entry_sp, uintptr_t rbp)
    __attribute__((visibility("hidden")));

/* The entry: the caller's stack pointer (at its return address) and
 * %rbp as they were, then the walk in C, which returns to the caller. */
__asm__(".text\n"
        ".globl walk_backtrace\n"
        ".hidden walk_backtrace\n"
        ".type walk_backtrace,@function\n"
        "walk_backtrace:\n"
        ".cfi_startproc\n"
        "    mov %rsp, %rdx\n"
        "    mov %rbp, %rcx\n"
        "    jmp memsim_walk_from\n"
        ".cfi_endproc\n"
        ".size walk_backtrace, .-walk_backtrace\n");

static inline bool fits(int64_t v, unsigned bits)
{
    return v >= -(INT64_C(1) << (bits - 1)) && v < INT64_C(1) << (bits - 1);
}

/* The rule as a word, or 0 when its offsets do not fit one. */
static uint64_t pack(ehframe_rule_t r, uint64_t gen)
{
    if (!fits(r.rbp_off, R_RBP_BITS) || !fits(r.cfa_off, R_CFA_BITS))
        return 0;
    return R_VALID | (r.last ? R_LAST : 0) | (uint64_t)(r.kind & 3) << R_KIND_SHIFT |
           (gen & R_GEN_MASK) << R_GEN_SHIFT |
           ((uint64_t)(uint16_t)r.rbp_off & ((1u << R_RBP_BITS) - 1)) << R_RBP_SHIFT |
           ((uint64_t)(uint32_t)r.cfa_off & ((1u << R_CFA_BITS) - 1));
}

static inline int32_t sign_extend(uint64_t v, unsigned bits)
{
    return (int32_t)((int64_t)(v << (64 - bits)) >> (64 - bits));
}

static ehframe_rule_t unpack(uint64_t w)
{
    return (ehframe_rule_t){.kind = (uint8_t)(w >> R_KIND_SHIFT & 3),
                            .last = (w & R_LAST) != 0,
                            .rbp_off = (int16_t)sign_extend(w >> R_RBP_SHIFT, R_RBP_BITS),
                            .cfa_off = sign_extend(w, R_CFA_BITS)};
}

static inline size_t hash_pc(uint64_t pc)
{
    return (size_t)((pc * 0x9e3779b97f4a7c15ull) >> 48) & (SLOTS - 1);
}

/* The rule for return address pc (its call instruction: pc - 1). */
static inline ehframe_rule_t rule_at(uint64_t pc)
{
    uint64_t gen = atomic_load_explicit(&generation, memory_order_relaxed) & R_GEN_MASK;
    uint64_t want = R_VALID | gen << R_GEN_SHIFT;
    size_t i = hash_pc(pc);
    for (unsigned n = 0; n < PROBES; n++, i = (i + 1) & (SLOTS - 1)) {
        slot_t *s = &table[i];
        uint64_t key = atomic_load_explicit(&s->pc, memory_order_acquire);
        if (key == pc) {
            uint64_t w = atomic_load_explicit(&s->rule, memory_order_acquire);
            if ((w & (R_VALID | R_GEN_MASK << R_GEN_SHIFT)) == want)
                return unpack(w);
            ehframe_rule_t r = ehframe_caller_rule(pc);
            uint64_t packed = pack(r, gen);
            if (packed)
                atomic_store_explicit(&s->rule, packed, memory_order_release);
            return r;
        }
        if (key == 0) {
            ehframe_rule_t r = ehframe_caller_rule(pc);
            uint64_t packed = pack(r, gen), zero = 0;
            if (packed && (atomic_compare_exchange_strong(&s->pc, &zero, pc) || zero == pc))
                atomic_store_explicit(&s->rule, packed, memory_order_release);
            return r;
        }
    }
    return ehframe_caller_rule(pc);
}

/* ---- the walk, with the thread's last stack -------------------------------------------- */

enum { END_LAST, END_LOW, END_SIZE }; /* how a walk ended: an outermost frame, a
                                         return address below LOWEST_PC, size frames */

/* The last stack a thread walked: each frame's state (pc, sp, bp as the
 * walk had them there) and its rule's %rbp offset.  A later walk that
 * reaches one of these states (the same pc, sp and bp) walks on exactly
 * as this one did for as long as the stack words this one read hold the
 * values it read: those are checked, all at known addresses (the loads
 * overlap, where walking by rules is one chain of dependent loads).
 *
 * %rbp is live at a state when the walk from there reads it before a
 * frame restores it from the stack (a CFA from %rbp, here or further up
 * with nothing restoring it between).  Code that keeps a counter in
 * %rbp changes it at every call; where it is dead, neither the match
 * nor the check looks at it.  A walk that leaves the memo at a state of
 * dead %rbp that the frame does not restore cannot know %rbp there: it
 * starts again without the memo. */
typedef struct memo_s {
    uint64_t gen; /* the rules' generation + 1 it was walked under; 0: none */
    int size, n;  /* the size asked, the frames */
    uint8_t end;
    bool busy;    /* a walk uses it (a signal handler's walk takes none) */
    uintptr_t end_cfa, end_pc; /* END_LOW: end_pc was read at end_cfa - 8 */
    uintptr_t pc[MAX_FRAMES], sp[MAX_FRAMES], bp[MAX_FRAMES];
    int16_t rbp_off[MAX_FRAMES];
    uint8_t rbp_cfa[MAX_FRAMES]; /* the frame's CFA is from %rbp */
    uint8_t bp_live[MAX_FRAMES];
} memo_t;

_Static_assert(sizeof(memo_t) <= THREAD_MEMO, "the memo fits the thread's area");

/* A walk's own frames' states, and its end. */
typedef struct trail_s {
    uintptr_t sp[MAX_FRAMES], bp[MAX_FRAMES];
    int16_t rbp_off[MAX_FRAMES];
    uint8_t rbp_cfa[MAX_FRAMES];
    uint8_t end;
    uintptr_t end_cfa, end_pc;
} trail_t;

static inline uintptr_t word(uintptr_t addr) { return *(const uintptr_t *)addr; }

/* From the memo's state j (the walk is there): the first state whose way
 * on is not what it was (its words changed, or the memo stopped at its
 * size there), or m->n when the memo's stack holds to its end. */
static int verify(const memo_t *m, int j)
{
    int k;
    for (k = j; k + 1 < m->n; k++) {
        uintptr_t cfa = m->sp[k + 1];
        if (word(cfa - 8) != m->pc[k + 1])
            return k;
        if (m->rbp_off[k] && m->bp_live[k + 1] &&
            word(cfa + (intptr_t)m->rbp_off[k]) != m->bp[k + 1])
            return k;
    }
    if (m->end == END_SIZE || (m->end == END_LOW && word(m->end_cfa - 8) != m->end_pc))
        return m->n - 1;
    return m->n;
}

/* The memo becomes walk t (n frames in buffer, asked for size): the
 * states the memo lent, [from, from + cnt), moved to [to, to + cnt)
 * first, then the walk's own around them. */
static inline void memo_store(memo_t *m, void **buffer, const trail_t *t, int n, int size,
                              uint64_t gen, int from, int to, int cnt)
{
    if (cnt && from != to) {
        memmove(m->pc + to, m->pc + from, (size_t)cnt * sizeof m->pc[0]);
        memmove(m->sp + to, m->sp + from, (size_t)cnt * sizeof m->sp[0]);
        memmove(m->bp + to, m->bp + from, (size_t)cnt * sizeof m->bp[0]);
        memmove(m->rbp_off + to, m->rbp_off + from, (size_t)cnt * sizeof m->rbp_off[0]);
        memmove(m->rbp_cfa + to, m->rbp_cfa + from, (size_t)cnt * sizeof m->rbp_cfa[0]);
    }
    for (int i = 0; i < n; i++) {
        if (i == to && cnt) {
            i += cnt - 1;
            continue;
        }
        m->pc[i] = (uintptr_t)buffer[i];
        m->sp[i] = t->sp[i];
        m->bp[i] = t->bp[i];
        m->rbp_off[i] = t->rbp_off[i];
        m->rbp_cfa[i] = t->rbp_cfa[i];
    }
    /* Liveness, from the end: after the last frame %rbp is read only when
     * the walk stopped at its size (a longer one goes on). */
    bool live = t->end == END_SIZE;
    for (int i = n - 1; i >= 0; i--) {
        live = m->rbp_cfa[i] || (!m->rbp_off[i] && live);
        m->bp_live[i] = live;
    }
    m->n = n;
    m->size = size;
    m->end = t->end;
    m->end_cfa = t->end_cfa;
    m->end_pc = t->end_pc;
    m->gen = gen + 1;
}

/* The frames from (pc, sp, bp) by their rules, and by the memo where the
 * stack is the one it holds: their number, or -1 at a frame without a
 * rule (or one that would go down the stack), the frames before it in
 * buffer (*got of them) and its return address in *stop (0 for one
 * going down).  The memo then holds this walk. */
static int walk_rules(void **buffer, int size, uintptr_t pc, uintptr_t sp, uintptr_t bp,
                      const memo_t *from_memo, uint64_t gen, memo_t *m, int *got, uintptr_t *stop)
{
    const uintptr_t pc0 = pc, sp0 = sp, bp0 = bp;
    trail_t t;
    bool use = from_memo && m->gen == gen + 1 && m->size == size;
    int n = 0, j = 0;
    int from = -1, to = 0, cnt = 0; /* memo states [from, from + cnt) became [to, to + cnt) */
    t.end = END_SIZE;
    t.end_cfa = t.end_pc = 0;
    while (n < size) {
        if (use) {
            /* The memo's states in order of sp, past its first (on memsim's stack). */
            if (n > 0 && j == 0)
                j = 1;
            while (n > 0 && j < m->n && m->sp[j] < sp)
                j++;
            if (j < m->n && m->sp[j] == sp && m->pc[j] == pc &&
                (!m->bp_live[j] || m->bp[j] == bp)) {
                use = false;
                int f = verify(m, j);
                from = j;
                to = n;
                cnt = f - j < size - n ? f - j : size - n;
                memcpy(buffer + n, m->pc + j, (size_t)cnt * sizeof *buffer);
                n += cnt;
                if (n == size)
                    break;
                if (f == m->n) {
                    t.end = m->end;
                    t.end_cfa = m->end_cfa;
                    t.end_pc = m->end_pc;
                    break;
                }
                if (!m->bp_live[f] && !m->rbp_off[f])
                    return walk_rules(buffer, size, pc0, sp0, bp0, NULL, gen, m, got, stop);
                pc = m->pc[f];
                sp = m->sp[f];
                bp = m->bp[f];
            }
        }
        ehframe_rule_t r = rule_at(pc);
        if (r.kind == EHFRAME_OTHER) {
            *got = n;
            *stop = pc;
            return -1;
        }
        buffer[n] = (void *)pc;
        t.sp[n] = sp;
        t.bp[n] = bp;
        t.rbp_off[n] = r.last ? 0 : r.rbp_off;
        t.rbp_cfa[n] = !r.last && r.kind == EHFRAME_RBP;
        n++;
        if (r.last) {
            t.end = END_LAST;
            break;
        }
        uintptr_t cfa = (r.kind == EHFRAME_RSP ? sp : bp) + (uintptr_t)(intptr_t)r.cfa_off;
        /* The first frame (memsim_on_stack_bt's) leaves memsim's stack
         * for the program's; every later one goes up its stack. */
        if (n > 1 && cfa <= sp) {
            *got = n;
            *stop = 0;
            return -1;
        }
        uintptr_t next = word(cfa - 8);
        if (r.rbp_off)
            bp = word(cfa + (intptr_t)r.rbp_off);
        sp = cfa;
        if (next < LOWEST_PC) {
            t.end = END_LOW;
            t.end_cfa = cfa;
            t.end_pc = next;
            break;
        }
        pc = next;
    }
    if (!m)
        return n;
    memo_store(m, buffer, &t, n, size, gen, from, to, cnt);
    return n;
}

/* libunwind's walk, from this frame: its first frame (this one) dropped,
 * as if the caller had called it.  None in a seccomp sandbox that
 * forbids libunwind's own calls: the stack is then recorded without
 * frames. */
static inline __attribute__((always_inline)) int walk_general(void **buffer, int size)
{
    if (__builtin_expect(!seccomp_unwinder_ok(), 0))
        return 0;
    if (__builtin_expect(!atomic_load_explicit(&have_general, memory_order_acquire), 0))
        return 0;
    int (*walk)(void **, int) = general.backtrace;
    if (__builtin_expect(atomic_load_explicit(&unloaded, memory_order_relaxed), 0) &&
        general.stepped)
        walk = general.stepped;
    int got = walk(buffer, size);
    if (got <= 0)
        return got;
    memmove(buffer, buffer + 1, (size_t)(got - 1) * sizeof *buffer);
    return got - 1;
}

static void tell(void *const *fast, int nfast, void *const *slow, int nslow)
{
    if (atomic_exchange(&told, true))
        return;
    char line[1024];
    int at = snprintf(line, sizeof line, "memsim: unwind check: stacks differ (rules %d frames, "
                      "libunwind %d):", nfast, nslow);
    for (int i = 0; i < nfast || i < nslow; i++) {
        if (at > (int)sizeof line - 64)
            break;
        at += snprintf(line + at, sizeof line - (size_t)at, " %d:%lx/%lx", i,
                       i < nfast ? (unsigned long)(uintptr_t)fast[i] : 0ul,
                       i < nslow ? (unsigned long)(uintptr_t)slow[i] : 0ul);
    }
    say(line);
}

__attribute__((noinline)) int memsim_walk_from(void **buffer, int size, uintptr_t *entry_sp,
                                               uintptr_t rbp)
{
    if (size > MAX_FRAMES)
        size = MAX_FRAMES;
    if (mode == WALK_LIBUNWIND || !table)
        return walk_general(buffer, size);
    thread_area_t *a = thread_mine_;
    memo_t *m = a ? a->walk_memo : NULL;
    if (m && m->busy)
        m = NULL;
    uint64_t gen = atomic_load_explicit(&generation, memory_order_relaxed);
    if (m)
        m->busy = true;
    int got = 0;
    uintptr_t stop = 0;
    int n = walk_rules(buffer, size, entry_sp[0], (uintptr_t)(entry_sp + 1), rbp, m, gen, m,
                       &got, &stop);
    if (m) {
        if (n < 0)
            m->gen = 0;
        m->busy = false;
    }
    if (n < 0) {
        atomic_fetch_add_explicit(&fallbacks, 1, memory_order_relaxed);
        if (__builtin_expect(!atomic_load_explicit(&have_general, memory_order_acquire), 0) &&
            !(demand && demand(stop, (void *const *)buffer, got))) {
            /* No libunwind to be had here: the stack up to the frame
             * without a rule, that frame's return address last. */
            atomic_fetch_add_explicit(&cuts, 1, memory_order_relaxed);
            if (stop && got < size)
                buffer[got++] = (void *)stop;
            return got;
        }
        return walk_general(buffer, size);
    }
    if (mode == WALK_CHECK) {
        void *slow[MAX_FRAMES + 1];
        int ns = walk_general(slow, size + 1 <= MAX_FRAMES ? size + 1 : MAX_FRAMES);
        if (ns > size)
            ns = size;
        if (ns != n || memcmp(slow, buffer, (size_t)n * sizeof *buffer) != 0) {
            atomic_fetch_add_explicit(&mismatches, 1, memory_order_relaxed);
            tell(buffer, n, slow, ns);
            memcpy(buffer, slow, (size_t)ns * sizeof *buffer);
            return ns;
        }
    }
    return n;
}

int walk_init(walk_mode_t m, walk_general_t g, walk_demand_t d)
{
    mode = m;
    demand = d;
    if (g.backtrace)
        walk_set_general(g);
    if (m == WALK_LIBUNWIND || !ehframe_available())
        return m == WALK_LIBUNWIND ? 0 : -1;
    if (!table)
        table = sysmem_alloc(SLOTS * sizeof *table);
    return table ? 0 : -1;
}

void walk_set_general(walk_general_t g)
{
    general = g;
    atomic_store_explicit(&have_general, true, memory_order_release);
}

void walk_forget(void)
{
    atomic_store_explicit(&unloaded, true, memory_order_relaxed);
    atomic_fetch_add_explicit(&generation, 1, memory_order_relaxed);
    if (atomic_load_explicit(&have_general, memory_order_acquire) && general.flush)
        general.flush();
}

uint64_t walk_mismatches(void) { return atomic_load(&mismatches); }
uint64_t walk_fallbacks(void) { return atomic_load(&fallbacks); }
uint64_t walk_cuts(void) { return atomic_load(&cuts); }
