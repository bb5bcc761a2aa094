/*
 * ring: the queue from a traced process's threads to its recorder, both
 * sides in one process: producer threads post, the test consumes in
 * claim order.  Nothing is lost, causality holds across threads, bytes
 * survive the wrap, a handler's post never waits, a claim given up is
 * skipped, and a post interrupted by the end is settled.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "preload/arena.h"
#include "preload/clock.h"
#include "preload/msg.h"
#include "preload/ring.h"
#include "tests/unit/helpers.h"
#include "tests/unit/suites.h"

/* A region of its own, in shared anonymous memory (as the memfd is). */
static region_t *fresh_region(void)
{
    void *mem = mmap(NULL, ARENA_SIZE(1, RING_SLOTS), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                     -1, 0);
    ck_assert_ptr_ne(mem, MAP_FAILED);
    arena_format(mem, 1, RING_SLOTS, 0);
    region_t *r = arena_region(mem, 0);
    atomic_store(&r->rec_state, REC_RUNNING);
    atomic_store(&r->heartbeat, UINT64_MAX / 2); /* a recorder that is always "alive" */
    clock_init(false);
    return r;
}

static uint64_t post_one(region_t *r, uint64_t a, uint64_t b)
{
    ring_slot_t m = {.kind = MSG_ALLOC, .a = a, .b = b};
    return ring_post(r, &m, NULL, 0, 0);
}

START_TEST(one_thread_in_order)
{
    region_t *r = fresh_region();
    for (uint64_t i = 0; i < 100; i++)
        ck_assert_uint_ne(post_one(r, i, 7), 0);
    for (uint64_t i = 0; i < 100; i++) {
        ring_slot_t *m = ring_next(r);
        ck_assert_ptr_nonnull(m);
        ck_assert_uint_eq(m->a, i);
        ck_assert_uint_eq(m->nslots, 1);
        ring_consume(r, m);
    }
    ck_assert_ptr_null(ring_next(r));
    ck_assert_uint_eq(ring_backlog(r), 0);
}
END_TEST

/* Producers: each posts n messages (a = thread, b = its own counter). */
typedef struct job_s {
    region_t *r;
    unsigned id;
    uint64_t n;
} job_t;

static void *produce(void *arg)
{
    job_t *j = arg;
    for (uint64_t i = 0; i < j->n; i++)
        if (!post_one(j->r, j->id, i))
            return (void *)1;
    return NULL;
}

/* Start `threads` producers running fn on jobs of `each` messages, and
 * take what they post until there are `total`: every message, each
 * thread's in its own order (a = thread, b = its counter).  Caught up,
 * the consumer spins, or naps up to nap_ns if that is not 0; returns
 * the naps taken. */
static uint64_t consume_in_order(region_t *r, unsigned threads, uint64_t each, void *(*fn)(void *),
                                 uint64_t total, uint64_t nap_ns)
{
    enum { MAX = 8 };
    job_t jobs[MAX];
    pthread_t th[MAX];
    ck_assert_uint_le(threads, MAX);
    for (unsigned i = 0; i < threads; i++) {
        jobs[i] = (job_t){r, i, each};
        pthread_create(&th[i], NULL, fn, &jobs[i]);
    }
    uint64_t next[MAX] = {0}, got = 0, naps = 0;
    while (got < total) {
        ring_slot_t *m = ring_next(r);
        if (!m) {
            ring_wake_producers(r);
            if (nap_ns && ring_nap(r, nap_ns))
                naps++;
            continue; /* (napping: at a hole with a batch behind it) */
        }
        REQUIRE(m->a < threads && m->b == next[m->a], "thread %llu: got %llu, want %llu",
                (unsigned long long)m->a, (unsigned long long)m->b,
                (unsigned long long)next[m->a]);
        next[m->a]++;
        got++;
        ring_consume(r, m);
        if ((got & 255) == 0)
            ring_wake_producers(r);
    }
    for (unsigned i = 0; i < threads; i++) {
        void *rc;
        pthread_join(th[i], &rc);
        ck_assert_ptr_null(rc);
    }
    ck_assert_uint_eq(atomic_load(&r->ring.dropped), 0);
    return naps;
}

/* Four producers, many rings' worth: the consumer sees every message,
 * each thread's in its own order (the claim order is the trace's). */
START_TEST(threads_lose_nothing_and_keep_their_order)
{
    region_t *r = fresh_region();
    consume_in_order(r, 4, 200000, produce, 4 * 200000, 0);
}
END_TEST

/* A message with bytes across the end of the ring comes back whole, and
 * says how many bytes it has. */
START_TEST(bytes_cross_the_wrap)
{
    region_t *r = fresh_region();
    for (unsigned i = 0; i < RING_SLOTS - 3; i++) { /* near the end */
        post_one(r, i, 0);
        ring_consume(r, ring_next(r));
    }
    char text[1000];
    for (unsigned i = 0; i < sizeof text; i++)
        text[i] = (char)('a' + i % 26);
    ring_slot_t m = {.kind = MSG_MODULE_LOAD, .a = 1, .b = 2};
    ck_assert_uint_ne(ring_post(r, &m, text, sizeof text, 0), 0);
    post_one(r, 99, 0);
    ring_slot_t *h = ring_next(r);
    ck_assert_ptr_nonnull(h);
    ck_assert_uint_eq(h->kind, MSG_MODULE_LOAD);
    ck_assert_uint_eq(h->e, sizeof text);
    ck_assert_uint_eq(h->nslots, 1 + (sizeof text + RING_CONT_BYTES - 1) / RING_CONT_BYTES);
    char back[sizeof text];
    ck_assert_uint_eq(ring_bytes(r, h, back, sizeof back), sizeof back);
    ck_assert_int_eq(memcmp(back, text, sizeof text), 0);
    ring_consume(r, h);
    h = ring_next(r); /* continuation slots never look published */
    ck_assert_ptr_nonnull(h);
    ck_assert_uint_eq(h->a, 99);
}
END_TEST

/* RING_NOWAIT on a full ring: dropped and counted, nothing claimed. */
START_TEST(nowait_drops_when_full)
{
    region_t *r = fresh_region();
    for (unsigned i = 0; i < RING_SLOTS; i++)
        ck_assert_uint_ne(post_one(r, i, 0), 0);
    ring_slot_t m = {.kind = MSG_QUIET, .a = 5};
    ck_assert_uint_eq(ring_post(r, &m, NULL, 0, RING_NOWAIT), 0);
    ck_assert_uint_eq(atomic_load(&r->ring.dropped), 1);
    ck_assert_uint_eq(ring_backlog(r), RING_SLOTS);
}
END_TEST

/* A recorder stuck at a claim that is never published (its thread is
 * in a long signal handler): a producer waiting for room gives its claim
 * up after RING_STALL_NS, and the recorder skips it. */
static void *wait_for_room(void *arg)
{
    region_t *r = arg;
    return (void *)(uintptr_t)post_one(r, 7777, 0);
}

START_TEST(a_stuck_recorder_makes_producers_give_up)
{
    region_t *r = fresh_region();
    uint64_t hole = ring_begin(r, 0); /* claimed, never filled */
    ck_assert_uint_ne(hole, 0);
    ring_forget_thread();
    for (unsigned i = 1; i < RING_SLOTS; i++)
        post_one(r, i, 0);
    atomic_store(&r->ring.hole_since, clock_ns()); /* as the recorder says it waits there */
    pthread_t th;
    pthread_create(&th, NULL, wait_for_room, r);
    void *end;
    pthread_join(th, &end);
    ck_assert_uint_eq((uintptr_t)end, 0); /* given up */
    ck_assert_uint_eq(atomic_load(&r->ring.dropped), 1);
    /* The recorder, once it gets past the hole, skips the abandoned one. */
    ck_assert_ptr_null(ring_next(r));
    ck_assert_uint_eq(ring_skip_lost(r), 1);
    for (unsigned i = 1; i < RING_SLOTS; i++)
        ring_consume(r, ring_next(r));
    ck_assert_ptr_null(ring_next(r));
    ck_assert_uint_eq(ring_skip_abandoned(r), 1);
    ck_assert_uint_eq(ring_backlog(r), 0);
}
END_TEST

/* ring_begin claims, ring_end publishes; a process-ending handler that
 * finds the claim unfilled publishes it as lost (ring_settle). */
START_TEST(settle_publishes_an_interrupted_claim)
{
    region_t *r = fresh_region();
    uint64_t c = ring_begin(r, 0);
    ck_assert(ring_posting());
    ring_settle(r);
    ck_assert(!ring_posting());
    ring_slot_t *m = ring_next(r);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->kind, MSG_LOST);
    ring_consume(r, m);
    ring_slot_t late = {.kind = MSG_REALLOC};
    ck_assert_uint_eq(ring_end(r, c, &late, 0), 0); /* already settled: nothing written */
    ck_assert_ptr_null(ring_next(r));
    /* A claim filled in two steps, unhindered. */
    c = ring_begin(r, 0);
    ring_slot_t done = {.kind = MSG_REALLOC, .a = 1, .b = 2, .c = 3};
    ck_assert_uint_ne(ring_end(r, c, &done, 0), 0);
    m = ring_next(r);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->kind, MSG_REALLOC);
    ck_assert_uint_eq(m->c, 3);
}
END_TEST

/* A gone recorder closes the ring: posts drop instead of waiting. */
START_TEST(a_gone_recorder_closes_the_ring)
{
    region_t *r = fresh_region();
    for (unsigned i = 0; i < RING_SLOTS; i++)
        post_one(r, i, 0);
    atomic_store(&r->rec_state, REC_DONE);
    ck_assert_uint_eq(post_one(r, 1, 1), 0);
    ck_assert_uint_eq(atomic_load(&r->ring.closed), 1);
    ck_assert_uint_eq(post_one(r, 1, 2), 0); /* at once now */
    ck_assert_uint_eq(atomic_load(&r->ring.dropped), 2);
}
END_TEST

/* ring_wait_acked returns once the recorder acks, and at once when the
 * recorder is gone. */
START_TEST(acks)
{
    region_t *r = fresh_region();
    uint64_t end = post_one(r, 1, 1);
    atomic_store(&r->acked, end);
    ck_assert_int_eq(ring_wait_acked(r, end, 1000000000ull), 0);
    end = post_one(r, 2, 2);
    atomic_store(&r->rec_state, REC_DONE);
    ck_assert_int_eq(ring_wait_acked(r, end, 5000000000ull), -1);
}
END_TEST

/* Producers for the naps: each posts n messages, a few hundred
 * nanoseconds of work apart (a program's, between its calls: the
 * recorder keeps up and naps), then one with RING_SYNC (as the end of a
 * process does). */
static void *produce_then_sync(void *arg)
{
    job_t *j = arg;
    void *bad = NULL;
    for (uint64_t i = 0; i < j->n && !bad; i++) {
        for (volatile unsigned w = 0; w < 200; w++)
            ;
        if (!post_one(j->r, j->id, i))
            bad = (void *)1;
    }
    ring_slot_t m = {.kind = MSG_ALLOC, .a = j->id, .b = j->n};
    if (bad || !ring_post(j->r, &m, NULL, 0, RING_SYNC))
        return (void *)1;
    return NULL;
}

static uint64_t since_ns(uint64_t t0) { return clock_ns() - t0; }

/* A recorder caught up naps (ring_nap) until the producers are a wake's
 * worth ahead or a RING_SYNC post comes, whatever is published; with a
 * wake's worth ahead already, it does not nap.  The naps here would last
 * ten minutes each, past the test's timeout, so one missed wake fails
 * it.  Nothing is lost or reordered, and a nap is cut short only by a
 * wake's worth of messages or the last syncs (or a full ring: producers
 * waiting for room wake the recorder too; the next test has none). */
START_TEST(a_napping_recorder_is_woken_a_batch_behind)
{
    region_t *r = fresh_region();
    const uint64_t forever = 600ull * 1000000000ull, batch = RING_SLOTS / RING_WAKE_DIV;
    /* Already a wake's worth behind: no nap at all. */
    for (uint64_t i = 0; i < batch; i++)
        post_one(r, i, 0);
    uint64_t t0 = clock_ns();
    ck_assert(!ring_nap(r, forever));
    ck_assert_uint_lt(since_ns(t0), 1000000000ull);
    ck_assert_uint_eq(atomic_load(&r->ring.sleeping), 0);
    while (ring_next(r))
        ring_consume(r, ring_next(r));
    /* Nothing comes: the nap lasts its time, with a message published. */
    post_one(r, 1, 1);
    t0 = clock_ns();
    ck_assert(ring_nap(r, 20000000ull));
    ck_assert_uint_ge(since_ns(t0), 10000000ull);
    ring_consume(r, ring_next(r));

    enum { THREADS = 3, EACH = 100000 };
    uint64_t total = THREADS * (EACH + 1);
    uint64_t naps = consume_in_order(r, THREADS, EACH, produce_then_sync, total, forever);
    /* Each nap ended a batch behind, or at a sync (a wake may also come
     * just before the nap, which then ends at once: a few more). */
    REQUIRE(naps <= total / batch + 2 * THREADS + 8, "%llu naps for %llu messages",
            (unsigned long long)naps, (unsigned long long)total);
}
END_TEST

/* With a batch behind the tail (a hole, in the recorder), ring_nap
 * returns at once and leaves sleeping alone: setting it, even for a
 * moment, made producers that looked then wake the recorder with a
 * call (1.8 million of them on alloc_heavy at 4 threads). */
START_TEST(no_nap_with_a_batch_behind_leaves_producers_be)
{
    region_t *r = fresh_region();
    const unsigned batch = RING_SLOTS / RING_WAKE_DIV;
    for (unsigned i = 0; i < batch; i++)
        post_one(r, 1000000 + i, 0);
    job_t j = {r, 0, RING_SLOTS - batch - 1}; /* up to a full ring, never past it */
    pthread_t th;
    uint32_t w = atomic_load(&r->ring.work);
    pthread_create(&th, NULL, produce, &j);
    unsigned naps = 0;
    for (unsigned i = 0; i < 200000; i++)
        naps += ring_nap(r, 1000000000ull);
    pthread_join(th, NULL);
    ck_assert_uint_eq(naps, 0);
    uint32_t after = atomic_load(&r->ring.work);
    ck_assert_uint_eq(after, w); /* no producer woke anyone */
    ck_assert_uint_eq(ring_backlog(r), RING_SLOTS - 1);
}
END_TEST

typedef struct napper_s {
    region_t *r;
    _Atomic int woke;
} napper_t;

static void *nap_once(void *arg)
{
    napper_t *n = arg;
    bool napped = ring_nap(n->r, 600ull * 1000000000ull);
    atomic_store(&n->woke, napped ? 1 : -1);
    return NULL;
}

/* Wait up to s seconds for the napper to wake; what woke says. */
static int woke_within(napper_t *n, unsigned s)
{
    uint64_t t0 = clock_ns();
    while (!atomic_load(&n->woke) && since_ns(t0) < s * 1000000000ull)
        usleep(1000);
    return atomic_load(&n->woke);
}

/* One producer, the ring far from full: the post that puts it a wake's
 * worth ahead of a napping recorder wakes it; the posts before do not. */
START_TEST(the_post_a_wake_s_worth_ahead_wakes_the_napper)
{
    region_t *r = fresh_region();
    const unsigned batch = RING_SLOTS / RING_WAKE_DIV;
    napper_t n = {.r = r};
    pthread_t th;
    pthread_create(&th, NULL, nap_once, &n);
    while (!atomic_load(&r->ring.sleeping))
        usleep(100);
    for (unsigned i = 0; i < batch; i++)
        ck_assert_uint_ne(post_one(r, i, 0), 0);
    usleep(20000);
    ck_assert_int_eq(atomic_load(&n.woke), 0); /* still napping, batch - 1 behind */
    ck_assert_uint_ne(post_one(r, batch, 0), 0);
    ck_assert_int_eq(woke_within(&n, 30), 1);
    pthread_join(th, NULL);
    ck_assert_uint_eq(ring_backlog(r), batch + 1);
    ck_assert_uint_eq(atomic_load(&r->ring.sleeping), 0);
    /* A RING_SYNC post wakes it at once. */
    while (ring_next(r))
        ring_consume(r, ring_next(r));
    n.woke = 0;
    pthread_create(&th, NULL, nap_once, &n);
    while (!atomic_load(&r->ring.sleeping))
        usleep(100);
    ring_slot_t m = {.kind = MSG_ALLOC, .a = 1};
    ck_assert_uint_ne(ring_post(r, &m, NULL, 0, RING_SYNC), 0);
    ck_assert_int_eq(woke_within(&n, 30), 1);
    pthread_join(th, NULL);
}
END_TEST

Suite *ring_suite(void)
{
    Suite *s = suite_create("ring");
    TCase *tc = tcase_create("ring");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, one_thread_in_order);
    tcase_add_test(tc, threads_lose_nothing_and_keep_their_order);
    tcase_add_test(tc, bytes_cross_the_wrap);
    tcase_add_test(tc, nowait_drops_when_full);
    tcase_add_test(tc, a_stuck_recorder_makes_producers_give_up);
    tcase_add_test(tc, settle_publishes_an_interrupted_claim);
    tcase_add_test(tc, a_gone_recorder_closes_the_ring);
    tcase_add_test(tc, acks);
    tcase_add_test(tc, a_napping_recorder_is_woken_a_batch_behind);
    tcase_add_test(tc, no_nap_with_a_batch_behind_leaves_producers_be);
    tcase_add_test(tc, the_post_a_wake_s_worth_ahead_wakes_the_napper);
    suite_add_tcase(s, tc);
    return s;
}
