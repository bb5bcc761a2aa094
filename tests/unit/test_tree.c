/*
 * Unit tests for sim/tree: the intrusive AVL tree with a three-part key
 * and the subtree max_weight augmentation.
 *
 * Most tests keep a reference model next to the tree: an array of node
 * pointers in key order, equal keys in insertion order (tree.h: "Equal
 * keys go after existing ones").  Queries are answered by a linear scan
 * over that array and compared by node identity, so duplicate keys are
 * checked exactly, not just by key.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/rng.h"
#include "sim/tree.h"
#include "tests/unit/suites.h"
#include "tests/unit/expect.h"


/* ---- helpers ------------------------------------------------------------ */

static int kcmp(int64_t a0, uint64_t a1, uint64_t a2, int64_t b0, uint64_t b1,
                uint64_t b2)
{
    if (a0 != b0)
        return a0 < b0 ? -1 : 1;
    if (a1 != b1)
        return a1 < b1 ? -1 : 1;
    if (a2 != b2)
        return a2 < b2 ? -1 : 1;
    return 0;
}

static int ncmp(const tree_node_t *a, const tree_node_t *b)
{
    return kcmp(a->k0, a->k1, a->k2, b->k0, b->k1, b->k2);
}

static void set_node(tree_node_t *n, int64_t k0, uint64_t k1, uint64_t k2,
                     uint64_t weight)
{
    memset(n, 0, sizeof *n);
    n->k0 = k0;
    n->k1 = k1;
    n->k2 = k2;
    n->weight = weight;
}

#define CHECK_TREE(t)                                                          \
    do {                                                                       \
        const char *why_ = "(none)";                                           \
        int rc_ = tree_check((t), &why_);                                      \
        EXPECT(rc_ == 0, "tree_check failed: %s", why_);               \
    } while (0)

/* Reference model: node pointers in in-order order. */
typedef struct {
    tree_node_t **v;
    size_t n, cap;
} ref_t;

static void ref_init(ref_t *r, size_t cap)
{
    r->v = malloc(cap * sizeof *r->v);
    EXPECT_NONNULL(r->v);
    r->n = 0;
    r->cap = cap;
}

static void ref_fini(ref_t *r)
{
    free(r->v);
    r->v = NULL;
    r->n = r->cap = 0;
}

/* Index of the first element whose key is > x (upper bound). */
static size_t ref_upper(const ref_t *r, const tree_node_t *x)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ncmp(r->v[mid], x) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void ref_insert(ref_t *r, tree_node_t *x)
{
    EXPECT_UINT(r->n, <, r->cap);
    size_t i = ref_upper(r, x);
    memmove(&r->v[i + 1], &r->v[i], (r->n - i) * sizeof *r->v);
    r->v[i] = x;
    r->n++;
}

static void ref_remove(ref_t *r, const tree_node_t *x)
{
    size_t i = 0;
    while (i < r->n && r->v[i] != x)
        i++;
    EXPECT(i < r->n, "node not in reference");
    memmove(&r->v[i], &r->v[i + 1], (r->n - i - 1) * sizeof *r->v);
    r->n--;
}

/* Brute force: first node with key >= q. */
static tree_node_t *ref_lower_bound(const ref_t *r, int64_t k0, uint64_t k1,
                                    uint64_t k2)
{
    for (size_t i = 0; i < r->n; i++)
        if (kcmp(r->v[i]->k0, r->v[i]->k1, r->v[i]->k2, k0, k1, k2) >= 0)
            return r->v[i];
    return NULL;
}

/* Brute force: first node with key >= q and weight >= w. */
static tree_node_t *ref_find_fit(const ref_t *r, int64_t k0, uint64_t k1,
                                 uint64_t k2, uint64_t w)
{
    for (size_t i = 0; i < r->n; i++)
        if (kcmp(r->v[i]->k0, r->v[i]->k1, r->v[i]->k2, k0, k1, k2) >= 0 &&
            r->v[i]->weight >= w)
            return r->v[i];
    return NULL;
}

static uint64_t ref_max_weight(const ref_t *r)
{
    uint64_t m = 0;
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i]->weight > m)
            m = r->v[i]->weight;
    return m;
}

/* The tree's in-order walk (both directions) must be exactly the reference. */
static void compare_with_ref(const tree_t *t, const ref_t *r)
{
    EXPECT_UINT(t->count, ==, r->n);
    size_t i = 0;
    for (tree_node_t *n = tree_first(t); n; n = tree_next(n)) {
        EXPECT_UINT(i, <, r->n);
        EXPECT(n == r->v[i], "in-order walk differs at index %zu", i);
        i++;
    }
    EXPECT_UINT(i, ==, r->n);
    for (tree_node_t *n = tree_last(t); n; n = tree_prev(n)) {
        EXPECT_UINT(i, >, 0);
        i--;
        EXPECT(n == r->v[i], "reverse walk differs at index %zu", i);
    }
    EXPECT_UINT(i, ==, 0);
    EXPECT_UINT(tree_max_weight(t), ==, ref_max_weight(r));
}

/* A random key from a small key space, so that duplicates are common, with
 * the extreme values of each component in the mix. */
static void random_key(rng_t *g, tree_node_t *n, uint64_t spread)
{
    static const int64_t k0s[] = {INT64_MIN, -3, -1, 0, 1, 2, INT64_MAX};
    n->k0 = k0s[rng_below(g, sizeof k0s / sizeof k0s[0])];
    uint64_t k1 = rng_below(g, spread);
    if (rng_below(g, 4) == 0)
        k1 = UINT64_MAX - k1;
    n->k1 = k1;
    n->k2 = rng_below(g, 3);
}

static uint64_t random_weight(rng_t *g)
{
    switch (rng_below(g, 16)) {
    case 0:
        return 0;
    case 1:
        return UINT64_MAX - rng_below(g, 3);
    default:
        return 1 + rng_below(g, 1000);
    }
}

/* A query key: the node key distribution, plus before-all and after-all. */
static void random_query(rng_t *g, int64_t *k0, uint64_t *k1, uint64_t *k2,
                         uint64_t spread)
{
    tree_node_t q;
    switch (rng_below(g, 10)) {
    case 0: /* at or before every node */
        *k0 = INT64_MIN;
        *k1 = 0;
        *k2 = 0;
        return;
    case 1: /* after every node (nodes have k2 <= 2) */
        *k0 = INT64_MAX;
        *k1 = UINT64_MAX;
        *k2 = UINT64_MAX;
        return;
    default:
        random_key(g, &q, spread + 1);
        *k0 = q.k0;
        *k1 = q.k1;
        *k2 = q.k2 + (rng_below(g, 8) == 0 ? 1 : 0); /* sometimes k2 == 3 */
        return;
    }
}

static uint64_t random_min_weight(rng_t *g, uint64_t maxw)
{
    switch (rng_below(g, 8)) {
    case 0:
        return 0;
    case 1:
        return maxw;
    case 2:
        return maxw == UINT64_MAX ? UINT64_MAX : maxw + 1;
    case 3:
        return UINT64_MAX;
    default:
        return rng_below(g, 1100);
    }
}

static void check_queries(rng_t *g, const tree_t *t, const ref_t *r,
                          int nqueries, uint64_t spread)
{
    uint64_t maxw = ref_max_weight(r);
    for (int q = 0; q < nqueries; q++) {
        int64_t k0;
        uint64_t k1, k2;
        random_query(g, &k0, &k1, &k2, spread);
        EXPECT_PTR_EQ(tree_lower_bound(t, k0, k1, k2),
                         ref_lower_bound(r, k0, k1, k2));
        uint64_t w = random_min_weight(g, maxw);
        tree_node_t *got = tree_find_fit(t, k0, k1, k2, w);
        tree_node_t *want = ref_find_fit(r, k0, k1, k2, w);
        EXPECT(got == want,
                      "find_fit(%lld,%llu,%llu, w=%llu): got %p want %p",
                      (long long)k0, (unsigned long long)k1,
                      (unsigned long long)k2, (unsigned long long)w,
                      (void *)got, (void *)want);
        EXPECT_PTR_EQ(tree_first_fit(t, w), ref_find_fit(r, INT64_MIN, 0, 0, w));
        if (r->n) { /* the finger search: from a node, in in-order order */
            size_t at = rng_below(g, r->n), i = at;
            while (i < r->n && r->v[i]->weight < w)
                i++;
            EXPECT_PTR_EQ(tree_find_fit_from(r->v[at], w), i < r->n ? r->v[i] : NULL);
        }
    }
}

/* ---- fixed-shape tests -------------------------------------------------- */

START_TEST(test_empty)
{
    tree_t t;
    tree_init(&t);
    EXPECT_NULL(t.root);
    EXPECT_UINT(t.count, ==, 0);
    EXPECT_NULL(tree_first(&t));
    EXPECT_NULL(tree_last(&t));
    EXPECT_NULL(tree_lower_bound(&t, INT64_MIN, 0, 0));
    EXPECT_NULL(tree_find_fit(&t, INT64_MIN, 0, 0, 0));
    EXPECT_UINT(tree_max_weight(&t), ==, 0);
    CHECK_TREE(&t);
    EXPECT_INT(tree_check(&t, NULL), ==, 0);
}
END_TEST

START_TEST(test_single_node)
{
    tree_t t;
    tree_node_t n;
    tree_init(&t);
    set_node(&n, 5, 6, 7, 42);
    tree_insert(&t, &n);
    CHECK_TREE(&t);
    EXPECT_PTR_EQ(t.root, &n);
    EXPECT_UINT(t.count, ==, 1);
    EXPECT_INT(n.height, ==, 1);
    EXPECT_UINT(n.max_weight, ==, 42);
    EXPECT_NULL(n.parent);
    EXPECT_PTR_EQ(tree_first(&t), &n);
    EXPECT_PTR_EQ(tree_last(&t), &n);
    EXPECT_NULL(tree_next(&n));
    EXPECT_NULL(tree_prev(&n));
    EXPECT_UINT(tree_max_weight(&t), ==, 42);

    EXPECT_PTR_EQ(tree_lower_bound(&t, 5, 6, 7), &n);
    EXPECT_PTR_EQ(tree_lower_bound(&t, 5, 6, 6), &n);
    EXPECT_PTR_EQ(tree_lower_bound(&t, -5, UINT64_MAX, UINT64_MAX), &n);
    EXPECT_NULL(tree_lower_bound(&t, 5, 6, 8));
    EXPECT_NULL(tree_lower_bound(&t, 5, 7, 0));
    EXPECT_NULL(tree_lower_bound(&t, 6, 0, 0));

    EXPECT_PTR_EQ(tree_find_fit(&t, 5, 6, 7, 42), &n);
    EXPECT_PTR_EQ(tree_find_fit(&t, 0, 0, 0, 0), &n);
    EXPECT_NULL(tree_find_fit(&t, 5, 6, 7, 43));
    EXPECT_NULL(tree_find_fit(&t, 5, 6, 8, 1));

    tree_remove(&t, &n);
    CHECK_TREE(&t);
    EXPECT_NULL(t.root);
    EXPECT_UINT(t.count, ==, 0);
    EXPECT_UINT(tree_max_weight(&t), ==, 0);
    EXPECT_NULL(tree_first(&t));
}
END_TEST

/* Inserting 1..7 in ascending order must give the perfect tree
 *          4
 *      2       6
 *    1   3   5   7
 * (rotations on inserting 3, 5, 6 and 7).  Then remove a leaf (1), the
 * root with two children whose successor (5) is deeper than its right
 * child, a node with one child (6), and a leaf (7) whose removal needs a
 * double rotation, checking the exact shape each time. */
START_TEST(test_shapes_and_remove_cases)
{
    tree_t t;
    tree_node_t n[8];
    tree_init(&t);
    for (int i = 1; i <= 7; i++) {
        set_node(&n[i], 0, (uint64_t)i, 0, (uint64_t)(10 * i));
        tree_insert(&t, &n[i]);
        CHECK_TREE(&t);
        EXPECT_UINT(t.count, ==, (size_t)i);
    }
    EXPECT_PTR_EQ(t.root, &n[4]);
    EXPECT_INT(n[4].height, ==, 3);
    EXPECT_PTR_EQ(n[4].left, &n[2]);
    EXPECT_PTR_EQ(n[4].right, &n[6]);
    EXPECT_PTR_EQ(n[2].left, &n[1]);
    EXPECT_PTR_EQ(n[2].right, &n[3]);
    EXPECT_PTR_EQ(n[6].left, &n[5]);
    EXPECT_PTR_EQ(n[6].right, &n[7]);
    EXPECT_UINT(n[4].max_weight, ==, 70);
    EXPECT_UINT(n[2].max_weight, ==, 30);
    EXPECT_UINT(n[6].max_weight, ==, 70);
    EXPECT_UINT(n[1].max_weight, ==, 10);

    /* Remove a leaf. */
    tree_remove(&t, &n[1]);
    CHECK_TREE(&t);
    EXPECT_UINT(t.count, ==, 6);
    EXPECT_NULL(n[2].left);
    EXPECT_PTR_EQ(n[2].right, &n[3]);
    EXPECT_INT(n[2].height, ==, 2);
    EXPECT_PTR_EQ(tree_first(&t), &n[2]);

    /* Remove the root (two children; successor 5 is deeper than the right
     * child 6): 5 takes the root's place. */
    tree_remove(&t, &n[4]);
    CHECK_TREE(&t);
    EXPECT_UINT(t.count, ==, 5);
    EXPECT_PTR_EQ(t.root, &n[5]);
    EXPECT_NULL(n[5].parent);
    EXPECT_PTR_EQ(n[5].left, &n[2]);
    EXPECT_PTR_EQ(n[5].right, &n[6]);
    EXPECT_NULL(n[6].left);
    EXPECT_PTR_EQ(n[6].right, &n[7]);
    EXPECT_UINT(n[5].max_weight, ==, 70);

    /* Remove 6, a node with one child (7 takes its place). */
    tree_remove(&t, &n[6]);
    CHECK_TREE(&t);
    EXPECT_PTR_EQ(n[5].right, &n[7]);
    EXPECT_PTR_EQ(n[7].parent, &n[5]);
    EXPECT_UINT(tree_max_weight(&t), ==, 70);

    /* Remove the max-weight node 7: max_weight must drop to 50. */
    tree_remove(&t, &n[7]);
    CHECK_TREE(&t);
    EXPECT_UINT(tree_max_weight(&t), ==, 50);
    EXPECT_UINT(t.count, ==, 3);

    /* Removing 7 left 5 with a left subtree 2 -> 3 of height 2: a
     * left-right double rotation makes 3 the root.  In order: 2, 3, 5. */
    tree_node_t *w = tree_first(&t);
    EXPECT_PTR_EQ(w, &n[2]);
    w = tree_next(w);
    EXPECT_PTR_EQ(w, &n[3]);
    w = tree_next(w);
    EXPECT_PTR_EQ(w, &n[5]);
    EXPECT_NULL(tree_next(w));
    EXPECT_PTR_EQ(t.root, &n[3]); /* double rotation after removing 7 */
    EXPECT_INT(n[3].height, ==, 2);
}
END_TEST

/* Two children, successor is the direct right child. */
START_TEST(test_remove_two_children_successor_is_child)
{
    tree_t t;
    tree_node_t n[8];
    tree_init(&t);
    for (int i = 1; i <= 7; i++) {
        set_node(&n[i], 0, (uint64_t)i, 0, (uint64_t)i);
        tree_insert(&t, &n[i]);
    }
    tree_remove(&t, &n[2]); /* children 1 and 3; successor 3 */
    CHECK_TREE(&t);
    EXPECT_PTR_EQ(n[4].left, &n[3]);
    EXPECT_PTR_EQ(n[3].left, &n[1]);
    EXPECT_NULL(n[3].right);
    EXPECT_PTR_EQ(n[1].parent, &n[3]);
    EXPECT_INT(n[3].height, ==, 2);
    EXPECT_UINT(n[3].max_weight, ==, 3);

    tree_remove(&t, &n[6]); /* children 5 and 7; successor 7 */
    CHECK_TREE(&t);
    EXPECT_PTR_EQ(n[4].right, &n[7]);
    EXPECT_PTR_EQ(n[7].left, &n[5]);
    EXPECT_UINT(n[4].max_weight, ==, 7);

    tree_remove(&t, &n[4]); /* root; successor 5 (a leaf under 7) */
    CHECK_TREE(&t);
    EXPECT_PTR_EQ(t.root, &n[5]);
    EXPECT_UINT(t.count, ==, 4);
    static const int order[] = {1, 3, 5, 7};
    size_t i = 0;
    for (tree_node_t *w = tree_first(&t); w; w = tree_next(w))
        EXPECT_PTR_EQ(w, &n[order[i++]]);
    EXPECT_UINT(i, ==, 4);
}
END_TEST

/* (k0 signed, k1 unsigned, k2 unsigned), lexicographic. */
START_TEST(test_key_order)
{
    static const struct {
        int64_t k0;
        uint64_t k1, k2;
    } sorted[] = {
        {INT64_MIN, 0, 0},
        {INT64_MIN, UINT64_MAX, UINT64_MAX},
        {-1, 0, 5},
        {-1, 1, 0},
        {-1, UINT64_MAX, 0},
        {0, 0, 0},
        {0, 0, 1},
        {0, 0, UINT64_MAX},
        {0, 1, 0},
        {0, (uint64_t)1 << 63, 0},
        {0, UINT64_MAX, 0},
        {1, 0, 0},
        {INT64_MAX, 0, 0},
        {INT64_MAX, UINT64_MAX, UINT64_MAX - 1},
        {INT64_MAX, UINT64_MAX, UINT64_MAX},
    };
    enum { N = sizeof sorted / sizeof sorted[0] };
    tree_node_t n[N];
    /* Insert in a scrambled order (7 is coprime to 15). */
    tree_t t;
    tree_init(&t);
    for (size_t j = 0; j < N; j++) {
        size_t i = (j * 7) % N;
        set_node(&n[i], sorted[i].k0, sorted[i].k1, sorted[i].k2, i);
        tree_insert(&t, &n[i]);
        CHECK_TREE(&t);
    }
    size_t i = 0;
    for (tree_node_t *w = tree_first(&t); w; w = tree_next(w), i++)
        EXPECT_PTR_EQ(w, &n[i]);
    EXPECT_UINT(i, ==, N);
    EXPECT_PTR_EQ(tree_first(&t), &n[0]);
    EXPECT_PTR_EQ(tree_last(&t), &n[N - 1]);
    /* lower_bound on each key, and just past it. */
    for (i = 0; i < N; i++) {
        EXPECT_PTR_EQ(tree_lower_bound(&t, sorted[i].k0, sorted[i].k1,
                                          sorted[i].k2),
                         &n[i]);
        if (sorted[i].k2 != UINT64_MAX) {
            tree_node_t *want = i + 1 < N ? &n[i + 1] : NULL;
            EXPECT_PTR_EQ(tree_lower_bound(&t, sorted[i].k0, sorted[i].k1,
                                              sorted[i].k2 + 1),
                             want);
        }
    }
    /* Weight i at index i: the first fit for min_weight w from the start
     * is index w. */
    for (uint64_t w = 0; w < N; w++)
        EXPECT_PTR_EQ(tree_find_fit(&t, INT64_MIN, 0, 0, w), &n[w]);
    EXPECT_NULL(tree_find_fit(&t, INT64_MIN, 0, 0, N));
    /* From key index 9, weight 3 is satisfied by index 9 itself. */
    EXPECT_PTR_EQ(tree_find_fit(&t, 0, (uint64_t)1 << 63, 0, 3), &n[9]);
    /* The largest possible key is itself in the tree (the last node). */
    EXPECT_PTR_EQ(tree_find_fit(&t, INT64_MAX, UINT64_MAX, UINT64_MAX, 0),
                     &n[N - 1]);
    EXPECT_PTR_EQ(tree_find_fit(&t, INT64_MAX, UINT64_MAX, UINT64_MAX, N - 1),
                     &n[N - 1]);
    EXPECT_NULL(tree_find_fit(&t, INT64_MAX, UINT64_MAX, UINT64_MAX, N));
    /* From key index 12 with min_weight 5: index 12 (weight 12) itself. */
    EXPECT_PTR_EQ(tree_find_fit(&t, INT64_MAX, 0, 0, 5), &n[12]);
    /* From index 2's key, the first weight >= 13 is index 13. */
    EXPECT_PTR_EQ(tree_find_fit(&t, -1, 0, 5, 13), &n[13]);
    /* (-1,0,6) sorts after index 2 (-1,0,5), before index 3 (-1,1,0). */
    EXPECT_PTR_EQ(tree_find_fit(&t, -1, 0, 6, 0), &n[3]);
}
END_TEST

/* Equal keys keep insertion order, lower_bound returns the first of a run
 * and find_fit the first of the run with enough weight. */
START_TEST(test_duplicates)
{
    enum { N = 200 };
    tree_node_t n[N];
    tree_t t;
    ref_t r;
    tree_init(&t);
    ref_init(&r, N);
    /* Keys: 3 distinct values, many copies each, inserted interleaved. */
    for (int i = 0; i < N; i++) {
        set_node(&n[i], 7, (uint64_t)(i % 3), 9, (uint64_t)(i % 17));
        tree_insert(&t, &n[i]);
        ref_insert(&r, &n[i]);
        CHECK_TREE(&t);
    }
    compare_with_ref(&t, &r);
    /* The first node with key (7,1,9) is n[1], the first inserted. */
    EXPECT_PTR_EQ(tree_lower_bound(&t, 7, 1, 9), &n[1]);
    EXPECT_PTR_EQ(tree_lower_bound(&t, 7, 1, 0), &n[1]);
    EXPECT_PTR_EQ(tree_lower_bound(&t, 7, 0, 10), &n[1]);
    EXPECT_PTR_EQ(tree_lower_bound(&t, 7, 0, 0), &n[0]);
    EXPECT_NULL(tree_lower_bound(&t, 7, 2, 10));
    /* Among key (7,1,9): i = 1, 4, 7, ...; weights i % 17.  The first with
     * weight >= 16 is i = 16 (16 % 3 == 1). */
    EXPECT_PTR_EQ(tree_find_fit(&t, 7, 1, 9, 16), &n[16]);
    /* Among key (7,2,9): i = 2, 5, ..., first with weight 16 is i = 50. */
    EXPECT_PTR_EQ(tree_find_fit(&t, 7, 2, 0, 16), &n[50]);
    EXPECT_NULL(tree_find_fit(&t, 7, 1, 9, 17));
    EXPECT_UINT(tree_max_weight(&t), ==, 16);

    /* Remove copies from the middle of runs, then the first of a run. */
    for (int i = 30; i < 120; i += 2) {
        tree_remove(&t, &n[i]);
        ref_remove(&r, &n[i]);
        CHECK_TREE(&t);
    }
    compare_with_ref(&t, &r);
    tree_remove(&t, &n[1]);
    ref_remove(&r, &n[1]);
    CHECK_TREE(&t);
    EXPECT_PTR_EQ(tree_lower_bound(&t, 7, 1, 9), &n[4]);
    compare_with_ref(&t, &r);

    /* A late duplicate goes after every existing equal key. */
    tree_node_t extra;
    set_node(&extra, 7, 1, 9, 1000);
    tree_insert(&t, &extra);
    ref_insert(&r, &extra);
    CHECK_TREE(&t);
    compare_with_ref(&t, &r);
    EXPECT_PTR_EQ(tree_find_fit(&t, 7, 1, 9, 1000), &extra);
    EXPECT_PTR_EQ(tree_next(&extra), &n[2]); /* first of (7,2,9) */
    ref_fini(&r);
}
END_TEST

/* ---- randomized against the reference ----------------------------------- */

static void random_ops(uint64_t seed, size_t pool, int ops, uint64_t spread)
{
    rng_t g;
    rng_seed(&g, seed);
    tree_node_t *nodes = calloc(pool, sizeof *nodes);
    char *in = calloc(pool, 1);
    EXPECT_NONNULL(nodes);
    EXPECT_NONNULL(in);
    tree_t t;
    ref_t r;
    tree_init(&t);
    ref_init(&r, pool);
    for (int op = 0; op < ops; op++) {
        size_t i = (size_t)rng_below(&g, pool);
        /* Bias towards growth in the first third, shrinkage in the last. */
        int phase = op * 3 / ops;
        int want_insert = phase == 0 ? rng_below(&g, 4) != 0
                        : phase == 1 ? rng_below(&g, 2) != 0
                                     : rng_below(&g, 4) == 0;
        if (want_insert && !in[i]) {
            random_key(&g, &nodes[i], spread);
            nodes[i].weight = random_weight(&g);
            tree_insert(&t, &nodes[i]);
            ref_insert(&r, &nodes[i]);
            in[i] = 1;
        } else if (!want_insert && in[i]) {
            tree_remove(&t, &nodes[i]);
            ref_remove(&r, &nodes[i]);
            in[i] = 0;
        } else {
            continue;
        }
        CHECK_TREE(&t);
        EXPECT_UINT(t.count, ==, r.n);
        EXPECT_PTR_EQ(tree_first(&t), r.n ? r.v[0] : NULL);
        EXPECT_PTR_EQ(tree_last(&t), r.n ? r.v[r.n - 1] : NULL);
        if (op % 64 == 0) {
            compare_with_ref(&t, &r);
            check_queries(&g, &t, &r, 16, spread);
        }
    }
    compare_with_ref(&t, &r);
    /* Drain completely. */
    for (size_t i = 0; i < pool; i++) {
        if (!in[i])
            continue;
        tree_remove(&t, &nodes[i]);
        ref_remove(&r, &nodes[i]);
        CHECK_TREE(&t);
    }
    compare_with_ref(&t, &r);
    EXPECT_NULL(t.root);
    EXPECT_UINT(t.count, ==, 0);
    ref_fini(&r);
    free(in);
    free(nodes);
}

START_TEST(test_random_small_keyspace)
{
    /* ~250 distinct keys for up to ~1500 nodes: duplicates everywhere. */
    random_ops(0x5eed0001u + (uint64_t)_i, 2000, 8000, 6);
}
END_TEST

START_TEST(test_random_wide_keyspace)
{
    random_ops(0xabcdef12u + (uint64_t)_i, 2000, 8000, 1u << 20);
}
END_TEST

/* tree_find_fit and tree_lower_bound against a brute-force scan. */
START_TEST(test_find_fit_vs_bruteforce)
{
    enum { N = 1500 };
    rng_t g;
    rng_seed(&g, 0xf17f17u + (uint64_t)_i);
    tree_node_t *nodes = calloc(N, sizeof *nodes);
    EXPECT_NONNULL(nodes);
    tree_t t;
    ref_t r;
    tree_init(&t);
    ref_init(&r, N);
    uint64_t spread = _i == 0 ? 8 : 4096;
    for (int i = 0; i < N; i++) {
        random_key(&g, &nodes[i], spread);
        nodes[i].weight = random_weight(&g);
        tree_insert(&t, &nodes[i]);
        ref_insert(&r, &nodes[i]);
    }
    CHECK_TREE(&t);
    compare_with_ref(&t, &r);
    check_queries(&g, &t, &r, 4000, spread);

    /* Fixed edge queries. */
    uint64_t maxw = ref_max_weight(&r);
    EXPECT_UINT(tree_max_weight(&t), ==, maxw);
    EXPECT_PTR_EQ(tree_find_fit(&t, INT64_MIN, 0, 0, 0), r.v[0]);
    EXPECT_PTR_EQ(tree_lower_bound(&t, INT64_MIN, 0, 0), r.v[0]);
    EXPECT_NULL(tree_find_fit(&t, INT64_MAX, UINT64_MAX, UINT64_MAX, 0));
    EXPECT_NULL(tree_lower_bound(&t, INT64_MAX, UINT64_MAX, UINT64_MAX));
    EXPECT_PTR_EQ(tree_find_fit(&t, INT64_MIN, 0, 0, maxw),
                     ref_find_fit(&r, INT64_MIN, 0, 0, maxw));
    EXPECT_NONNULL(tree_find_fit(&t, INT64_MIN, 0, 0, maxw));
    if (maxw < UINT64_MAX)
        EXPECT_NULL(tree_find_fit(&t, INT64_MIN, 0, 0, maxw + 1));

    /* Remove every other node (the tree thins out unevenly) and repeat. */
    for (int i = 0; i < N; i += 2) {
        tree_remove(&t, &nodes[i]);
        ref_remove(&r, &nodes[i]);
    }
    CHECK_TREE(&t);
    compare_with_ref(&t, &r);
    check_queries(&g, &t, &r, 4000, spread);

    /* Make all weights small except a single large one at a random place:
     * find_fit must find exactly that node from any key at or before it. */
    for (size_t i = 0; i < r.n; i++)
        tree_node_update(r.v[i], r.v[i]->k0, r.v[i]->k1, r.v[i]->k2, 1);
    size_t big = (size_t)rng_below(&g, r.n);
    tree_node_update(r.v[big], r.v[big]->k0, r.v[big]->k1, r.v[big]->k2, 500);
    CHECK_TREE(&t);
    EXPECT_UINT(tree_max_weight(&t), ==, 500);
    for (size_t i = 0; i < r.n; i++) {
        /* Brute force picks the expected node (duplicates of r.v[i]'s key
         * earlier in the run are also candidates). */
        tree_node_t *want = ref_find_fit(&r, r.v[i]->k0, r.v[i]->k1, r.v[i]->k2, 2);
        EXPECT_PTR_EQ(tree_find_fit(&t, r.v[i]->k0, r.v[i]->k1, r.v[i]->k2, 2),
                         want);
        if (i <= big)
            EXPECT_PTR_EQ(want, r.v[big]);
    }
    ref_fini(&r);
    free(nodes);
}
END_TEST

/* Removing the heaviest node repeatedly: max_weight follows it down. */
START_TEST(test_max_weight_after_removals)
{
    enum { N = 600 };
    rng_t g;
    rng_seed(&g, 0x3a3a3a3au);
    tree_node_t *nodes = calloc(N, sizeof *nodes);
    EXPECT_NONNULL(nodes);
    tree_t t;
    ref_t r;
    tree_init(&t);
    ref_init(&r, N);
    for (int i = 0; i < N; i++) {
        random_key(&g, &nodes[i], 1000);
        nodes[i].weight = 1 + rng_below(&g, 300); /* many equal weights */
        tree_insert(&t, &nodes[i]);
        ref_insert(&r, &nodes[i]);
    }
    while (r.n > 0) {
        uint64_t m = ref_max_weight(&r);
        EXPECT_UINT(tree_max_weight(&t), ==, m);
        /* Remove the last node (in key order) that carries the maximum. */
        size_t j = r.n;
        while (r.v[j - 1]->weight != m)
            j--;
        tree_node_t *x = r.v[j - 1];
        tree_remove(&t, x);
        ref_remove(&r, x);
        CHECK_TREE(&t);
    }
    EXPECT_UINT(tree_max_weight(&t), ==, 0);
    EXPECT_UINT(t.count, ==, 0);
    ref_fini(&r);
    free(nodes);
}
END_TEST

/* tree_node_update: weights up and down, keys moved within their gap. */
START_TEST(test_node_update)
{
    enum { N = 1000 };
    rng_t g;
    rng_seed(&g, 0x0bda7e00u + (uint64_t)_i);
    tree_node_t *nodes = calloc(N, sizeof *nodes);
    EXPECT_NONNULL(nodes);
    tree_t t;
    ref_t r;
    tree_init(&t);
    ref_init(&r, N);
    /* Keys spaced 1000 apart in k1 so they can move inside their gap. */
    for (int i = 0; i < N; i++) {
        int j = (int)((uint64_t)i * 337 % N); /* scrambled insertion order */
        set_node(&nodes[j], -1, 1000 * (uint64_t)(j + 1), 0, 1 + rng_below(&g, 100));
        tree_insert(&t, &nodes[j]);
        ref_insert(&r, &nodes[j]);
    }
    CHECK_TREE(&t);
    compare_with_ref(&t, &r);
    for (int op = 0; op < 4000; op++) {
        size_t i = (size_t)rng_below(&g, N);
        tree_node_t *x = r.v[i];
        uint64_t lo = i > 0 ? r.v[i - 1]->k1 + 1 : 0;
        uint64_t hi = i + 1 < N ? r.v[i + 1]->k1 - 1 : UINT64_MAX - 1;
        uint64_t k1 = lo + rng_below(&g, hi - lo + 1);
        uint64_t w;
        switch (rng_below(&g, 6)) {
        case 0:
            w = 0;
            break;
        case 1:
            w = x->weight + 1 + rng_below(&g, 1000); /* up, maybe new max */
            break;
        case 2:
            w = x->weight / 2; /* down, maybe the old max */
            break;
        case 3:
            w = tree_max_weight(&t) + 1; /* strictly new maximum */
            break;
        default:
            w = rng_below(&g, 200);
            break;
        }
        uint64_t k2 = rng_below(&g, 5);
        tree_node_update(x, -1, k1, k2, w);
        EXPECT_UINT(x->k1, ==, k1);
        EXPECT_UINT(x->k2, ==, k2);
        EXPECT_UINT(x->weight, ==, w);
        CHECK_TREE(&t);
        EXPECT_UINT(tree_max_weight(&t), ==, ref_max_weight(&r));
        if (op % 100 == 0) {
            compare_with_ref(&t, &r);
            for (int q = 0; q < 50; q++) {
                uint64_t qk = rng_below(&g, 1000 * (N + 2));
                uint64_t qw = rng_below(&g, tree_max_weight(&t) + 2);
                EXPECT_PTR_EQ(tree_find_fit(&t, -1, qk, 0, qw),
                                 ref_find_fit(&r, -1, qk, 0, qw));
            }
        }
    }
    /* Drop the global maximum to 0 and check it is no longer found. */
    tree_node_t *heaviest = ref_find_fit(&r, INT64_MIN, 0, 0, tree_max_weight(&t));
    EXPECT_NONNULL(heaviest);
    uint64_t old = heaviest->weight;
    tree_node_update(heaviest, heaviest->k0, heaviest->k1, heaviest->k2, 0);
    CHECK_TREE(&t);
    EXPECT_UINT(tree_max_weight(&t), ==, ref_max_weight(&r));
    EXPECT_PTR_EQ(tree_find_fit(&t, INT64_MIN, 0, 0, old),
                     ref_find_fit(&r, INT64_MIN, 0, 0, old));
    compare_with_ref(&t, &r);
    ref_fini(&r);
    free(nodes);
}
END_TEST

static void check_height_bound(const tree_t *t)
{
    EXPECT_NONNULL(t->root);
    double bound = 1.44 * log2((double)t->count + 2.0);
    EXPECT((double)t->root->height <= bound,
                  "height %d exceeds 1.44 log2(%zu + 2) = %.2f",
                  t->root->height, t->count, bound);
}

/* 100000 sorted keys (ascending and descending): the AVL bound holds and
 * the next/prev walks visit every node in order. */
START_TEST(test_height_bound_sorted)
{
    enum { N = 100000 };
    tree_node_t *nodes = calloc(N, sizeof *nodes);
    EXPECT_NONNULL(nodes);
    tree_t t;
    tree_init(&t);
    for (int i = 0; i < N; i++) {
        int j = _i == 0 ? i : N - 1 - i;
        set_node(&nodes[j], 0, (uint64_t)j, 0, (uint64_t)j);
        tree_insert(&t, &nodes[j]);
    }
    CHECK_TREE(&t);
    EXPECT_UINT(t.count, ==, N);
    check_height_bound(&t);
    EXPECT_UINT(tree_max_weight(&t), ==, N - 1);
    size_t i = 0;
    for (tree_node_t *w = tree_first(&t); w; w = tree_next(w), i++)
        EXPECT_PTR_EQ(w, &nodes[i]);
    EXPECT_UINT(i, ==, N);
    for (tree_node_t *w = tree_last(&t); w; w = tree_prev(w))
        EXPECT_PTR_EQ(w, &nodes[--i]);
    EXPECT_UINT(i, ==, 0);
    EXPECT_PTR_EQ(tree_find_fit(&t, 0, 12345, 0, 50000), &nodes[50000]);
    EXPECT_PTR_EQ(tree_find_fit(&t, 0, 77777, 0, 50000), &nodes[77777]);
    EXPECT_NULL(tree_find_fit(&t, 0, 0, 0, N));
    EXPECT_PTR_EQ(tree_lower_bound(&t, 0, 99999, 0), &nodes[99999]);
    EXPECT_NULL(tree_lower_bound(&t, 0, 99999, 1));

    /* Remove a sorted prefix (skews the tree hardest) and re-check. */
    for (i = 0; i < N / 2; i++)
        tree_remove(&t, &nodes[i]);
    CHECK_TREE(&t);
    EXPECT_UINT(t.count, ==, N / 2);
    check_height_bound(&t);
    EXPECT_PTR_EQ(tree_first(&t), &nodes[N / 2]);
    EXPECT_UINT(tree_max_weight(&t), ==, N - 1);
    free(nodes);
}
END_TEST

/* Random insertions, then random removals: the bound holds throughout. */
START_TEST(test_height_bound_random)
{
    enum { N = 20000 };
    rng_t g;
    rng_seed(&g, 0x4e16u);
    tree_node_t *nodes = calloc(N, sizeof *nodes);
    EXPECT_NONNULL(nodes);
    tree_t t;
    tree_init(&t);
    for (int i = 0; i < N; i++) {
        set_node(&nodes[i], (int64_t)rng_next(&g), rng_next(&g), 0, 1);
        tree_insert(&t, &nodes[i]);
        if ((i & 1023) == 0)
            check_height_bound(&t);
    }
    CHECK_TREE(&t);
    check_height_bound(&t);
    for (int i = 0; i < N - 1; i++) {
        tree_remove(&t, &nodes[i]);
        if ((i & 1023) == 0)
            check_height_bound(&t);
    }
    CHECK_TREE(&t);
    EXPECT_PTR_EQ(t.root, &nodes[N - 1]);
    EXPECT_INT(t.root->height, ==, 1);
    free(nodes);
}
END_TEST

/* tree_check itself must catch broken invariants, since every other test
 * relies on it. */
START_TEST(test_check_detects_corruption)
{
    tree_t t;
    tree_node_t n[8];
    const char *why;
    tree_init(&t);
    for (int i = 1; i <= 7; i++) {
        set_node(&n[i], 0, (uint64_t)i, 0, (uint64_t)i);
        tree_insert(&t, &n[i]);
    }
    CHECK_TREE(&t);

    n[5].max_weight = 99; /* stale augmentation */
    why = NULL;
    EXPECT_INT(tree_check(&t, &why), ==, -1);
    EXPECT_NONNULL(why);
    n[5].max_weight = 5;
    CHECK_TREE(&t);

    n[1].height = 2; /* stale height */
    why = NULL;
    EXPECT_INT(tree_check(&t, &why), ==, -1);
    EXPECT_NONNULL(why);
    n[1].height = 1;

    n[3].parent = &n[4]; /* parent link */
    why = NULL;
    EXPECT_INT(tree_check(&t, &why), ==, -1);
    EXPECT_NONNULL(why);
    n[3].parent = &n[2];

    n[3].k1 = 100; /* grandchild out of order: only the in-order walk sees it */
    why = NULL;
    EXPECT_INT(tree_check(&t, &why), ==, -1);
    EXPECT_NONNULL(why);
    EXPECT_INT(tree_check(&t, NULL), ==, -1);
    n[3].k1 = 3;

    t.count = 8; /* count */
    why = NULL;
    EXPECT_INT(tree_check(&t, &why), ==, -1);
    EXPECT_NONNULL(why);
    t.count = 7;
    CHECK_TREE(&t);
}
END_TEST

Suite *tree_suite(void)
{
    Suite *s = suite_create("tree");

    TCase *tc = tcase_create("basic");
    tcase_add_test(tc, test_empty);
    tcase_add_test(tc, test_single_node);
    tcase_add_test(tc, test_shapes_and_remove_cases);
    tcase_add_test(tc, test_remove_two_children_successor_is_child);
    tcase_add_test(tc, test_key_order);
    tcase_add_test(tc, test_duplicates);
    tcase_add_test(tc, test_check_detects_corruption);
    suite_add_tcase(s, tc);

    tc = tcase_create("random");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_random_small_keyspace, 0, 2);
    tcase_add_loop_test(tc, test_random_wide_keyspace, 0, 2);
    tcase_add_loop_test(tc, test_find_fit_vs_bruteforce, 0, 2);
    tcase_add_test(tc, test_max_weight_after_removals);
    tcase_add_loop_test(tc, test_node_update, 0, 2);
    suite_add_tcase(s, tc);

    tc = tcase_create("height");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_height_bound_sorted, 0, 2);
    tcase_add_test(tc, test_height_bound_random);
    suite_add_tcase(s, tc);

    return s;
}
