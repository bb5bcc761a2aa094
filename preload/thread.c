/*
 * thread: per-thread areas and memsim's own stack.  See thread.h.
 */
#include "preload/thread.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ipc/seccomp.h"
#include "ipc/sysmem.h"

#define PAGE 4096u
#define AREA_BYTES (PAGE + THREAD_STACK + PAGE + THREAD_ALTSTACK + THREAD_MEMO)

static pthread_key_t key;
static bool key_ok;
__thread thread_area_t *thread_mine_ __attribute__((tls_model("initial-exec")));
static __thread thread_area_t own __attribute__((tls_model("initial-exec")));
__thread pid_t thread_tid_ __attribute__((tls_model("initial-exec")));

/* fn(arg) with the stack pointer at top.  A frame-pointer frame: its
 * unwind information says the caller's frame is at rbp, on the stack it
 * came from, so an unwinder started on memsim's stack walks back onto
 * the program's. */
__asm__(".text\n"
        ".globl memsim_on_stack\n"
        ".hidden memsim_on_stack\n"
        ".type memsim_on_stack,@function\n"
        "memsim_on_stack:\n"
        ".cfi_startproc\n"
        "    push %rbp\n"
        ".cfi_def_cfa_offset 16\n"
        ".cfi_offset %rbp, -16\n"
        "    mov %rsp, %rbp\n"
        ".cfi_def_cfa_register %rbp\n"
        "    mov %rdx, %rsp\n"
        "    mov %rdi, %rax\n"
        "    mov %rsi, %rdi\n"
        "    call *%rax\n"
        "    mov %rbp, %rsp\n"
        "    pop %rbp\n"
        ".cfi_def_cfa %rsp, 8\n"
        "    ret\n"
        ".cfi_endproc\n"
        ".size memsim_on_stack, .-memsim_on_stack\n");

#define STR_(x) #x
#define STR(x) STR_(x)
_Static_assert(THREAD_BT_BYTES % 16 == 0, "the stack stays 16-byte aligned below the buffer");

/* memsim_on_stack's frame, with the unwinder called from it: the buffer
 * is the THREAD_BT_BYTES below top, fn and arg are kept below it while
 * bt runs, and fn's frame is below the buffer. */
__asm__(".text\n"
        ".globl memsim_on_stack_bt\n"
        ".hidden memsim_on_stack_bt\n"
        ".type memsim_on_stack_bt,@function\n"
        "memsim_on_stack_bt:\n"
        ".cfi_startproc\n"
        "    push %rbp\n"
        ".cfi_def_cfa_offset 16\n"
        ".cfi_offset %rbp, -16\n"
        "    mov %rsp, %rbp\n"
        ".cfi_def_cfa_register %rbp\n"
        "    lea -" STR(THREAD_BT_BYTES) "(%rdx), %rsp\n"
        "    push %rdi\n"
        "    push %rsi\n"
        "    lea 16(%rsp), %rdi\n"
        "    mov %r8d, %esi\n"
        "    call *%rcx\n"
        "    pop %rdi\n"
        "    pop %rcx\n"
        "    mov %rsp, %rsi\n"
        "    mov %eax, %edx\n"
        "    call *%rcx\n"
        "    mov %rbp, %rsp\n"
        "    pop %rbp\n"
        ".cfi_def_cfa %rsp, 8\n"
        "    ret\n"
        ".cfi_endproc\n"
        ".size memsim_on_stack_bt, .-memsim_on_stack_bt\n");

/* In a seccomp sandbox that forbids it: -1 (ENOSYS), and the thread
 * goes without memsim's alternate stack. */
static int sys_sigaltstack(const stack_t *ss, stack_t *old)
{
    return (int)seccomp_call(SYS_sigaltstack, (long)ss, (long)old, 0, 0, 0, 0);
}

static void area_free(void *p)
{
    thread_area_t *a = p;
    if (!a || a != thread_mine_)
        return;
    if (a->alt_ours) {
        stack_t cur;
        if (sys_sigaltstack(NULL, &cur) == 0 && cur.ss_sp == a->altstack &&
            !(cur.ss_flags & SS_ONSTACK)) {
            stack_t off = {.ss_flags = SS_DISABLE};
            sys_sigaltstack(&off, NULL);
        } else if (cur.ss_sp == a->altstack) {
            return; /* still running on it: keep the mapping */
        }
    }
    thread_mine_ = NULL;
    sysmem_free(a->base, a->size);
}

void thread_release(void)
{
    thread_area_t *a = thread_mine_;
    char here;
    if (!a || (&here >= (char *)a->base && &here < (char *)a->base + a->size))
        return; /* none, or running on it */
    if (a->alt_ours) {
        stack_t cur;
        if (sys_sigaltstack(NULL, &cur) || (cur.ss_sp == a->altstack && (cur.ss_flags & SS_ONSTACK)))
            return; /* cannot tell, or a handler runs on it */
        if (cur.ss_sp == a->altstack) {
            stack_t off = {.ss_flags = SS_DISABLE};
            if (sys_sigaltstack(&off, NULL))
                return;
        }
    }
    if (key_ok)
        pthread_setspecific(key, NULL);
    thread_mine_ = NULL;
    sysmem_free(a->base, a->size);
}

int thread_init(void)
{
    if (key_ok)
        return 0;
    key_ok = pthread_key_create(&key, area_free) == 0;
    return key_ok ? 0 : -1;
}

/* Offer memsim's alternate stack, unless the program has its own. */
static void altstack_install(thread_area_t *a)
{
    stack_t cur;
    if (sys_sigaltstack(NULL, &cur) || !(cur.ss_flags & SS_DISABLE))
        return;
    stack_t ss = {.ss_sp = a->altstack, .ss_size = THREAD_ALTSTACK, .ss_flags = 0};
    a->alt_ours = sys_sigaltstack(&ss, NULL) == 0;
}

thread_area_t *thread_area_map(void)
{
    if (thread_mine_)
        return thread_mine_;
    char *base = sysmem_alloc(AREA_BYTES);
    if (!base)
        return NULL;
    /* The guard pages: an overflow of memsim's stack faults instead of
     * writing over the alternate stack or the neighbour's memory (none in
     * a sandbox that forbids mprotect). */
    seccomp_call(SYS_mprotect, (long)base, PAGE, PROT_NONE, 0, 0, 0);
    seccomp_call(SYS_mprotect, (long)(base + PAGE + THREAD_STACK), PAGE, PROT_NONE, 0, 0, 0);
    own = (thread_area_t){.base = base,
                          .size = AREA_BYTES,
                          .stack_top = base + PAGE + THREAD_STACK,
                          .altstack = base + PAGE + THREAD_STACK + PAGE,
                          .walk_memo = base + PAGE + THREAD_STACK + PAGE + THREAD_ALTSTACK};
    thread_mine_ = &own;
    altstack_install(thread_mine_);
    if (key_ok)
        pthread_setspecific(key, thread_mine_);
    return thread_mine_;
}

pid_t thread_tid_ask(void)
{
    thread_tid_ = seccomp_gettid();
    return thread_tid_;
}

void thread_forget_tid(void) { thread_tid_ = 0; }

bool thread_altstack_ours(void)
{
    if (!thread_mine_ || !thread_mine_->alt_ours)
        return false;
    stack_t cur;
    return sys_sigaltstack(NULL, &cur) == 0 && cur.ss_sp == thread_mine_->altstack &&
           !(cur.ss_flags & SS_DISABLE);
}

void thread_altstack_gone(bool disabled)
{
    if (!thread_mine_)
        return;
    thread_mine_->alt_ours = false;
    if (disabled)
        altstack_install(thread_mine_);
}
