/*
 * seccomp: memsim's system calls judged by the program's filters.  See
 * seccomp.h.
 */
#include "ipc/seccomp.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ipc/sysmem.h"

#define ACTION(r) ((r) & SECCOMP_RET_ACTION_FULL)

_Atomic unsigned seccomp_on_;
_Atomic unsigned seccomp_without_;
__thread bool seccomp_strict_ __attribute__((tls_model("initial-exec")));

/* A filter as the program installed it: written whole before it is
 * published (nheld), then only voided may change. */
typedef struct held_s {
    size_t bytes;           /* the mapping */
    _Atomic bool voided;    /* its install failed: it binds nothing */
    unsigned len;
    struct sock_filter insns[];
} held_t;

static held_t *held[SECCOMP_HELD_MAX];
static _Atomic unsigned nheld;
static _Atomic bool opaque;
static long tid_off = -1; /* the thread id's offset in glibc's descriptor, or -1 */

/* ---- the system call ---------------------------------------------------------------- */

static long raw6(long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
#if defined(__x86_64__)
    long ret;
    register long r10 __asm__("r10") = a3;
    register long r8 __asm__("r8") = a4;
    register long r9 __asm__("r9") = a5;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(nr), "D"(a0), "S"(a1), "d"(a2), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
#else
#error "memsim's system calls are written for x86-64"
#endif
}

long seccomp_call(long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
    if (!seccomp_allows(nr, a0, a1, a2, a3, a4, a5)) {
        errno = ENOSYS;
        return -1;
    }
    long r = raw6(nr, a0, a1, a2, a3, a4, a5);
    if (r < 0 && r > -4096) {
        errno = (int)-r;
        return -1;
    }
    return r;
}

/* ---- thread ids -------------------------------------------------------------------------- */

/* Where glibc keeps a thread's id in its descriptor (pthread_self()):
 * the first place the calling thread's own id is found, asked while
 * gettid is still allowed.  glibc writes it there as it creates the
 * thread (CLONE_PARENT_SETTID), and the place is the same for every
 * thread of the process. */
void seccomp_learn_tid(pid_t tid)
{
    if (tid_off >= 0 || tid <= 0)
        return;
    const char *self = (const char *)pthread_self();
    for (long off = 0; off < 2048; off += (long)sizeof(pid_t)) {
        pid_t v;
        memcpy(&v, self + off, sizeof v);
        if (v == tid) {
            tid_off = off;
            return;
        }
    }
}

pid_t seccomp_gettid(void)
{
    long r = seccomp_call(SYS_gettid, 0, 0, 0, 0, 0, 0);
    if (r > 0)
        return (pid_t)r;
    if (tid_off < 0)
        return 0;
    pid_t v;
    memcpy(&v, (const char *)pthread_self() + tid_off, sizeof v);
    return v > 0 ? v : 0;
}

/* ---- classic BPF, as seccomp runs it ------------------------------------------------------ */

/* The filter's action for d.  The kernel checked the program when it was
 * installed (seccomp_check_filter: jumps forward and in bounds, loads of
 * 32-bit words aligned inside seccomp_data, no BPF_MOD, no division by a
 * constant 0, a return at the end); an instruction that check refuses
 * reads as SECCOMP_RET_KILL_PROCESS. */
static uint32_t run(const struct sock_filter *f, unsigned len, const struct seccomp_data *d)
{
    uint32_t A = 0, X = 0, M[BPF_MEMWORDS] = {0};
    for (unsigned pc = 0; pc < len; pc++) {
        const struct sock_filter *i = &f[pc];
        uint32_t k = i->k, v;
        switch (BPF_CLASS(i->code)) {
        case BPF_LD:
        case BPF_LDX:
            if (i->code == (BPF_LD | BPF_W | BPF_ABS)) {
                if (k >= sizeof *d || (k & 3))
                    return SECCOMP_RET_KILL_PROCESS;
                memcpy(&v, (const char *)d + k, sizeof v);
            } else if (BPF_MODE(i->code) == BPF_LEN) {
                v = (uint32_t)sizeof *d;
            } else if (BPF_MODE(i->code) == BPF_IMM) {
                v = k;
            } else if (BPF_MODE(i->code) == BPF_MEM && k < BPF_MEMWORDS) {
                v = M[k];
            } else {
                return SECCOMP_RET_KILL_PROCESS;
            }
            if (BPF_CLASS(i->code) == BPF_LD)
                A = v;
            else
                X = v;
            break;
        case BPF_ST:
        case BPF_STX:
            if (k >= BPF_MEMWORDS)
                return SECCOMP_RET_KILL_PROCESS;
            M[k] = BPF_CLASS(i->code) == BPF_ST ? A : X;
            break;
        case BPF_ALU:
            v = BPF_SRC(i->code) == BPF_X ? X : k;
            switch (BPF_OP(i->code)) {
            case BPF_ADD: A += v; break;
            case BPF_SUB: A -= v; break;
            case BPF_MUL: A *= v; break;
            case BPF_DIV:
                if (!v)
                    return 0; /* classic BPF returns 0: SECCOMP_RET_KILL_THREAD */
                A /= v;
                break;
            case BPF_OR: A |= v; break;
            case BPF_AND: A &= v; break;
            case BPF_XOR: A ^= v; break;
            case BPF_LSH: A = v < 32 ? A << v : 0; break;
            case BPF_RSH: A = v < 32 ? A >> v : 0; break;
            case BPF_NEG: A = -A; break;
            default: return SECCOMP_RET_KILL_PROCESS;
            }
            break;
        case BPF_JMP: {
            v = BPF_SRC(i->code) == BPF_X ? X : k;
            bool take;
            switch (BPF_OP(i->code)) {
            case BPF_JA:
                pc += k;
                continue;
            case BPF_JEQ: take = A == v; break;
            case BPF_JGT: take = A > v; break;
            case BPF_JGE: take = A >= v; break;
            case BPF_JSET: take = (A & v) != 0; break;
            default: return SECCOMP_RET_KILL_PROCESS;
            }
            pc += take ? i->jt : i->jf;
            break;
        }
        case BPF_RET:
            return BPF_RVAL(i->code) == BPF_A ? A : k;
        case BPF_MISC:
            if (BPF_MISCOP(i->code) == BPF_TAX)
                X = A;
            else
                A = X;
            break;
        default:
            return SECCOMP_RET_KILL_PROCESS;
        }
    }
    return SECCOMP_RET_KILL_PROCESS;
}

static void data_of(struct seccomp_data *d, long nr, const long args[6])
{
    memset(d, 0, sizeof *d);
    d->nr = (int)nr;
    d->arch = AUDIT_ARCH_X86_64;
    for (int i = 0; i < 6; i++)
        d->args[i] = (uint64_t)args[i];
}

uint32_t seccomp_run(const void *f, unsigned len, long nr, const long args[6])
{
    struct seccomp_data d;
    data_of(&d, nr, args);
    return run(f, len, &d);
}

/* ---- judging ------------------------------------------------------------------------------ */

static bool strict_allows(long nr)
{
    return nr == SYS_read || nr == SYS_write || nr == SYS_exit || nr == SYS_rt_sigreturn;
}

bool seccomp_allows_(long nr, const long args[6])
{
    if (seccomp_strict_ && !strict_allows(nr))
        return false;
    if (atomic_load_explicit(&opaque, memory_order_acquire))
        return false;
    unsigned n = atomic_load_explicit(&nheld, memory_order_acquire);
    if (!n)
        return true;
    struct seccomp_data d;
    data_of(&d, nr, args);
    for (unsigned i = 0; i < n; i++) {
        const held_t *h = held[i];
        if (atomic_load_explicit(&h->voided, memory_order_relaxed))
            continue;
        uint32_t act = ACTION(run(h->insns, h->len, &d));
        if (act != SECCOMP_RET_ALLOW && act != SECCOMP_RET_LOG)
            return false;
    }
    return true;
}

/* ---- the filters held ------------------------------------------------------------------- */

/* Whether the filter reads the caller's address: it may then judge
 * memsim's calls (made from libmemsim.so) apart from the program's. */
static bool reads_ip(const struct sock_filter *f, unsigned len)
{
    unsigned lo = offsetof(struct seccomp_data, instruction_pointer);
    for (unsigned i = 0; i < len; i++)
        if ((BPF_CLASS(f[i].code) == BPF_LD || BPF_CLASS(f[i].code) == BPF_LDX) &&
            BPF_MODE(f[i].code) == BPF_ABS && f[i].k >= lo && f[i].k < lo + 8)
            return true;
    return false;
}

/* n bytes of the program's memory at p into out, read by the kernel: a
 * bad pointer is an error, not a fault of memsim's.  0 or -1. */
static int copy_in(pid_t self, void *out, const void *p, size_t n)
{
    struct iovec local = {out, n}, remote = {(void *)p, n};
    long got = seccomp_call(SYS_process_vm_readv, self, (long)&local, 1, (long)&remote, 1, 0);
    return got == (long)n ? 0 : -1;
}

/* n bytes at p: through the kernel, or (checked) read as they are. */
static int copy(pid_t self, bool checked, void *out, const void *p, size_t n)
{
    if (!checked)
        return copy_in(self, out, p, n);
    memcpy(out, p, n);
    return 0;
}

int seccomp_hold(pid_t self, const void *prog, bool checked)
{
    struct sock_fprog fp = {0};
    unsigned slot = atomic_load(&nheld);
    /* read before the view changes: an opaque one forbids the read */
    bool got = prog && copy(self, checked, &fp, prog, sizeof fp) == 0;
    atomic_store(&seccomp_on_, 1);
    if (!got || fp.len == 0 || fp.len > BPF_MAXINSNS || slot >= SECCOMP_HELD_MAX) {
        atomic_store(&opaque, true);
        return -1;
    }
    size_t bytes = sizeof(held_t) + (size_t)fp.len * sizeof *fp.filter;
    held_t *h = sysmem_alloc_kept(bytes);
    if (!h || copy(self, checked, h->insns, fp.filter, (size_t)fp.len * sizeof *fp.filter) ||
        reads_ip(h->insns, fp.len)) {
        sysmem_free(h, bytes);
        atomic_store(&opaque, true);
        return -1;
    }
    h->bytes = bytes;
    h->len = fp.len;
    held[slot] = h;
    atomic_store_explicit(&nheld, slot + 1, memory_order_release);
    return (int)slot;
}

void seccomp_void(int h)
{
    if (h >= 0 && (unsigned)h < atomic_load(&nheld))
        atomic_store(&held[h]->voided, true);
}

void seccomp_set_opaque(bool on)
{
    atomic_store(&seccomp_on_, 1);
    atomic_store(&opaque, on);
}

bool seccomp_opaque(void) { return atomic_load(&opaque); }

unsigned seccomp_held(void) { return atomic_load(&nheld); }

void seccomp_set_strict(bool on)
{
    if (on)
        atomic_store(&seccomp_on_, 1);
    seccomp_strict_ = on;
}
