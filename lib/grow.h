/*
 * grow: room for one more element in a malloc'd array that doubles, the
 * pattern every growing list of the analyzer and the replay uses.
 */
#ifndef MEMSIM_LIB_GROW_H
#define MEMSIM_LIB_GROW_H

#include <stdbool.h>
#include <stdlib.h>

/* Make *v (of *cap elements of each bytes, n in use) hold n + 1: it
 * doubles (from first when empty).  false when the host is out of
 * memory: *v and *cap are unchanged. */
static inline bool grow_room(void **v, size_t *cap, size_t n, size_t each, size_t first)
{
    if (n < *cap)
        return true;
    size_t c = *cap ? *cap * 2 : first;
    while (c <= n)
        c *= 2;
    void *p = realloc(*v, c * each);
    if (!p)
        return false;
    *v = p;
    *cap = c;
    return true;
}

#endif
