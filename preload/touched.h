/*
 * touched: how many pages of a large block the program touched, counted
 * just before the block is freed (or resized), so that a replay through
 * another allocator writes as many (allocators/replay.c) instead of
 * every page.
 *
 * The count is of the block's interior: the whole pages between its
 * address rounded up and its end (address + the allocator's usable
 * size) rounded down; a partial page at either end is shared with the
 * allocator's header or a neighbour and says nothing of this block.  A
 * page is touched when it is resident (mincore): an anonymous page
 * nobody wrote has none behind it.  It can only err high: a page of the
 * allocator's heap that an earlier block wrote, and that the allocator
 * kept when it was freed, counts as touched, and so does a page of
 * zeroes the program only read.
 *
 * Only blocks of TOUCHED_MIN_BYTES or more are counted: at 64 KiB a
 * block has 15 interior pages or more (so the count says something), it
 * is past glibc's and tcmalloc's small-block pages and among jemalloc's
 * and mimalloc's large sizes (whose untouched pages stay unbacked), and
 * the system call (as dear as a getppid, plus a byte a page) is a
 * fraction of the page faults of writing even a quarter of such a
 * block.  Smaller blocks are replayed as written in full.
 *
 * mincore is made through seccomp_call (ipc/seccomp.h): never where the
 * program's sandbox would not allow it.  Nothing here allocates or
 * locks; the vector (TOUCHED_VEC bytes) is on the caller's stack, which
 * must be memsim's own (preload/thread.h).
 */
#ifndef MEMSIM_PRELOAD_TOUCHED_H
#define MEMSIM_PRELOAD_TOUCHED_H

#include <stddef.h>
#include <stdint.h>

#include "ipc/msg.h"

#define TOUCHED_MIN_BYTES MSG_TOUCHED_MIN_BYTES
#define TOUCHED_VEC 4096u /* mincore's vector: 16 MiB of block a call */

/* The interior pages of [p, p + usable) that are resident, plus one;
 * 0 when not counted: usable under TOUCHED_MIN_BYTES, mincore
 * forbidden or failing.  (The trace's "touched" is this less one.) */
uint64_t touched_count(const void *p, size_t usable);

#endif
