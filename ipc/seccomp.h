/*
 * seccomp: the seccomp filters memsim knows the process is under, and
 * memsim's own system calls judged by them.
 *
 * Once a program has locked itself in a sandbox (preload/sandbox.h), the
 * kernel kills it at the first system call its filters forbid — one of
 * memsim's as much as one of its own.  So memsim keeps a copy of every
 * filter the program installed (classic BPF over struct seccomp_data)
 * and, before each system call of its own, runs them on it as the
 * kernel will: the call is made only when every filter returns
 * SECCOMP_RET_ALLOW or SECCOMP_RET_LOG (seccomp_allows, seccomp_call).
 * A thread in strict mode may make read, write, exit and rt_sigreturn.
 *
 * The view is the process's: every filter any thread installed binds
 * every thread (the kernel binds the installing thread and those it
 * creates after, or all with SECCOMP_FILTER_FLAG_TSYNC), so a thread may
 * go without a call its own filters allow, never make one they forbid.
 * A filter that reads seccomp_data.instruction_pointer may tell memsim's
 * calls from the program's, and one memsim could not copy is unknown:
 * either makes every call of memsim's forbidden (seccomp_opaque).
 *
 * Without any filter or strict thread (the recorder, every process that
 * never sandboxes itself) a judgement is one relaxed load.  Nothing here
 * allocates or locks: a filter is copied into a mapping of its own and
 * published whole, and only its voided flag changes after.
 */
#ifndef MEMSIM_IPC_SECCOMP_H
#define MEMSIM_IPC_SECCOMP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define SECCOMP_HELD_MAX 64u /* filters kept; one more makes the view opaque */

/* What memsim goes without in a sandbox (preload/sandbox.h works them
 * out; the sandbox message's c, and the trace's sandbox record names
 * each in "without", docs/trace-format.md). */
#define SECCOMP_NO_ALTSTACK 1u  /* sigaltstack: threads set up later get no alternate stack */
#define SECCOMP_NO_MEMORY 2u    /* mmap: no area for new threads, no growth of the stack table */
#define SECCOMP_NO_WAKE 4u      /* futex: the recorder is not woken; waits spin */
#define SECCOMP_NO_SIGNALS 8u   /* the fatal-signal handler is withdrawn */
#define SECCOMP_NO_UNWINDER 16u /* libunwind's calls: the stacks it would walk go without */
#define SECCOMP_NO_RUSAGE 32u   /* getrusage: no children's peak RSS in glibc's figures */
#define SECCOMP_NO_TID 64u      /* gettid: ids of new threads read from glibc's descriptors */
#define SECCOMP_NO_CLOCK 128u   /* clock_gettime without the TSC: tracing stops */
#define SECCOMP_NO_LOCKS 256u   /* a strict thread among others: no new stacks, no
                                   mallinfo2 (a wait on a lock is a futex call) */

/* What a thread not in strict mode goes without, as of the last filter. */
extern _Atomic unsigned seccomp_without_;


/* Some thread installed a filter or entered strict mode. */
extern _Atomic unsigned seccomp_on_;
/* The calling thread is in strict mode. */
extern __thread bool seccomp_strict_ __attribute__((tls_model("initial-exec")));

static inline bool seccomp_active(void)
{
    return __builtin_expect(atomic_load_explicit(&seccomp_on_, memory_order_relaxed) != 0, 0);
}

/* Whether libunwind may be called (it makes calls of its own:
 * rt_sigprocmask around dl_iterate_phdr, mincore, process_vm_readv). */
static inline bool seccomp_unwinder_ok(void)
{
    return !seccomp_active() ||
           (!seccomp_strict_ &&
            !(atomic_load_explicit(&seccomp_without_, memory_order_relaxed) & SECCOMP_NO_UNWINDER));
}

bool seccomp_allows_(long nr, const long args[6]);

/* Whether memsim may make system call nr with these arguments now, on
 * the calling thread.  Pointers are judged as the words they are: no
 * filter can read what they point at. */
static inline bool seccomp_allows(long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
    if (!seccomp_active())
        return true;
    long args[6] = {a0, a1, a2, a3, a4, a5};
    return seccomp_allows_(nr, args);
}

/* System call nr made by memsim itself (by the syscall instruction, never
 * through libc's syscall(), which is a hook of the program's), if it is
 * allowed: its result as syscall(2) gives it (-1 and errno on failure),
 * or -1 with errno ENOSYS when it is forbidden. */
long seccomp_call(long nr, long a0, long a1, long a2, long a3, long a4, long a5);

/* The calling thread's id: gettid, or where it is forbidden the id glibc
 * keeps in the thread's descriptor, at the place seccomp_learn_tid found
 * (asked, while gettid is allowed, with the caller's own id), or 0 (the
 * trace's unknown thread). */
pid_t seccomp_gettid(void);
void seccomp_learn_tid(pid_t tid);

/* A filter to judge by from now on: a copy of the struct sock_fprog at
 * prog, in the memory of process self, read through the kernel
 * (process_vm_readv: a bad pointer is no fault of memsim's), or as it is
 * when checked (the kernel installed it: it read it whole).  Returns its
 * handle, or -1 when it cannot be kept or judged by: the view is opaque
 * then. */
int seccomp_hold(pid_t self, const void *prog, bool checked);
/* The install of filter h failed: it binds nothing. */
void seccomp_void(int h);

/* Every call of memsim's is forbidden (a filter memsim cannot judge by),
 * or no longer (the install that made it so failed). */
void seccomp_set_opaque(bool on);
bool seccomp_opaque(void);

/* Filters held (voided ones included). */
unsigned seccomp_held(void);

/* The calling thread enters (or, its call failed, leaves) strict mode. */
void seccomp_set_strict(bool on);

/* The action filter f (len classic-BPF instructions) returns for system
 * call nr with args on x86-64, as the kernel computes it. */
uint32_t seccomp_run(const void *f, unsigned len, long nr, const long args[6]);

#endif
