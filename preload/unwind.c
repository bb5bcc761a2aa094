/*
 * unwind: a private libunwind, kept out of the program's descriptors.
 * See unwind.h.
 */
#include "preload/unwind.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* libunwind's types and constants only: its functions are looked up in
 * the private copy (dlsym), under the names behind libunwind.h's macros
 * for local unwinding (_ULx86_64_*, and _Ux86_64_* for the two it has
 * once for both). */
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "ipc/seccomp.h"
#include "ipc/sysmem.h"
#include "preload/walk.h"

#define FAKE_READ_FD (-4096) /* the ends of the pipe libunwind thinks it has */
#define FAKE_WRITE_FD (-4097)

typedef int (*unw_set_caching_policy_fn)(unw_addr_space_t as, unw_caching_policy_t policy);

int (*unwind_backtrace_)(void **buffer, int size);
unsigned unwind_depth_;
uintptr_t unwind_self_lo_, unwind_self_hi_;

/* ---- what libunwind's relocations are pointed at ------------------------------------- */

/* Whether n bytes at addr can be read: the question libunwind asks its
 * pipe.  process_vm_readv on the process itself fails with EFAULT for
 * what is not mapped readable, and needs no descriptor. */
/* n bytes at addr into buf, by process_vm_readv on the process itself:
 * the bytes read, or -1 (errno EFAULT for what is not mapped readable). */
static long read_self(void *buf, const void *addr, size_t n)
{
    struct iovec local = {buf, n}, remote = {(void *)addr, n};
    return seccomp_call(SYS_process_vm_readv, (long)getpid(), (long)&local, 1L, (long)&remote, 1L,
                        0L);
}

static ssize_t readable(const void *addr, size_t n)
{
    char byte;
    long rc = read_self(&byte, addr, 1);
    if (rc == 1)
        return (ssize_t)(n ? 1 : 0);
    if (rc < 0 && errno != EFAULT) /* forbidden (seccomp): trust mincore, which ran first */
        return (ssize_t)(n ? 1 : 0);
    errno = EFAULT;
    return -1;
}

static int sub_pipe2(int fds[2], int flags)
{
    (void)flags;
    fds[0] = FAKE_READ_FD;
    fds[1] = FAKE_WRITE_FD;
    return 0;
}

/* The calls that open, read and close files, by system call: glibc's
 * are cancellation points, and libunwind runs inside memsim's work,
 * where a thread with asynchronous cancellation on is deferred (see
 * preload/cancel.h): a cancel pending there would act inside libunwind,
 * holding its locks. */
static int sub_open(const char *path, int flags, ...)
{
    long mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = va_arg(ap, int);
        va_end(ap);
    }
    return (int)seccomp_call(SYS_openat, AT_FDCWD, (long)path, flags, mode, 0, 0);
}

static int sub_close(int fd)
{
    if (fd == FAKE_READ_FD || fd == FAKE_WRITE_FD)
        return 0;
    return (int)seccomp_call(SYS_close, fd, 0, 0, 0, 0, 0);
}

static int sub_msync(void *addr, size_t len, int flags)
{
    return (int)seccomp_call(SYS_msync, (long)addr, (long)len, flags, 0, 0, 0);
}

static ssize_t sub_read(int fd, void *buf, size_t n)
{
    if (fd == FAKE_READ_FD) {
        errno = EAGAIN; /* "the pipe is empty": nothing to drain */
        return -1;
    }
    return seccomp_call(SYS_read, fd, (long)buf, (long)n, 0, 0, 0);
}

static ssize_t sub_write(int fd, const void *buf, size_t n)
{
    if (fd == FAKE_WRITE_FD)
        return readable(buf, n);
    return seccomp_call(SYS_write, fd, (long)buf, (long)n, 0, 0, 0);
}

static long sub_syscall(long nr, ...)
{
    va_list ap;
    va_start(ap, nr);
    long a[6];
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    if (nr == SYS_write && (int)a[0] == FAKE_WRITE_FD)
        return readable((const void *)a[1], (size_t)a[2]);
    return syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* libunwind's own memory is none of the program's mappings: by system
 * call, unseen by memsim's mmap hooks (whose guard an ending thread's
 * destructor does not hold). */
static void *sub_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    long r = seccomp_call(SYS_mmap, (long)addr, (long)len, prot, flags, fd, off);
    if (r != -1 && (flags & MAP_ANONYMOUS))
        sysmem_note_kept((void *)r, len);
    return r == -1 ? MAP_FAILED : (void *)r;
}

static int sub_munmap(void *addr, size_t len)
{
    sysmem_forget(addr);
    return (int)seccomp_call(SYS_munmap, (long)addr, (long)len, 0, 0, 0, 0);
}

static const struct {
    const char *name;
    void *fn;
} subs[] = {
    {"pipe2", (void *)sub_pipe2},     {"close", (void *)sub_close},   {"read", (void *)sub_read},
    {"write", (void *)sub_write},     {"syscall", (void *)sub_syscall},
    {"mmap", (void *)sub_mmap},       {"munmap", (void *)sub_munmap},
    {"open", (void *)sub_open},       {"msync", (void *)sub_msync},
};

/* ---- patching one library's imports ------------------------------------------------- */

typedef struct relro_s {
    uintptr_t l_addr, lo, hi;
} relro_t;

static int find_relro(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    relro_t *r = data;
    if (info->dlpi_addr != r->l_addr)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO) {
            r->lo = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
            r->hi = r->lo + info->dlpi_phdr[i].p_memsz;
        }
    return 1;
}

static uintptr_t dyn_ptr(const struct link_map *lm, uintptr_t v)
{
    /* glibc relocates the dynamic section's pointers in place on x86-64;
     * be right either way. */
    return v < lm->l_addr ? v + lm->l_addr : v;
}

static void *sub_for(const char *name)
{
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
        if (strcmp(name, subs[i].name) == 0)
            return subs[i].fn;
    return NULL;
}

static void patch_slot(const relro_t *relro, uintptr_t slot, void *fn)
{
    uintptr_t page = slot & ~(uintptr_t)4095;
    bool ro = slot >= relro->lo && slot < relro->hi;
    if (ro && mprotect((void *)page, 4096, PROT_READ | PROT_WRITE))
        return;
    *(void **)slot = fn;
    if (ro)
        mprotect((void *)page, 4096, PROT_READ);
}

static void patch_rela(const struct link_map *lm, const relro_t *relro, const ElfW(Rela) *rel,
                       size_t bytes, const ElfW(Sym) *symtab, const char *strtab)
{
    for (size_t i = 0; i < bytes / sizeof *rel; i++) {
        unsigned type = (unsigned)ELF64_R_TYPE(rel[i].r_info);
        if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
            continue;
        const char *name = strtab + symtab[ELF64_R_SYM(rel[i].r_info)].st_name;
        void *fn = sub_for(name);
        if (fn)
            patch_slot(relro, lm->l_addr + rel[i].r_offset, fn);
    }
}

/* Point the library's imports named in subs at memsim's functions. */
static void patch_imports(const struct link_map *lm)
{
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const ElfW(Rela) *jmprel = NULL, *rela = NULL;
    size_t pltrelsz = 0, relasz = 0;
    for (const ElfW(Dyn) *d = lm->l_ld; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_SYMTAB:
            symtab = (const void *)dyn_ptr(lm, d->d_un.d_ptr);
            break;
        case DT_STRTAB:
            strtab = (const void *)dyn_ptr(lm, d->d_un.d_ptr);
            break;
        case DT_JMPREL:
            jmprel = (const void *)dyn_ptr(lm, d->d_un.d_ptr);
            break;
        case DT_PLTRELSZ:
            pltrelsz = d->d_un.d_val;
            break;
        case DT_RELA:
            rela = (const void *)dyn_ptr(lm, d->d_un.d_ptr);
            break;
        case DT_RELASZ:
            relasz = d->d_un.d_val;
            break;
        }
    }
    if (!symtab || !strtab)
        return;
    relro_t relro = {.l_addr = lm->l_addr};
    dl_iterate_phdr(find_relro, &relro);
    if (jmprel)
        patch_rela(lm, &relro, jmprel, pltrelsz, symtab, strtab);
    if (rela)
        patch_rela(lm, &relro, rela, relasz, symtab, strtab);
}

/* ---- loading ---------------------------------------------------------------------------- */

static int find_self(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    uintptr_t probe = (uintptr_t)data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (probe >= lo && probe < hi) {
            unwind_self_lo_ = lo;
            unwind_self_hi_ = hi;
            return 1;
        }
    }
    return 0;
}

/* ---- libunwind by unw_step ------------------------------------------------------------ */

static struct {
    int (*getcontext)(unw_context_t *uc);
    int (*init_local)(unw_cursor_t *cursor, unw_context_t *uc);
    int (*step)(unw_cursor_t *cursor);
    int (*get_reg)(unw_cursor_t *cursor, unw_regnum_t reg, unw_word_t *value);
    void (*flush_cache)(unw_addr_space_t as, unw_word_t lo, unw_word_t hi);
    unw_addr_space_t as;
} unw;

/* unw_backtrace's frames, walked as its own slow path walks them: from
 * this function's caller, by unw_step, whose caches unw_flush_cache
 * empties (unw_backtrace's frame cache is never emptied). */
__attribute__((noinline)) static int stepped_backtrace(void **buffer, int size)
{
    unw_context_t uc;
    unw_cursor_t cursor;
    if (unw.getcontext(&uc) < 0 || unw.init_local(&cursor, &uc) < 0)
        return 0;
    int n = 0;
    while (n < size && unw.step(&cursor) > 0) {
        unw_word_t ip;
        if (unw.get_reg(&cursor, UNW_REG_IP, &ip) < 0)
            break;
        buffer[n++] = (void *)(uintptr_t)ip;
    }
    return n;
}

static void flush_libunwind(void) { unw.flush_cache(unw.as, 0, 0); }

static walk_general_t general_of(void *h, int (*bt)(void **, int), unw_addr_space_t as)
{
    *(void **)&unw.getcontext = dlsym(h, "_Ux86_64_getcontext");
    *(void **)&unw.init_local = dlsym(h, "_ULx86_64_init_local");
    *(void **)&unw.step = dlsym(h, "_ULx86_64_step");
    *(void **)&unw.get_reg = dlsym(h, "_ULx86_64_get_reg");
    *(void **)&unw.flush_cache = dlsym(h, "_Ux86_64_flush_cache");
    unw.as = as;
    walk_general_t g = {.backtrace = bt};
    if (unw.getcontext && unw.init_local && unw.step && unw.get_reg && unw.flush_cache && as) {
        g.stepped = stepped_backtrace;
        g.flush = flush_libunwind;
    }
    return g;
}

/* libunwind, loaded (patched, its caching per thread): its general
 * walker and its unw_backtrace in *g and *bt; 0, or -1 with *why. */
static int load(walk_general_t *g, int (**bt)(void **, int), const char **why)
{
    void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        dlerror(); /* the program's next dlerror() is about its own calls */
        *why = "cannot load libunwind.so.8 (Debian package libunwind8); stacks are off";
        return -1;
    }
    struct link_map *lm = NULL;
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm)
        patch_imports(lm);
    *bt = (int (*)(void **, int))dlsym(h, "unw_backtrace");
    unw_set_caching_policy_fn policy =
        (unw_set_caching_policy_fn)dlsym(h, "_ULx86_64_set_caching_policy");
    unw_addr_space_t *as = dlsym(h, "_ULx86_64_local_addr_space");
    if (!*bt) {
        *why = "libunwind.so.8 has no unw_backtrace; stacks are off";
        return -1;
    }
    if (policy && as)
        policy(*as, UNW_CACHE_PER_THREAD);
    *g = general_of(h, *bt, as ? *as : NULL);
    return 0;
}

/* ---- libunwind when a stack first needs it ------------------------------------------ */

static _Atomic int lazy; /* 1: not loaded yet; 2: loading; 3: loaded; 4: could not be */
static uintptr_t loader_lo, loader_hi; /* the dynamic loader's code; 0, 0: not known */

static int find_loader(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    if (info->dlpi_addr != (uintptr_t)data)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            loader_lo = info->dlpi_addr + ph->p_vaddr;
            loader_hi = loader_lo + ph->p_memsz;
        }
    }
    return 1;
}

static bool in_loader(uintptr_t pc) { return pc >= loader_lo && pc < loader_hi; }

/* Whether the code at pc is the kernel's way back from a signal handler
 * (glibc's __restore_rt: mov $SYS_rt_sigreturn, %rax; syscall), read
 * without a fault where pc is not readable. */
static bool sigreturn_at(uintptr_t pc)
{
    static const unsigned char code[9] = {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05};
    unsigned char got[sizeof code];
    long rc = read_self(got, (const void *)pc, sizeof got);
    return rc != (long)sizeof got || memcmp(got, code, sizeof code) == 0; /* unreadable: as if */
}

/* Load libunwind now, if it is still to be (one thread at a time). */
static bool load_now(void)
{
    int expect = 1;
    if (!atomic_compare_exchange_strong(&lazy, &expect, 2))
        return expect == 3;
    walk_general_t g;
    int (*bt)(void **, int);
    const char *why;
    if (load(&g, &bt, &why)) {
        atomic_store(&lazy, 4);
        return false;
    }
    walk_set_general(g);
    atomic_store(&lazy, 3);
    void *warm[4]; /* libunwind's first-use set-up, here */
    bt(warm, 4);
    return true;
}

bool (*unwind_may_load)(void);

static bool may_load(void) { return unwind_may_load && unwind_may_load(); }

/* A stack needs libunwind (walk_demand_t): loaded when that is safe and
 * the walk came through neither the loader (a malloc of its own) nor a
 * signal frame (a handler may have interrupted the loader). */
static bool on_demand(uintptr_t stop, void *const *frames, int n)
{
    if (atomic_load(&lazy) != 1 || !loader_hi || !may_load())
        return atomic_load(&lazy) == 3;
    if (!stop || in_loader(stop) || sigreturn_at(stop))
        return false;
    for (int i = 0; i < n; i++)
        if (in_loader((uintptr_t)frames[i]))
            return false;
    return load_now();
}

void unwind_need(void)
{
    if (atomic_load_explicit(&lazy, memory_order_relaxed) == 1 && may_load())
        load_now();
}

int unwind_init(unsigned want, int mode, const char **why)
{
    unwind_depth_ = want > UNWIND_MAX_DEPTH ? UNWIND_MAX_DEPTH : want;
    if (!unwind_depth_)
        return 0;
    dl_iterate_phdr(find_self, (void *)(uintptr_t)unwind_init);
    uintptr_t base = getauxval(AT_BASE);
    if (base)
        dl_iterate_phdr(find_loader, (void *)base);
    /* By rules, libunwind when a stack first needs it: most processes
     * never load it (its dlopen is the dearest part of a process's
     * start). */
    if (mode == WALK_FAST && loader_hi &&
        walk_init(WALK_FAST, (walk_general_t){0}, on_demand) == 0) {
        atomic_store(&lazy, 1);
        unwind_backtrace_ = walk_backtrace;
        return 0;
    }
    walk_general_t g;
    int (*bt)(void **, int);
    if (load(&g, &bt, why)) {
        unwind_depth_ = 0;
        return -1;
    }
    unwind_backtrace_ = walk_init((walk_mode_t)mode, g, NULL) == 0 ? walk_backtrace : bt;
    /* libunwind initializes itself on first use (its validation pipe
     * among it, now redirected): here, not in the middle of the
     * program's first malloc. */
    void *warm[4];
    unwind_backtrace_(warm, 4);
    return 0;
}

unsigned unwind_depth(void) { return unwind_backtrace_ ? unwind_depth_ : 0; }
