/*
 * sandboxed: the two small calls the process's life makes that must work
 * inside a sandbox (preload/sandboxed.h).
 */
#include "preload/sandboxed.h"

#include <errno.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>

#include "ipc/arena.h"
#include "ipc/clock.h"
#include "ipc/seccomp.h"
#include "preload/process.h"

pid_t sandbox_getpid(void)
{
    long r = seccomp_call(SYS_getpid, 0, 0, 0, 0, 0, 0);
    return r > 0 ? (pid_t)r : memsim_traced_pid;
}

void sandbox_tsc_at_start(struct region_s *r)
{
    if (r) {
        if (clock_fed_all_)
            clock_feed_all(&r->beat, false);
        return;
    }
    int how = 0;
    if (seccomp_call(SYS_prctl, PR_GET_TSC, (long)&how, 0, 0, 0, 0) == 0 && how == PR_TSC_SIGSEGV)
        clock_feed_all(&clock_still, false);
}

void sandbox_nap(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
    if (seccomp_call(SYS_nanosleep, (long)&ts, 0, 0, 0, 0, 0) == 0 || errno != ENOSYS)
        return;
    uint64_t start = clock_ns();
    while (clock_ns() - start < ns)
        __builtin_ia32_pause();
}
