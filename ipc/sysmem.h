/*
 * sysmem: memory for memsim's own tables inside the traced process,
 * straight from the kernel.  Nothing here goes through malloc, so the
 * tables never re-enter the hooks, never move the program's heap, and
 * never take glibc's arena locks (safe around fork and in hooks).  In a
 * seccomp sandbox that forbids the mapping (ipc/seccomp.h) none is
 * made: NULL, as without memory.
 */
#ifndef MEMSIM_IPC_SYSMEM_H
#define MEMSIM_IPC_SYSMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* memsim's own mappings are registered (sysmem_alloc's, and libunwind's
 * anonymous ones: preload/unwind.c), so that a measure of the program's
 * heap in the process can leave them out: libmemsim.so exports
 *
 *   uint64_t memsim_own_resident_by(uint64_t (*count)(uintptr_t start, uintptr_t end));
 *
 * each of them counted by count (the bytes of [start, end) resident),
 * summed, which libmemsim-meter.so (allocators/meter.c, memsim run
 * --allocator) finds by dlsym and calls with its own count: the pages
 * only read, the kernel's page of zeroes, are resident to mincore but
 * not in Rss.  A mapping beyond the registry's 1,024 goes unregistered. */
void sysmem_note(void *p, size_t bytes);
/* ...one that sysmem_release_all leaves: libunwind's caches (the
 * program may use the same library). */
void sysmem_note_kept(void *p, size_t bytes);
void sysmem_forget(void *p);
/* Unmap every registered mapping but keep (NULL: none) and the kept
 * ones (a process that will not trace again gives its address space
 * back: preload/release.h).  Only while nothing else of memsim's may use
 * them: one thread, outside any hook's work. */
void sysmem_release_all(const void *keep);
uint64_t memsim_own_resident_by(uint64_t (*count)(uintptr_t start, uintptr_t end));

/* Zeroed pages, or NULL. */
void *sysmem_alloc(size_t bytes);
/* ...that sysmem_release_all leaves (what memsim needs while the
 * process lives: the sandbox's copies of its filters). */
void *sysmem_alloc_kept(size_t bytes);
void sysmem_free(void *p, size_t bytes);

#endif
