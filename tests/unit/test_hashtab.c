/*
 * Unit tests for lib/hashtab, the table under addrmap, the live map and
 * the stack table: slots of the caller's layout, the caller's allocator,
 * keys hashed by the caller and compared by match(), growth, erasure,
 * and the invariant walker.  (test_addrmap.c covers the probing of
 * 64-bit keys in depth: wrap-around runs, full collisions.)
 */
#include <stdlib.h>
#include <string.h>

#include "lib/hashtab.h"
#include "lib/rng.h"
#include "tests/unit/expect.h"
#include "tests/unit/failmalloc.h"
#include "tests/unit/suites.h"

/* A slot whose mark is not its key: key 0 is an ordinary key. */
typedef struct pair_s {
    uint64_t value; /* mark: 0 in an empty slot */
    uint64_t key;
    uint32_t extra[3]; /* an odd size: slots are copied whole */
} pair_t;

/* An allocator that keeps count, to see that every table it gave is
 * given back with its size. */
typedef struct counting_s {
    long allocs, frees;
    size_t live_bytes;
} counting_t;

void *__real_calloc(size_t k, size_t n); /* the unwrapped one (tests link with --wrap) */

static void *counting_alloc(size_t bytes, void *ctx)
{
    counting_t *c = ctx;
    void *p = __real_calloc(1, bytes); /* not counted by failmalloc */
    if (p) {
        c->allocs++;
        c->live_bytes += bytes;
    }
    return p;
}

static void counting_free(void *p, size_t bytes, void *ctx)
{
    counting_t *c = ctx;
    c->frees++;
    c->live_bytes -= bytes;
    free(p);
}

static counting_t counted;
static const hashtab_alloc_t counting_mem = {counting_alloc, counting_free, &counted};

static const hashtab_type_t pair_type = {
    .slot_size = sizeof(pair_t),
    .key_off = offsetof(pair_t, key),
    .mark_off = offsetof(pair_t, value),
    .mem = &counting_mem,
};

static void expect_ok(const hashtab_t *t, const hashtab_type_t *ty)
{
    const char *why = NULL;
    EXPECT(hashtab_check(t, ty, &why) == 0, "invariant: %s", why);
}

static pair_t *put(hashtab_t *t, uint64_t key, uint64_t value)
{
    bool found;
    pair_t *s = hashtab_put(t, &pair_type, key, &found);
    EXPECT_NONNULL(s);
    s->key = key;
    s->value = value;
    return s;
}

START_TEST(zeroed_table_grows_from_nothing)
{
    memset(&counted, 0, sizeof counted);
    hashtab_t t = HASHTAB_INITIALIZER;
    EXPECT_NULL(hashtab_find(&t, &pair_type, 0));
    EXPECT_UINT(hashtab_capacity(&t), ==, 0);
    expect_ok(&t, &pair_type);
    bool found = true;
    pair_t *s = hashtab_put(&t, &pair_type, 0, &found);
    EXPECT(!found && s, "first put");
    EXPECT_UINT(hashtab_capacity(&t), ==, HASHTAB_MIN_CAPACITY);
    EXPECT_UINT(t.count, ==, 1);
    s->key = 0;
    s->value = 100;
    EXPECT_PTR_EQ(hashtab_find(&t, &pair_type, 0), s);
    s = hashtab_put(&t, &pair_type, 0, &found);
    EXPECT(found && s->value == 100, "put again finds the slot");
    EXPECT_UINT(t.count, ==, 1);
    expect_ok(&t, &pair_type);
    EXPECT_INT(counted.allocs, ==, 1);
    hashtab_fini(&t, &pair_type);
    EXPECT_NULL(t.slots);
    EXPECT_UINT(t.count, ==, 0);
    EXPECT_INT(counted.frees, ==, 1);
    EXPECT_UINT(counted.live_bytes, ==, 0);
}
END_TEST

/* Doubling at load 1/2, slots copied whole, every old table given back
 * to the caller's allocator with its size, and no malloc at all. */
START_TEST(growth_uses_the_callers_memory_only)
{
    memset(&counted, 0, sizeof counted);
    hashtab_t t = HASHTAB_INITIALIZER;
    failmalloc_arm(1); /* a malloc or calloc of the table's own would fail */
    enum { N = 5000 };
    size_t cap = 0;
    for (uint64_t i = 0; i < N; i++) {
        pair_t *s = put(&t, i * 4096, i + 1);
        s->extra[2] = (uint32_t)i;
        EXPECT_UINT(t.count * 2, <=, hashtab_capacity(&t));
        if (hashtab_capacity(&t) != cap) {
            EXPECT_UINT(t.count * 2, >, cap); /* grew only when it had to */
            cap = hashtab_capacity(&t);
        }
    }
    EXPECT(!failmalloc_disarm(), "the table called malloc itself");
    expect_ok(&t, &pair_type);
    EXPECT_UINT(hashtab_capacity(&t), ==, 16384);
    for (uint64_t i = 0; i < N; i++) {
        pair_t *s = hashtab_find(&t, &pair_type, i * 4096);
        EXPECT(s && s->value == i + 1 && s->extra[2] == i, "key %ju", (uintmax_t)i);
    }
    EXPECT_INT(counted.allocs, ==, 9); /* 64, 128, ..., 16384 */
    EXPECT_INT(counted.frees, ==, 8);
    EXPECT_UINT(counted.live_bytes, ==, 16384 * sizeof(pair_t));
    hashtab_fini(&t, &pair_type);
    EXPECT_UINT(counted.live_bytes, ==, 0);
}
END_TEST

START_TEST(failed_growth_changes_nothing)
{
    static const hashtab_type_t plain = {
        .slot_size = sizeof(pair_t),
        .key_off = offsetof(pair_t, key),
        .mark_off = offsetof(pair_t, value),
    };
    hashtab_t t = HASHTAB_INITIALIZER;
    EXPECT_INT(hashtab_init(&t, &plain, 16), ==, 0);
    for (uint64_t i = 1; i <= 32; i++) {
        bool found;
        pair_t *s = hashtab_put(&t, &plain, i, &found);
        s->key = i;
        s->value = i;
    }
    EXPECT_UINT(hashtab_capacity(&t), ==, 64);
    bool found;
    failmalloc_arm(1);
    void *got = hashtab_put(&t, &plain, 33, &found); /* would be the 33rd of 64 */
    EXPECT(failmalloc_disarm() && !got, "put: growth did not fail");
    failmalloc_arm(1);
    got = hashtab_insert(&t, &plain, 34);
    EXPECT(failmalloc_disarm() && !got, "insert: growth did not fail");
    EXPECT_UINT(t.count, ==, 32);
    EXPECT_UINT(hashtab_capacity(&t), ==, 64);
    pair_t *s = hashtab_put(&t, &plain, 7, &found); /* a key it has needs no room */
    EXPECT(s && found && s->value == 7, "existing key");
    expect_ok(&t, &plain);
    EXPECT_INT(hashtab_init(&t, &plain, SIZE_MAX / 2), ==, -1);
    EXPECT_UINT(t.count, ==, 32);
    hashtab_fini(&t, &plain);
}
END_TEST

/* Keys longer than a word: the slot holds the caller's hash and a
 * pointer, and match() decides among equal hashes. */
typedef struct named_s {
    uint64_t hash;
    const char *name;
} named_t;

static const hashtab_type_t named_type = {
    .slot_size = sizeof(named_t),
    .key_off = offsetof(named_t, hash),
    .mark_off = offsetof(named_t, hash),
};

static bool same_name(const void *slot, void *ctx)
{
    return strcmp(((const named_t *)slot)->name, ctx) == 0;
}

/* A table of the host's allocator starts on a cache line, small or large
 * (calloc's blocks start 16 bytes into one: every other 32-byte slot
 * would span two), and starts zeroed. */
START_TEST(host_tables_start_on_a_cache_line)
{
    static const hashtab_type_t quad = {
        .slot_size = 32,
        .key_off = 0,
        .mark_off = 0,
    };
    for (size_t hint = 1; hint <= (1u << 18); hint *= 8) {
        hashtab_t t = HASHTAB_INITIALIZER;
        EXPECT_INT(hashtab_init(&t, &quad, hint), ==, 0);
        EXPECT((uintptr_t)t.slots % 64 == 0, "hint %zu: slots at %p", hint, t.slots);
        const unsigned char *b = t.slots;
        for (size_t i = 0; i < hashtab_capacity(&t) * 32; i += 4093)
            EXPECT(b[i] == 0, "hint %zu: byte %zu not zero", hint, i);
        hashtab_fini(&t, &quad);
    }
}
END_TEST

START_TEST(equal_hashes_are_told_apart_by_match)
{
    static const char *const names[] = {"alpha", "beta", "gamma", "delta", "epsilon"};
    hashtab_t t = HASHTAB_INITIALIZER;
    for (int i = 0; i < 5; i++) { /* all with hash 42 */
        EXPECT_NULL(hashtab_find_match(&t, &named_type, 42, same_name, (void *)names[i]));
        named_t *s = hashtab_insert(&t, &named_type, 42);
        EXPECT_NONNULL(s);
        s->hash = 42;
        s->name = names[i];
    }
    named_t *other = hashtab_insert(&t, &named_type, 43);
    other->hash = 43;
    other->name = "alpha";
    EXPECT_UINT(t.count, ==, 6);
    expect_ok(&t, &named_type);
    for (int i = 0; i < 5; i++) {
        named_t *s = hashtab_find_match(&t, &named_type, 42, same_name, (void *)names[i]);
        EXPECT(s && s->name == names[i], "%s", names[i]);
    }
    EXPECT_NULL(hashtab_find_match(&t, &named_type, 42, same_name, "zeta"));
    named_t *a = hashtab_find_match(&t, &named_type, 43, same_name, "alpha");
    EXPECT(a && a->hash == 43, "alpha under 43");
    /* Erase one of the colliding run: the rest stay reachable. */
    hashtab_erase(&t, &named_type, hashtab_find_match(&t, &named_type, 42, same_name, "beta"));
    EXPECT_NULL(hashtab_find_match(&t, &named_type, 42, same_name, "beta"));
    EXPECT_NONNULL(hashtab_find_match(&t, &named_type, 42, same_name, "epsilon"));
    EXPECT_NONNULL(hashtab_find_match(&t, &named_type, 43, same_name, "alpha"));
    expect_ok(&t, &named_type);
    hashtab_fini(&t, &named_type);
}
END_TEST

/* Random puts, erasures and lookups against a plain array, the walker
 * after every operation; clear keeps the capacity. */
START_TEST(random_operations_keep_the_invariants)
{
    enum { KEYS = 3000, OPS = 60000 };
    static uint64_t ref[KEYS]; /* value + 1, 0: absent */
    memset(ref, 0, sizeof ref);
    memset(&counted, 0, sizeof counted);
    rng_t g;
    rng_seed(&g, 0x4a5ab + (uint64_t)_i);
    hashtab_t t = HASHTAB_INITIALIZER;
    size_t live = 0;
    for (int op = 0; op < OPS; op++) {
        uint64_t k = rng_below(&g, KEYS), key = k * 0x10000 * (uint64_t)(_i + 1);
        pair_t *s = hashtab_find(&t, &pair_type, key);
        EXPECT((s != NULL) == (ref[k] != 0), "op %d: presence of %ju", op, (uintmax_t)k);
        if (s)
            EXPECT_UINT(s->value, ==, ref[k]);
        if (rng_below(&g, 100) < 55) {
            if (!s)
                live++;
            ref[k] = 1 + rng_below(&g, 1000);
            put(&t, key, ref[k]);
        } else if (s) {
            hashtab_erase(&t, &pair_type, s);
            ref[k] = 0;
            live--;
        }
        EXPECT_UINT(t.count, ==, live);
        if (op % 64 == 0)
            expect_ok(&t, &pair_type);
    }
    size_t cap = hashtab_capacity(&t);
    hashtab_clear(&t, &pair_type);
    EXPECT_UINT(t.count, ==, 0);
    EXPECT_UINT(hashtab_capacity(&t), ==, cap);
    for (uint64_t k = 0; k < KEYS; k++)
        EXPECT_NULL(hashtab_find(&t, &pair_type, k * 0x10000 * (uint64_t)(_i + 1)));
    expect_ok(&t, &pair_type);
    hashtab_fini(&t, &pair_type);
    EXPECT_UINT(counted.live_bytes, ==, 0);
}
END_TEST

START_TEST(walker_finds_broken_tables)
{
    static const hashtab_type_t plain = {
        .slot_size = sizeof(pair_t),
        .key_off = offsetof(pair_t, key),
        .mark_off = offsetof(pair_t, value),
    };
    hashtab_t t = HASHTAB_INITIALIZER;
    EXPECT_INT(hashtab_init(&t, &plain, 0), ==, 0);
    const char *why = NULL;
    /* An entry two slots past its home, with an empty slot between. */
    pair_t *slots = t.slots;
    uint64_t key = 12345;
    size_t home = hashtab_home(&t, key);
    slots[(home + 2) & t.mask] = (pair_t){.value = 1, .key = key};
    t.count = 1;
    EXPECT_INT(hashtab_check(&t, &plain, &why), ==, -1);
    EXPECT(strstr(why, "probe run") != NULL, "%s", why);
    slots[(home + 2) & t.mask].value = 0;
    slots[home] = (pair_t){.value = 1, .key = key};
    EXPECT_INT(hashtab_check(&t, &plain, &why), ==, 0);
    t.count = 2;
    EXPECT_INT(hashtab_check(&t, &plain, &why), ==, -1);
    EXPECT(strstr(why, "count") != NULL, "%s", why);
    t.count = 1;
    t.shift++;
    EXPECT_INT(hashtab_check(&t, &plain, &why), ==, -1);
    t.shift--;
    hashtab_fini(&t, &plain);
}
END_TEST

Suite *hashtab_suite(void)
{
    Suite *s = suite_create("hashtab");
    TCase *tc = tcase_create("hashtab");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, zeroed_table_grows_from_nothing);
    tcase_add_test(tc, growth_uses_the_callers_memory_only);
    tcase_add_test(tc, failed_growth_changes_nothing);
    tcase_add_test(tc, host_tables_start_on_a_cache_line);
    tcase_add_test(tc, equal_hashes_are_told_apart_by_match);
    tcase_add_loop_test(tc, random_operations_keep_the_invariants, 0, 3);
    tcase_add_test(tc, walker_finds_broken_tables);
    suite_add_tcase(s, tc);
    return s;
}
