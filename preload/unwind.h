/*
 * unwind: the program's call stacks, with a private libunwind.
 *
 * libunwind is loaded with dlopen(RTLD_LOCAL) and used through function
 * pointers, so memsim's copy never clashes with an unwinder the program
 * links (LLVM's libunwind, an older libunwind).  Per-thread caching is
 * switched on.  Under the default walk (preload/walk.h) it is loaded
 * only when first needed: at the first stack the frame rules do not
 * cover, where unwind_may_load allows, or at unwind_need.
 *
 * libunwind validates addresses it is unsure of by writing a byte of
 * them into a pipe it opens for itself: two descriptors in the program's
 * table (3 and 4, where the program's own files would go), read and
 * written from whatever thread unwinds, and reopened whenever the
 * program closes them.  memsim takes them out: the calls libunwind makes
 * for it (pipe2, read, write, syscall(SYS_write), close) and for its own
 * memory (mmap, munmap) are redirected, in libunwind's own relocation
 * slots, to functions of memsim's that validate with process_vm_readv
 * on the process itself and map memory by system call.  Its files (open,
 * read, close, msync) go by system call too: glibc's are cancellation
 * points, and a thread with asynchronous cancellation on runs memsim's
 * work deferred (preload/cancel.h), so a cancel pending there acted
 * inside libunwind.  Nothing else in the process is redirected.
 */
#ifndef MEMSIM_PRELOAD_UNWIND_H
#define MEMSIM_PRELOAD_UNWIND_H

#include <stdbool.h>
#include <stdint.h>

#define UNWIND_MAX_DEPTH 256
#define UNWIND_SELF_MAX 16 /* memsim frames a capture may start with */

/* Set up the unwinder for stacks of up to depth frames (0: off), walking
 * them as mode (config_unwind_t) says: by cached frame rules where they
 * hold (preload/walk.h), else libunwind (loaded now for the other modes,
 * or where the rule table cannot be had).  0, or -1 with a reason in *why
 * (stacks then stay off). */
int unwind_init(unsigned depth, int mode, const char **why);

/* Whether a dlopen cannot deadlock or harm where it is asked: set by the
 * preload (process_start.c: one thread, no sandbox, not a vfork child).
 * NULL: never; a stack that needs libunwind then ends at the frame
 * without a rule. */
extern bool (*unwind_may_load)(void);

/* A point before the process may stop having one thread (a thread, a
 * library unload, a sandbox), the guard held: loads libunwind now if
 * unwind_init left it to the first stack that needs it and
 * unwind_may_load allows. */
void unwind_need(void);

/* The depth in use (0: stacks are off). */
unsigned unwind_depth(void);

/* What unwind_init set (use the functions). */
extern int (*unwind_backtrace_)(void **buffer, int size);
extern unsigned unwind_depth_;
extern uintptr_t unwind_self_lo_, unwind_self_hi_; /* libmemsim's own text */

/* Whether pc lies in libmemsim's own code. */
static inline int unwind_is_self(uintptr_t pc)
{
    return pc >= unwind_self_lo_ && pc < unwind_self_hi_;
}

/* The frames to call the unwinder for (its size), 0 when stacks are off. */
static inline int unwind_want(void)
{
    return unwind_backtrace_ && unwind_depth_ ? (int)(unwind_depth_ + UNWIND_SELF_MAX) : 0;
}

/* Of got frames the unwinder put in pc (unwind_backtrace_(pc,
 * unwind_want())), the program's (memsim's own skipped) in *first, and
 * their number. */
static inline unsigned unwind_frames(const uintptr_t *pc, int got, const uintptr_t **first)
{
    unsigned n = got > 0 ? (unsigned)got : 0, i = 0;
    while (i < n && unwind_is_self(pc[i]))
        i++;
    *first = pc + i;
    n -= i;
    return n < unwind_depth_ ? n : unwind_depth_;
}

/* Capture the caller's stack into pc (room for UNWIND_MAX_DEPTH +
 * UNWIND_SELF_MAX); returns the program's frames (memsim's own skipped)
 * in *first and their number.  Every frame of memsim's between the
 * program's and the unwinder costs a step of the unwinder: the hooks
 * call the unwinder from memsim_on_stack_bt (preload/thread.h). */
static inline unsigned unwind_capture(uintptr_t *pc, const uintptr_t **first)
{
    *first = pc;
    int want = unwind_want();
    return want ? unwind_frames(pc, unwind_backtrace_((void **)pc, want), first) : 0;
}

#endif
