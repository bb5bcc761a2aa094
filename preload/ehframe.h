/*
 * ehframe: how to find a frame's caller at a code address, read from the
 * .eh_frame of the module holding it (x86-64).
 *
 * The rule is the row of the address's call frame information (DWARF
 * CFI) in the one shape that ordinary compiled code has: the canonical
 * frame address (CFA) is %rsp or %rbp plus a constant, the return
 * address lies at CFA - 8, and %rbp is either unchanged or saved at CFA
 * plus a constant.  Anything else (expressions, a CFA in another
 * register, signal frames, code without CFI) is EHFRAME_OTHER: the
 * caller leaves such a stack to a general unwinder (libunwind).
 *
 * Lookups go through glibc's _dl_find_object (lock-free, glibc 2.35)
 * and read the module's mapped .eh_frame_hdr, .eh_frame: no allocation,
 * no lock, no system call, so they are safe inside malloc.
 */
#ifndef MEMSIM_PRELOAD_EHFRAME_H
#define MEMSIM_PRELOAD_EHFRAME_H

#include <stdbool.h>
#include <stdint.h>

typedef enum ehframe_kind_e {
    EHFRAME_OTHER = 0, /* no rule of the simple shape: ask a general unwinder */
    EHFRAME_RSP,       /* CFA = %rsp + cfa_off */
    EHFRAME_RBP,       /* CFA = %rbp + cfa_off */
} ehframe_kind_t;

typedef struct ehframe_rule_s {
    uint8_t kind;    /* ehframe_kind_t */
    bool last;       /* the return address is undefined: the outermost frame */
    int16_t rbp_off; /* %rbp saved at CFA + rbp_off; 0: unchanged */
    int32_t cfa_off;
} ehframe_rule_t;

/* Whether _dl_find_object is there to look modules up (glibc >= 2.35). */
bool ehframe_available(void);

/* The rule of the frame that returns to ra: the rule in effect at ra - 1
 * (the call).  EHFRAME_OTHER when ra is a signal return trampoline
 * (mov $15, %rax; syscall: the kernel put a signal frame there, not a
 * call), as libunwind checks too: ra - 1 may lie in another function. */
ehframe_rule_t ehframe_caller_rule(uintptr_t ra);

#endif
