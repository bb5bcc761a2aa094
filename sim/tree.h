/*
 * tree: an intrusive AVL tree with a fixed three-part key and a
 * subtree-maximum augmentation.
 *
 * Every free-block index in memsim is one of these.  The key is
 * (k0, k1, k2) compared lexicographically (k0 signed, k1 and k2
 * unsigned); each node also carries a weight, and every node knows the
 * largest weight in its subtree.  That one augmentation is what makes
 * address-ordered first fit O(log n): tree_find_fit() finds the first
 * node at or after a key whose weight is at least some minimum.
 *
 * Nodes are embedded in the caller's structs (container_of style); the
 * tree never allocates.  Keys and weights of a node must not change
 * while it is in a tree, except through tree_node_update(), which is
 * only valid when the new key keeps the node's position in key order.
 *
 * Bounds: height <= 1.44 log2(n + 2), every operation O(log n).
 */
#ifndef MEMSIM_SIM_TREE_H
#define MEMSIM_SIM_TREE_H

#include <stddef.h>
#include <stdint.h>

typedef struct tree_node_s {
    struct tree_node_s *parent;
    struct tree_node_s *left, *right;
    int64_t k0;          /* primary key (a stream tag in memsim's indexes) */
    uint64_t k1, k2;     /* secondary and tertiary keys */
    uint64_t weight;     /* this node's weight (a block size) */
    uint64_t max_weight; /* max(weight) over this node's subtree */
    int height;          /* 1 for a leaf */
} tree_node_t;

typedef struct tree_s {
    tree_node_t *root;
    size_t count; /* nodes in the tree */
} tree_t;

void tree_init(tree_t *t);

/* Insert n, whose key and weight are set.  Equal keys go after existing ones. */
void tree_insert(tree_t *t, tree_node_t *n);
void tree_remove(tree_t *t, tree_node_t *n);

/* Set n's key and weight in place.  The caller guarantees that the new
 * key sorts n between the same neighbours as before. */
void tree_node_update(tree_node_t *n, int64_t k0, uint64_t k1, uint64_t k2,
                      uint64_t weight);

tree_node_t *tree_first(const tree_t *t);
tree_node_t *tree_last(const tree_t *t);
tree_node_t *tree_next(const tree_node_t *n);
tree_node_t *tree_prev(const tree_node_t *n);

/* First node whose key is >= (k0, k1, k2), or NULL. */
tree_node_t *tree_lower_bound(const tree_t *t, int64_t k0, uint64_t k1,
                              uint64_t k2);

/* First node in key order whose key is >= (k0, k1, k2) and whose weight
 * is >= min_weight, or NULL.  O(log n). */
tree_node_t *tree_find_fit(const tree_t *t, int64_t k0, uint64_t k1,
                           uint64_t k2, uint64_t min_weight);

/* tree_find_fit from node n's own key: the first node at or after n in
 * key order whose weight is >= min_weight, or NULL.  A finger search:
 * up from n only as far as the answer needs, so an answer near n costs
 * a few steps where tree_find_fit walks down from the root (next fit
 * searches from the block at its rover, and usually finds it or one
 * close after it). */
tree_node_t *tree_find_fit_from(const tree_node_t *n, uint64_t min_weight);

/* First node in key order of the whole tree whose weight is >=
 * min_weight, or NULL.  O(log n): tree_find_fit from the tree's start. */
tree_node_t *tree_first_fit(const tree_t *t, uint64_t min_weight);

/* Largest weight in the tree, 0 when empty. */
static inline uint64_t tree_max_weight(const tree_t *t)
{
    return t->root ? t->root->max_weight : 0;
}

/* Walk the whole tree and verify order, parent links, heights, balance,
 * the augmentation and the count.  Returns 0, or -1 with a reason. */
int tree_check(const tree_t *t, const char **why);

#endif
