/*
 * tree: intrusive AVL tree with parent links and a subtree-max
 * augmentation.  See tree.h for the contract.
 *
 * Rebalancing always walks from the changed node to the root, fixing
 * height and max_weight on the way: O(log n), and it keeps the
 * augmentation exact without any early-exit subtleties.
 */
#include "sim/tree.h"

#include <stdbool.h>

#define TREE_MAX_HEIGHT 96 /* AVL with 2^64 nodes stays below 93 */

static inline int height(const tree_node_t *n) { return n ? n->height : 0; }
static inline uint64_t maxw(const tree_node_t *n) { return n ? n->max_weight : 0; }
static inline uint64_t max3(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t m = a > b ? a : b;
    return m > c ? m : c;
}

static inline int key_cmp(int64_t a0, uint64_t a1, uint64_t a2,
                          int64_t b0, uint64_t b1, uint64_t b2)
{
    if (a0 != b0)
        return a0 < b0 ? -1 : 1;
    if (a1 != b1)
        return a1 < b1 ? -1 : 1;
    if (a2 != b2)
        return a2 < b2 ? -1 : 1;
    return 0;
}

static inline int node_cmp_key(const tree_node_t *n, int64_t k0, uint64_t k1,
                               uint64_t k2)
{
    return key_cmp(n->k0, n->k1, n->k2, k0, k1, k2);
}

/* n's key >= (k0, k1, k2): the test every descent makes.  k0 is almost
 * always equal (one stream), so its branch predicts well; (k1, k2) is
 * compared as one 128-bit number, which compiles without branches. */
static inline bool node_ge_key(const tree_node_t *n, int64_t k0, uint64_t k1, uint64_t k2)
{
    if (n->k0 != k0)
        return n->k0 > k0;
    unsigned __int128 a = ((unsigned __int128)n->k1 << 64) | n->k2;
    unsigned __int128 b = ((unsigned __int128)k1 << 64) | k2;
    return a >= b;
}

static inline void fix(tree_node_t *n)
{
    int hl = height(n->left), hr = height(n->right);
    n->height = 1 + (hl > hr ? hl : hr);
    n->max_weight = max3(n->weight, maxw(n->left), maxw(n->right));
}

static void replace_child(tree_t *t, tree_node_t *parent, tree_node_t *old,
                          tree_node_t *new_child)
{
    if (!parent)
        t->root = new_child;
    else if (parent->left == old)
        parent->left = new_child;
    else
        parent->right = new_child;
    if (new_child)
        new_child->parent = parent;
}

static tree_node_t *rotate_left(tree_t *t, tree_node_t *x)
{
    tree_node_t *y = x->right;
    x->right = y->left;
    if (y->left)
        y->left->parent = x;
    replace_child(t, x->parent, x, y);
    y->left = x;
    x->parent = y;
    fix(x);
    fix(y);
    return y;
}

static tree_node_t *rotate_right(tree_t *t, tree_node_t *x)
{
    tree_node_t *y = x->left;
    x->left = y->right;
    if (y->right)
        y->right->parent = x;
    replace_child(t, x->parent, x, y);
    y->right = x;
    x->parent = y;
    fix(x);
    fix(y);
    return y;
}

/* Rotate n, out of balance by bal (left height minus right, beyond ±1),
 * back into balance: once, or twice when its taller child leans the
 * other way.  Returns the subtree's new root. */
static tree_node_t *rotate_to_balance(tree_t *t, tree_node_t *n, int bal)
{
    if (bal > 1) {
        if (height(n->left->left) < height(n->left->right))
            rotate_left(t, n->left);
        return rotate_right(t, n);
    }
    if (height(n->right->right) < height(n->right->left))
        rotate_right(t, n->right);
    return rotate_left(t, n);
}

/* Restore heights, balance and max_weight from n up to the root.  A
 * node's height and max_weight depend only on its own weight and its
 * children's two fields, so once a node needs no rotation and neither
 * field changed, nothing above it changes either: stop there — but not
 * before reaching `must`, a node moved into place whose own fields are
 * stale (the successor in a two-child removal). */
static void rebalance_up(tree_t *t, tree_node_t *n, const tree_node_t *must)
{
    while (n) {
        if (n == must)
            must = NULL; /* fields below it are right again: may stop now */
        int old_height = n->height;
        uint64_t old_max = n->max_weight;
        fix(n);
        int bal = height(n->left) - height(n->right);
        if (bal > 1 || bal < -1)
            n = rotate_to_balance(t, n, bal);
        else if (!must && n->height == old_height && n->max_weight == old_max)
            return;
        n = n->parent;
    }
}

void tree_init(tree_t *t)
{
    t->root = NULL;
    t->count = 0;
}

/* After leaf n went in: raise maxima, then heights, up from its parent.
 * Cheaper than rebalance_up, which a removal needs: n's weight raises
 * exactly the maxima below it up the path, and the heights grow only up
 * to the first node that either keeps its height or needs a rotation,
 * after which (AVL insertion) the rotated subtree is as high as before
 * the insertion and nothing above changes.  Rotations recompute their
 * two nodes from their children, whose maxima are right by then. */
static void rebalance_inserted(tree_t *t, tree_node_t *n)
{
    uint64_t w = n->weight;
    for (tree_node_t *p = n->parent; p && p->max_weight < w; p = p->parent)
        p->max_weight = w;
    for (tree_node_t *p = n->parent; p; p = p->parent) {
        int hl = height(p->left), hr = height(p->right);
        if (hl - hr > 1 || hr - hl > 1) {
            rotate_to_balance(t, p, hl - hr);
            return;
        }
        int h = 1 + (hl > hr ? hl : hr);
        if (h == p->height)
            return;
        p->height = h;
    }
}

void tree_insert(tree_t *t, tree_node_t *n)
{
    tree_node_t *parent = NULL, **link = &t->root;
    while (*link) {
        parent = *link;
        if (!node_ge_key(n, parent->k0, parent->k1, parent->k2))
            link = &parent->left;
        else
            link = &parent->right;
    }
    n->left = n->right = NULL;
    n->parent = parent;
    n->height = 1;
    n->max_weight = n->weight;
    *link = n;
    t->count++;
    rebalance_inserted(t, n);
}

static tree_node_t *leftmost(tree_node_t *n)
{
    while (n && n->left)
        n = n->left;
    return n;
}

static tree_node_t *rightmost(tree_node_t *n)
{
    while (n && n->right)
        n = n->right;
    return n;
}

void tree_remove(tree_t *t, tree_node_t *z)
{
    tree_node_t *start, *moved = NULL;
    if (!z->left || !z->right) {
        tree_node_t *child = z->left ? z->left : z->right;
        start = z->parent;
        replace_child(t, start, z, child);
    } else {
        tree_node_t *y = leftmost(z->right);
        if (y->parent != z) {
            start = y->parent;
            replace_child(t, start, y, y->right);
            y->right = z->right;
            z->right->parent = y;
        } else {
            start = y;
        }
        y->left = z->left;
        z->left->parent = y;
        replace_child(t, z->parent, z, y);
        /* z's parent computed its own fields from z's: y starts from
         * them, so the early stop above y compares like with like. */
        y->height = z->height;
        y->max_weight = z->max_weight;
        moved = y;
    }
    z->left = z->right = z->parent = NULL;
    t->count--;
    rebalance_up(t, start, moved);
}

void tree_node_update(tree_node_t *n, int64_t k0, uint64_t k1, uint64_t k2,
                      uint64_t weight)
{
    uint64_t old_weight = n->weight, old_max = n->max_weight;
    n->k0 = k0;
    n->k1 = k1;
    n->k2 = k2;
    n->weight = weight;
    /* Most updates settle without reading a child: a weight that grows
     * raises maxima only up to the first ancestor already at least as
     * heavy; one that shrinks changes nothing unless it was its
     * subtree's maximum (a coalesced block grows, a carved one shrinks,
     * and few of them are the largest below their node). */
    if (weight >= old_weight) {
        for (; n && n->max_weight < weight; n = n->parent)
            n->max_weight = weight;
        return;
    }
    if (old_weight < old_max)
        return;
    uint64_t m = max3(weight, maxw(n->left), maxw(n->right));
    if (m == old_max)
        return;
    n->max_weight = m;
    /* Up the path: a parent's max is its weight, the child's just made,
     * and the other child's. */
    for (tree_node_t *c = n; (n = c->parent); c = n) {
        const tree_node_t *other = n->left == c ? n->right : n->left;
        m = max3(n->weight, m, maxw(other));
        if (m == n->max_weight)
            return; /* nothing above can change */
        n->max_weight = m;
    }
}

tree_node_t *tree_first(const tree_t *t) { return leftmost(t->root); }
tree_node_t *tree_last(const tree_t *t) { return rightmost(t->root); }

tree_node_t *tree_next(const tree_node_t *n)
{
    if (n->right)
        return leftmost(n->right);
    while (n->parent && n->parent->right == n)
        n = n->parent;
    return n->parent;
}

tree_node_t *tree_prev(const tree_node_t *n)
{
    if (n->left)
        return rightmost(n->left);
    while (n->parent && n->parent->left == n)
        n = n->parent;
    return n->parent;
}

tree_node_t *tree_lower_bound(const tree_t *t, int64_t k0, uint64_t k1,
                              uint64_t k2)
{
    tree_node_t *n = t->root, *best = NULL;
    while (n) {
        if (node_ge_key(n, k0, k1, k2)) {
            best = n;
            n = n->left;
        } else {
            n = n->right;
        }
    }
    return best;
}

/* Leftmost node of subtree n with weight >= w; n->max_weight >= w. */
static tree_node_t *leftmost_fit(tree_node_t *n, uint64_t w)
{
    for (;;) {
        if (n->left && n->left->max_weight >= w)
            n = n->left;
        else if (n->weight >= w)
            return n;
        else
            n = n->right;
    }
}

tree_node_t *tree_find_fit(const tree_t *t, int64_t k0, uint64_t k1,
                           uint64_t k2, uint64_t w)
{
    /* Descend along the search path of the key.  The nodes where the
     * path turns left are the ones >= key; in key order the candidates
     * are, deepest first: that node, then its right subtree. */
    tree_node_t *stack[TREE_MAX_HEIGHT];
    int top = 0;
    tree_node_t *n = t->root;
    while (n) {
        if (node_ge_key(n, k0, k1, k2)) {
            stack[top++] = n;
            n = n->left;
        } else {
            n = n->right;
        }
        if (n && n->max_weight < w)
            break; /* nothing below can fit */
    }
    while (top > 0) {
        tree_node_t *c = stack[--top];
        if (c->weight >= w)
            return c;
        if (c->right && c->right->max_weight >= w)
            return leftmost_fit(c->right, w);
    }
    return NULL;
}

tree_node_t *tree_find_fit_from(const tree_node_t *n, uint64_t w)
{
    /* In key order after n come: n's right subtree, then, for every
     * ancestor whose left subtree holds n (nearest first), that ancestor
     * and its right subtree. */
    if (n->weight >= w)
        return (tree_node_t *)n;
    for (;;) {
        if (n->right && n->right->max_weight >= w)
            return leftmost_fit(n->right, w);
        const tree_node_t *c;
        do { /* up to the first ancestor n lies left of */
            c = n;
            n = n->parent;
        } while (n && n->right == c);
        if (!n)
            return NULL;
        if (n->weight >= w)
            return (tree_node_t *)n;
    }
}

tree_node_t *tree_first_fit(const tree_t *t, uint64_t min_weight)
{
    return t->root && t->root->max_weight >= min_weight ? leftmost_fit(t->root, min_weight) : NULL;
}

/* ---- verification ------------------------------------------------------ */

static int check_node(const tree_node_t *n, const tree_node_t *parent,
                      size_t *count, const char **why)
{
    if (!n)
        return 0;
    if (n->parent != parent) {
        *why = "parent link broken";
        return -1;
    }
    if (n->left && node_cmp_key(n->left, n->k0, n->k1, n->k2) > 0) {
        *why = "left child sorts after its parent";
        return -1;
    }
    if (n->right && node_cmp_key(n->right, n->k0, n->k1, n->k2) < 0) {
        *why = "right child sorts before its parent";
        return -1;
    }
    if (check_node(n->left, n, count, why) || check_node(n->right, n, count, why))
        return -1;
    int hl = height(n->left), hr = height(n->right);
    if (n->height != 1 + (hl > hr ? hl : hr)) {
        *why = "stale height";
        return -1;
    }
    if (hl - hr > 1 || hr - hl > 1) {
        *why = "unbalanced node";
        return -1;
    }
    if (n->max_weight != max3(n->weight, maxw(n->left), maxw(n->right))) {
        *why = "stale max_weight";
        return -1;
    }
    ++*count;
    return 0;
}

int tree_check(const tree_t *t, const char **why)
{
    size_t count = 0;
    const char *dummy;
    if (!why)
        why = &dummy;
    if (check_node(t->root, NULL, &count, why))
        return -1;
    /* In-order walk must be non-decreasing (catches grandchild disorder). */
    const tree_node_t *prev = NULL;
    for (const tree_node_t *n = tree_first(t); n; n = tree_next(n)) {
        if (prev && node_cmp_key(prev, n->k0, n->k1, n->k2) > 0) {
            *why = "in-order walk not sorted";
            return -1;
        }
        prev = n;
    }
    if (count != t->count) {
        *why = "count disagrees with nodes";
        return -1;
    }
    return 0;
}
