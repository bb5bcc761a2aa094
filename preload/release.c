/* release: give back a non-tracing process's address space.  See release.h. */
#include "preload/release.h"

#include <stddef.h>
#include <sys/syscall.h>

#include "preload/arena.h"
#include "preload/seccomp.h"
#include "preload/sysmem.h"
#include "preload/thread.h"

void release_all(void *arena)
{
    if (arena)
        seccomp_call(SYS_munmap, (long)arena, (long)arena_bytes(arena), 0, 0, 0, 0);
    thread_release();
    sysmem_release_all(thread_mine_ ? thread_mine_->base : NULL);
}
