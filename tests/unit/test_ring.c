/*
 * ring: every claim through both stages exactly once, in claim order,
 * the state stage always ahead of the write stage, whether the stage
 * threads drain, the producers drain a full ring themselves, or a flush
 * does.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "preload/ring.h"
#include "tests/unit/suites.h"

#define PRODUCERS 4
#define PER_THREAD 100000

static uint64_t seen[PRODUCERS];  /* next expected value per producer */
static uint64_t consumed, lost, disorder;
static uint64_t last_t;           /* claims carry a global ticket in t */

static uint64_t staged;

/* The state stage marks each slot; the write stage must only ever see
 * marked ones, in order. */
static void mark(ring_slot_t *s)
{
    s->sim = ++staged;
}

static void count(ring_slot_t *s)
{
    if (s->sim != consumed + lost + 1)
        disorder++;
    if (s->kind == RING_LOST) {
        lost++;
        return;
    }
    unsigned p = (unsigned)s->aux;
    if (p >= PRODUCERS || s->addr != seen[p] || (s->t && s->t != last_t + 1))
        disorder++;
    seen[p] = s->addr + 1;
    if (s->t)
        last_t = s->t;
    consumed++;
}

static void reset(void)
{
    for (unsigned i = 0; i < PRODUCERS; i++)
        seen[i] = 0;
    ck_assert_int_eq(ring_init(mark, count), 0);
    ring_lock();
    ring_flush_locked(1000000000ull); /* whatever an earlier test left */
    ring_unlock();
    consumed = lost = disorder = last_t = staged = 0;
}

static void *produce(void *arg)
{
    unsigned p = (unsigned)(uintptr_t)arg;
    for (uint64_t i = 0; i < PER_THREAD; i++) {
        ring_slot_t *s = ring_claim();
        s->kind = RING_ALLOC;
        s->addr = i;
        s->aux = p;
        s->t = 0;
        ring_publish(s);
    }
    return NULL;
}

/* PRODUCERS threads of produce(), to the end. */
static void run_producers(void)
{
    pthread_t t[PRODUCERS];
    for (unsigned i = 0; i < PRODUCERS; i++)
        pthread_create(&t[i], NULL, produce, (void *)(uintptr_t)i);
    for (unsigned i = 0; i < PRODUCERS; i++)
        pthread_join(t[i], NULL);
}

/* Two threads take turns (a free in one thread, then the allocation in
 * another that the free made possible): what one published before
 * passing the turn must come first.  t carries the global step, 1, 2, ... */
#define TURNS 20000
static _Atomic uint64_t turn;

static void *take_turns(void *arg)
{
    unsigned p = (unsigned)(uintptr_t)arg;
    for (uint64_t k = p; k < TURNS; k += 2) {
        while (atomic_load(&turn) != k)
            ;
        ring_slot_t *s = ring_claim();
        s->kind = RING_ALLOC;
        s->addr = k / 2;
        s->aux = p;
        s->t = k + 1;
        ring_publish(s);
        atomic_store(&turn, k + 1);
    }
    return NULL;
}

START_TEST(one_thread_in_order)
{
    reset();
    for (uint64_t i = 0; i < 3 * RING_SLOTS + 7; i++) { /* wraps: the producer drains */
        ring_slot_t *s = ring_claim();
        s->kind = RING_ALLOC;
        s->addr = i;
        s->aux = 0;
        s->t = i + 1;
        ring_publish(s);
    }
    ring_lock();
    ck_assert_uint_eq(ring_flush_locked(1000000000ull), 0);
    ring_unlock();
    ck_assert_uint_eq(consumed, 3 * RING_SLOTS + 7);
    ck_assert_uint_eq(disorder, 0);
    ck_assert_uint_eq(ring_claimed(), ring_consumed());
}
END_TEST

/* No writer thread: full rings are drained by the producers. */
START_TEST(producers_drain_a_full_ring)
{
    reset();
    run_producers();
    ring_lock();
    ck_assert_uint_eq(ring_flush_locked(1000000000ull), 0);
    ring_unlock();
    ck_assert_uint_eq(consumed, (uint64_t)PRODUCERS * PER_THREAD);
    ck_assert_uint_eq(disorder, 0);
    for (unsigned i = 0; i < PRODUCERS; i++)
        ck_assert_uint_eq(seen[i], PER_THREAD);
}
END_TEST

START_TEST(causal_order_across_threads)
{
    reset();
    atomic_store(&turn, 0);
    pthread_t a, b;
    pthread_create(&a, NULL, take_turns, (void *)(uintptr_t)0);
    pthread_create(&b, NULL, take_turns, (void *)(uintptr_t)1);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    ring_lock();
    ck_assert_uint_eq(ring_flush_locked(1000000000ull), 0);
    ring_unlock();
    ck_assert_uint_eq(consumed, TURNS);
    ck_assert_uint_eq(last_t, TURNS);
    ck_assert_uint_eq(disorder, 0);
}
END_TEST

/* _i: 1, one thread running both stages; 2, a thread per stage. */
START_TEST(writer_threads_drain)
{
    reset();
    ck_assert_int_eq(ring_writer_start_n(NULL, (unsigned)_i), 0);
    run_producers();
    ring_lock();
    ck_assert_uint_eq(ring_flush_locked(1000000000ull), 0);
    ck_assert_uint_eq(consumed, (uint64_t)PRODUCERS * PER_THREAD);
    ck_assert_uint_eq(disorder, 0);
    ring_unlock();
}
END_TEST

START_TEST(abandoned_claim_is_lost_not_waited_for)
{
    reset();
    ring_slot_t *s = ring_claim();
    s->kind = RING_ALLOC;
    ring_abandon_pending(); /* as a signal handler ending the trace does */
    s = ring_claim();
    s->kind = RING_ALLOC;
    s->addr = 0;
    s->aux = 1;
    s->t = 5;
    ring_publish(s);
    ring_lock();
    ck_assert_uint_eq(ring_flush_locked(1000000000ull), 0);
    ring_unlock();
    ck_assert_uint_eq(lost, 1);
    ck_assert_uint_eq(consumed, 1);
}
END_TEST

START_TEST(flush_gives_up_on_a_claim_never_published)
{
    reset();
    ring_slot_t *s = ring_claim(); /* claimed, never published */
    (void)s;
    ring_lock();
    ck_assert_uint_eq(ring_flush_locked(20000000ull), 1); /* 20 ms, then one given up */
    ring_unlock();
    ring_abandon_pending(); /* leave the ring usable for the next test */
    ring_lock();
    ck_assert_uint_eq(ring_flush_locked(1000000000ull), 0);
    ring_unlock();
    ck_assert_uint_eq(lost, 1);
}
END_TEST

Suite *ring_suite(void)
{
    Suite *s = suite_create("ring");
    TCase *tc = tcase_create("order");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, one_thread_in_order);
    tcase_add_test(tc, producers_drain_a_full_ring);
    tcase_add_test(tc, causal_order_across_threads);
    tcase_add_test(tc, abandoned_claim_is_lost_not_waited_for);
    tcase_add_test(tc, flush_gives_up_on_a_claim_never_published);
    tcase_add_loop_test(tc, writer_threads_drain, 1, 3); /* last: the threads stay */
    suite_add_tcase(s, tc);
    return s;
}
