/*
 * A plugin for tests/programs/dlrules, built twice from this file, with
 * one function, rules_f(n), that returns malloc(n) from a call at the
 * same offset in both (so the two load at one address and the call's
 * return address is the same) but under different frame rules there:
 *
 *   librules_a.so (-DRULES_RBP): a frame pointer; the CFA is %rbp + 16;
 *   librules_b.so: the CFA is %rsp + 16, and %rbp holds the address
 *                  0x7ffffffffff0, above any user stack, never mapped.
 *
 * A walker that kept a's rule for b's code would read its return address
 * at 0x7ffffffffff8 and fault.
 */
        .text
        .globl rules_f
        .type rules_f, @function
rules_f:
        .cfi_startproc
        push %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset %rbp, -16
#ifdef RULES_RBP
        mov %rsp, %rbp
        .cfi_def_cfa_register %rbp
        .skip 7, 0x90
#else
        movabs $0x7ffffffffff0, %rbp
#endif
        call malloc@PLT
        pop %rbp
#ifdef RULES_RBP
        .cfi_def_cfa %rsp, 8
#else
        .cfi_def_cfa_offset 8
#endif
        ret
        .cfi_endproc
        .size rules_f, .-rules_f
        .section .note.GNU-stack,"",@progbits
