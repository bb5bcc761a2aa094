/*
 * touched: how many pages of each large block still live at the end the
 * program touched, for the blocks whose free never said it
 * (preload/touched.h counts the others).
 *
 * Read while the process waits for its end record to be written (an
 * exit, after its destructors): its address space is whole.  For every
 * live block of MSG_TOUCHED_MIN_BYTES or more (the size asked for), the
 * whole pages inside it are looked up in /proc/<pid>/pagemap, and a page
 * present or swapped out counts as touched; one "touched" record each
 * (docs/trace-format.md), before the end.  The process opens and calls
 * nothing for it: no sandbox of the program's is involved.  Where
 * pagemap cannot be read (the process is not dumpable, another user's,
 * gone) nothing is written and the blocks count as touched in full.
 * Cost: 8 bytes of pagemap a page, read 512 pages at a time (cc1's 28
 * blocks, 2.7 MiB: one read each); a block of 1 MiB, 3.3 us of CPU
 * (4,000 of them live: 13 ms the exit waits).  pagemap is opened at the
 * first such block: an exit without one (a shell loop's processes) opens
 * nothing, where the open and close were 4-5 us of the exit's wait.
 */
#ifndef MEMSIM_RECORDER_TOUCHED_H
#define MEMSIM_RECORDER_TOUCHED_H

#include <stdint.h>
#include <sys/types.h>

#include "recorder/out.h"

/* The touched records of process pid's live large blocks (the current
 * trace's state, recorder/state.h), at time t. */
void touched_at_end(out_t *o, uint64_t t, pid_t pid);

#endif
