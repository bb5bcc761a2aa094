/*
 * Unit tests for lib/addrmap: open addressing, linear probing, Fibonacci
 * hashing, backward-shift deletion.
 *
 * The reference model is a plain array indexed by a key's position in a
 * fixed pool of distinct keys.  Keys that collide in the hash are built
 * from the hash itself: home(k) = (k * C) >> shift, and C is odd, so
 * k = C^-1 * ((h << shift) | j) lands in slot h for every small j.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/addrmap.h"
#include "lib/rng.h"
#include "tests/unit/suites.h"
#include "tests/unit/expect.h"


#define FIB 0x9E3779B97F4A7C15ull

/* Distinct, non-NULL value pointers. */
enum { NVALS = 1 << 17 };
static char vals[NVALS];
#define VAL(i) ((void *)&vals[(size_t)(i) % NVALS])

/* Multiplicative inverse of FIB modulo 2^64 (Newton's iteration). */
static uint64_t fib_inverse(void)
{
    uint64_t x = FIB; /* correct to 3 bits; each step doubles that */
    for (int i = 0; i < 5; i++)
        x *= 2 - FIB * x;
    return x;
}

static size_t home_of(const addrmap_t *m, uint64_t key)
{
    return (size_t)((key * FIB) >> m->shift);
}

/* The key whose product with FIB is exactly `hash`: its home slot is
 * hash >> shift at every table size. */
static uint64_t key_with_hash(uint64_t hash)
{
    return fib_inverse() * hash;
}

static void check_load(const addrmap_t *m)
{
    size_t cap = m->mask + 1;
    EXPECT((cap & m->mask) == 0, "capacity %zu not a power of two", cap);
    EXPECT(m->count * 2 <= cap, "load above 1/2: %zu in %zu",
                  m->count, cap);
}

/* ---- basic behaviour ---------------------------------------------------- */

START_TEST(test_fib_inverse)
{
    EXPECT_UINT(fib_inverse() * FIB, ==, 1);
}
END_TEST

START_TEST(test_init_empty)
{
    addrmap_t m;
    EXPECT_INT(addrmap_init(&m, 0), ==, 0);
    EXPECT_NONNULL(m.slots);
    EXPECT_UINT(m.count, ==, 0);
    check_load(&m);
    EXPECT_INT(m.shift, ==, 64 - __builtin_ctzll((unsigned long long)(m.mask + 1)));
    EXPECT_NULL(addrmap_get(&m, 0));
    EXPECT_NULL(addrmap_get(&m, 1));
    EXPECT_NULL(addrmap_get(&m, UINT64_MAX));
    EXPECT_NULL(addrmap_remove(&m, 0));
    EXPECT_NULL(addrmap_remove(&m, 12345));
    EXPECT_UINT(m.count, ==, 0);
    addrmap_fini(&m);
    EXPECT_NULL(m.slots);
    EXPECT_UINT(m.count, ==, 0);
}
END_TEST

/* A capacity hint of h must hold h entries without growing, at load <= 1/2. */
START_TEST(test_capacity_hint)
{
    static const size_t hints[] = {1, 31, 32, 33, 100, 1000, 4096, 5000};
    for (size_t h = 0; h < sizeof hints / sizeof hints[0]; h++) {
        addrmap_t m;
        EXPECT_INT(addrmap_init(&m, hints[h]), ==, 0);
        size_t cap = m.mask + 1;
        check_load(&m);
        EXPECT_UINT(cap, >=, 2 * hints[h]);
        for (size_t i = 0; i < hints[h]; i++)
            EXPECT_INT(addrmap_put(&m, i * 4096 + 17, VAL(i)), ==, 0);
        EXPECT_UINT(m.mask + 1, ==, cap);
        EXPECT_UINT(m.count, ==, hints[h]);
        for (size_t i = 0; i < hints[h]; i++)
            EXPECT_PTR_EQ(addrmap_get(&m, i * 4096 + 17), VAL(i));
        addrmap_fini(&m);
    }
}
END_TEST

START_TEST(test_put_get_replace_remove)
{
    addrmap_t m;
    EXPECT_INT(addrmap_init(&m, 0), ==, 0);

    /* Key 0 is an ordinary key. */
    EXPECT_INT(addrmap_put(&m, 0, VAL(1)), ==, 0);
    EXPECT_UINT(m.count, ==, 1);
    EXPECT_PTR_EQ(addrmap_get(&m, 0), VAL(1));
    EXPECT_NULL(addrmap_get(&m, 1));

    EXPECT_INT(addrmap_put(&m, UINT64_MAX, VAL(2)), ==, 0);
    EXPECT_INT(addrmap_put(&m, 1, VAL(3)), ==, 0);
    EXPECT_INT(addrmap_put(&m, (uint64_t)1 << 63, VAL(4)), ==, 0);
    EXPECT_UINT(m.count, ==, 4);
    EXPECT_PTR_EQ(addrmap_get(&m, 0), VAL(1));
    EXPECT_PTR_EQ(addrmap_get(&m, UINT64_MAX), VAL(2));
    EXPECT_PTR_EQ(addrmap_get(&m, 1), VAL(3));
    EXPECT_PTR_EQ(addrmap_get(&m, (uint64_t)1 << 63), VAL(4));

    /* Replacing keeps the count. */
    EXPECT_INT(addrmap_put(&m, 0, VAL(10)), ==, 0);
    EXPECT_INT(addrmap_put(&m, UINT64_MAX, VAL(20)), ==, 0);
    EXPECT_UINT(m.count, ==, 4);
    EXPECT_PTR_EQ(addrmap_get(&m, 0), VAL(10));
    EXPECT_PTR_EQ(addrmap_get(&m, UINT64_MAX), VAL(20));

    /* Exchange says what it replaced, NULL for a new key. */
    void *old = VAL(99);
    EXPECT_INT(addrmap_exchange(&m, 0, VAL(11), &old), ==, 0);
    EXPECT_PTR_EQ(old, VAL(10));
    EXPECT_INT(addrmap_exchange(&m, 7, VAL(7), &old), ==, 0);
    EXPECT_NULL(old);
    EXPECT_UINT(m.count, ==, 5);
    EXPECT_PTR_EQ(addrmap_remove(&m, 7), VAL(7));
    EXPECT_INT(addrmap_exchange(&m, 0, NULL, &old), ==, -1);
    EXPECT_NULL(old);
    EXPECT_INT(addrmap_exchange(&m, 0, VAL(10), &old), ==, 0);
    EXPECT_PTR_EQ(old, VAL(11));

    /* Remove returns the current value, then the key is absent. */
    EXPECT_PTR_EQ(addrmap_remove(&m, 0), VAL(10));
    EXPECT_UINT(m.count, ==, 3);
    EXPECT_NULL(addrmap_get(&m, 0));
    EXPECT_NULL(addrmap_remove(&m, 0));
    EXPECT_UINT(m.count, ==, 3);
    EXPECT_NULL(addrmap_remove(&m, 2)); /* never present */
    EXPECT_UINT(m.count, ==, 3);
    EXPECT_PTR_EQ(addrmap_get(&m, 1), VAL(3));

    /* Re-insert after removal. */
    EXPECT_INT(addrmap_put(&m, 0, VAL(5)), ==, 0);
    EXPECT_PTR_EQ(addrmap_get(&m, 0), VAL(5));
    EXPECT_UINT(m.count, ==, 4);
    addrmap_fini(&m);
}
END_TEST

START_TEST(test_clear)
{
    addrmap_t m;
    EXPECT_INT(addrmap_init(&m, 4), ==, 0);
    for (uint64_t i = 0; i < 1000; i++)
        EXPECT_INT(addrmap_put(&m, i * 4096, VAL(i + 1)), ==, 0);
    EXPECT_UINT(m.count, ==, 1000);
    size_t mask = m.mask;
    addrmap_clear(&m);
    EXPECT_UINT(m.count, ==, 0);
    EXPECT_UINT(m.mask, ==, mask);
    for (uint64_t i = 0; i < 1000; i++) {
        EXPECT_NULL(addrmap_get(&m, i * 4096));
        EXPECT_NULL(addrmap_remove(&m, i * 4096));
    }
    EXPECT_UINT(m.count, ==, 0);
    /* Usable again, without growing for the same contents. */
    for (uint64_t i = 0; i < 1000; i += 2)
        EXPECT_INT(addrmap_put(&m, i * 4096, VAL(i + 7)), ==, 0);
    EXPECT_UINT(m.count, ==, 500);
    EXPECT_UINT(m.mask, ==, mask);
    for (uint64_t i = 0; i < 1000; i++)
        EXPECT_PTR_EQ(addrmap_get(&m, i * 4096), i % 2 ? NULL : VAL(i + 7));
    addrmap_clear(&m);
    addrmap_clear(&m); /* clearing an empty map is harmless */
    EXPECT_UINT(m.count, ==, 0);
    EXPECT_NULL(addrmap_get(&m, 0));
    addrmap_fini(&m);
}
END_TEST

/* ---- key patterns -------------------------------------------------------- */

enum { PAT_SEQ, PAT_PAGES, PAT_HIGH16, PAT_HIGH8, PAT_TOP, PAT_COUNT };

static uint64_t pattern_key(int pat, uint64_t i)
{
    switch (pat) {
    case PAT_SEQ: /* 0, 1, 2, ... (includes key 0) */
        return i;
    case PAT_PAGES: /* multiples of 4096 */
        return i * 4096;
    case PAT_HIGH16: /* keys differing only in bits 48..63 */
        return (i << 48) | 0x123;
    case PAT_HIGH8: /* only the top byte differs; i < 256 */
        return (i << 56) | 0xabcdef;
    default: /* descending from UINT64_MAX */
        return UINT64_MAX - i;
    }
}

/* A key of the same shape that the pattern never produces. */
static uint64_t absent_key(int pat, uint64_t i, uint64_t n)
{
    switch (pat) {
    case PAT_SEQ:
        return n + i;
    case PAT_PAGES:
        return i * 4096 + 1;
    case PAT_HIGH16:
        return (i << 48) | 0x124;
    case PAT_HIGH8:
        return (i << 56) | 0xabcdee;
    default:
        return UINT64_MAX - n - i;
    }
}

START_TEST(test_key_patterns)
{
    int pat = _i;
    uint64_t n = pat == PAT_HIGH8 ? 256 : 60000;
    addrmap_t m;
    EXPECT_INT(addrmap_init(&m, 1), ==, 0);
    for (uint64_t i = 0; i < n; i++) {
        EXPECT_INT(addrmap_put(&m, pattern_key(pat, i), VAL(i)), ==, 0);
        EXPECT_UINT(m.count, ==, i + 1);
    }
    check_load(&m);
    for (uint64_t i = 0; i < n; i++)
        EXPECT_PTR_EQ(addrmap_get(&m, pattern_key(pat, i)), VAL(i));
    /* Neighbouring absent keys. */
    for (uint64_t i = 0; i < 1000; i++)
        EXPECT_NULL(addrmap_get(&m, absent_key(pat, i, n)));
    /* Remove the even ones, check everything, put them back changed. */
    for (uint64_t i = 0; i < n; i += 2)
        EXPECT_PTR_EQ(addrmap_remove(&m, pattern_key(pat, i)), VAL(i));
    EXPECT_UINT(m.count, ==, n / 2);
    for (uint64_t i = 0; i < 1000; i++)
        EXPECT_NULL(addrmap_remove(&m, absent_key(pat, i, n)));
    EXPECT_UINT(m.count, ==, n / 2);
    for (uint64_t i = 0; i < n; i++)
        EXPECT_PTR_EQ(addrmap_get(&m, pattern_key(pat, i)),
                         i % 2 ? VAL(i) : NULL);
    for (uint64_t i = 0; i < n; i += 2)
        EXPECT_INT(addrmap_put(&m, pattern_key(pat, i), VAL(i + 3)), ==, 0);
    EXPECT_UINT(m.count, ==, n);
    for (uint64_t i = 0; i < n; i++)
        EXPECT_PTR_EQ(addrmap_get(&m, pattern_key(pat, i)),
                         i % 2 ? VAL(i) : VAL(i + 3));
    /* Remove all in descending order. */
    for (uint64_t i = n; i-- > 0;)
        EXPECT_PTR_EQ(addrmap_remove(&m, pattern_key(pat, i)),
                         i % 2 ? VAL(i) : VAL(i + 3));
    EXPECT_UINT(m.count, ==, 0);
    for (uint64_t i = 0; i < n; i += 97)
        EXPECT_NULL(addrmap_get(&m, pattern_key(pat, i)));
    addrmap_fini(&m);
}
END_TEST

/* ---- hash collisions ----------------------------------------------------- */

/* Three full-collision clusters in the current table: home slot mask (the
 * last slot, so its run wraps to slot 0), home 0 (whose run the wrapped
 * one pushes into), and home mask - 1.  Random put/remove mix among them
 * with a full check after every operation; exercises the cyclic distance
 * test of backward-shift deletion. */
START_TEST(test_wrapping_clusters)
{
    addrmap_t m;
    EXPECT_INT(addrmap_init(&m, 0), ==, 0);
    size_t cap = m.mask + 1;
    size_t per = cap / 8; /* 3 clusters: load 3/8, no growth */
    size_t nkeys = 3 * per;
    uint64_t *keys = malloc(nkeys * sizeof *keys);
    void **ref = calloc(nkeys, sizeof *ref);
    EXPECT_NONNULL(keys);
    EXPECT_NONNULL(ref);
    const uint64_t homes[3] = {m.mask, 0, m.mask - 1};
    for (size_t c = 0; c < 3; c++)
        for (size_t j = 0; j < per; j++) {
            uint64_t low = (uint64_t)j + 1; /* j + 1: avoid key 0 for home 0 */
            keys[c * per + j] = key_with_hash(((uint64_t)homes[c] << m.shift) | low);
            EXPECT_UINT(home_of(&m, keys[c * per + j]), ==, homes[c]);
        }
    rng_t g;
    rng_seed(&g, 0xc011de00u + (uint64_t)_i);
    size_t live = 0;
    for (int op = 0; op < 20000; op++) {
        size_t k = (size_t)rng_below(&g, nkeys);
        if (rng_below(&g, 2)) {
            void *v = VAL(rng_below(&g, NVALS));
            EXPECT_INT(addrmap_put(&m, keys[k], v), ==, 0);
            if (!ref[k])
                live++;
            ref[k] = v;
        } else {
            EXPECT_PTR_EQ(addrmap_remove(&m, keys[k]), ref[k]);
            if (ref[k])
                live--;
            ref[k] = NULL;
        }
        EXPECT_UINT(m.count, ==, live);
        for (size_t i = 0; i < nkeys; i++)
            EXPECT_PTR_EQ(addrmap_get(&m, keys[i]), ref[i]);
    }
    EXPECT_UINT(m.mask + 1, ==, cap); /* stayed in the small table */
    free(ref);
    free(keys);
    addrmap_fini(&m);
}
END_TEST

/* A deterministic wrap-around case at the smallest table: fill the run
 * from the last slot across slot 0, then delete its first member. */
START_TEST(test_wrap_delete_first)
{
    addrmap_t m;
    EXPECT_INT(addrmap_init(&m, 0), ==, 0);
    uint64_t a[4], b[2];
    for (int j = 0; j < 4; j++) /* home = last slot */
        a[j] = key_with_hash(((uint64_t)m.mask << m.shift) | (uint64_t)(j + 1));
    for (int j = 0; j < 2; j++) /* home = slot 0 */
        b[j] = key_with_hash((uint64_t)(j + 1));
    for (int j = 0; j < 4; j++)
        EXPECT_INT(addrmap_put(&m, a[j], VAL(10 + j)), ==, 0);
    for (int j = 0; j < 2; j++)
        EXPECT_INT(addrmap_put(&m, b[j], VAL(20 + j)), ==, 0);
    /* Layout: [mask]=a0, [0]=a1, [1]=a2, [2]=a3, [3]=b0, [4]=b1. */
    EXPECT_UINT(m.slots[m.mask].key, ==, a[0]);
    EXPECT_UINT(m.slots[0].key, ==, a[1]);
    EXPECT_UINT(m.slots[3].key, ==, b[0]);
    EXPECT_PTR_EQ(addrmap_remove(&m, a[0]), VAL(10));
    /* a1..a3 shift back one (a1 wraps back to the last slot); b0 and b1
     * shift back too (their home 0 is now free). */
    EXPECT_UINT(m.slots[m.mask].key, ==, a[1]);
    EXPECT_UINT(m.slots[0].key, ==, a[2]);
    EXPECT_UINT(m.slots[1].key, ==, a[3]);
    EXPECT_UINT(m.slots[2].key, ==, b[0]);
    EXPECT_UINT(m.slots[3].key, ==, b[1]);
    EXPECT_NULL(m.slots[4].value);
    for (int j = 1; j < 4; j++)
        EXPECT_PTR_EQ(addrmap_get(&m, a[j]), VAL(10 + j));
    for (int j = 0; j < 2; j++)
        EXPECT_PTR_EQ(addrmap_get(&m, b[j]), VAL(20 + j));
    EXPECT_NULL(addrmap_get(&m, a[0]));
    /* An absent key with the same home walks the run and misses. */
    EXPECT_NULL(addrmap_remove(&m, key_with_hash(((uint64_t)m.mask << m.shift) | 99)));
    EXPECT_UINT(m.count, ==, 5);
    /* Delete from the middle of the wrapped run (slot 0): a3 wraps no
     * further, b0 and b1 close up behind it. */
    EXPECT_PTR_EQ(addrmap_remove(&m, a[2]), VAL(12));
    EXPECT_UINT(m.slots[0].key, ==, a[3]);
    EXPECT_UINT(m.slots[1].key, ==, b[0]);
    EXPECT_UINT(m.slots[2].key, ==, b[1]);
    EXPECT_NULL(m.slots[3].value);
    EXPECT_PTR_EQ(addrmap_remove(&m, a[1]), VAL(11));
    /* a3 moves back across the wrap into the last slot; b0 and b1 then
     * reach their home run start (slot 0). */
    EXPECT_UINT(m.slots[m.mask].key, ==, a[3]);
    EXPECT_UINT(m.slots[0].key, ==, b[0]);
    EXPECT_UINT(m.slots[1].key, ==, b[1]);
    EXPECT_NULL(m.slots[2].value);
    EXPECT_UINT(m.count, ==, 3);
    /* Now remove a3 from the last slot: b0 sits in its home slot 0 and must
     * NOT move back across the wrap into slot mask (nor b1, home 0). */
    EXPECT_PTR_EQ(addrmap_remove(&m, a[3]), VAL(13));
    EXPECT_NULL(m.slots[m.mask].value);
    EXPECT_UINT(m.slots[0].key, ==, b[0]);
    EXPECT_UINT(m.slots[1].key, ==, b[1]);
    EXPECT_PTR_EQ(addrmap_get(&m, b[0]), VAL(20));
    EXPECT_PTR_EQ(addrmap_get(&m, b[1]), VAL(21));
    /* Same within the table: c at home 5 next to d at home 4; removing d
     * leaves c in place. */
    uint64_t c = key_with_hash((uint64_t)5 << m.shift | 1);
    uint64_t d = key_with_hash((uint64_t)4 << m.shift | 1);
    EXPECT_INT(addrmap_put(&m, d, VAL(30)), ==, 0);
    EXPECT_INT(addrmap_put(&m, c, VAL(31)), ==, 0);
    EXPECT_UINT(m.slots[4].key, ==, d);
    EXPECT_UINT(m.slots[5].key, ==, c);
    EXPECT_PTR_EQ(addrmap_remove(&m, d), VAL(30));
    EXPECT_NULL(m.slots[4].value);
    EXPECT_UINT(m.slots[5].key, ==, c);
    EXPECT_PTR_EQ(addrmap_get(&m, c), VAL(31));
    EXPECT_UINT(m.count, ==, 3);
    addrmap_fini(&m);
}
END_TEST

/* Keys that collide at every table size up to 2^40 slots: (h << 58) | j
 * with small j keeps the top bits of the hash fixed.  The map grows
 * through several doublings with one huge probe run. */
START_TEST(test_full_collision_growth)
{
    enum { N = 1500 };
    const uint64_t h = _i == 0 ? 63 : 17;
    uint64_t keys[N];
    addrmap_t m;
    EXPECT_INT(addrmap_init(&m, 1), ==, 0);
    size_t cap0 = m.mask + 1;
    for (int j = 0; j < N; j++) {
        keys[j] = key_with_hash((h << 58) | (uint64_t)(j + 1));
        EXPECT_INT(addrmap_put(&m, keys[j], VAL(j)), ==, 0);
        EXPECT_UINT(m.count, ==, (size_t)j + 1);
    }
    check_load(&m);
    EXPECT_UINT(m.mask + 1, >, cap0);
    for (int j = 1; j < N; j++) /* premise: all in one home slot */
        EXPECT_UINT(home_of(&m, keys[j]), ==, home_of(&m, keys[0]));
    for (int j = 0; j < N; j++)
        EXPECT_PTR_EQ(addrmap_get(&m, keys[j]), VAL(j));
    for (int j = 0; j < N; j += 3)
        EXPECT_PTR_EQ(addrmap_remove(&m, keys[j]), VAL(j));
    EXPECT_UINT(m.count, ==, N - (N + 2) / 3);
    for (int j = 0; j < N; j++)
        EXPECT_PTR_EQ(addrmap_get(&m, keys[j]), j % 3 ? VAL(j) : NULL);
    for (int j = N - 1; j >= 0; j--)
        EXPECT_PTR_EQ(addrmap_remove(&m, keys[j]), j % 3 ? VAL(j) : NULL);
    EXPECT_UINT(m.count, ==, 0);
    addrmap_fini(&m);
}
END_TEST

/* ---- absurd inputs --------------------------------------------------------- */

/* A hint no table can hold returns -1 at once.  (It once looped forever:
 * cap doubled to 2^63, wrapped to 0, and stayed below hint * 2.  Should
 * that return, the test case's timeout ends it.)  Hints whose doubling
 * wraps to a small number are refused too, not given a tiny table. */
START_TEST(test_init_huge_hint_fails)
{
    addrmap_t m;
    EXPECT_INT(addrmap_init(&m, SIZE_MAX / 2), ==, -1);
    EXPECT_INT(addrmap_init(&m, SIZE_MAX / 2 + 5), ==, -1);
    EXPECT_INT(addrmap_init(&m, SIZE_MAX), ==, -1);
    /* NULL marks empty slots, so it is refused as a value. */
    EXPECT_INT(addrmap_init(&m, 4), ==, 0);
    EXPECT_INT(addrmap_put(&m, 7, VAL(1)), ==, 0);
    EXPECT_INT(addrmap_put(&m, 7, NULL), ==, -1);
    EXPECT_INT(addrmap_put(&m, 8, NULL), ==, -1);
    EXPECT_PTR_EQ(addrmap_get(&m, 7), VAL(1));
    EXPECT_UINT(m.count, ==, 1);
    addrmap_fini(&m);
}
END_TEST

/* ---- randomized against the reference ----------------------------------- */

enum { POOL = 4096 };

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* A pool of distinct keys: sequential (with 0), page multiples, high-bit
 * only, top-byte only, three full-collision clusters, UINT64_MAX and
 * random keys. */
static void build_pool(uint64_t *pool, rng_t *g)
{
    size_t n = 0;
    for (uint64_t i = 0; i < 512; i++)
        pool[n++] = i;
    for (uint64_t i = 1; i <= 512; i++)
        pool[n++] = i * 4096;
    for (uint64_t i = 1; i < 512; i++)
        pool[n++] = i << 52;
    for (uint64_t i = 1; i < 256; i++)
        pool[n++] = (i << 56) | 0x1234;
    static const uint64_t tops[3] = {63, 0, 31};
    for (size_t c = 0; c < 3; c++)
        for (uint64_t j = 1; j <= 256; j++)
            pool[n++] = key_with_hash((tops[c] << 58) | j);
    pool[n++] = UINT64_MAX;
    while (n < POOL)
        pool[n++] = rng_next(g);
    /* Distinctness is a premise of the reference model. */
    uint64_t *sorted = malloc(POOL * sizeof *sorted);
    EXPECT_NONNULL(sorted);
    memcpy(sorted, pool, POOL * sizeof *sorted);
    qsort(sorted, POOL, sizeof *sorted, cmp_u64);
    for (size_t i = 1; i < POOL; i++)
        EXPECT(sorted[i] != sorted[i - 1], "pool key %llx repeated",
                      (unsigned long long)sorted[i]);
    free(sorted);
}

START_TEST(test_random_vs_reference)
{
    enum { OPS = 200000 };
    rng_t g;
    rng_seed(&g, 0xadd7e55u + (uint64_t)_i);
    uint64_t *pool = malloc(POOL * sizeof *pool);
    void **ref = calloc(POOL, sizeof *ref);
    EXPECT_NONNULL(pool);
    EXPECT_NONNULL(ref);
    build_pool(pool, &g);

    addrmap_t m;
    EXPECT_INT(addrmap_init(&m, 1), ==, 0); /* tiny: grows many times */
    size_t cap0 = m.mask + 1, live = 0, peak = 0;
    for (int op = 0; op < OPS; op++) {
        size_t k = (size_t)rng_below(&g, POOL);
        /* Put-heavy, then balanced, then remove-heavy. */
        int phase = op * 3 / OPS;
        uint64_t put_pct = phase == 0 ? 70 : phase == 1 ? 45 : 20;
        uint64_t roll = rng_below(&g, 100);
        if (roll < put_pct) {
            void *v = VAL(rng_below(&g, NVALS));
            EXPECT_INT(addrmap_put(&m, pool[k], v), ==, 0);
            if (!ref[k])
                live++;
            ref[k] = v;
        } else if (roll < 90) {
            EXPECT_PTR_EQ(addrmap_remove(&m, pool[k]), ref[k]);
            if (ref[k])
                live--;
            ref[k] = NULL;
        } else {
            EXPECT_PTR_EQ(addrmap_get(&m, pool[k]), ref[k]);
        }
        EXPECT_UINT(m.count, ==, live);
        if (live > peak)
            peak = live;
        if (op % 1024 == 0) {
            check_load(&m);
            for (size_t i = 0; i < POOL; i++)
                EXPECT_PTR_EQ(addrmap_get(&m, pool[i]), ref[i]);
        }
    }
    EXPECT_UINT(m.mask + 1, >, cap0);
    EXPECT_UINT(m.mask + 1, >=, 2 * peak);
    for (size_t i = 0; i < POOL; i++)
        EXPECT_PTR_EQ(addrmap_get(&m, pool[i]), ref[i]);
    /* Drain. */
    for (size_t i = 0; i < POOL; i++) {
        EXPECT_PTR_EQ(addrmap_remove(&m, pool[i]), ref[i]);
        if (ref[i])
            live--;
        EXPECT_UINT(m.count, ==, live);
    }
    EXPECT_UINT(m.count, ==, 0);
    for (size_t i = 0; i <= m.mask; i++)
        EXPECT_NULL(m.slots[i].value);
    addrmap_fini(&m);
    free(ref);
    free(pool);
}
END_TEST

Suite *addrmap_suite(void)
{
    Suite *s = suite_create("addrmap");

    TCase *tc = tcase_create("basic");
    tcase_add_test(tc, test_fib_inverse);
    tcase_add_test(tc, test_init_empty);
    tcase_add_test(tc, test_capacity_hint);
    tcase_add_test(tc, test_put_get_replace_remove);
    tcase_add_test(tc, test_clear);
    tcase_add_test(tc, test_wrap_delete_first);
    suite_add_tcase(s, tc);

    tc = tcase_create("patterns");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_key_patterns, 0, PAT_COUNT);
    tcase_add_loop_test(tc, test_wrapping_clusters, 0, 3);
    tcase_add_loop_test(tc, test_full_collision_growth, 0, 2);
    suite_add_tcase(s, tc);

    tc = tcase_create("random");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_random_vs_reference, 0, 2);
    suite_add_tcase(s, tc);

    tc = tcase_create("absurd");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_init_huge_hint_fails);
    suite_add_tcase(s, tc);

    return s;
}
