/*
 * ptree: the process tree of several traces (a `memsim run` directory).
 *
 * Each trace is one process image.  Its parent is, for an image that an
 * exec replaced (same pid), the image before it ("exec"); otherwise the
 * latest image of its parent pid that started no later than it, reached
 * by fork (its meta names the parent's trace) or by spawning (posix_spawn
 * or fork + exec).  Traces whose parent is not among them are roots.
 * Order: depth first, children by start time.  Depth counts forks and
 * spawns: an exec'd image sits at the depth of the image it replaced.
 */
#ifndef MEMSIM_ANALYZER_PTREE_H
#define MEMSIM_ANALYZER_PTREE_H

#include <stddef.h>
#include <stdint.h>

#define PTREE_NONE SIZE_MAX

typedef struct ptree_item_s {
    int64_t pid, ppid;
    uint64_t start;  /* start_unix_ns */
    int forked;      /* meta names a parent trace */
} ptree_item_t;

typedef struct ptree_s {
    size_t n;
    size_t *parent;      /* PTREE_NONE for a root */
    const char **via;    /* "exec", "fork", "spawn", or NULL for a root */
    size_t *order;       /* depth-first */
    unsigned *depth;     /* by item */
} ptree_t;

/* 0, or -1 without memory. */
int ptree_build(ptree_t *t, const ptree_item_t *items, size_t n);
void ptree_free(ptree_t *t);

#endif
