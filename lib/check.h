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
 * release builds.  A failed check writes where to fd 2 and aborts.
 *
 * Tier 1 (CHECK) sits where the invariants live: the pool's split and
 * merge (sim/pool.c), the buddy's (sim/strategy_buddy.c), the ring's
 * claim and publish (ipc/ring.c) and the live map's insert and take
 * (recorder/livemap.c).
 */
#ifndef MEMSIM_LIB_CHECK_H
#define MEMSIM_LIB_CHECK_H

#ifdef MEMSIM_CHECKS
#include <stdlib.h>
#include <unistd.h>
#define CHECK_STR_(x) #x
#define CHECK_STR(x) CHECK_STR_(x)
/* The message is one constant, written with write(2), and abort ends
 * the process: a check is async-signal-safe and allocates nothing, so
 * the preload's hooks and a signal handler's posts may hold them. */
#define CHECK(cond)                                                                         \
    do {                                                                                    \
        if (!(cond)) {                                                                      \
            static const char check_msg_[] =                                                \
                "memsim: check failed at " __FILE__ ":" CHECK_STR(__LINE__) ": " #cond "\n"; \
            (void)!write(2, check_msg_, sizeof check_msg_ - 1);                             \
            abort();                                                                        \
        }                                                                                   \
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
