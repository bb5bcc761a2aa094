/* release: give back a non-tracing process's address space.  See release.h. */
#include "preload/release.h"

#include <stddef.h>
#include <sys/syscall.h>

#include "ipc/arena.h"
#include "ipc/seccomp.h"
#include "ipc/sysmem.h"
#include "preload/thread.h"

void release_all(void *arena)
{
    if (arena)
        seccomp_call(SYS_munmap, (long)arena, (long)arena_bytes(arena), 0, 0, 0, 0);
    thread_release();
    sysmem_release_all(thread_mine_ ? thread_mine_->base : NULL);
}
