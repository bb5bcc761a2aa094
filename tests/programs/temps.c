/*
 * temps: the patterns that tell heaptrack's rule for a temporary
 * allocation (a free that is the very next heap event after an
 * allocation of the freed block's size and stack) from looser ones.  Single-threaded
 * and deterministic: heaptrack and memsim-analyze must count the same
 * temporaries (test_heaptrack.sh); the expected figure is in the
 * comments, 52 in all.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>

/* Through a volatile pointer, so that the compiler keeps every call
 * (it may drop a malloc whose block is freed unused). */
static void *(*volatile do_malloc)(size_t) = malloc;
static void *(*volatile do_calloc)(size_t, size_t) = calloc;
static void *(*volatile do_realloc)(void *, size_t) = realloc;
static int (*volatile do_posix_memalign)(void **, size_t, size_t) = posix_memalign;
static void (*volatile do_free)(void *) = free;

int main(void)
{
    void *keep = do_malloc(32);
    for (int i = 0; i < 10; i++) { /* q freed at once: 10 */
        void *p = do_malloc(200), *q = do_malloc(300);
        do_free(q);
        do_free(p); /* a free came in between: not a temporary */
    }
    for (int i = 0; i < 10; i++) { /* a free of another block in between: 0 */
        void *p = do_malloc(64), *q = do_malloc(64);
        do_free(p);
        do_free(q);
    }
    for (int i = 0; i < 10; i++) { /* realloc frees its block at once, then the free: 20 */
        void *p = do_malloc(400);
        p = do_realloc(p, 4000);
        do_free(p);
    }
    for (int i = 0; i < 10; i++) { /* do_free(NULL) is no heap event: 10 */
        void *p = do_calloc(4, 25);
        do_free(NULL);
        do_free(p);
    }
    void *cur = NULL; /* replaced: the old block freed right after its
                       * successor, of the same size and stack: 9, as
                       * heaptrack compares allocations by size and stack */
    for (int i = 0; i < 10; i++) {
        void *old = cur;
        cur = do_malloc(64);
        do_free(old);
    }
    do_free(cur);
    void *a = NULL; /* an aligned block freed at once: 1 */
    if (do_posix_memalign(&a, 64, 1000))
        return 1;
    do_free(a);
    void *r = do_realloc(NULL, 50); /* do_realloc(NULL) is an allocation: 1 */
    do_free(r);
    void *s = do_malloc(10); /* an allocation in between: 0, then 1 for t */
    void *t = do_malloc(20);
    do_free(t);
    do_free(s);
    do_free(keep);
    printf("temps done\n");
    return 0;
}
