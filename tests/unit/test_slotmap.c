/*
 * Unit tests for lib/slotmap: addresses to 32-bit values, 12 bytes an
 * entry, linear probing with backward-shift deletion.
 *
 * The reference model is a plain array indexed by a key's position in
 * a fixed pool of distinct keys: heap-like addresses side by side,
 * addresses in far-apart regions, page-aligned ones (the same low bits:
 * a poor hash would cluster them), keys that are not multiples of 8,
 * 0 and the top of the address space.  The invariants (slotmap_check)
 * hold after every operation, through growth and shrinking.
 */
#include <stdint.h>
#include <stdlib.h>

#include "lib/rng.h"
#include "lib/slotmap.h"
#include "tests/unit/expect.h"
#include "tests/unit/failmalloc.h"
#include "tests/unit/suites.h"

static void check(const slotmap_t *m)
{
    const char *why = "";
    EXPECT(slotmap_check(m, &why) == 0, "slotmap_check: %s", why);
}

START_TEST(test_basic)
{
    slotmap_t m;
    EXPECT_INT(slotmap_init(&m), ==, 0);
    uint32_t old = 7;
    EXPECT_UINT(slotmap_get(&m, 0x1000), ==, 0);
    EXPECT_UINT(slotmap_remove(&m, 0x1000), ==, 0);
    EXPECT_INT(slotmap_exchange(&m, 0x1000, 0, &old), ==, -1); /* 0 is no value */
    EXPECT_UINT(old, ==, 0);
    EXPECT_INT(slotmap_exchange(&m, 0x1000, 5, &old), ==, 0);
    EXPECT_UINT(old, ==, 0);
    EXPECT_INT(slotmap_exchange(&m, 0x1008, 6, &old), ==, 0);
    EXPECT_INT(slotmap_exchange(&m, 0x1000, 9, &old), ==, 0); /* replaced */
    EXPECT_UINT(old, ==, 5);
    EXPECT_UINT(m.count, ==, 2);
    EXPECT_UINT(slotmap_get(&m, 0x1000), ==, 9);
    EXPECT_UINT(slotmap_get(&m, 0x1008), ==, 6);
    EXPECT_UINT(slotmap_get(&m, 0x1010), ==, 0);
    /* Key 0, the top of the address space, odd keys. */
    EXPECT_INT(slotmap_exchange(&m, 0, 1, &old), ==, 0);
    EXPECT_INT(slotmap_exchange(&m, UINT64_MAX - 7, 2, &old), ==, 0);
    EXPECT_INT(slotmap_exchange(&m, 0x1004, 3, &old), ==, 0);
    EXPECT_INT(slotmap_exchange(&m, UINT64_MAX, UINT32_MAX, &old), ==, 0);
    EXPECT_UINT(m.count, ==, 6);
    check(&m);
    EXPECT_UINT(slotmap_get(&m, 0), ==, 1);
    EXPECT_UINT(slotmap_get(&m, UINT64_MAX - 7), ==, 2);
    EXPECT_UINT(slotmap_get(&m, 0x1004), ==, 3);
    EXPECT_UINT(slotmap_get(&m, UINT64_MAX), ==, UINT32_MAX);
    EXPECT_UINT(slotmap_remove(&m, 0x1004), ==, 3);
    EXPECT_UINT(slotmap_remove(&m, 0x1004), ==, 0);
    EXPECT_UINT(slotmap_remove(&m, UINT64_MAX - 7), ==, 2);
    EXPECT_UINT(m.count, ==, 4);
    check(&m);
    slotmap_fini(&m);
}
END_TEST

/* Keys that all share a home (found by search): the probe runs through
 * a cluster, and removing from its middle shifts the rest back, across
 * the end of the table too. */
START_TEST(test_cluster_wraps)
{
    slotmap_t m;
    EXPECT_INT(slotmap_init(&m), ==, 0);
    enum { N = 12 };
    uint64_t keys[N];
    size_t n = 0;
    for (uint64_t k = 1; n < N; k++)
        if (slotmap_home(&m, k * 16) == m.mask - 2) /* the table's third-last entry */
            keys[n++] = k * 16;
    uint32_t old;
    for (size_t i = 0; i < N; i++) {
        EXPECT_INT(slotmap_exchange(&m, keys[i], (uint32_t)i + 1, &old), ==, 0);
        check(&m);
    }
    EXPECT_UINT(m.mask + 1, ==, SLOTMAP_MIN); /* no growth: all probing */
    for (size_t i = 0; i < N; i += 2) {
        EXPECT_UINT(slotmap_remove(&m, keys[i]), ==, i + 1);
        check(&m);
        for (size_t j = 0; j < N; j++)
            EXPECT_UINT(slotmap_get(&m, keys[j]), ==, j <= i && j % 2 == 0 ? 0 : j + 1);
    }
    slotmap_fini(&m);
}
END_TEST

enum { NKEYS = 6000 };

static uint64_t pool_key(unsigned pattern, size_t i, rng_t *r)
{
    switch (pattern) {
    case 0: /* a heap: 16-byte blocks side by side */
        return 0x555555560000ull + 16 * i;
    case 1: /* blocks of mixed sizes in a heap, some in a second arena */
        return (i % 3 ? 0x7f0000000000ull : 0x560000000000ull) + 48 * i + 8 * (i % 2);
    case 2: /* large blocks, each mapped on its own: page-aligned + 16 */
        return 0x7f0000000000ull + ((uint64_t)i << 12) + 16;
    default: /* every kind at once, odd keys included */
        switch (i % 5) {
        case 0: return 0x600000000000ull + i * 8;
        case 1: return (rng_next(r) & 0xfffffffffffull) | 1; /* odd */
        case 2: return (uint64_t)i << 32;
        case 3: return UINT64_MAX - i;
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
    slotmap_t m;
    EXPECT_INT(slotmap_init(&m), ==, 0);
    size_t live = 0, peak_cap = 0;
    for (int op = 0; op < 60000; op++) {
        size_t i = rng_below(&r, NKEYS);
        /* Phases of growth and of shrinking, down to nearly empty. */
        int phase = (op / 15000) % 2;
        bool add = phase == 0 ? rng_below(&r, 4) < 3 : rng_below(&r, 8) == 0;
        if (add) {
            uint32_t v = (uint32_t)rng_below(&r, UINT32_MAX) + 1, old;
            EXPECT_INT(slotmap_exchange(&m, keys[i], v, &old), ==, 0);
            EXPECT_UINT(old, ==, ref[i]);
            live += !ref[i];
            ref[i] = v;
        } else {
            EXPECT_UINT(slotmap_remove(&m, keys[i]), ==, ref[i]);
            live -= ref[i] != 0;
            ref[i] = 0;
        }
        EXPECT_UINT(m.count, ==, live);
        /* The capacity follows the keys: at most 3/4 full, and not
         * more than 32 entries per key after a removal. */
        EXPECT_UINT(m.count * 4, <=, (m.mask + 1) * 3);
        if (!add && m.mask + 1 > SLOTMAP_MIN)
            EXPECT_UINT(m.mask + 1, <=, 32 * m.count);
        if (m.mask + 1 > peak_cap)
            peak_cap = m.mask + 1;
        if (op % 97 == 0) {
            if (op % 1999 == 0)
                check(&m); /* walks every probe: not at every step */
            for (size_t j = 0; j < NKEYS; j++)
                EXPECT_UINT(slotmap_get(&m, keys[j]), ==, ref[j]);
        }
    }
    check(&m);
    for (size_t j = 0; j < NKEYS; j++) {
        EXPECT_UINT(slotmap_remove(&m, keys[j]), ==, ref[j]);
        if (j % 500 == 0)
            check(&m);
    }
    EXPECT_UINT(m.count, ==, 0);
    EXPECT_UINT(m.mask + 1, ==, SLOTMAP_MIN); /* shrunk back */
    EXPECT_UINT(peak_cap, >=, 4096);
    check(&m);
    slotmap_fini(&m);
    free(keys);
    free(ref);
}
END_TEST

/* Out of memory: an insert that needs the table to grow fails and
 * changes nothing; a removal that cannot shrink it still removes. */
START_TEST(test_out_of_memory)
{
    slotmap_t m;
    EXPECT_INT(slotmap_init(&m), ==, 0);
    uint32_t old;
    uint64_t k = 0;
    while ((m.count + 1) * 4 <= (m.mask + 1) * 3) { /* full up to the load bound */
        EXPECT_INT(slotmap_exchange(&m, 0x10000 + 16 * k, (uint32_t)k + 1, &old), ==, 0);
        k++;
    }
    size_t cap = m.mask + 1;
    failmalloc_arm(1);
    int rc = slotmap_exchange(&m, 0x10000 + 16 * k, 1000, &old);
    bool failed = failmalloc_disarm();
    EXPECT(failed, "growing allocated nothing");
    EXPECT_INT(rc, ==, -1);
    EXPECT_UINT(m.mask + 1, ==, cap);
    EXPECT_UINT(slotmap_get(&m, 0x10000 + 16 * k), ==, 0);
    check(&m);
    EXPECT_INT(slotmap_exchange(&m, 0x10000 + 16 * k, 1000, &old), ==, 0); /* now it grows */
    EXPECT_UINT(m.mask + 1, ==, 2 * cap);
    /* Down to where it would halve, with no memory for the new table. */
    for (uint64_t j = 0; m.count * 16 >= m.mask + 1 + 16; j++)
        EXPECT_UINT(slotmap_remove(&m, 0x10000 + 16 * j), ==, j + 1);
    failmalloc_arm(1);
    uint64_t last = m.count; /* the keys left: k - count + 1 .. k */
    uint32_t v = slotmap_remove(&m, 0x10000 + 16 * (k - last + 1));
    failed = failmalloc_disarm();
    EXPECT(failed, "shrinking allocated nothing");
    EXPECT_UINT(v, ==, k - last + 2);
    EXPECT_UINT(m.count, ==, last - 1);
    EXPECT_UINT(m.mask + 1, ==, 2 * cap); /* stays as large */
    check(&m);
    slotmap_fini(&m);
}
END_TEST

/* Room reserved is room: that many inserts allocate nothing, and a
 * removal that halves the table leaves room for 32 more. */
START_TEST(test_reserve)
{
    slotmap_t m;
    EXPECT_INT(slotmap_init(&m), ==, 0);
    uint32_t old;
    EXPECT_INT(slotmap_reserve(&m, 1000), ==, 0);
    EXPECT_UINT(m.mask + 1, ==, 2048);
    failmalloc_arm(1);
    for (uint64_t k = 0; k < 1000; k++)
        slotmap_exchange(&m, 0x20000 + 16 * k, (uint32_t)k + 1, &old);
    bool failed = failmalloc_disarm();
    EXPECT(!failed, "an insert into reserved room allocated");
    EXPECT_UINT(m.count, ==, 1000);
    check(&m);
    failmalloc_arm(1);
    EXPECT_INT(slotmap_reserve(&m, 1000), ==, -1); /* no memory: nothing changed */
    failed = failmalloc_disarm();
    EXPECT(failed, "reserving more allocated nothing");
    EXPECT_UINT(m.mask + 1, ==, 2048);
    EXPECT_INT(slotmap_reserve(&m, 500), ==, 0); /* there is room */
    for (uint64_t k = 0; k < 1000; k++) {
        size_t cap = m.mask + 1;
        EXPECT_UINT(slotmap_remove(&m, 0x20000 + 16 * k), ==, k + 1);
        if (m.mask + 1 < cap)
            EXPECT_UINT((m.count + 32) * 4, <=, (m.mask + 1) * 3);
    }
    check(&m);
    slotmap_fini(&m);
}
END_TEST

Suite *slotmap_suite(void)
{
    Suite *s = suite_create("slotmap");
    TCase *tc = tcase_create("basic");
    tcase_add_test(tc, test_basic);
    tcase_add_test(tc, test_cluster_wraps);
    tcase_add_test(tc, test_out_of_memory);
    tcase_add_test(tc, test_reserve);
    suite_add_tcase(s, tc);
    tc = tcase_create("random");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_random_vs_reference, 0, 4);
    suite_add_tcase(s, tc);
    return s;
}
