/*
 * fit_tag: what sim/fit.c and sim/fit_check.c share about a fit
 * index's insides: a free block's key, whether it is the top, its
 * stream's tag, and its place (a tree, a size bin or a largest-first
 * heap).  Internal to the fit index; see sim/fit.h.
 */
#ifndef MEMSIM_CORE_FIT_TAG_H
#define MEMSIM_CORE_FIT_TAG_H

#include "sim/fit.h"

/* The key a free block has in its tree, into n. */
static void keys_of(const fit_index_t *ix, const block_t *b, tree_node_t *n)
{
    n->k0 = b->stream;
    if (ix->order != FIT_BY_ADDR) { /* by size; a largest-first index's shared tree too */
        n->k1 = b->size;
        n->k2 = b->addr;
    } else {
        n->k1 = b->addr;
        n->k2 = 0;
    }
    n->weight = b->size;
}

/* Whether free block b is the top: the last of its segment, pristine,
 * in an index that keeps it aside (sim/fit.h). */
static inline bool is_top(const fit_index_t *ix, const block_t *b)
{
    return ix->keep_top && !b->next && b->stream == POOL_STREAM_ANY;
}

/* ---- tags ------------------------------------------------------------------ */

#define SHARED(ix) (&(ix)->tag[FIT_TAGS])

/* A new tag for stream (which has none), noted in *hint if given
 * (sim/fit.c). */
fit_tag_t *fit_tag_claim(fit_index_t *ix, int64_t stream, int8_t *hint);

/* Stream's tag, or the shared one; create: claim the next tag when
 * stream has none and one is left (its blocks then go there). */
static inline fit_tag_t *tag_of(fit_index_t *ix, int64_t stream, bool create)
{
    /* Pristine memory and the first streams: their tag at once. */
    int8_t *hint = stream == POOL_STREAM_ANY              ? &ix->any_tag
                   : (uint64_t)stream < FIT_SMALL_STREAMS ? &ix->small_tag[stream]
                                                          : NULL;
    if (hint && *hint >= 0)
        return &ix->tag[*hint];
    for (unsigned i = 0; !hint && i < ix->ntags; i++)
        if (ix->tag[i].stream == stream)
            return &ix->tag[i];
    if (!create || ix->ntags == FIT_TAGS)
        return SHARED(ix);
    return fit_tag_claim(ix, stream, hint);
}

static inline const fit_tag_t *tag_find(const fit_index_t *ix, int64_t stream)
{
    return tag_of((fit_index_t *)ix, stream, false);
}

/* Where free block b belongs: its tag's tree, or a size bin of its
 * tag's set.  A block's place depends only on its stream and size,
 * which do not change while it is indexed. */
typedef struct place_s {
    tree_t *tree;      /* in a tree, or NULL: */
    fit_bin_t *heap;   /* in this pairing heap: a size bin, or a largest-first tag's */
    fit_binset_t *bs;  /* a size bin's set (NULL: the tag's largest-first heap) ... */
    uint64_t k;        /* ... and the bin */
} place_t;

static inline place_t place_in(const fit_index_t *ix, const fit_tag_t *t, const block_t *b)
{
    uint64_t k = b->size >> ix->granule_shift;
    if (t->bins && k < FIT_BINS)
        return (place_t){NULL, &t->bins->bin[k], t->bins, k};
    if (ix->order == FIT_LARGEST_FIRST && t != SHARED(ix))
        return (place_t){NULL, (fit_bin_t *)&t->largest, NULL, 0};
    return (place_t){(tree_t *)&t->tree, NULL, NULL, 0};
}

/* Where free block b goes, by its stream (create: claim a tag for it). */
static inline place_t place_of(fit_index_t *ix, const block_t *b, bool create)
{
    return place_in(ix, tag_of(ix, b->stream, create), b);
}

/* Where indexed block b is: its tag was noted when it went in. */
static inline place_t place_now(const fit_index_t *ix, const block_t *b)
{
    return place_in(ix, &ix->tag[b->idx_tag], b);
}

#endif
