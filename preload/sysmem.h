/*
 * sysmem: memory for memsim's own tables inside the traced process,
 * straight from the kernel.  Nothing here goes through malloc, so the
 * tables never re-enter the hooks, never move the program's heap, and
 * never take glibc's arena locks (safe around fork and in hooks).  In a
 * seccomp sandbox that forbids the mapping (preload/seccomp.h) none is
 * made: NULL, as without memory.
 */
#ifndef MEMSIM_PRELOAD_SYSMEM_H
#define MEMSIM_PRELOAD_SYSMEM_H

#include <stddef.h>

/* Zeroed pages, or NULL. */
void *sysmem_alloc(size_t bytes);
void sysmem_free(void *p, size_t bytes);

#endif
