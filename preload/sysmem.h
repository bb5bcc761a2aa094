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

/* memsim's own mappings are registered (sysmem_alloc's, and libunwind's
 * anonymous ones: preload/unwind.c), so that a measure of the program's
 * heap in the process can leave them out: libmemsim.so exports
 *
 *   size_t memsim_own_resident(void);
 *
 * the bytes of them resident now (mincore), which libmemsim-meter.so
 * (allocators/meter.c, memsim run --allocator) finds by dlsym.  A
 * mapping beyond the registry's 1,024 goes unregistered. */
void sysmem_note(void *p, size_t bytes);
void sysmem_forget(void *p);
size_t memsim_own_resident(void);

/* Zeroed pages, or NULL. */
void *sysmem_alloc(size_t bytes);
void sysmem_free(void *p, size_t bytes);

#endif
