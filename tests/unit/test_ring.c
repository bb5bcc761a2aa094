/*
 * ring: the queue from a traced process's threads to its recorder, both
 * sides in one process: producer threads post, the test takes what the
 * recorder's intake (recorder/intake.h) gives.  Nothing is lost, each
 * thread's order holds, bytes survive the wrap, a handler's post never
 * waits, a hole is passed by what may pass it and by nothing else, a
 * slot a hole holds moves the claim of the lap after, a claim given up
 * is skipped, a post interrupted by the end is settled, and a message
 * is freed whole though the next lap writes its head meanwhile (and
 * continuation slots left from a taken one are freed).
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ipc/arena.h"
#include "ipc/clock.h"
#include "ipc/msg.h"
#include "ipc/ring.h"
#include "recorder/intake.h"
#include "tests/unit/helpers.h"
#include "tests/unit/suites.h"

static intake_t in; /* the recorder's side */

/* The next message the recorder may take, or NULL. */
static ring_slot_t *next(void) { return intake_next(&in); }

static void consume(ring_slot_t *m) { intake_consume(&in, m); }

/* A region of its own, in shared anonymous memory (as the memfd is). */
static region_t *fresh_region(void)
{
    void *mem = mmap(NULL, ARENA_SIZE(1, RING_SLOTS), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                     -1, 0);
    ck_assert_ptr_ne(mem, MAP_FAILED);
    arena_format(mem, 1, RING_SLOTS, 0);
    region_t *r = arena_region(mem, 0);
    atomic_store(&r->rec_state, REC_RUNNING);
    atomic_store(&r->beat.ns, UINT64_MAX / 2); /* a recorder that is always "alive" */
    clock_init(false);
    intake_init(&in, r);
    ring_forget_thread();
    return r;
}

static uint64_t post_one(region_t *r, uint64_t a, uint64_t b)
{
    ring_slot_t m = {.kind = MSG_ALLOC, .a = a, .b = b};
    return ring_post(r, &m, NULL, 0, 0);
}

/* A claim held unpublished by a thread of its own (preempted inside a
 * post, or inside a realloc's call), until hole_fill. */
typedef struct hole_s {
    region_t *r;
    uint8_t kind;      /* ring_begin's: what may not pass it */
    uint64_t old;
    ring_slot_t fill;  /* what it publishes */
    pthread_t th;
    _Atomic int state; /* 1 claimed, 2 go */
} hole_t;

static void *hole_thread(void *arg)
{
    hole_t *h = arg;
    uint64_t c = ring_begin(h->r, h->kind, h->old, 0);
    atomic_store(&h->state, 1);
    while (atomic_load(&h->state) != 2)
        usleep(100);
    ring_end(h->r, c, &h->fill, 0);
    return NULL;
}

static void hole_open(hole_t *h, region_t *r, uint8_t kind, uint64_t old, ring_slot_t fill)
{
    *h = (hole_t){.r = r, .kind = kind, .old = old, .fill = fill};
    pthread_create(&h->th, NULL, hole_thread, h);
    while (atomic_load(&h->state) != 1)
        usleep(100);
}

static void hole_fill(hole_t *h)
{
    atomic_store(&h->state, 2);
    pthread_join(h->th, NULL);
}

START_TEST(one_thread_in_order)
{
    region_t *r = fresh_region();
    for (uint64_t i = 0; i < 100; i++)
        ck_assert_uint_ne(post_one(r, i, 7), 0);
    for (uint64_t i = 0; i < 100; i++) {
        ring_slot_t *m = next();
        ck_assert_ptr_nonnull(m);
        ck_assert_uint_eq(m->a, i);
        ck_assert_uint_eq(m->nslots, 1);
        consume(m);
    }
    ck_assert_ptr_null(next());
    ck_assert_uint_eq(intake_backlog(&in), 0);
    ck_assert_uint_eq(atomic_load(&r->ring.tail), 100);
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
    uint64_t want[MAX] = {0}, got = 0, naps = 0;
    while (got < total) {
        ring_slot_t *m = next();
        if (!m) {
            intake_wake_producers(&in, true);
            if (nap_ns && intake_nap(&in, nap_ns))
                naps++;
            continue;
        }
        REQUIRE(m->a < threads && m->b == want[m->a], "thread %llu: got %llu, want %llu",
                (unsigned long long)m->a, (unsigned long long)m->b,
                (unsigned long long)want[m->a]);
        want[m->a]++;
        got++;
        consume(m);
        if ((got & 255) == 0)
            intake_wake_producers(&in, false);
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
        consume(next());
    }
    char text[1000];
    for (unsigned i = 0; i < sizeof text; i++)
        text[i] = (char)('a' + i % 26);
    ring_slot_t m = {.kind = MSG_MODULE_LOAD, .a = 1, .b = 2};
    ck_assert_uint_ne(ring_post(r, &m, text, sizeof text, 0), 0);
    post_one(r, 99, 0);
    ring_slot_t *h = next();
    ck_assert_ptr_nonnull(h);
    ck_assert_uint_eq(h->kind, MSG_MODULE_LOAD);
    ck_assert_uint_eq(h->e, sizeof text);
    ck_assert_uint_eq(h->nslots, 1 + (sizeof text + RING_CONT_BYTES - 1) / RING_CONT_BYTES);
    char back[sizeof text];
    ck_assert_uint_eq(intake_bytes(&in, h, back, sizeof back), sizeof back);
    ck_assert_int_eq(memcmp(back, text, sizeof text), 0);
    consume(h);
    h = next(); /* continuation slots never look published */
    ck_assert_ptr_nonnull(h);
    ck_assert_uint_eq(h->a, 99);
}
END_TEST

/* The recorder frees a message's slots as it consumes it, and a freed
 * slot is the next lap's at once: its producer may write it (a one-slot
 * post sets nslots to 1) while the recorder is still freeing the rest.
 * Here the slots' page is read-only, and the fault of the first free
 * plays that producer, writing the head slot as a one-slot post before
 * the store goes through.  The whole message is freed all the same, the
 * tail passes it, and the next lap posts past it. */
static ring_slot_t *overwritten;
static void *ro_page;
static size_t ro_len;
static int faults;

static void next_lap_writes(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)uc;
    if ((char *)si->si_addr < (char *)ro_page || (char *)si->si_addr >= (char *)ro_page + ro_len)
        abort();
    faults++;
    mprotect(ro_page, ro_len, PROT_READ | PROT_WRITE);
    overwritten->kind = MSG_ALLOC;
    overwritten->nslots = 1;
}

/* The 5-slot message at 0 was taken: its slots are the next lap's, the
 * tail is past it, and a lap and more on its slots take posts (none
 * waits: a slot never freed drops them). */
static void taken_whole(region_t *r)
{
    ring_slot_t *slots = region_slots(r);
    ck_assert_ptr_null(next());
    for (uint64_t p = 0; p < 5; p++)
        ck_assert_uint_eq(atomic_load(&slots[p].word), ring_word(p + RING_SLOTS, r->ring.shift, RING_FREE));
    ck_assert_uint_eq(intake_backlog(&in), 0);
    ck_assert_uint_eq(atomic_load(&r->ring.tail), 5);
    for (unsigned i = 0; i < RING_SLOTS + 8; i++) {
        ring_slot_t m = {.kind = MSG_ALLOC, .a = i};
        ck_assert_uint_ne(ring_post(r, &m, NULL, 0, RING_NOWAIT), 0);
        ring_slot_t *t = next();
        ck_assert_ptr_nonnull(t);
        ck_assert_uint_eq(t->a, i);
        consume(t);
    }
    ck_assert_uint_eq(atomic_load(&r->ring.dropped), 0);
    ck_assert_uint_eq(atomic_load(&r->ring.tail), atomic_load(&r->ring.head));
}

START_TEST(a_message_s_length_is_read_before_its_slots_are_freed)
{
    region_t *r = fresh_region();
    char frames[208];
    memset(frames, 0x5a, sizeof frames);
    ring_slot_t s = {.kind = MSG_STACK, .a = 1};
    ck_assert_uint_ne(ring_post(r, &s, frames, sizeof frames, 0), 0);
    ck_assert_uint_eq(atomic_load(&r->ring.head), 5);
    ring_slot_t *h = next();
    ck_assert_ptr_nonnull(h);
    ck_assert_uint_eq(h->nslots, 5);

    overwritten = h;
    ro_len = (size_t)sysconf(_SC_PAGESIZE);
    ro_page = (void *)((uintptr_t)h & ~(uintptr_t)(ro_len - 1));
    faults = 0;
    struct sigaction sa = {.sa_sigaction = next_lap_writes, .sa_flags = SA_SIGINFO}, old;
    sigemptyset(&sa.sa_mask);
    ck_assert_int_eq(sigaction(SIGSEGV, &sa, &old), 0);
    ck_assert_int_eq(mprotect(ro_page, ro_len, PROT_READ), 0);
    consume(h);
    sigaction(SIGSEGV, &old, NULL);
    mprotect(ro_page, ro_len, PROT_READ | PROT_WRITE);
    ck_assert_int_eq(faults, 1);
    taken_whole(r);
}
END_TEST

/* A slip that left a taken message's continuation slots unfreed, and
 * scan inside it (what reading its length after freeing its head did):
 * the next look finds continuation slots with no claim before them, and
 * frees them, instead of waiting for them as holes for good. */
START_TEST(a_continuation_left_from_a_taken_message_is_freed)
{
    region_t *r = fresh_region();
    char frames[208];
    memset(frames, 0x5a, sizeof frames);
    ring_slot_t s = {.kind = MSG_STACK, .a = 1};
    ck_assert_uint_ne(ring_post(r, &s, frames, sizeof frames, 0), 0);
    ring_slot_t *h = next();
    ck_assert_ptr_nonnull(h);
    ck_assert_uint_eq(h->nslots, 5);
    atomic_store(&region_slots(r)[0].word, ring_word(RING_SLOTS, r->ring.shift, RING_FREE));
    in.scan = in.tail = 1;
    atomic_store(&r->ring.tail, 1);
    taken_whole(r);
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
    ck_assert_uint_eq(intake_backlog(&in), RING_SLOTS);
}
END_TEST

/* A claim not yet published (its producer preempted, or a call under
 * way: ring_begin with no kind to hold back) is passed by the heap
 * events published after it, and taken once it is filled. */
START_TEST(a_hole_is_passed_and_taken_when_filled)
{
    region_t *r = fresh_region();
    hole_t h;
    hole_open(&h, r, 0, 0, (ring_slot_t){.kind = MSG_ALLOC, .a = 99});
    for (uint64_t i = 1; i <= 3; i++)
        post_one(r, i, 0);
    for (uint64_t i = 1; i <= 3; i++) {
        ring_slot_t *m = next();
        ck_assert_ptr_nonnull(m);
        ck_assert_uint_eq(m->a, i);
        consume(m);
    }
    ck_assert_ptr_null(next());
    ck_assert(!in.held);
    ck_assert_uint_eq(atomic_load(&r->ring.tail), 0); /* the hole is the oldest claim */
    /* Filled: taken, and the tail moves past everything. */
    hole_fill(&h);
    post_one(r, 4, 0);
    ck_assert_uint_eq(next()->a, 99);
    consume(next());
    ck_assert_uint_eq(next()->a, 4);
    consume(next());
    ck_assert_uint_eq(intake_backlog(&in), 0);
    ck_assert_uint_eq(atomic_load(&r->ring.tail), 5);
}
END_TEST

/* A realloc's claim under way (OPEN, its old address set) holds back a
 * message naming that address (another thread got the block the realloc
 * gave back inside its call), and what comes after that message of its
 * thread or naming its block; other heap events pass both.  Taken in
 * claim order once it is filled. */
START_TEST(an_open_realloc_holds_back_what_names_its_old_block)
{
    region_t *r = fresh_region();
    hole_t h;
    hole_open(&h, r, MSG_REALLOC, 0x1000,
              (ring_slot_t){.kind = MSG_REALLOC, .a = 0x1000, .b = 0x5000, .c = 64});
    post_one(r, 0x2000, 1);           /* another block: passes */
    post_one(r, 0x1000, 2);           /* the old block, allocated again: waits */
    post_one(r, 0x3000, 3);           /* after it, of its thread: waits too */
    ring_slot_t other = {.kind = MSG_FREE, .tid = 5, .a = 0x1000};
    ck_assert_uint_ne(ring_post(r, &other, NULL, 0, 0), 0); /* naming it: waits */
    other = (ring_slot_t){.kind = MSG_ALLOC, .tid = 6, .a = 0x6000};
    ck_assert_uint_ne(ring_post(r, &other, NULL, 0, 0), 0); /* another's, elsewhere: passes */
    ck_assert_uint_eq(next()->a, 0x2000);
    consume(next());
    ck_assert_uint_eq(next()->a, 0x6000);
    consume(next());
    ck_assert_ptr_null(next());
    ck_assert(in.held);
    hole_fill(&h);
    uint64_t want[] = {0x1000, 0x1000, 0x3000, 0x1000};
    uint8_t kinds[] = {MSG_REALLOC, MSG_ALLOC, MSG_ALLOC, MSG_FREE};
    for (unsigned i = 0; i < 4; i++) {
        ring_slot_t *m = next();
        ck_assert_ptr_nonnull(m);
        ck_assert_uint_eq(m->kind, kinds[i]);
        ck_assert_uint_eq(m->a, want[i]);
        consume(m);
    }
    ck_assert_uint_eq(intake_backlog(&in), 0);
}
END_TEST

/* An mremap under way holds back every mapping event, not heap events. */
START_TEST(an_open_mremap_holds_back_mapping_events)
{
    region_t *r = fresh_region();
    hole_t h;
    hole_open(&h, r, MSG_MREMAP, 0x7000000, (ring_slot_t){.kind = MSG_MREMAP, .a = 0x7000000});
    ring_slot_t mm = {.kind = MSG_MMAP, .a = 0x7000000, .b = 4096};
    ck_assert_uint_ne(ring_post(r, &mm, NULL, 0, 0), 0);
    post_one(r, 0x2000, 1);
    ck_assert_ptr_null(next()); /* the mmap waits, and the allocation behind it */
    ck_assert(in.held);
    hole_fill(&h);
    uint8_t kinds[] = {MSG_MREMAP, MSG_MMAP, MSG_ALLOC};
    for (unsigned i = 0; i < 3; i++) {
        ring_slot_t *m = next();
        ck_assert_ptr_nonnull(m);
        ck_assert_uint_eq(m->kind, kinds[i]);
        consume(m);
    }
}
END_TEST

/* Nothing but a heap or mapping event passes a hole (a phase here; the
 * end, a fork or an exec alike), and nothing passes that. */
START_TEST(nothing_else_passes_a_hole)
{
    region_t *r = fresh_region();
    hole_t h;
    hole_open(&h, r, 0, 0, (ring_slot_t){.kind = MSG_ALLOC, .a = 1});
    ring_slot_t ph = {.kind = MSG_PHASE, .a = 0};
    ck_assert_uint_ne(ring_post(r, &ph, NULL, 0, 0), 0);
    post_one(r, 7, 0);
    ck_assert_ptr_null(next());
    ck_assert(in.held);
    hole_fill(&h);
    uint8_t kinds[] = {MSG_ALLOC, MSG_PHASE, MSG_ALLOC};
    for (unsigned i = 0; i < 3; i++) {
        ring_slot_t *m = next();
        ck_assert_ptr_nonnull(m);
        ck_assert_uint_eq(m->kind, kinds[i]);
        consume(m);
    }
}
END_TEST

/* A lap later, the slot of a claim still unpublished is held: the claim
 * that lands on it moves (not dropped), the one given up is skipped, and
 * once the hole is taken its slot goes to the lap after the skipped one. */
START_TEST(a_slot_held_by_a_hole_moves_the_next_lap_s_claim)
{
    region_t *r = fresh_region();
    hole_t h;
    hole_open(&h, r, 0, 0, (ring_slot_t){.kind = MSG_ALLOC, .a = 1}); /* position 0 */
    for (unsigned i = 1; i < RING_SLOTS; i++)
        post_one(r, i, 0);
    for (unsigned i = 1; i < RING_SLOTS; i++) {
        ring_slot_t *m = next();
        ck_assert_ptr_nonnull(m);
        ck_assert_uint_eq(m->a, i);
        consume(m);
    }
    /* Position RING_SLOTS lands on slot 0, held: it moves to the next. */
    ck_assert_uint_eq(post_one(r, 5000, 0), RING_SLOTS + 2);
    ck_assert_uint_eq(atomic_load(&r->ring.dropped), 0);
    ring_slot_t *m = next();
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->a, 5000);
    consume(m);
    ck_assert_uint_eq(atomic_load(&r->ring.nabandoned), 0); /* skipped */
    hole_fill(&h);
    m = next();
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->a, 1);
    consume(m);
    ck_assert_uint_eq(intake_backlog(&in), 0);
    /* Slot 0 skips lap 1 (given up): free for lap 2. */
    ck_assert_uint_eq(atomic_load(&region_slots(r)[0].word),
                      ring_word(2 * (uint64_t)RING_SLOTS, r->ring.shift, RING_FREE));
    /* And the ring goes on: two more laps, in order. */
    for (uint64_t i = 0; i < 2 * RING_SLOTS; i++) {
        ck_assert_uint_ne(post_one(r, i, 1), 0);
        m = next();
        ck_assert_ptr_nonnull(m);
        ck_assert_uint_eq(m->a, i);
        consume(m);
    }
    ck_assert_uint_eq(atomic_load(&r->ring.dropped), 0);
}
END_TEST

/* Producers: one holds a claim unpublished (a thread preempted inside a
 * post) until the others, many rings' worth, are all taken; then fills
 * it.  With the ring taken strictly in claim order they could never be. */
typedef struct holder_s {
    region_t *r;
    _Atomic int others_done;
    int timed_out;
} holder_t;

static void *hold_a_claim(void *arg)
{
    holder_t *h = arg;
    uint64_t c = ring_begin(h->r, 0, 0, 0);
    uint64_t t0 = clock_ns();
    while (!atomic_load(&h->others_done) && clock_ns() - t0 < 30000000000ull)
        usleep(1000);
    h->timed_out = !atomic_load(&h->others_done);
    ring_slot_t m = {.kind = MSG_ALLOC, .a = 7, .b = 0};
    ring_end(h->r, c, &m, 0);
    return NULL;
}

START_TEST(a_preempted_producer_holds_nobody_up)
{
    region_t *r = fresh_region();
    holder_t h = {.r = r};
    pthread_t th;
    pthread_create(&th, NULL, hold_a_claim, &h);
    while (atomic_load(&r->ring.head) == 0)
        usleep(100);
    enum { THREADS = 4, EACH = 3 * RING_SLOTS };
    job_t jobs[THREADS];
    pthread_t pt[THREADS];
    for (unsigned i = 0; i < THREADS; i++) {
        jobs[i] = (job_t){r, i, EACH};
        pthread_create(&pt[i], NULL, produce, &jobs[i]);
    }
    uint64_t want[THREADS] = {0}, got = 0;
    while (got < THREADS * EACH) {
        ring_slot_t *m = next();
        if (!m) {
            intake_wake_producers(&in, true);
            if (h.timed_out)
                break;
            continue;
        }
        REQUIRE(m->a < THREADS && m->b == want[m->a], "thread %llu: got %llu, want %llu",
                (unsigned long long)m->a, (unsigned long long)m->b,
                (unsigned long long)want[m->a]);
        want[m->a]++;
        got++;
        consume(m);
    }
    atomic_store(&h.others_done, 1);
    for (unsigned i = 0; i < THREADS; i++)
        pthread_join(pt[i], NULL);
    ck_assert_uint_eq(got, THREADS * EACH);
    ring_slot_t *m;
    while (!(m = next()))
        ;
    ck_assert_uint_eq(m->a, 7); /* the holder's, last */
    consume(m);
    pthread_join(th, NULL);
    ck_assert(!h.timed_out);
    ck_assert_uint_eq(atomic_load(&r->ring.dropped), 0);
    ck_assert_uint_eq(intake_backlog(&in), 0);
}
END_TEST

/* A recorder held at a hole it may not pass (a message behind it that
 * must wait, here a phase) with the ring full: a producer waiting for room
 * gives its claim up after RING_STALL_NS, and the recorder skips it. */
static void *wait_for_room(void *arg)
{
    region_t *r = arg;
    return (void *)(uintptr_t)post_one(r, 7777, 0);
}

START_TEST(a_held_recorder_makes_producers_give_up)
{
    region_t *r = fresh_region();
    hole_t h; /* position 0, a thread inside a long handler */
    hole_open(&h, r, 0, 0, (ring_slot_t){.kind = MSG_ALLOC, .a = 1});
    ring_slot_t ph = {.kind = MSG_PHASE, .a = 0};
    ck_assert_uint_ne(ring_post(r, &ph, NULL, 0, 0), 0);
    for (unsigned i = 2; i < RING_SLOTS; i++)
        post_one(r, i, 0);
    ck_assert_ptr_null(next());
    ck_assert(in.held);
    atomic_store(&r->ring.hole_since, clock_ns()); /* as the recorder says it is held */
    pthread_t th;
    pthread_create(&th, NULL, wait_for_room, r);
    void *end;
    pthread_join(th, &end);
    ck_assert_uint_eq((uintptr_t)end, 0); /* given up */
    ck_assert_uint_eq(atomic_load(&r->ring.dropped), 1);
    /* Once the hole is filled, everything is taken; what was given up
     * is skipped. */
    hole_fill(&h);
    for (unsigned i = 0; i < RING_SLOTS; i++) {
        ring_slot_t *m = next();
        ck_assert_ptr_nonnull(m);
        consume(m);
    }
    ck_assert_ptr_null(next());
    ck_assert_uint_eq(atomic_load(&r->ring.nabandoned), 0);
    ck_assert_uint_eq(intake_backlog(&in), 0);
}
END_TEST

/* ring_begin claims, ring_end publishes; a process-ending handler that
 * finds the claim unfilled publishes it as lost (ring_settle). */
START_TEST(settle_publishes_an_interrupted_claim)
{
    region_t *r = fresh_region();
    uint64_t c = ring_begin(r, MSG_REALLOC, 0x10, 0);
    ck_assert(ring_posting());
    ring_settle(r);
    ck_assert(!ring_posting());
    ring_slot_t *m = next();
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->kind, MSG_LOST);
    ck_assert_uint_eq(m->a, 1); /* a call that never returned */
    consume(m);
    ring_slot_t late = {.kind = MSG_REALLOC};
    ck_assert_uint_eq(ring_end(r, c, &late, 0), 0); /* already settled: nothing written */
    ck_assert_ptr_null(next());
    /* A claim filled in two steps, unhindered. */
    c = ring_begin(r, MSG_REALLOC, 1, 0);
    ring_slot_t done = {.kind = MSG_REALLOC, .a = 1, .b = 2, .c = 3};
    ck_assert_uint_ne(ring_end(r, c, &done, 0), 0);
    m = next();
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

/* A recorder caught up naps (intake_nap) until the producers are a wake's
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
    ck_assert(!intake_nap(&in, forever));
    ck_assert_uint_lt(since_ns(t0), 1000000000ull);
    ck_assert_uint_eq(atomic_load(&r->ring.sleeping), 0);
    while (next())
        consume(next());
    /* Nothing comes: the nap lasts its time, with a message published
     * that it has not looked at. */
    post_one(r, 1, 1);
    t0 = clock_ns();
    ck_assert(intake_nap(&in, 20000000ull));
    ck_assert_uint_ge(since_ns(t0), 10000000ull);
    consume(next());

    enum { THREADS = 3, EACH = 100000 };
    uint64_t total = THREADS * (EACH + 1);
    uint64_t naps = consume_in_order(r, THREADS, EACH, produce_then_sync, total, forever);
    /* Each nap ended a batch behind, or at a sync (a wake may also come
     * just before the nap, which then ends at once: a few more). */
    REQUIRE(naps <= total / batch + 2 * THREADS + 8, "%llu naps for %llu messages",
            (unsigned long long)naps, (unsigned long long)total);
}
END_TEST

/* With a batch ahead of what it looked at, intake_nap returns at once and leaves sleeping alone: setting it, even for a
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
        naps += intake_nap(&in, 1000000000ull);
    pthread_join(th, NULL);
    ck_assert_uint_eq(naps, 0);
    uint32_t after = atomic_load(&r->ring.work);
    ck_assert_uint_eq(after, w); /* no producer woke anyone */
    ck_assert_uint_eq(intake_backlog(&in), RING_SLOTS - 1);
}
END_TEST

typedef struct napper_s {
    region_t *r;
    _Atomic int woke;
} napper_t;

static void *nap_once(void *arg)
{
    napper_t *n = arg;
    bool napped = intake_nap(&in, 600ull * 1000000000ull);
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
    ck_assert_uint_eq(intake_backlog(&in), batch + 1);
    ck_assert_uint_eq(atomic_load(&r->ring.sleeping), 0);
    /* A RING_SYNC post wakes it at once. */
    while (next())
        consume(next());
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
    tcase_add_test(tc, a_message_s_length_is_read_before_its_slots_are_freed);
    tcase_add_test(tc, a_continuation_left_from_a_taken_message_is_freed);
    tcase_add_test(tc, nowait_drops_when_full);
    tcase_add_test(tc, a_hole_is_passed_and_taken_when_filled);
    tcase_add_test(tc, an_open_realloc_holds_back_what_names_its_old_block);
    tcase_add_test(tc, an_open_mremap_holds_back_mapping_events);
    tcase_add_test(tc, nothing_else_passes_a_hole);
    tcase_add_test(tc, a_slot_held_by_a_hole_moves_the_next_lap_s_claim);
    tcase_add_test(tc, a_preempted_producer_holds_nobody_up);
    tcase_add_test(tc, a_held_recorder_makes_producers_give_up);
    tcase_add_test(tc, settle_publishes_an_interrupted_claim);
    tcase_add_test(tc, a_gone_recorder_closes_the_ring);
    tcase_add_test(tc, acks);
    tcase_add_test(tc, a_napping_recorder_is_woken_a_batch_behind);
    tcase_add_test(tc, no_nap_with_a_batch_behind_leaves_producers_be);
    tcase_add_test(tc, the_post_a_wake_s_worth_ahead_wakes_the_napper);
    suite_add_tcase(s, tc);
    return s;
}
