/*
 * cold_alloc: a stand-in allocator for test_allocators.sh, built as
 * libtcmalloc_minimal.so.4 in a directory of its own (found through
 * MEMSIM_ALLOCATOR_DIRS under the catalog's name tcmalloc).  glibc's
 * malloc serves every request; a request of COLD_SIZE bytes also reads
 * COLD_BYTES of read-only data, pages of the library's file that
 * nothing touched before: code or data an allocator first uses in the
 * middle of a replay.  They are the file's, not the heap's: a replay's
 * peak must not count them.
 */
#include <stddef.h>
#include <stdlib.h>

#define COLD_SIZE 4242
#define COLD_BYTES (1 << 20)

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);

/* In the file (an initializer that is not all zeroes), read-only. */
static const unsigned char cold[COLD_BYTES] = {1};
static volatile unsigned cold_sum; /* the reads stay */

static void *served(void *p, size_t n)
{
    if (n == COLD_SIZE)
        for (size_t at = 0; at < sizeof cold; at += 4096)
            cold_sum += cold[at];
    return p;
}

__attribute__((visibility("default"))) void *malloc(size_t n)
{
    return served(__libc_malloc(n), n);
}

__attribute__((visibility("default"))) void *calloc(size_t n, size_t size)
{
    return served(__libc_calloc(n, size), n * size);
}

__attribute__((visibility("default"))) void *realloc(void *p, size_t n)
{
    return served(__libc_realloc(p, n), n);
}

__attribute__((visibility("default"))) void free(void *p)
{
    __libc_free(p);
}
