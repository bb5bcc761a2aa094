/* walk, ehframe: frame rules read from .eh_frame, and stacks walked by
 * them (and by the thread's last stack) equal to libunwind's. */
#include <check.h>
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#include "preload/ehframe.h"
#include "preload/thread.h"
#include "preload/unwind.h"
#include "preload/walk.h"
#include "tests/unit/suites.h"

/* A function of known call frame information; each label is where a row
 * begins, and the rule there is the one ehframe_caller_rule(label + 1)
 * reads (it looks up ra - 1). */
extern const char ehf_fn[], ehf_pushed[], ehf_framed[], ehf_left[];
extern const char ehf_sig[], ehf_expr[], ehf_outer[], ehf_tramp[];
__asm__(".text\n"
        ".globl ehf_fn\n.hidden ehf_fn\n.type ehf_fn,@function\n"
        "ehf_fn:\n.cfi_startproc\n"
        "    push %rbp\n.cfi_def_cfa_offset 16\n.cfi_offset %rbp, -16\n"
        ".globl ehf_pushed\n.hidden ehf_pushed\nehf_pushed:\n"
        "    mov %rsp, %rbp\n.cfi_def_cfa_register %rbp\n"
        ".globl ehf_framed\n.hidden ehf_framed\nehf_framed:\n"
        "    sub $32, %rsp\n    nop\n    leave\n.cfi_def_cfa %rsp, 8\n.cfi_restore %rbp\n"
        ".globl ehf_left\n.hidden ehf_left\nehf_left:\n"
        "    ret\n.cfi_endproc\n.size ehf_fn, .-ehf_fn\n"
        /* a signal frame ('S' in the CIE) */
        ".globl ehf_sig\n.hidden ehf_sig\n.type ehf_sig,@function\n"
        "ehf_sig:\n.cfi_startproc\n.cfi_signal_frame\n    nop\n    nop\n    ret\n"
        ".cfi_endproc\n.size ehf_sig, .-ehf_sig\n"
        /* a CFA by expression (DW_CFA_def_cfa_expression: DW_OP_breg7 8) */
        ".globl ehf_expr\n.hidden ehf_expr\n.type ehf_expr,@function\n"
        "ehf_expr:\n.cfi_startproc\n    nop\n.cfi_escape 0x0f, 0x02, 0x77, 0x08\n    nop\n    ret\n"
        ".cfi_endproc\n.size ehf_expr, .-ehf_expr\n"
        /* the outermost frame: the return address undefined */
        ".globl ehf_outer\n.hidden ehf_outer\n.type ehf_outer,@function\n"
        "ehf_outer:\n.cfi_startproc\n.cfi_undefined %rip\n    nop\n    nop\n    ret\n"
        ".cfi_endproc\n.size ehf_outer, .-ehf_outer\n"
        /* a signal return trampoline, with an ordinary FDE before it */
        ".globl ehf_tramp\n.hidden ehf_tramp\n.type ehf_tramp,@function\n"
        ".cfi_startproc\n    nop\n"
        "ehf_tramp:\n    mov $15, %rax\n    syscall\n    ret\n"
        ".cfi_endproc\n.size ehf_tramp, .-ehf_tramp\n");

static ehframe_rule_t at(const char *label) { return ehframe_caller_rule((uintptr_t)label + 1); }

START_TEST(rules_of_a_known_function)
{
    ck_assert(ehframe_available());
    ehframe_rule_t r = at(ehf_fn);
    ck_assert_int_eq(r.kind, EHFRAME_RSP);
    ck_assert_int_eq(r.cfa_off, 8);
    ck_assert_int_eq(r.rbp_off, 0);
    ck_assert(!r.last);
    r = at(ehf_pushed);
    ck_assert_int_eq(r.kind, EHFRAME_RSP);
    ck_assert_int_eq(r.cfa_off, 16);
    ck_assert_int_eq(r.rbp_off, -16);
    r = at(ehf_framed);
    ck_assert_int_eq(r.kind, EHFRAME_RBP);
    ck_assert_int_eq(r.cfa_off, 16);
    ck_assert_int_eq(r.rbp_off, -16);
    r = at(ehf_left);
    ck_assert_int_eq(r.kind, EHFRAME_RSP);
    ck_assert_int_eq(r.cfa_off, 8);
    ck_assert_int_eq(r.rbp_off, 0);
}
END_TEST

START_TEST(what_has_no_simple_rule)
{
    ck_assert_int_eq(at(ehf_sig).kind, EHFRAME_OTHER);
    ck_assert_int_eq(at(ehf_expr + 1).kind, EHFRAME_OTHER); /* past the escape */
    ck_assert_int_eq(at(ehf_expr).kind, EHFRAME_RSP);       /* before it */
    ehframe_rule_t r = at(ehf_outer);
    ck_assert(r.last);
    /* ehf_tramp - 1 is an ordinary row; the trampoline is what counts */
    ck_assert_int_eq(ehframe_caller_rule((uintptr_t)ehf_tramp).kind, EHFRAME_OTHER);
    ck_assert_int_eq(ehframe_caller_rule((uintptr_t)ehf_tramp + 1).kind, EHFRAME_RSP);
    ck_assert_int_eq(ehframe_caller_rule(0x1000).kind, EHFRAME_OTHER); /* no module */
}
END_TEST

/* ---- whole stacks, against libunwind ------------------------------------------------ */

static int (*unw_bt)(void **, int);

typedef struct pair_s {
    void *fast[64], *slow[64];
    int nfast, nslow;
} pair_t;

/* Both walks from one frame: the first frame (this function's, at two
 * call sites) differs; the rest must not. */
static __attribute__((noinline)) void both(pair_t *p)
{
    p->nfast = walk_backtrace(p->fast, 64);
    p->nslow = unw_bt(p->slow, 64);
    __asm__ volatile("" ::: "memory");
}

static volatile int sink;

static __attribute__((noinline)) void at_depth(int depth, int vla, pair_t *p)
{
    if (depth == 0) {
        both(p);
        return;
    }
    volatile char pad[vla + 1]; /* a frame of varying size: CFA from %rbp */
    pad[0] = (char)depth;
    at_depth(depth - 1, (vla * 5 + 7) % 61, p);
    sink += pad[0];
}

static void expect_same(const pair_t *p, int depth)
{
    ck_assert_int_eq(p->nfast, p->nslow);
    ck_assert_int_ge(p->nfast, depth + 3);
    ck_assert(memcmp(p->fast + 1, p->slow + 1, (size_t)(p->nfast - 1) * sizeof(void *)) == 0);
}

START_TEST(stacks_equal_libunwinds)
{
    void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    ck_assert_ptr_nonnull(h);
    unw_bt = (int (*)(void **, int))dlsym(h, "unw_backtrace");
    ck_assert_ptr_nonnull(unw_bt);
    ck_assert_ptr_nonnull(thread_area()); /* the thread's last stack lives there */
    ck_assert_int_eq(walk_init(WALK_FAST, (walk_general_t){.backtrace = unw_bt}, NULL), 0);
    static const int depths[] = {3, 40, 40, 10, 40, 55, 1, 55, 20, 20};
    pair_t p;
    for (unsigned i = 0; i < sizeof depths / sizeof depths[0]; i++) {
        at_depth(depths[i], (int)i * 13 % 50, &p);
        expect_same(&p, depths[i]);
    }
    /* A stack deeper than the size asked: cut at the size, like libunwind. */
    at_depth(80, 5, &p);
    ck_assert_int_eq(p.nfast, 64);
    expect_same(&p, 60);
    at_depth(80, 9, &p); /* the same, from the last stack */
    expect_same(&p, 60);
    /* Forgotten rules (a library unloaded) are read again. */
    walk_forget();
    at_depth(12, 3, &p);
    expect_same(&p, 12);
    ck_assert_uint_eq(walk_fallbacks(), 0);
    ck_assert_uint_eq(walk_mismatches(), 0);
}
END_TEST

Suite *walk_suite(void)
{
    Suite *s = suite_create("walk");
    TCase *tc = tcase_create("walk");
    tcase_add_test(tc, rules_of_a_known_function);
    tcase_add_test(tc, what_has_no_simple_rule);
    tcase_add_test(tc, stacks_equal_libunwinds);
    suite_add_tcase(s, tc);
    return s;
}
