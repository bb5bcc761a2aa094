/*
 * Unit tests for lib/radixmap: addresses to 32-bit values in leaves
 * laid out like the address space.
 *
 * The reference model is a plain array indexed by a key's position in
 * a fixed pool of distinct keys: clustered heap-like addresses, keys in
 * far-apart regions (mmap'd blocks), keys that are not multiples of 8,
 * and the edges of a leaf.  The invariants (radixmap_check) hold after
 * every operation.
 */
#include <stdint.h>
#include <stdlib.h>

#include "lib/radixmap.h"
#include "lib/rng.h"
#include "tests/unit/expect.h"
#include "tests/unit/failmalloc.h"
#include "tests/unit/suites.h"

static void check(const radixmap_t *m)
{
    const char *why = "";
    EXPECT(radixmap_check(m, &why) == 0, "radixmap_check: %s", why);
}

START_TEST(test_basic)
{
    radixmap_t m;
    EXPECT_INT(radixmap_init(&m), ==, 0);
    uint32_t old = 7;
    EXPECT_UINT(radixmap_get(&m, 0x1000), ==, 0);
    EXPECT_UINT(radixmap_remove(&m, 0x1000), ==, 0);
    EXPECT_INT(radixmap_exchange(&m, 0x1000, 0, &old), ==, -1); /* 0 is no value */
    EXPECT_UINT(old, ==, 0);
    EXPECT_INT(radixmap_exchange(&m, 0x1000, 5, &old), ==, 0);
    EXPECT_UINT(old, ==, 0);
    EXPECT_INT(radixmap_exchange(&m, 0x1008, 6, &old), ==, 0);
    EXPECT_INT(radixmap_exchange(&m, 0x1000, 9, &old), ==, 0); /* replaced */
    EXPECT_UINT(old, ==, 5);
    EXPECT_UINT(m.count, ==, 2);
    EXPECT_UINT(m.leaves, ==, 1);
    EXPECT_UINT(radixmap_get(&m, 0x1000), ==, 9);
    EXPECT_UINT(radixmap_get(&m, 0x1008), ==, 6);
    EXPECT_UINT(radixmap_get(&m, 0x1010), ==, 0);
    /* Key 0, the top of the address space, and odd keys. */
    EXPECT_INT(radixmap_exchange(&m, 0, 1, &old), ==, 0);
    EXPECT_INT(radixmap_exchange(&m, UINT64_MAX - 7, 2, &old), ==, 0);
    EXPECT_INT(radixmap_exchange(&m, 0x1004, 3, &old), ==, 0);
    EXPECT_INT(radixmap_exchange(&m, UINT64_MAX, 4, &old), ==, 0);
    EXPECT_UINT(m.count, ==, 6);
    EXPECT_UINT(m.leaves, ==, 2); /* 0x1000's leaf holds key 0; one at the top */
    check(&m);
    EXPECT_UINT(radixmap_get(&m, 0), ==, 1);
    EXPECT_UINT(radixmap_get(&m, UINT64_MAX - 7), ==, 2);
    EXPECT_UINT(radixmap_get(&m, 0x1004), ==, 3);
    EXPECT_UINT(radixmap_get(&m, UINT64_MAX), ==, 4);
    EXPECT_UINT(radixmap_remove(&m, 0x1004), ==, 3);
    EXPECT_UINT(radixmap_remove(&m, 0x1004), ==, 0);
    EXPECT_UINT(radixmap_remove(&m, UINT64_MAX - 7), ==, 2);
    EXPECT_UINT(m.leaves, ==, 1); /* emptied: given back */
    EXPECT_UINT(m.nspares, ==, 1);
    check(&m);
    radixmap_fini(&m);
}
END_TEST

/* Keys from several patterns; each run draws operations on a pool of
 * them and compares with the array model after every one. */
enum { NKEYS = 6000 };

static uint64_t pool_key(unsigned pattern, size_t i, rng_t *r)
{
    switch (pattern) {
    case 0: /* a heap: 16-byte blocks side by side */
        return 0x555555560000ull + 16 * i;
    case 1: /* blocks of mixed sizes in a heap, some in a second arena */
        return (i % 3 ? 0x7f0000000000ull : 0x560000000000ull) + 48 * i + 8 * (i % 2);
    case 2: /* scattered: each key in a leaf of its own, mostly */
        return (rng_next(r) & 0x7ffffffffff8ull) | 0x1000;
    default: /* every kind at once, odd keys and leaf edges included */
        switch (i % 5) {
        case 0: return 0x600000000000ull + i * 8;
        case 1: return (rng_next(r) & 0xfffffffffffull) | 1; /* odd */
        case 2: return ((uint64_t)i << RADIXMAP_LEAF_SHIFT) - 8; /* a leaf's last slot */
        case 3: return (uint64_t)i << RADIXMAP_LEAF_SHIFT; /* a leaf's first */
        default: return rng_next(r) & ~7ull;
        }
    }
}

START_TEST(test_random_vs_reference)
{
    unsigned pattern = (unsigned)_i;
    rng_t r;
    rng_seed(&r, 0x5eed + pattern);
    uint64_t *keys = malloc(NKEYS * sizeof *keys);
    uint32_t *ref = calloc(NKEYS, sizeof *ref);
    ck_assert_ptr_nonnull(keys);
    ck_assert_ptr_nonnull(ref);
    size_t nkeys = 0;
    for (size_t i = 0; nkeys < NKEYS; i++) { /* distinct keys */
        uint64_t k = pool_key(pattern, i + 1, &r);
        bool dup = false;
        for (size_t j = 0; j < nkeys && !dup; j++)
            dup = keys[j] == k;
        if (!dup)
            keys[nkeys++] = k;
    }
    radixmap_t m;
    EXPECT_INT(radixmap_init(&m), ==, 0);
    size_t live = 0, peak_leaves = 0;
    for (int op = 0; op < 60000; op++) {
        size_t i = rng_below(&r, NKEYS);
        /* Phases of growth and of shrinking, so that leaves empty. */
        bool grow = (op / 15000) % 2 == 0;
        if (rng_below(&r, 4) < (grow ? 3u : 1u)) {
            uint32_t v = (uint32_t)rng_below(&r, UINT32_MAX) + 1, old;
            EXPECT_INT(radixmap_exchange(&m, keys[i], v, &old), ==, 0);
            EXPECT_UINT(old, ==, ref[i]);
            live += !ref[i];
            ref[i] = v;
        } else {
            EXPECT_UINT(radixmap_remove(&m, keys[i]), ==, ref[i]);
            live -= ref[i] != 0;
            ref[i] = 0;
        }
        EXPECT_UINT(m.count, ==, live);
        if (m.leaves > peak_leaves)
            peak_leaves = m.leaves;
        if (op % 97 == 0) {
            if (op % 1999 == 0)
                check(&m); /* walks every leaf: not at every step */
            for (size_t j = 0; j < NKEYS; j++)
                EXPECT_UINT(radixmap_get(&m, keys[j]), ==, ref[j]);
        }
    }
    check(&m);
    /* Empty it: every leaf goes back, at most RADIXMAP_SPARES kept. */
    for (size_t j = 0; j < NKEYS; j++)
        EXPECT_UINT(radixmap_remove(&m, keys[j]), ==, ref[j]);
    EXPECT_UINT(m.count, ==, 0);
    EXPECT_UINT(m.leaves, ==, 0);
    EXPECT_UINT(m.nspares, <=, RADIXMAP_SPARES);
    check(&m);
    if (pattern == 2)
        EXPECT(peak_leaves > RADIXMAP_SPARES, "scattered keys took %zu leaves", peak_leaves);
    radixmap_fini(&m);
    free(keys);
    free(ref);
}
END_TEST

/* A block allocated and freed again and again alone in its region (a
 * large block, mmap'd by its allocator): its leaf comes from the spares,
 * and no memory is taken each time. */
START_TEST(test_lone_key_reuses_its_leaf)
{
    radixmap_t m;
    EXPECT_INT(radixmap_init(&m), ==, 0);
    uint32_t old;
    for (int i = 0; i < 1000; i++) {
        uint64_t k = 0x7f1234560000ull + (uint64_t)(i % 3) * RADIXMAP_LEAF_BYTES;
        if (i >= 1) /* from the second round on: no allocation */
            failmalloc_arm(1);
        int rc = radixmap_exchange(&m, k, 1, &old);
        bool failed = i >= 1 && failmalloc_disarm();
        EXPECT_INT(rc, ==, 0);
        EXPECT(!failed, "round %d allocated", i);
        EXPECT_UINT(radixmap_remove(&m, k), ==, 1);
    }
    EXPECT_UINT(m.nspares, ==, 1); /* the one leaf, passed from region to region */
    check(&m);
    radixmap_fini(&m);
}
END_TEST

/* Out of memory: an insert that needs a leaf fails and changes nothing. */
START_TEST(test_out_of_memory)
{
    radixmap_t m;
    EXPECT_INT(radixmap_init(&m), ==, 0);
    uint32_t old;
    EXPECT_INT(radixmap_exchange(&m, 0x10000, 1, &old), ==, 0);
    for (long n = 1; n <= 3; n++) {
        failmalloc_arm(n);
        int rc = radixmap_exchange(&m, 0x100000000ull * (uint64_t)n, 2, &old);
        bool failed = failmalloc_disarm();
        if (failed) {
            EXPECT_INT(rc, ==, -1);
            EXPECT_UINT(radixmap_get(&m, 0x100000000ull * (uint64_t)n), ==, 0);
        } else {
            EXPECT_INT(rc, ==, 0);
        }
        check(&m);
    }
    EXPECT_UINT(radixmap_get(&m, 0x10000), ==, 1);
    radixmap_fini(&m);
}
END_TEST

Suite *radixmap_suite(void)
{
    Suite *s = suite_create("radixmap");
    TCase *tc = tcase_create("basic");
    tcase_add_test(tc, test_basic);
    tcase_add_test(tc, test_lone_key_reuses_its_leaf);
    tcase_add_test(tc, test_out_of_memory);
    suite_add_tcase(s, tc);
    tc = tcase_create("random");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_random_vs_reference, 0, 4);
    suite_add_tcase(s, tc);
    return s;
}
