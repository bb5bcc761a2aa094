/*
 * frames: a site's frames resolved for printing (inlined calls
 * included, innermost first), shared by the text, JSON and collapsed
 * reports.
 */
#ifndef MEMSIM_ANALYZER_FRAMES_H
#define MEMSIM_ANALYZER_FRAMES_H

#include <stddef.h>

#include "analyzer/consume/sites.h"
#include "analyzer/read/symbols.h"

typedef struct frames_s {
    symbols_frame_t *v;
    size_t n, cap;
} frames_t;

/* The frames of st into out (reused between calls; free out->v after
 * the last); their number.  A site without a record has none. */
size_t frames_of(symbols_t *store, const site_t *st, frames_t *out);

/* The last component of a path. */
const char *frames_base_name(const char *path);

#endif
