/*
 * arena: regions of the memory shared with the recorder.  See arena.h.
 */
#include "ipc/arena.h"

#include <errno.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ipc/seccomp.h"

void arena_format(void *mem, unsigned n, unsigned slots, uint64_t id)
{
    arena_t *a = mem;
    a->magic = ARENA_MAGIC;
    a->nregions = n;
    a->ring_slots = slots;
    a->id = id;
    atomic_store(&a->open, 1);
    atomic_store(&a->used[0], 1); /* region 0: the process that made the arena */
    region_init(arena_region(mem, 0), 0, slots);
}

region_t *arena_join(void *arena)
{
    arena_t *a = arena;
    if (!atomic_load(&a->open))
        return NULL;
    region_t *r = arena_reserve(arena);
    if (r && !atomic_load(&a->open)) { /* closing: it may not see r */
        arena_release(arena, r, true); /* its slots were never written */
        return NULL;
    }
    return r;
}

region_t *arena_reserve(void *arena)
{
    arena_t *a = arena;
    for (unsigned w = 0; w * 64 < a->nregions; w++) {
        uint64_t bits = atomic_load(&a->used[w]);
        while (~bits) {
            unsigned i = (unsigned)__builtin_ctzll(~bits);
            if (w * 64 + i >= a->nregions)
                return NULL;
            if (atomic_compare_exchange_weak(&a->used[w], &bits, bits | (1ull << i))) {
                region_t *r = arena_region(arena, w * 64 + i);
                region_init(r, w * 64 + i, a->ring_slots);
                atomic_store(&r->state, REGION_FORKING);
                return r;
            }
        }
    }
    return NULL;
}

void arena_release(void *arena, region_t *r, bool slots_zeroed)
{
    arena_t *a = arena;
    unsigned i = r->index;
    /* A new ring starts at claim 0: a slot left from this one would look
     * published to it.  Whoever takes the region next finds it zeroed. */
    if (!slots_zeroed)
        memset(region_slots(r), 0, (size_t)a->ring_slots * sizeof(ring_slot_t));
    memset(r, 0, sizeof *r);
    atomic_fetch_and(&a->used[i / 64], ~(1ull << (i % 64)));
}

void region_init(region_t *r, unsigned index, unsigned slots)
{
    r->magic = ARENA_MAGIC;
    r->ring.slots = slots;
    r->ring.shift = (uint32_t)__builtin_ctz(slots);
    r->index = index;
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&r->exec_lock, &ma);
    pthread_mutexattr_destroy(&ma);
}

/* In a seccomp sandbox that forbids futex, a wake is not made (the
 * recorder looks again on its own within its nap) and a wait returns at
 * once (its caller's loop spins, bounded by its clock). */
void region_wake(_Atomic uint32_t *word) { region_wake_n(word, INT32_MAX); }

void region_wake_n(_Atomic uint32_t *word, int n)
{
    atomic_fetch_add(word, 1);
    seccomp_call(SYS_futex, (long)word, FUTEX_WAKE, n, 0, 0, 0);
}

void region_wait(_Atomic uint32_t *word, uint32_t seen, uint64_t ns)
{
    if (!ns)
        return;
    struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
    if (seccomp_call(SYS_futex, (long)word, FUTEX_WAIT, seen, (long)&ts, 0, 0) == -1 &&
        errno == ENOSYS)
        __builtin_ia32_pause();
}
