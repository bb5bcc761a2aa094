/* sysmem: anonymous mappings by raw system call.  See sysmem.h. */
#include "preload/sysmem.h"

#include <sys/mman.h>
#include <sys/syscall.h>

#include "preload/seccomp.h"

void *sysmem_alloc(size_t bytes)
{
    long r = seccomp_call(SYS_mmap, 0, (long)bytes, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return r == -1 ? NULL : (void *)r;
}

void sysmem_free(void *p, size_t bytes)
{
    if (p)
        seccomp_call(SYS_munmap, (long)p, (long)bytes, 0, 0, 0, 0);
}
