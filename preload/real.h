/*
 * real: the functions memsim's hooks stand in front of, as the program
 * would reach them without memsim.
 *
 * Every one is found with dlsym(RTLD_NEXT): the next definition after
 * libmemsim.so in the program's lookup order, which is another
 * allocator (jemalloc, tcmalloc) when the program links or preloads one
 * after memsim, glibc's otherwise.  So each hooked call reaches the
 * allocator it would reach natively, and every function of one family
 * the same one.  The table is made from preload/hooks.def.
 *
 * A hook can run before memsim's constructor (another library's
 * constructor allocates first) and dlsym itself allocates: REAL()
 * resolves on first use, and while the table is being filled the heap
 * hooks serve from a small static buffer (real_bootstrap_*).
 */
#ifndef MEMSIM_PRELOAD_REAL_H
#define MEMSIM_PRELOAD_REAL_H

#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <threads.h>

typedef struct real_s {
#define HOOK(ret, name, params, args) ret(*name) params;
#include "preload/hooks.def"
#undef HOOK
} real_t;

extern real_t real;

/* Fill the table (once; a function this libc lacks stays NULL, and its
 * hook says ENOSYS).  While it runs, real_resolving() is true. */
void real_resolve(void);
bool real_resolving(void);

#define REAL(name) (__builtin_expect(real.name != NULL, 1) ? real.name : (real_resolve(), real.name))

/* Whether fn is defined in libc.so (NULL counts as libc's: a function
 * this libc lacks). */
bool real_in_libc(const void *fn);

/* Whether every heap function of the table (malloc to pvalloc) that this
 * libc has is glibc's own: defined in libc.so.  glibc's
 * allocator calls nothing through the program's symbols. */
bool real_heap_is_glibc(void);

/* The buffer dlsym's own allocations come from while the table is being
 * filled: n bytes aligned to align (<= 4096), or NULL when it is full. */
void *real_bootstrap_alloc(size_t n, size_t align);
/* Whether p came from it (such blocks are never freed): inline, on the
 * hooks' fast path. */
#define REAL_BOOT_BYTES (64u << 10)
extern unsigned char real_boot_[REAL_BOOT_BYTES] __attribute__((visibility("hidden")));
static inline bool real_bootstrap_owns(const void *p)
{
    return (uintptr_t)p - (uintptr_t)real_boot_ < REAL_BOOT_BYTES;
}
/* The size asked for a block of it. */
size_t real_bootstrap_size(const void *p);

#endif
