/*
 * sandbox: a traced program locks itself in a seccomp sandbox.
 *
 * A program installs a seccomp filter (prctl(PR_SET_SECCOMP,
 * SECCOMP_MODE_FILTER) or the seccomp system call through libc's
 * syscall(): libseccomp makes one of them) or enters strict mode; from
 * then on the kernel kills it at the first system call the sandbox
 * forbids, one of memsim's as much as one of its own.  memsim stands in
 * front of prctl and syscall (preload/hooks.def) and, before the real
 * call:
 *   - prepares the calling thread: its area mapped, its alternate signal
 *     stack installed, its id read, so that its hooks need no system
 *     call later;
 *   - holds a copy of the filter (ipc/seccomp.h), by which every
 *     system call of memsim's is judged from then on; strict mode binds
 *     the calling thread;
 *   - withdraws its fatal-signal handler when ending the process from it
 *     would need a call the sandbox forbids (preload/signals.h): such an
 *     end is then seen by the recorder (vanished).
 * Once the real call has succeeded it posts a sandbox message saying
 * what memsim goes without (SECCOMP_NO_*), and tracing goes on: each
 * place memsim makes a system call asks first and does without (no
 * alternate stack for a new thread, no wake of the recorder, a spin for
 * a sleep, a stack left to libunwind recorded without frames, ...).  Only
 * where the events' clock would need a forbidden call (no TSC, and
 * clock_gettime forbidden) tracing stops there: the message says so and
 * the process is untraced from that point.  A call that failed changes
 * nothing.
 */
#ifndef MEMSIM_PRELOAD_SANDBOX_H
#define MEMSIM_PRELOAD_SANDBOX_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ipc/msg.h"
#include "ipc/seccomp.h"

/* The hooks of prctl and syscall send PR_SET_SECCOMP and the seccomp
 * system call here: op SECCOMP_SET_MODE_STRICT or SECCOMP_SET_MODE_FILTER
 * (anything else is only passed on), flags the seccomp call's, prog its
 * struct sock_fprog.  call(ctx) makes the real call; its result is
 * returned, errno as it left it. */
typedef long (*sandbox_real_fn)(void *ctx);
long sandbox_enter(unsigned op, unsigned long flags, const void *prog, sandbox_real_fn call,
                   void *ctx);

/* prctl(PR_SET_TSC, how): with PR_TSC_SIGSEGV the TSC, and the vDSO's
 * clock_gettime with it, fault in the calling thread, in the threads it
 * creates and across exec: every thread of the process takes its time
 * from the recorder from before the real call (call(ctx)) on, and again
 * from the clock after PR_TSC_ENABLE.  Its result is returned. */
long sandbox_set_tsc(unsigned long how, sandbox_real_fn call, void *ctx);

/* What memsim goes without under the filters held (and strict mode on
 * the calling thread): SECCOMP_NO_* bits, 0 outside any sandbox. */
unsigned sandbox_without(void);

/* Whether memsim may take its own locks on this thread (the stack
 * table's, the module list's, the loader's in dl_iterate_phdr, glibc's
 * arenas' in mallinfo2): a wait for one, and a wake of its waiters, are
 * futex calls.  True outside a sandbox, with one thread in the process
 * (no lock is contended), or where the private futex calls are allowed. */
bool sandbox_may_lock(void);

#endif
