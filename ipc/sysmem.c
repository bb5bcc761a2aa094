/* sysmem: anonymous mappings by raw system call.  See sysmem.h. */
#include "ipc/sysmem.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "ipc/seccomp.h"

/* The registry of memsim's own mappings: a slot is taken by a CAS on
 * its start (0: free), so threads mapping at once never wait. */
#define SYSMEM_RANGES 1024

static struct {
    _Atomic uintptr_t start;
    _Atomic size_t bytes;
    _Atomic bool kept; /* never released (sysmem_note_kept) */
} ranges[SYSMEM_RANGES];
static _Atomic unsigned long unregistered;

static void note(void *p, size_t bytes, bool kept)
{
    for (size_t i = 0; p && i < SYSMEM_RANGES; i++) {
        uintptr_t zero = 0;
        if (atomic_compare_exchange_strong(&ranges[i].start, &zero, (uintptr_t)p)) {
            atomic_store(&ranges[i].kept, kept);
            atomic_store(&ranges[i].bytes, bytes);
            return;
        }
    }
    if (p)
        atomic_fetch_add(&unregistered, 1);
}

void sysmem_note(void *p, size_t bytes) { note(p, bytes, false); }
void sysmem_note_kept(void *p, size_t bytes) { note(p, bytes, true); }

void sysmem_release_all(const void *keep)
{
    for (size_t i = 0; i < SYSMEM_RANGES; i++) {
        uintptr_t start = atomic_load(&ranges[i].start);
        size_t bytes = atomic_load(&ranges[i].bytes);
        if (!start || start == (uintptr_t)keep || atomic_load(&ranges[i].kept))
            continue;
        atomic_store(&ranges[i].bytes, 0);
        atomic_store(&ranges[i].start, 0);
        seccomp_call(SYS_munmap, (long)start, (long)bytes, 0, 0, 0, 0);
    }
}

void sysmem_forget(void *p)
{
    for (size_t i = 0; p && i < SYSMEM_RANGES; i++)
        if (atomic_load(&ranges[i].start) == (uintptr_t)p) {
            atomic_store(&ranges[i].bytes, 0);
            atomic_store(&ranges[i].start, 0);
            return;
        }
}

/* The registered mappings counted by the caller's count(start, end),
 * summed: libmemsim-meter.so counts them as it counts the program's own
 * (not the pages only read, which mincore counts and Rss does not). */
__attribute__((visibility("default"))) uint64_t
memsim_own_resident_by(uint64_t (*count)(uintptr_t start, uintptr_t end))
{
    uint64_t sum = 0;
    for (size_t i = 0; i < SYSMEM_RANGES; i++) {
        uintptr_t start = atomic_load(&ranges[i].start);
        size_t bytes = atomic_load(&ranges[i].bytes);
        if (start && bytes)
            sum += count(start, start + bytes);
    }
    return sum;
}

static void *map(size_t bytes, bool kept)
{
    long r = seccomp_call(SYS_mmap, 0, (long)bytes, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (r == -1)
        return NULL;
    note((void *)r, bytes, kept);
    return (void *)r;
}

void *sysmem_alloc(size_t bytes) { return map(bytes, false); }
void *sysmem_alloc_kept(size_t bytes) { return map(bytes, true); }

void sysmem_free(void *p, size_t bytes)
{
    if (p) {
        sysmem_forget(p);
        seccomp_call(SYS_munmap, (long)p, (long)bytes, 0, 0, 0, 0);
    }
}
