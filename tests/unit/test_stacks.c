/* stacks: capture with the private libunwind, and the dedup table. */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "preload/stacks.h"
#include "preload/unwind.h"
#include "tests/unit/helpers.h"
#include "tests/unit/suites.h"

typedef struct written_s {
    _Atomic int calls;
    uint64_t last_id;
    unsigned last_n;
    uintptr_t last[8];
    _Atomic int per_id[4096];
} written_t;

static void record(uint64_t id, const uintptr_t *frames, unsigned n, void *ctx)
{
    written_t *w = ctx;
    w->calls++;
    w->last_id = id;
    w->last_n = n;
    memcpy(w->last, frames, (n < 8 ? n : 8) * sizeof *frames);
    if (id < 4096)
        w->per_id[id]++;
}

START_TEST(same_frames_same_id)
{
    static written_t w;
    memset(&w, 0, sizeof w);
    stacks_reset();
    bool fresh;
    uintptr_t a[3] = {0x1000, 0x2000, 0x3000}, b[3] = {0x1000, 0x2000, 0x3001};
    ck_assert_uint_eq(stacks_intern(a, 3, record, &w, &fresh), 1);
    ck_assert(fresh);
    ck_assert_int_eq(w.calls, 1);
    ck_assert_uint_eq(w.last_id, 1);
    ck_assert_uint_eq(w.last_n, 3);
    ck_assert_uint_eq(w.last[2], 0x3000);
    ck_assert_uint_eq(stacks_intern(a, 3, record, &w, &fresh), 1);
    ck_assert(!fresh);
    ck_assert_uint_eq(stacks_intern(b, 3, record, &w, &fresh), 2);
    ck_assert_uint_eq(stacks_intern(a, 2, record, &w, &fresh), 3); /* a prefix differs */
    ck_assert_uint_eq(stacks_intern(a, 0, record, &w, &fresh), 0); /* no stack */
    ck_assert_int_eq(w.calls, 3);
    ck_assert_uint_eq(stacks_count(), 3);
    /* A fork child starts over. */
    stacks_reset();
    ck_assert_uint_eq(stacks_count(), 0);
    ck_assert_uint_eq(stacks_intern(b, 3, record, &w, &fresh), 1);
    ck_assert(fresh);
}
END_TEST

/* A library unloaded: stacks through it get new ids (a new record each),
 * the rest keep theirs, from the table and from the thread's cache. */
START_TEST(stacks_through_an_unloaded_library_start_again)
{
    static written_t w;
    memset(&w, 0, sizeof w);
    stacks_reset();
    bool fresh;
    uintptr_t in[3] = {0x7000, 0x1500, 0x9000}, out[3] = {0x7000, 0x2500, 0x9000};
    ck_assert_uint_eq(stacks_intern(in, 3, record, &w, &fresh), 1);
    ck_assert_uint_eq(stacks_intern(out, 3, record, &w, &fresh), 2);
    ck_assert_uint_eq(stacks_intern(in, 3, record, &w, &fresh), 1); /* cached */
    ck_assert(!fresh);
    stacks_forget_range(0x1000, 0x2000);
    ck_assert_uint_eq(stacks_intern(in, 3, record, &w, &fresh), 3);
    ck_assert(fresh);
    ck_assert_uint_eq(w.last_id, 3);
    ck_assert_uint_eq(stacks_intern(in, 3, record, &w, &fresh), 3);
    ck_assert(!fresh);
    ck_assert_uint_eq(stacks_intern(out, 3, record, &w, &fresh), 2);
    ck_assert(!fresh);
    /* The bounds: hi is outside, lo inside. */
    stacks_forget_range(0x2500, 0x2501);
    ck_assert_uint_eq(stacks_intern(out, 3, record, &w, &fresh), 4);
    stacks_forget_range(0x1400, 0x1500);
    ck_assert_uint_eq(stacks_intern(in, 3, record, &w, &fresh), 3);
    ck_assert_int_eq(w.calls, 4);
    ck_assert_uint_eq(stacks_count(), 4);
}
END_TEST

/* 50,000 stacks: more than a generation holds (the young one rotates
 * once), fewer than two; every one keeps its id. */
START_TEST(many_stacks_grow_the_table)
{
    static written_t w;
    memset(&w, 0, sizeof w);
    stacks_reset();
    bool fresh;
    for (uintptr_t i = 1; i <= 50000; i++) {
        uintptr_t f[4] = {i, i * 3, 7, i ^ 0x55};
        REQUIRE(stacks_intern(f, 4, record, &w, &fresh) == i, "stack %lu", (unsigned long)i);
    }
    for (uintptr_t i = 1; i <= 50000; i += 7) {
        uintptr_t f[4] = {i, i * 3, 7, i ^ 0x55};
        REQUIRE(stacks_intern(f, 4, record, &w, &fresh) == i && !fresh, "again %lu",
                (unsigned long)i);
    }
    ck_assert_int_eq(w.calls, 50000);
}
END_TEST

static written_t shared;

static void *intern_all(void *arg)
{
    (void)arg;
    bool fresh;
    for (int round = 0; round < 50; round++)
        for (uintptr_t i = 1; i <= 2000; i++) {
            uintptr_t f[2] = {i, 0xabc};
            if (!stacks_intern(f, 2, record, &shared, &fresh))
                return (void *)1;
        }
    return NULL;
}

START_TEST(threads_write_each_stack_once)
{
    memset(&shared, 0, sizeof shared);
    stacks_reset();
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, intern_all, NULL);
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(th[i], &r);
        ck_assert_ptr_null(r);
    }
    ck_assert_int_eq(shared.calls, 2000);
    ck_assert_uint_eq(stacks_count(), 2000);
    for (int id = 1; id <= 2000; id++)
        REQUIRE(shared.per_id[id] == 1, "stack %d written %d times", id, shared.per_id[id]);
}
END_TEST

/* A million distinct stacks: the table's memory stays bounded; every
 * stack gets a new id, written once. */
START_TEST(a_million_stacks_in_bounded_memory)
{
    static written_t w;
    memset(&w, 0, sizeof w);
    stacks_reset();
    bool fresh;
    for (uintptr_t i = 1; i <= 1000000; i++) {
        uintptr_t f[20];
        for (unsigned k = 0; k < 20; k++)
            f[k] = 0x400000 + (i >> k & 1) * 0x100 + k;
        f[19] = i;
        REQUIRE(stacks_intern(f, 20, record, &w, &fresh) == i && fresh, "stack %lu",
                (unsigned long)i);
    }
    ck_assert_int_eq(w.calls, 1000000);
    ck_assert_uint_le(stacks_memory(), STACKS_MEMORY_MAX);
    ck_assert_uint_ge(stacks_memory(), 12u << 20); /* both generations were filled */
}
END_TEST

/* A stack in use stays, with its id, however many others come; one not
 * seen for long is forgotten, and comes back new, with an id of its own. */
START_TEST(stacks_in_use_stay_and_old_ones_come_back_new)
{
    static written_t w;
    memset(&w, 0, sizeof w);
    stacks_reset();
    bool fresh;
    uintptr_t hot[3] = {0x1111, 0x2222, 0x3333}, cold[3] = {0x4444, 0x5555, 0x6666};
    ck_assert_uint_eq(stacks_intern(hot, 3, record, &w, &fresh), 1);
    ck_assert_uint_eq(stacks_intern(cold, 3, record, &w, &fresh), 2);
    for (uintptr_t i = 1; i <= 400000; i++) {
        uintptr_t f[4] = {i, 7, 8, 9};
        REQUIRE(stacks_intern(f, 4, record, &w, &fresh) == i + 2 && fresh, "stack %lu",
                (unsigned long)i);
        if (i % 1000 == 0) {
            REQUIRE(stacks_intern(hot, 3, record, &w, &fresh) == 1 && !fresh, "hot at %lu",
                    (unsigned long)i);
        }
    }
    ck_assert_uint_eq(stacks_intern(cold, 3, record, &w, &fresh), 400003);
    ck_assert(fresh);
    ck_assert_uint_eq(w.last_id, 400003);
    ck_assert_uint_eq(w.last[0], 0x4444);
    ck_assert_uint_eq(stacks_intern(cold, 3, record, &w, &fresh), 400003);
    ck_assert(!fresh);
    ck_assert_int_eq(w.calls, 400003);
}
END_TEST

/* Threads interning across generations: an id always names the frames it
 * was written with, and is written before any thread gets it. */
#define RACE_IDS (1u << 22)
static _Atomic uintptr_t race_frame[RACE_IDS]; /* id -> its stack's first frame */
static _Atomic int race_bad;

static void race_record(uint64_t id, const uintptr_t *frames, unsigned n, void *ctx)
{
    (void)n, (void)ctx;
    if (id >= RACE_IDS || atomic_exchange(&race_frame[id], frames[0]))
        race_bad++;
}

static void *race_intern(void *arg)
{
    uintptr_t seed = (uintptr_t)arg;
    bool fresh;
    for (uintptr_t k = 0; k < 300000; k++) {
        uintptr_t i = (k * 2654435761u + seed) % 150000 + 1;
        uintptr_t f[6] = {i, 0xa, 0xb, 0xc, 0xd, i * 3};
        uint64_t id = stacks_intern(f, 6, race_record, NULL, &fresh);
        if (!id || id >= RACE_IDS || atomic_load(&race_frame[id]) != i)
            race_bad++;
    }
    return NULL;
}

START_TEST(threads_across_generations_see_their_own_stacks)
{
    memset(race_frame, 0, sizeof race_frame);
    race_bad = 0;
    stacks_reset();
    pthread_t th[4];
    for (uintptr_t i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, race_intern, (void *)(i * 40503));
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    ck_assert_int_eq(race_bad, 0);
    ck_assert_uint_gt(stacks_count(), 150000); /* some came back new */
}
END_TEST

/* The descriptors open in this process, as a bit per number below 256. */
static void open_fds(unsigned char set[32])
{
    memset(set, 0, 32);
    DIR *d = opendir("/proc/self/fd");
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.' && atoi(e->d_name) < 256)
            set[atoi(e->d_name) / 8] |= (unsigned char)(1u << (atoi(e->d_name) % 8));
    closedir(d);
}

static __attribute__((noinline)) unsigned capture_here(uintptr_t *pc, const uintptr_t **frames)
{
    return unwind_capture(pc, frames);
}

/* libunwind loaded and used, and not one descriptor more: its memory
 * validation pipe is redirected (it took 3 and 4 from the program). */
START_TEST(capture_uses_libunwind_and_no_descriptor)
{
    unsigned char before[32], after[32];
    open_fds(before);
    const char *why = NULL;
    ck_assert_msg(unwind_init(64, 0, &why) == 0, "%s", why ? why : "");
    static uintptr_t pc[UNWIND_MAX_DEPTH + UNWIND_SELF_MAX];
    const uintptr_t *frames;
    unsigned n = capture_here(pc, &frames);
    ck_assert_uint_ge(n, 1);
    ck_assert_uint_le(n, 64);
    ck_assert(frames[0] != 0);
    open_fds(after);
    /* opendir's own descriptor was closed both times */
    ck_assert_int_eq(memcmp(before, after, sizeof before), 0);
    ck_assert_int_eq(unwind_init(0, 0, &why), 0); /* depth 0: off */
    ck_assert_uint_eq(capture_here(pc, &frames), 0);
}
END_TEST

Suite *stacks_suite(void)
{
    Suite *s = suite_create("stacks");
    TCase *tc = tcase_create("stacks");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, same_frames_same_id);
    tcase_add_test(tc, stacks_through_an_unloaded_library_start_again);
    tcase_add_test(tc, many_stacks_grow_the_table);
    tcase_add_test(tc, threads_write_each_stack_once);
    tcase_add_test(tc, a_million_stacks_in_bounded_memory);
    tcase_add_test(tc, stacks_in_use_stay_and_old_ones_come_back_new);
    tcase_add_test(tc, threads_across_generations_see_their_own_stacks);
    tcase_add_test(tc, capture_uses_libunwind_and_no_descriptor);
    suite_add_tcase(s, tc);
    return s;
}
