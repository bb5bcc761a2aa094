/*
 * frames: a site's frames resolved.  See frames.h.
 */
#include "analyzer/read/frames.h"

#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"

size_t frames_of(symbols_t *store, const site_t *st, frames_t *out)
{
    out->n = 0;
    if (!st)
        return 0;
    for (uint32_t i = 0; i < st->nframes; i++) {
        const symbols_frame_t *f;
        size_t n = symbols_resolve(store, st->modules ? st->modules[i] : SYMBOLS_NO_MODULE,
                                   st->frames[i], &f);
        for (size_t k = 0; k < n; k++) {
            if (!grow_room((void **)&out->v, &out->cap, out->n, sizeof *out->v, 64))
                return out->n;
            out->v[out->n++] = f[k];
        }
    }
    return out->n;
}

const char *frames_base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}
