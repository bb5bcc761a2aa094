/*
 * check: asserts in tiers, after mimalloc's mi_assert, _internal and
 * _expensive.
 *
 *   CHECK(cond)            a cheap check on a hot path
 *   CHECK_EXPENSIVE(stmt)  a walker over whole structures (the shadow
 *                          device's pool, the live maps), run after every
 *                          operation
 *
 * Both are compiled in by a checked build only (make CHECKS=1, in
 * build/checks/; the tests run the same there, slower), and away in
 * release builds.  A failed check prints where and aborts.
 */
#ifndef MEMSIM_LIB_CHECK_H
#define MEMSIM_LIB_CHECK_H

#ifdef MEMSIM_CHECKS
#include <stdio.h>
#include <stdlib.h>
#define CHECK(cond)                                                                       \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "memsim: check failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                                      \
        }                                                                                 \
    } while (0)
#define CHECK_EXPENSIVE(stmt) \
    do {                      \
        stmt;                 \
    } while (0)
#else
#define CHECK(cond) ((void)0)
#define CHECK_EXPENSIVE(stmt) ((void)0)
#endif

#endif
