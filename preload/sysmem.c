/* sysmem: anonymous mappings by raw system call.  See sysmem.h. */
#include "preload/sysmem.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

void *sysmem_alloc(size_t bytes)
{
    long r = syscall(SYS_mmap, NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
    return r < 0 && r > -4096 ? NULL : (void *)r;
}

void sysmem_free(void *p, size_t bytes)
{
    if (p)
        syscall(SYS_munmap, p, bytes);
}
