/*
 * symbols: return addresses inside this test program (built with -g)
 * resolved over its own module map, as the preload records it from
 * dl_iterate_phdr: function, file and line; an inlined call; a C++ name
 * demangled; addresses in no module and in a module whose file is gone
 * or has changed; module paths naming a FIFO, a device or a directory
 * (refused without blocking, nothing left open); separate debug files
 * found by .gnu_debuglink, checked, and a FIFO in their place; the
 * address space's overlaps and unloads; the symbol-table names, as
 * libdwfl's own search gives them.
 */
#include <check.h>
#include <dirent.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdwfl.h>

#include "analyzer/read/symbols.h"
#include "tests/unit/suites.h"

/* ---- probes: return addresses at known lines --------------------------------- */

static volatile uintptr_t sink;
static int probe_line, inline_line, outer_line;

__attribute__((noinline)) static uintptr_t return_address(void)
{
    uintptr_t r = (uintptr_t)__builtin_return_address(0);
    sink = r;
    return r;
}

__attribute__((noinline)) static uintptr_t probe_call(void)
{
    uintptr_t ra = return_address(); probe_line = __LINE__;
    sink = ra + 1; /* no tail call: the return address stays in here */
    return ra;
}

static inline __attribute__((always_inline)) uintptr_t inlined_probe(void)
{
    uintptr_t ra = return_address(); inline_line = __LINE__;
    return ra;
}

__attribute__((noinline)) static uintptr_t outer_probe(void)
{
    uintptr_t ra = inlined_probe(); outer_line = __LINE__;
    sink = ra + 2;
    return ra;
}

/* ---- this process's modules, as the preload lists them -------------------------- */

static char exe[4096];

static int add_module(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    symbols_space_t *sp = data;
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
    if (hi > lo)
        ck_assert_int_eq(symbols_space_load(sp, info->dlpi_name && *info->dlpi_name
                                                    ? info->dlpi_name : exe,
                                            info->dlpi_addr + lo, hi - lo), 0);
    return 0;
}

static void self_space(symbols_t *store, symbols_space_t *sp)
{
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    ck_assert_int_gt(n, 0);
    exe[n] = '\0';
    ck_assert_int_eq(symbols_init(store), 0);
    symbols_space_init(sp, store);
    dl_iterate_phdr(add_module, sp);
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* ---- tests --------------------------------------------------------------------- */

static int open_fds(void);

START_TEST(function_file_and_line)
{
    symbols_t store;
    symbols_space_t sp;
    self_space(&store, &sp);
    uintptr_t ra = probe_call();
    int32_t m = symbols_space_find(&sp, ra);
    ck_assert_int_ge(m, 0);
    const symbols_frame_t *f;
    size_t n = symbols_resolve(&store, m, ra, &f);
    ck_assert_uint_eq(n, 1);
    ck_assert_str_eq(f->function, "probe_call");
    ck_assert_ptr_nonnull(f->file);
    ck_assert_str_eq(base_name(f->file), "test_symbols.c");
    ck_assert_int_eq(f->line, probe_line);
    ck_assert(!f->inlined);
    ck_assert_uint_eq(f->address, ra);
    ck_assert_str_eq(f->module, exe);
    ck_assert_str_eq(f->name, base_name(exe));
    char buf[64];
    ck_assert_str_eq(symbols_label(f, buf, sizeof buf), "probe_call");

    /* Cached: the same frames again. */
    const symbols_frame_t *again;
    ck_assert_uint_eq(symbols_resolve(&store, m, ra, &again), 1);
    ck_assert_ptr_eq(again, f);
    symbols_space_fini(&sp);
    symbols_fini(&store);
}
END_TEST

START_TEST(inlined_frames)
{
    symbols_t store;
    symbols_space_t sp;
    self_space(&store, &sp);
    uintptr_t ra = outer_probe();
    const symbols_frame_t *f;
    size_t n = symbols_resolve(&store, symbols_space_find(&sp, ra), ra, &f);
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(f[0].function, "inlined_probe");
    ck_assert(f[0].inlined);
    ck_assert_str_eq(base_name(f[0].file), "test_symbols.c");
    ck_assert_int_eq(f[0].line, inline_line);
    ck_assert_str_eq(f[1].function, "outer_probe");
    ck_assert(!f[1].inlined);
    ck_assert_str_eq(base_name(f[1].file), "test_symbols.c");
    ck_assert_int_eq(f[1].line, outer_line);
    ck_assert_uint_eq(f[1].address, ra);
    symbols_space_fini(&sp);
    symbols_fini(&store);
}
END_TEST

/* A function of a shared library without its debug information in this
 * test (libc's, through its symbol table or whatever debug files the
 * host has): named, never nothing. */
START_TEST(shared_library_symbol)
{
    symbols_t store;
    symbols_space_t sp;
    self_space(&store, &sp);
    uintptr_t addr = (uintptr_t)&getpid + 1;
    int32_t m = symbols_space_find(&sp, addr);
    ck_assert_int_ge(m, 0);
    const symbols_frame_t *f;
    size_t n = symbols_resolve(&store, m, addr, &f);
    ck_assert_uint_ge(n, 1);
    ck_assert_ptr_nonnull(f[n - 1].function);
    ck_assert_ptr_nonnull(strstr(f[n - 1].function, "getpid"));
    ck_assert_ptr_nonnull(strstr(f->module, "libc"));
    symbols_space_fini(&sp);
    symbols_fini(&store);
}
END_TEST

/* The symbol-table names come from an index of each module's table, not
 * from libdwfl's search of the whole table: the same name as libdwfl's
 * dwfl_module_addrinfo at every symbol's edges (its first byte, the one
 * before, its last, the one after), in every module of this process (the
 * test program's own local and global functions, libc's, libdw's, ...). */
/* Symbols nested as assembly can nest them: a global function with a
 * weak alias of another size at its address, a global one inside it
 * (first in the table), and a sizeless local label after them.  libdwfl
 * picks the innermost where they overlap. */
__asm__(".text\n"
        ".p2align 4\n"
        ".globl memsim_probe_mid\n"
        ".globl memsim_probe_outer\n"
        ".weak memsim_probe_weak\n"
        ".type memsim_probe_outer, @function\n"
        "memsim_probe_outer:\n"
        ".type memsim_probe_weak, @function\n"
        "memsim_probe_weak:\n"
        ".skip 4, 0x90\n"
        ".type memsim_probe_mid, @function\n"
        "memsim_probe_mid:\n"
        ".skip 8, 0x90\n"
        ".size memsim_probe_mid, 8\n"
        ".skip 4, 0x90\n"
        ".size memsim_probe_outer, 16\n"
        ".size memsim_probe_weak, 12\n"
        "memsim_probe_label:\n"
        ".skip 4, 0x90\n"
        "ret\n");

typedef struct names_check_s {
    symbols_t *store;
    symbols_space_t *sp;
    size_t compared;
} names_check_t;

static const Dwfl_Callbacks plain_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

static int check_module_names(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    names_check_t *c = data;
    const char *path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : exe;
    if (!strchr(path, '/'))
        return 0; /* the vdso */
    uintptr_t lo = UINTPTR_MAX;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_LOAD && info->dlpi_phdr[i].p_vaddr < lo)
            lo = info->dlpi_phdr[i].p_vaddr;
    int32_t m = symbols_space_find(c->sp, info->dlpi_addr + lo);
    if (m < 0)
        return 0; /* loaded since (libdw loads libdebuginfod when first used) */
    Dwfl *dwfl = dwfl_begin(&plain_callbacks);
    ck_assert_ptr_nonnull(dwfl);
    dwfl_report_begin(dwfl);
    Dwfl_Module *mod = dwfl_report_elf(dwfl, base_name(path), path, -1, info->dlpi_addr, false);
    dwfl_report_end(dwfl, NULL, NULL);
    int n = mod ? dwfl_module_getsymtab(mod) : -1;
    int step = n > 1500 ? n / 1500 : 1; /* libdwfl's own search reads all n at each call */
    for (int i = 0; i < n; i += step) {
        GElf_Sym sym;
        GElf_Addr addr;
        if (!dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL) || !addr)
            continue;
        uint64_t at[] = {addr - 1, addr, addr + 1, addr + sym.st_size - 1, addr + sym.st_size};
        for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
            GElf_Off off;
            GElf_Sym s2;
            const char *want = dwfl_module_addrinfo(mod, at[k], &off, &s2, NULL, NULL, NULL);
            const char *got = symbols_symtab_name(c->store, m, at[k]);
            if (!want || !got)
                ck_assert_msg(want == got, "%s+0x%lx: %s, libdwfl %s", path,
                              (unsigned long)(at[k] - info->dlpi_addr), got ? got : "none",
                              want ? want : "none");
            else
                ck_assert_msg(!strcmp(want, got), "%s+0x%lx: %s, libdwfl %s", path,
                              (unsigned long)(at[k] - info->dlpi_addr), got, want);
            c->compared++;
        }
    }
    dwfl_end(dwfl);
    return 0;
}

START_TEST(symtab_names_as_libdwfl)
{
    symbols_t store;
    symbols_space_t sp;
    self_space(&store, &sp);
    store.quiet = true;
    names_check_t c = {.store = &store, .sp = &sp};
    dl_iterate_phdr(check_module_names, &c);
    ck_assert_uint_gt(c.compared, 1000);
    symbols_space_fini(&sp);
    symbols_fini(&store);
}
END_TEST

START_TEST(demangle)
{
    char *d = symbols_demangle("_ZN3foo3barEv");
    ck_assert_str_eq(d, "foo::bar()");
    free(d);
    d = symbols_demangle("_ZNSt6vectorIiSaIiEE9push_backERKi");
    ck_assert_str_eq(d, "std::vector<int, std::allocator<int> >::push_back(int const&)");
    free(d);
    ck_assert_ptr_null(symbols_demangle("main"));
    ck_assert_ptr_null(symbols_demangle("_Z!garbage"));
    ck_assert_ptr_null(symbols_demangle(NULL));
}
END_TEST

START_TEST(no_module)
{
    symbols_t store;
    ck_assert_int_eq(symbols_init(&store), 0);
    const symbols_frame_t *f;
    ck_assert_uint_eq(symbols_resolve(&store, SYMBOLS_NO_MODULE, 0xdead1234, &f), 1);
    ck_assert_ptr_null(f->module);
    ck_assert_ptr_null(f->function);
    char buf[64];
    ck_assert_str_eq(symbols_label(f, buf, sizeof buf), "0xdead1234");
    /* An index beyond the store's modules is no module either. */
    ck_assert_uint_eq(symbols_resolve(&store, 99, 0x10, &f), 1);
    ck_assert_str_eq(symbols_label(f, buf, sizeof buf), "0x10");
    symbols_fini(&store);
}
END_TEST

/* What fn writes on stderr, into out (len bytes, NUL-terminated); the
 * number of lines. */
static int stderr_of(void (*fn)(symbols_t *), symbols_t *s, char *out, size_t len)
{
    fflush(stderr);
    FILE *tmp = tmpfile();
    ck_assert_ptr_nonnull(tmp);
    int saved = dup(STDERR_FILENO);
    dup2(fileno(tmp), STDERR_FILENO);
    fn(s);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    rewind(tmp);
    int lines = 0, c;
    size_t n = 0;
    while ((c = fgetc(tmp)) != EOF) {
        lines += c == '\n';
        if (n + 1 < len)
            out[n++] = (char)c;
    }
    out[n] = '\0';
    fclose(tmp);
    return lines;
}

/* The lines written on stderr while fn runs. */
static int stderr_lines(void (*fn)(symbols_t *), symbols_t *s)
{
    char text[4096];
    return stderr_of(fn, s, text, sizeof text);
}

static void resolve_gone(symbols_t *s)
{
    symbols_space_t sp;
    symbols_space_init(&sp, s);
    ck_assert_int_eq(symbols_space_load(&sp, "/nonexistent/dir/libgone.so.1", 0x7f0000000000,
                                        0x10000), 0);
    const symbols_frame_t *f;
    char buf[64];
    ck_assert_uint_eq(symbols_resolve(s, symbols_space_find(&sp, 0x7f0000000123), 0x7f0000000123,
                                      &f), 1);
    ck_assert_str_eq(symbols_label(f, buf, sizeof buf), "libgone.so.1+0x123");
    ck_assert_str_eq(f->module, "/nonexistent/dir/libgone.so.1");
    ck_assert_uint_eq(f->offset, 0x123);
    ck_assert_ptr_null(f->function);
    /* The same file at another base (another process): no second warning. */
    symbols_space_unload(&sp, 0x7f0000000000, 0x10000);
    ck_assert_int_eq(symbols_space_load(&sp, "/nonexistent/dir/libgone.so.1", 0x7f1000000000,
                                        0x10000), 0);
    ck_assert_uint_eq(symbols_resolve(s, symbols_space_find(&sp, 0x7f1000000040), 0x7f1000000040,
                                      &f), 1);
    ck_assert_str_eq(symbols_label(f, buf, sizeof buf), "libgone.so.1+0x40");
    /* Not a file (the vDSO): silently module+offset. */
    ck_assert_int_eq(symbols_space_load(&sp, "linux-vdso.so.1", 0x7ff000000000, 0x2000), 0);
    ck_assert_uint_eq(symbols_resolve(s, symbols_space_find(&sp, 0x7ff000000800), 0x7ff000000800,
                                      &f), 1);
    ck_assert_str_eq(symbols_label(f, buf, sizeof buf), "linux-vdso.so.1+0x800");
    symbols_space_fini(&sp);
}

START_TEST(module_file_gone)
{
    symbols_t store;
    ck_assert_int_eq(symbols_init(&store), 0);
    ck_assert_int_eq(stderr_lines(resolve_gone, &store), 1);
    symbols_fini(&store);
}
END_TEST

static void resolve_changed(symbols_t *s)
{
    symbols_space_t sp;
    symbols_space_init(&sp, s);
    /* This program, with a span it does not have: rebuilt since the trace. */
    ck_assert_int_eq(symbols_space_load(&sp, exe, 0x500000000000, 0x10), 0);
    const symbols_frame_t *f;
    char buf[sizeof exe + 32], want[sizeof exe + 32];
    ck_assert_uint_eq(symbols_resolve(s, symbols_space_find(&sp, 0x500000000008), 0x500000000008,
                                      &f), 1);
    snprintf(want, sizeof want, "%s+0x8", base_name(exe));
    ck_assert_str_eq(symbols_label(f, buf, sizeof buf), want);
    symbols_space_fini(&sp);
}

/* One file at two bases (two processes of a tree): the second reads the
 * first one's debug information at its own addresses. */
START_TEST(same_file_other_base)
{
    symbols_t store;
    symbols_space_t sp;
    self_space(&store, &sp);
    uintptr_t ra = probe_call();
    int32_t m = symbols_space_find(&sp, ra);
    ck_assert_int_ge(m, 0);
    uint64_t base = 0, end = 0;
    for (size_t i = 0; i < sp.n; i++)
        if (sp.v[i].module == m) {
            base = sp.v[i].base;
            end = sp.v[i].end;
        }
    const uint64_t delta = 0x100000000000;
    int32_t other = symbols_module(&store, exe, base + delta, end - base);
    ck_assert_int_ge(other, 0);
    ck_assert_int_ne(other, m);
    const symbols_frame_t *f;
    ck_assert_uint_eq(symbols_resolve(&store, other, ra + delta, &f), 1);
    ck_assert_str_eq(f->function, "probe_call");
    ck_assert_int_eq(f->line, probe_line);
    ck_assert_uint_eq(f->address, ra + delta);
    ck_assert_uint_eq(f->offset, ra - base);
    ck_assert_uint_eq(symbols_resolve(&store, m, ra, &f), 1);
    ck_assert_str_eq(f->function, "probe_call");
    ck_assert_uint_eq(f->address, ra);
    symbols_space_fini(&sp);
    symbols_fini(&store);
}
END_TEST

/* A missing file at two bases, the later looked up first: one warning. */
static void resolve_gone_twice(symbols_t *s)
{
    int32_t a = symbols_module(s, "/nonexistent/dir/libtwice.so.1", 0x7f0000000000, 0x10000);
    int32_t b = symbols_module(s, "/nonexistent/dir/libtwice.so.1", 0x7f1000000000, 0x10000);
    const symbols_frame_t *f;
    ck_assert_uint_eq(symbols_resolve(s, b, 0x7f1000000010, &f), 1);
    ck_assert_uint_eq(f->offset, 0x10);
    ck_assert_uint_eq(symbols_resolve(s, a, 0x7f0000000020, &f), 1);
    ck_assert_uint_eq(f->offset, 0x20);
}

START_TEST(same_file_warned_once)
{
    symbols_t store;
    ck_assert_int_eq(symbols_init(&store), 0);
    ck_assert_int_eq(stderr_lines(resolve_gone_twice, &store), 1);
    symbols_fini(&store);
}
END_TEST

START_TEST(module_file_changed)
{
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    ck_assert_int_gt(n, 0);
    exe[n] = '\0';
    symbols_t store;
    ck_assert_int_eq(symbols_init(&store), 0);
    ck_assert_int_eq(stderr_lines(resolve_changed, &store), 1);
    symbols_fini(&store);
}
END_TEST

/* ---- opening ahead (symbols_prewarm) ---------------------------------------- */

/* Frames of a module opened ahead are those of one opened at its lookup,
 * whether the store's thread has finished (waited for), is running or has
 * not started the opening (resolved at once: taken back, or waited for). */
static void check_probes(symbols_t *store, symbols_space_t *sp)
{
    uintptr_t ra = probe_call();
    const symbols_frame_t *f;
    ck_assert_uint_eq(symbols_resolve(store, symbols_space_find(sp, ra), ra, &f), 1);
    ck_assert_str_eq(f->function, "probe_call");
    ck_assert_str_eq(base_name(f->file), "test_symbols.c");
    ck_assert_int_eq(f->line, probe_line);
    ra = outer_probe();
    ck_assert_uint_eq(symbols_resolve(store, symbols_space_find(sp, ra), ra, &f), 2);
    ck_assert_str_eq(f[0].function, "inlined_probe");
    ck_assert_int_eq(f[0].line, inline_line);
    ck_assert_str_eq(f[1].function, "outer_probe");
    ck_assert_int_eq(f[1].line, outer_line);
}

START_TEST(prewarm_same_frames)
{
    for (int wait_ms = 0; wait_ms <= 300; wait_ms += 300) {
        symbols_t store;
        symbols_space_t sp;
        self_space(&store, &sp);
        int32_t m = symbols_space_find(&sp, probe_call());
        ck_assert_int_ge(m, 0);
        for (size_t i = 0; i < store.nmodules; i++) /* every other module first */
            if ((int32_t)i != m)
                symbols_prewarm(&store, (int32_t)i);
        symbols_prewarm(&store, m);
        symbols_prewarm(&store, m); /* twice: nothing more */
        symbols_prewarm(&store, -1);
        symbols_prewarm(&store, (int32_t)store.nmodules);
        ck_assert_ptr_nonnull(store.ahead);
        usleep((useconds_t)wait_ms * 1000);
        check_probes(&store, &sp);
        check_probes(&store, &sp);
        symbols_space_fini(&sp);
        symbols_fini(&store);
    }
}
END_TEST

static void prewarm_gone(symbols_t *s)
{
    int32_t m = symbols_module(s, "/nonexistent/dir/libgone.so.1", 0x7f0000000000, 0x10000);
    symbols_prewarm(s, m);
    symbols_prewarm(s, symbols_module(s, "linux-vdso.so.1", 0x7ff000000000, 0x2000));
    usleep(100 * 1000); /* long enough for the thread to have tried */
}

START_TEST(prewarm_warns_at_lookup)
{
    /* The warning of a module that cannot be opened comes at its first
     * lookup, as without opening ahead, never from the store's thread. */
    symbols_t store;
    ck_assert_int_eq(symbols_init(&store), 0);
    ck_assert_int_eq(stderr_lines(prewarm_gone, &store), 0);
    ck_assert_int_eq(stderr_lines(resolve_gone, &store), 1);
    symbols_fini(&store);
}
END_TEST

START_TEST(prewarm_never_resolved)
{
    /* Opened ahead or still queued, never looked up: ended by symbols_fini,
     * no descriptor left open (ASan's leak check sees the rest). */
    int before = open_fds();
    for (int wait_ms = 0; wait_ms <= 300; wait_ms += 300) {
        symbols_t store;
        symbols_space_t sp;
        self_space(&store, &sp);
        for (size_t i = 0; i < store.nmodules; i++)
            symbols_prewarm(&store, (int32_t)i);
        usleep((useconds_t)wait_ms * 1000);
        symbols_space_fini(&sp);
        symbols_fini(&store);
        ck_assert_ptr_null(store.ahead);
    }
    ck_assert_int_eq(open_fds(), before);
}
END_TEST

START_TEST(modules_are_keyed_by_path_base_and_size)
{
    symbols_t store;
    ck_assert_int_eq(symbols_init(&store), 0);
    int32_t a = symbols_module(&store, "/lib/a.so", 0x1000, 0x100);
    ck_assert_int_ge(a, 0);
    ck_assert_int_eq(symbols_module(&store, "/lib/a.so", 0x1000, 0x100), a);
    int32_t b = symbols_module(&store, "/lib/b.so", 0x1000, 0x100);
    ck_assert_int_ne(b, a);
    int32_t c = symbols_module(&store, "/lib/a.so", 0x1000, 0x200);
    ck_assert_int_ne(c, a);
    ck_assert_int_ne(c, b);
    ck_assert_int_eq(symbols_module(&store, "/lib/a.so", 0x1000, 0x100), a);
    ck_assert_int_eq(symbols_module(&store, "/lib/b.so", 0x1000, 0x100), b);
    ck_assert_int_ne(symbols_module(&store, "/lib/a.so", 0x2000, 0x100), a);
    for (int i = 0; i < 1000; i++) /* the table grows */
        ck_assert_int_ge(symbols_module(&store, "/lib/x.so", 0x100000 + (uint64_t)i * 0x1000,
                                        0x1000), 0);
    ck_assert_int_eq(symbols_module(&store, "/lib/b.so", 0x1000, 0x100), b);
    symbols_fini(&store);
}
END_TEST

START_TEST(space_overlaps_and_unloads)
{
    symbols_t store;
    symbols_space_t sp;
    ck_assert_int_eq(symbols_init(&store), 0);
    symbols_space_init(&sp, &store);
    ck_assert_int_eq(symbols_space_find(&sp, 0x1000), SYMBOLS_NO_MODULE);
    for (uint64_t i = 10; i-- > 0;) /* loaded in any order, kept sorted */
        ck_assert_int_eq(symbols_space_load(&sp, "/lib/m.so", 0x10000 * (i + 1), 0x1000), 0);
    ck_assert_int_eq(symbols_space_find(&sp, 0x30800),
                     symbols_module(&store, "/lib/m.so", 0x30000, 0x1000));
    ck_assert_int_eq(symbols_space_find(&sp, 0x31000), SYMBOLS_NO_MODULE);
    ck_assert_int_eq(symbols_space_find(&sp, 0xffff), SYMBOLS_NO_MODULE);
    ck_assert(!sp.overlap);

    /* b replaces a at 0x30000: the load is listed before the unload. */
    int32_t a = symbols_module(&store, "/lib/m.so", 0x30000, 0x1000);
    ck_assert_int_eq(symbols_space_load(&sp, "/lib/b.so", 0x30000, 0x1000), 0);
    int32_t b = symbols_module(&store, "/lib/b.so", 0x30000, 0x1000);
    ck_assert(sp.overlap);
    ck_assert_int_eq(symbols_space_find(&sp, 0x30800), b);
    symbols_space_unload(&sp, 0x30000, 0x1000); /* a's, the older */
    ck_assert(!sp.overlap);
    ck_assert_int_eq(symbols_space_find(&sp, 0x30800), b);
    ck_assert_int_ne(a, b);
    symbols_space_unload(&sp, 0x30000, 0x1000);
    ck_assert_int_eq(symbols_space_find(&sp, 0x30800), SYMBOLS_NO_MODULE);
    symbols_space_unload(&sp, 0x30000, 0x1000); /* nothing there: nothing happens */
    ck_assert_uint_eq(sp.n, 9);

    /* A large mapping over small ones (overlap found after a smaller base). */
    ck_assert_int_eq(symbols_space_load(&sp, "/lib/big.so", 0x8000, 0x100000), 0);
    ck_assert(sp.overlap);
    int32_t big = symbols_module(&store, "/lib/big.so", 0x8000, 0x100000);
    ck_assert_int_eq(symbols_space_find(&sp, 0x50800), big);
    ck_assert_int_eq(symbols_space_find(&sp, 0x30800), big);
    symbols_space_fini(&sp);
    symbols_fini(&store);
}
END_TEST

/* ---- paths that are no regular file ------------------------------------------ */

static char refused_path[4096]; /* what resolve_refused loads */

/* The frame of an address in a module at refused_path: module+offset. */
static void resolve_refused(symbols_t *s)
{
    symbols_space_t sp;
    symbols_space_init(&sp, s);
    ck_assert_int_eq(symbols_space_load(&sp, refused_path, 0x7f0000000000, 0x10000), 0);
    const symbols_frame_t *f;
    ck_assert_uint_eq(symbols_resolve(s, symbols_space_find(&sp, 0x7f0000000123), 0x7f0000000123,
                                      &f), 1);
    ck_assert_str_eq(f->module, refused_path);
    ck_assert_ptr_null(f->function);
    ck_assert_uint_eq(f->offset, 0x123);
    char buf[sizeof refused_path + 32], want[sizeof refused_path + 32];
    snprintf(want, sizeof want, "%s+0x123", base_name(refused_path));
    ck_assert_str_eq(symbols_label(f, buf, sizeof buf), want);
    symbols_space_fini(&sp);
}

/* The descriptors this process has open. */
static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    ck_assert_ptr_nonnull(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* A module at path is refused with one warning saying why, within the
 * test's timeout (a FIFO opened for reading would wait for a writer
 * forever), and leaves no descriptor open. */
static void check_refused(const char *path, const char *why)
{
    snprintf(refused_path, sizeof refused_path, "%s", path);
    int fds = open_fds();
    symbols_t store;
    ck_assert_int_eq(symbols_init(&store), 0);
    char err[4096], want[4096 + 256];
    ck_assert_int_eq(stderr_of(resolve_refused, &store, err, sizeof err), 1);
    snprintf(want, sizeof want, "memsim-analyze: module %s: %s; its frames print as %s+0x…\n",
             path, why, base_name(path));
    ck_assert_str_eq(err, want);
    symbols_fini(&store);
    ck_assert_int_eq(open_fds(), fds);
}

START_TEST(module_fifo)
{
    char dir[] = "/tmp/memsim-symbols.XXXXXX", path[sizeof dir + 16];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/lib.fifo", dir);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    check_refused(path, "a FIFO, not a regular file");
    unlink(path);
    rmdir(dir);
}
END_TEST

START_TEST(module_device)
{
    /* Not even opened: /dev/zero would read as zeros without end. */
    check_refused("/dev/zero", "a character device, not a regular file");
    check_refused("/dev/null", "a character device, not a regular file");
}
END_TEST

START_TEST(module_directory)
{
    check_refused("/tmp", "a directory, not a regular file");
}
END_TEST

/* A module symbolized, then the store ended: the descriptor libdwfl was
 * handed is closed with it. */
START_TEST(module_descriptor_closed)
{
    int fds = open_fds();
    symbols_t store;
    symbols_space_t sp;
    self_space(&store, &sp);
    uintptr_t ra = probe_call();
    const symbols_frame_t *f;
    ck_assert_uint_ge(symbols_resolve(&store, symbols_space_find(&sp, ra), ra, &f), 1);
    ck_assert_str_eq(f->function, "probe_call");
    ck_assert_int_gt(open_fds(), fds); /* the Dwfl holds it */
    symbols_space_fini(&sp);
    symbols_fini(&store);
    ck_assert_int_eq(open_fds(), fds);
}
END_TEST

/* ---- separate debug files, by .gnu_debuglink -------------------------------- */

/* A copy of this program at dir/name without its debug information,
 * whose .gnu_debuglink names name.debug, and dir/name.debug holding that
 * information, made by objcopy; extra: options for both.  False when
 * there is no objcopy to make them (the test then checks nothing). */
static bool split_debug(const char *dir, const char *name, const char *extra)
{
    if (system("command -v objcopy >/dev/null 2>&1")) {
        fprintf(stderr, "# skip - .gnu_debuglink: no objcopy\n");
        return false;
    }
    char cmd[3 * sizeof exe];
    snprintf(cmd, sizeof cmd,
             "objcopy %s --only-keep-debug '%s' '%s/%s.debug' && "
             "objcopy %s --strip-debug --add-gnu-debuglink='%s/%s.debug' '%s' '%s/%s'",
             extra, exe, dir, name, extra, dir, name, exe, dir, name);
    ck_assert_int_eq(system(cmd), 0);
    return true;
}

static char copy_path[4096]; /* what resolve_copy loads */
static bool copy_has_lines;  /* and whether it expects file and line */

/* probe_call's return address in the copy at copy_path, loaded where this
 * program is: the name from the copy's symbol table in any case, the file
 * and line only from debug information found. */
static void resolve_copy(symbols_t *s)
{
    symbols_space_t self, sp;
    symbols_space_init(&self, s);
    dl_iterate_phdr(add_module, &self);
    uintptr_t ra = probe_call();
    const symbols_mapping_t *m = NULL;
    for (size_t i = 0; i < self.n; i++)
        if (ra >= self.v[i].base && ra < self.v[i].end)
            m = &self.v[i];
    ck_assert_ptr_nonnull(m);
    symbols_space_init(&sp, s);
    ck_assert_int_eq(symbols_space_load(&sp, copy_path, m->base, m->end - m->base), 0);
    const symbols_frame_t *f;
    ck_assert_uint_eq(symbols_resolve(s, symbols_space_find(&sp, ra), ra, &f), 1);
    ck_assert_str_eq(f->module, copy_path);
    ck_assert_str_eq(f->function, "probe_call");
    if (copy_has_lines) {
        ck_assert_ptr_nonnull(f->file);
        ck_assert_str_eq(base_name(f->file), "test_symbols.c");
        ck_assert_int_eq(f->line, probe_line);
    } else {
        ck_assert_ptr_null(f->file);
    }
    symbols_space_fini(&sp);
    symbols_space_fini(&self);
}

/* The copy dir/name resolved in a store of its own, without a warning. */
static void check_copy(const char *dir, const char *name, bool lines)
{
    snprintf(copy_path, sizeof copy_path, "%s/%s", dir, name);
    copy_has_lines = lines;
    symbols_t store;
    ck_assert_int_eq(symbols_init(&store), 0);
    ck_assert_int_eq(stderr_lines(resolve_copy, &store), 0);
    symbols_fini(&store);
}

static void remove_dir(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* In the copy's directory, f (a file name there) replaced by g. */
static void replace(const char *dir, const char *f, const char *g)
{
    char a[256], b[256];
    snprintf(a, sizeof a, "%s/%s", dir, g);
    snprintf(b, sizeof b, "%s/%s", dir, f);
    ck_assert_int_eq(rename(a, b), 0);
}

START_TEST(debuglink_found)
{
    ck_assert_int_gt(readlink("/proc/self/exe", exe, sizeof exe - 1), 0);
    char dir[] = "/tmp/memsim-symbols.XXXXXX", sub[sizeof dir + 8];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    if (!split_debug(dir, "t", "")) {
        remove_dir(dir);
        return;
    }
    check_copy(dir, "t", true); /* beside the module */
    snprintf(sub, sizeof sub, "%s/.debug", dir);
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    replace(dir, ".debug/t.debug", "t.debug");
    check_copy(dir, "t", true); /* in .debug beside it */
    replace(dir, "t.debug", ".debug/t.debug");
    /* Without a build id the CRC .gnu_debuglink records decides. */
    ck_assert(split_debug(dir, "nb", "--remove-section=.note.gnu.build-id"));
    check_copy(dir, "nb", true);
    remove_dir(dir);
}
END_TEST

/* A debug file of another build is not the module's: its lines would be
 * wrong.  With a build id, the build ids differ; without, the CRCs. */
START_TEST(debuglink_mismatch)
{
    ck_assert_int_gt(readlink("/proc/self/exe", exe, sizeof exe - 1), 0);
    char dir[] = "/tmp/memsim-symbols.XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    if (!split_debug(dir, "t", "")) {
        remove_dir(dir);
        return;
    }
    ck_assert(split_debug(dir, "nb", "--remove-section=.note.gnu.build-id"));
    replace(dir, "swap.debug", "t.debug");
    replace(dir, "t.debug", "nb.debug");
    replace(dir, "nb.debug", "swap.debug");
    check_copy(dir, "t", false);
    check_copy(dir, "nb", false);
    remove_dir(dir);
}
END_TEST

/* A FIFO where .gnu_debuglink points (beside the module, a directory the
 * trace chose): libdwfl's own search would wait on it forever. */
START_TEST(debuglink_fifo)
{
    ck_assert_int_gt(readlink("/proc/self/exe", exe, sizeof exe - 1), 0);
    char dir[] = "/tmp/memsim-symbols.XXXXXX", fifo[sizeof dir + 16];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    if (!split_debug(dir, "t", "")) {
        remove_dir(dir);
        return;
    }
    snprintf(fifo, sizeof fifo, "%s/t.debug", dir);
    ck_assert_int_eq(unlink(fifo), 0);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    check_copy(dir, "t", false);
    remove_dir(dir);
}
END_TEST

Suite *symbols_suite(void)
{
    Suite *s = suite_create("symbols");
    TCase *tc = tcase_create("symbols");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, function_file_and_line);
    tcase_add_test(tc, inlined_frames);
    tcase_add_test(tc, shared_library_symbol);
    tcase_add_test(tc, symtab_names_as_libdwfl);
    tcase_add_test(tc, demangle);
    tcase_add_test(tc, no_module);
    tcase_add_test(tc, module_file_gone);
    tcase_add_test(tc, module_file_changed);
    tcase_add_test(tc, same_file_other_base);
    tcase_add_test(tc, same_file_warned_once);
    tcase_add_test(tc, prewarm_same_frames);
    tcase_add_test(tc, prewarm_warns_at_lookup);
    tcase_add_test(tc, prewarm_never_resolved);
    tcase_add_test(tc, modules_are_keyed_by_path_base_and_size);
    tcase_add_test(tc, space_overlaps_and_unloads);
    suite_add_tcase(s, tc);
    /* A blocked open fails the test in seconds, not the minute above. */
    TCase *files = tcase_create("files a trace names");
    tcase_set_timeout(files, 10);
    tcase_add_test(files, module_fifo);
    tcase_add_test(files, module_device);
    tcase_add_test(files, module_directory);
    tcase_add_test(files, module_descriptor_closed);
    tcase_add_test(files, debuglink_found);
    tcase_add_test(files, debuglink_mismatch);
    tcase_add_test(files, debuglink_fifo);
    suite_add_tcase(s, files);
    return s;
}
