/*
 * layout: a strategy's simulated address space as cells, kept current
 * as blocks and segments come and go, and remembered as it was at the
 * strategy's peak footprint: the fragmentation map of the HTML report.
 *
 * The space is drawn as the footprint counts it: from the device's base
 * to the highest segment's end where it counts segments (caching, whose
 * gaps between segments show), else each segment's extent (up to its
 * highest block in use) joined end to end (the fit strategies' one
 * segment, buddy's one per power-of-two chunk).  Each such zone is cut
 * in LAYOUT_CELLS cells of a power-of-two size, doubled (neighbours
 * merged) whenever something lands beyond the last.  A cell counts its
 * bytes in allocated blocks and in segments as difference arrays, so a
 * block of any size costs one to four cell writes.  The state at the
 * peak is kept copy-on-write: marking a peak starts a new epoch, and
 * the first write to a cell in an epoch saves the cell's value first.
 * So the map at the last peak costs O(1) per operation and fixed memory
 * (under 1 MB a zone), however long the trace, and is exact to the cell.
 */
#ifndef MEMSIM_ANALYZER_LAYOUT_H
#define MEMSIM_ANALYZER_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/device.h"

/* The simulated address space of a strategy at its peak, as cells for a
 * picture: the space its footprint counts (see above), cut in
 * REPLAY_MAP_CELLS cells, each with the share of its bytes in allocated
 * blocks (and of those, past their request: internal fragmentation) and
 * in free blocks of a segment (the rest is in no segment). */
#define REPLAY_MAP_CELLS 480
typedef struct replay_map_s {
    uint64_t base, span;  /* the device's base; bytes drawn */
    uint64_t footprint;   /* the peak footprint */
    uint64_t requests;    /* requests replayed when it was reached */
    float alloc[REPLAY_MAP_CELLS], waste[REPLAY_MAP_CELLS], free[REPLAY_MAP_CELLS];
} replay_map_t;

#define LAYOUT_CELLS 16384

typedef struct layout_s layout_t;

/* A layout of dev's space, with dev's segments as they are now.  NULL
 * when memory cannot be had. */
layout_t *layout_create(const device_t *dev);
void layout_destroy(layout_t *l);

/* The block [addr, addr + size), of which the first `requested` bytes
 * were asked for, became allocated (used) or stopped being so.  Takes in
 * any change of the device's segments first. */
void layout_block(layout_t *l, uint64_t addr, uint64_t size, uint64_t requested, bool used);
/* Take in any change of the device's segments since the last call: O(1)
 * when none, O(segments) when some (after a request that failed). */
void layout_sync_segments(layout_t *l);
/* The state now is dev's peak, reached after `requests` requests. */
void layout_mark_peak(layout_t *l, const device_t *dev, uint64_t requests);

/* The map at the last peak marked; false when none was. */
bool layout_map(const layout_t *l, replay_map_t *out);
/* The same map taken now by walking every block of dev: the reference
 * the cells are checked against. */
void layout_scan(const device_t *dev, uint64_t requests, replay_map_t *out);
/* The bytes one cell covers now (the largest of any zone's). */
uint64_t layout_cell_bytes(const layout_t *l);
/* The cells hold exactly dev's blocks and segments now. */
bool layout_check(const layout_t *l, const device_t *dev, const char **why);

#endif
