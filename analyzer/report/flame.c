/*
 * flame: a flame graph's tree and its SVG.  See flame.h.
 */
#include "analyzer/report/flame.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/escape.h"
#include "lib/grow.h"
#include "lib/units.h"

flame_node_t *flame_child(flame_node_t *n, const char *name)
{
    for (size_t i = 0; i < n->nkids; i++)
        if (!strcmp(n->kids[i].name, name))
            return &n->kids[i];
    if (!grow_room((void **)&n->kids, &n->cap, n->nkids, sizeof *n->kids, 4))
        return NULL;
    char *copy = strdup(name);
    if (!copy)
        return NULL;
    n->kids[n->nkids] = (flame_node_t){.name = copy};
    return &n->kids[n->nkids++];
}

void flame_free(flame_node_t *n)
{
    for (size_t i = 0; i < n->nkids; i++)
        flame_free(&n->kids[i]);
    free(n->kids);
    free(n->name);
}

static void add_stack(flame_node_t *root, process_t *pr, symbols_t *store, uint64_t id, uint64_t w,
                      frames_t *fr, const char *prefix)
{
    size_t nf = pr->have_sites ? frames_of(store, sites_get(&pr->sites, id), fr) : 0;
    root->w += w;
    flame_node_t *n = root;
    if (prefix && (n = flame_child(n, prefix)))
        n->w += w;
    if (!n)
        return;
    if (!nf) {
        if ((n = flame_child(n, id ? "[stack without frames]" : "[no stack]")))
            n->w += w;
        return;
    }
    size_t from = nf > FLAME_DEPTH ? nf - FLAME_DEPTH : 0;
    for (size_t k = nf; k-- > from && n;) {
        char label[64];
        const symbols_frame_t *sf = &fr->v[k];
        if ((n = flame_child(n, sf->function ? sf->function : symbols_label(sf, label, sizeof label))))
            n->w += w;
    }
}

int flame_depth(const flame_node_t *n)
{
    int d = 0;
    for (size_t i = 0; i < n->nkids; i++) {
        int k = flame_depth(&n->kids[i]);
        d = k > d ? k : d;
    }
    return d + 1;
}

static void draw_node(FILE *f, const flame_node_t *n, double x, double w, int depth, uint64_t total,
                      bool bytes)
{
    if (w < 0.3)
        return;
    char a[32];
    double y = depth * FLAME_ROW;
    const char *name = n->name ? n->name : "?";
    unsigned hash = 5381;
    for (const char *c = name; *c; c++)
        hash = hash * 33 + (unsigned char)*c;
    fputs("<g class=\"frame\"><title>", f);
    escape_html(f, name);
    if (bytes)
        fprintf(f, " — %s (%.1f%%)</title>", units_format_bytes(n->w, a, sizeof a),
                total ? 100.0 * (double)n->w / (double)total : 0);
    else
        fprintf(f, " — %" PRIu64 " (%.1f%%)</title>", n->w,
                total ? 100.0 * (double)n->w / (double)total : 0);
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"hsl(%u,70%%,%u%%)\"/>",
            x, y, w, FLAME_ROW - 1, 10 + hash % 40, 55 + hash % 20);
    if (w > 40) {
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"fname\">", x + 3, y + 12);
        size_t room = (size_t)((w - 6) / 6.5);
        char cut[256];
        snprintf(cut, sizeof cut, "%s", name);
        if (strlen(cut) > room && room > 1) {
            size_t at = room - 1;
            while (at > 0 && ((unsigned char)cut[at] & 0xc0) == 0x80)
                at--; /* not inside a character */
            strcpy(cut + at, "…");
        }
        escape_html(f, cut);
        fputs("</text>", f);
    }
    fputs("</g>\n", f);
    double cx = x;
    for (size_t i = 0; i < n->nkids; i++) {
        double cw = n->w ? w * (double)n->kids[i].w / (double)n->w : 0;
        draw_node(f, &n->kids[i], cx, cw, depth + 1, total, bytes);
        cx += cw;
    }
}

void flame_add(flame_node_t *root, process_t *pr, symbols_t *store, frames_t *fr,
               const char *key, const char *prefix)
{
    if (!strcmp(key, "mapped")) {
        uint64_t *ids;
        size_t n = mappings_top(&pr->maps, MAPPINGS_BY_PEAK, FLAME_STACKS, &ids);
        for (size_t i = 0; i < n; i++)
            add_stack(root, pr, store, ids[i], mappings_site_peak(&pr->maps, ids[i], NULL), fr,
                      prefix);
        free(ids);
    } else if (pr->have_sites) {
        sites_key_t k = !strcmp(key, "peak") ? SITES_BY_PEAK : !strcmp(key, "calls") ? SITES_BY_CALLS
                                                                                     : SITES_BY_LEAKED;
        uint64_t *ids;
        size_t n = sites_top(&pr->sites, k, FLAME_STACKS, &ids);
        for (size_t i = 0; i < n; i++)
            add_stack(root, pr, store, ids[i], sites_key(&pr->sites, ids[i], k), fr, prefix);
        free(ids);
    }
}

void flame_build(flame_node_t *root, process_t *pr, symbols_t *store, frames_t *fr,
                 const char *key, const char *prefix)
{
    *root = (flame_node_t){.name = strdup(strcmp(key, "calls") ? "all" : "all calls")};
    flame_add(root, pr, store, fr, key, prefix);
}

void flame_draw(FILE *f, const flame_node_t *root, double width, bool bytes)
{
    draw_node(f, root, 0, width, 0, root->w, bytes);
}
