/*
 * libcrowd.so: preloaded after libmemsim.so (realloc_crowd's allocator
 * "behind" memsim).  A realloc to CROWD_SIZE bytes waits inside the call,
 * after memsim claimed its slot, until the program opens crowd_gate; it
 * then moves the block (malloc, copy, free), so each gets a new address.
 * Nothing else is changed.
 */
#include <malloc.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#define CROWD_SIZE 100

extern void *__libc_malloc(size_t n);
extern void __libc_free(void *p);
extern void *__libc_realloc(void *p, size_t n);

/* inside: reallocs waiting in the call; open: set by the program. */
struct crowd_gate {
    _Atomic int inside, open;
} crowd_gate;

void *realloc(void *p, size_t n)
{
    if (n != CROWD_SIZE || !p)
        return __libc_realloc(p, n);
    atomic_fetch_add(&crowd_gate.inside, 1);
    while (!atomic_load(&crowd_gate.open))
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    void *q = __libc_malloc(n);
    if (q) {
        size_t old = malloc_usable_size(p);
        memcpy(q, p, old < n ? old : n);
        __libc_free(p);
    }
    return q;
}
