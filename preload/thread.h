/*
 * thread: what memsim keeps for each thread of the traced program.
 *
 * memsim's work on a program's thread (unwinding its stack, interning
 * it, posting the event) runs on a stack of memsim's own, so that the
 * program's stack pays only the hook's small frame, however little room
 * the program gave it: a PTHREAD_STACK_MIN thread, a coroutine of a few
 * KiB.  Each thread that makes a traced call gets an area, mapped on
 * first use and unmapped when the thread ends:
 *
 *   [guard page][memsim's stack, THREAD_STACK bytes][guard page][THREAD_ALTSTACK bytes]
 *   [THREAD_MEMO bytes: the last stack walked, preload/walk.c]
 *
 * The last part is the thread's alternate signal stack when the program
 * set none, so that memsim's fatal-signal handler can still write the
 * end record when the thread dies of a stack overflow; the program never
 * sees it (preload/signals.c answers sigaltstack for it).
 *
 * thread_call switches to memsim's stack with a frame whose unwind
 * information is a plain frame-pointer frame, so the unwinder walks from
 * memsim's stack back onto the program's without leaving its fast path.
 * A signal that arrives meanwhile runs the program's handler on memsim's
 * stack, which is why it is generous (THREAD_STACK; only touched pages
 * cost memory).
 */
#ifndef MEMSIM_PRELOAD_THREAD_H
#define MEMSIM_PRELOAD_THREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define THREAD_STACK (128u << 10)
#define THREAD_ALTSTACK (32u << 10)
#define THREAD_MEMO (12u << 10)
#define THREAD_BT_BYTES 2176 /* memsim_on_stack_bt's buffer: 272 frames */

typedef struct thread_area_s {
    void *base;        /* the mapping */
    size_t size;
    char *stack_top;   /* 16-byte aligned top of memsim's stack */
    char *altstack;    /* the alternate signal stack memsim offers */
    bool alt_ours;     /* it is installed (the program set none) */
    void *walk_memo;   /* the last stack walked (preload/walk.c), THREAD_MEMO bytes */
} thread_area_t;

/* Once, at start-up: the key whose destructor unmaps an ending thread's
 * area.  0 or -1. */
int thread_init(void);

/* The calling thread's area and id once known (initial-exec TLS, so
 * that the hooks' fast path reads them inline); use the functions. */
extern __thread thread_area_t *thread_mine_ __attribute__((tls_model("initial-exec")));
extern __thread pid_t thread_tid_ __attribute__((tls_model("initial-exec")));
thread_area_t *thread_area_map(void);
/* Unmap the calling thread's area (its alternate stack withdrawn), unless
 * the thread runs on it now (then thread_mine_ stays set). */
void thread_release(void);
pid_t thread_tid_ask(void);

/* The calling thread's area, mapped (and its alternate stack installed
 * where the program has none) on first use; NULL without memory. */
static inline thread_area_t *thread_area(void)
{
    thread_area_t *a = thread_mine_;
    return __builtin_expect(a != NULL, 1) ? a : thread_area_map();
}

/* fn(arg) with the stack pointer at top (preload/thread.c). */
void memsim_on_stack(void (*fn)(void *), void *arg, char *top) __attribute__((visibility("hidden")));

/* On memsim's stack at top: got = bt(pc, size), pc the THREAD_BT_BYTES
 * below top (size * sizeof(void *) of them at most), then fn(arg, pc,
 * got).  An unwinder called as bt walks this frame of memsim's and its
 * caller's (the hook's) before the program's: no other. */
void memsim_on_stack_bt(void (*fn)(void *, uintptr_t *, int), void *arg, char *top,
                        int (*bt)(void **, int), int size) __attribute__((visibility("hidden")));

/* fn(arg) on memsim's stack of area a.  Inline, so that the hook's frame
 * is the only one between the program's and memsim's stack: an unwinder
 * started on memsim's stack walks as few of memsim's frames as can be. */
static inline void thread_call(thread_area_t *a, void (*fn)(void *), void *arg)
{
    memsim_on_stack(fn, arg, a->stack_top);
}

/* The calling thread's id (cached). */
static inline pid_t thread_tid(void)
{
    pid_t t = thread_tid_;
    return __builtin_expect(t != 0, 1) ? t : thread_tid_ask();
}

/* In a fork child: the calling thread's cached id is its parent's. */
void thread_forget_tid(void);

/* Whether the alternate stack installed on the calling thread is memsim's
 * (preload/signals.c hides it). */
bool thread_altstack_ours(void);
/* The program replaced or disabled memsim's alternate stack; disabled:
 * memsim may put its own back (hidden again). */
void thread_altstack_gone(bool disabled);

#endif
