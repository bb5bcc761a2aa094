/*
 * report_html_flame: the flame graph's data block.  See
 * report_html_flame.h.
 */
#include "analyzer/report/report_html_flame.h"

#include <stdlib.h>

#include "analyzer/escape.h"
#include "analyzer/report/flame.h"
#include "analyzer/report/report_page.h"

#define HTML_STACKS 1500       /* stacks kept of the process the user ran or chose */
#define HTML_STACKS_BRIEF 300  /* of the others */

/* Stacks as a trie, so shared prefixes are written once: nodes is
 * [parent, name] pairs (parent -1 for an outermost frame), name an index
 * into the page's names; a stack is its innermost node. */
typedef struct trie_s {
    json_t *nodes;
    size_t nnodes;
    /* child lookup: (parent, name) -> node, open addressing */
    struct { int64_t parent, name, node; } *slots;
    size_t nslots, nused;
    report_html_names_t *names;
} trie_t;

static uint64_t mix(uint64_t a, uint64_t b) { return (a * 0x9e3779b97f4a7c15ull) ^ (b + 0x632be59bd9b4e019ull + (a << 6)); }

static int64_t trie_name(trie_t *t, const char *name)
{
    json_t *got = json_object_get(t->names->name_ids, name);
    if (got)
        return json_integer_value(got);
    int64_t id = (int64_t)json_array_size(t->names->names);
    json_array_append_new(t->names->names, escape_json(name));
    json_object_set_new(t->names->name_ids, name, json_integer(id));
    return id;
}

static int64_t trie_child(trie_t *t, int64_t parent, int64_t name)
{
    if (2 * (t->nused + 1) > t->nslots) {
        size_t ns = t->nslots ? 2 * t->nslots : 1024;
        void *old = t->slots;
        size_t on = t->nslots;
        t->slots = malloc(ns * sizeof *t->slots);
        if (!t->slots) {
            t->slots = old;
            return -1;
        }
        for (size_t i = 0; i < ns; i++)
            t->slots[i].node = -1;
        t->nslots = ns;
        for (size_t i = 0; old && i < on; i++) {
            __typeof__(t->slots) o = old;
            if (o[i].node < 0)
                continue;
            size_t at = mix((uint64_t)o[i].parent, (uint64_t)o[i].name) & (ns - 1);
            while (t->slots[at].node >= 0)
                at = (at + 1) & (ns - 1);
            t->slots[at] = o[i];
        }
        free(old);
    }
    size_t at = mix((uint64_t)parent, (uint64_t)name) & (t->nslots - 1);
    for (; t->slots[at].node >= 0; at = (at + 1) & (t->nslots - 1))
        if (t->slots[at].parent == parent && t->slots[at].name == name)
            return t->slots[at].node;
    int64_t node = (int64_t)t->nnodes++;
    t->slots[at].parent = parent;
    t->slots[at].name = name;
    t->slots[at].node = node;
    t->nused++;
    json_array_append_new(t->nodes, json_integer(parent));
    json_array_append_new(t->nodes, json_integer(name));
    return node;
}

/* A stack's innermost node: its frames outermost first, FLAME_DEPTH of
 * them at most (the innermost kept). */
static int64_t trie_stack(trie_t *t, process_t *pr, symbols_t *store, uint64_t id, frames_t *fr)
{
    size_t nf = pr->have_sites ? frames_of(store, sites_get(&pr->sites, id), fr) : 0;
    if (!nf)
        return trie_child(t, -1, trie_name(t, id ? "[stack without frames]" : "[no stack]"));
    int64_t node = -1;
    size_t from = nf > FLAME_DEPTH ? nf - FLAME_DEPTH : 0;
    for (size_t k = nf; k-- > from;) {
        char label[64];
        const symbols_frame_t *sf = &fr->v[k];
        node = trie_child(t, node, trie_name(t, sf->function ? sf->function
                                                             : symbols_label(sf, label, sizeof label)));
        if (node < 0)
            return -1;
    }
    return node;
}

static int by_id(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The stacks the page keeps: the heaviest by each weight, max in all at
 * most; sorted, without repeats.  malloc'd. */
static size_t chosen_stacks(process_t *pr, size_t max, uint64_t **out)
{
    *out = NULL;
    if (!pr->have_sites)
        return 0;
    static const sites_key_t keys[] = {SITES_BY_PEAK, SITES_BY_CALLS, SITES_BY_LEAKED,
                                       SITES_BY_TEMPORARIES};
    static const double share[] = {0.55, 0.25, 0.1, 0.1};
    uint64_t *all = malloc((max + 4) * sizeof *all);
    size_t n = 0;
    for (size_t k = 0; all && k < 4; k++) {
        uint64_t *ids;
        size_t m = sites_top(&pr->sites, keys[k], (size_t)(share[k] * (double)max) + 1, &ids);
        for (size_t i = 0; i < m && n < max + 4; i++)
            all[n++] = ids[i];
        free(ids);
    }
    if (!all)
        return 0;
    qsort(all, n, sizeof *all, by_id);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (!u || all[u - 1] != all[i])
            all[u++] = all[i];
    *out = all;
    return u;
}

void report_html_flame(FILE *f, process_t *pr, symbols_t *store, frames_t *fr,
                       report_html_names_t *names, size_t index, bool full)
{
    trie_t t = {.nodes = json_array(), .names = names};
    uint64_t *ids;
    size_t n = chosen_stacks(pr, full ? HTML_STACKS : HTML_STACKS_BRIEF, &ids);
    json_t *stacks = json_array(), *w[4] = {json_array(), json_array(), json_array(), json_array()};
    static const sites_key_t keys[] = {SITES_BY_PEAK, SITES_BY_CALLS, SITES_BY_LEAKED,
                                       SITES_BY_TEMPORARIES};
    for (size_t i = 0; i < n; i++) {
        int64_t leaf = trie_stack(&t, pr, store, ids[i], fr);
        if (leaf < 0)
            break;
        json_array_append_new(stacks, json_integer(leaf));
        for (int k = 0; k < 4; k++)
            json_array_append_new(w[k], json_integer((json_int_t)sites_key(&pr->sites, ids[i], keys[k])));
    }
    free(ids);
    /* the mapping sites, weighted by bytes mapped at the mapped peak */
    json_t *mstacks = json_array(), *mw = json_array();
    uint64_t *mids;
    size_t mn = mappings_top(&pr->maps, MAPPINGS_BY_PEAK, full ? 200 : 50, &mids);
    for (size_t i = 0; i < mn; i++) {
        int64_t leaf = trie_stack(&t, pr, store, mids[i], fr);
        if (leaf < 0)
            break;
        json_array_append_new(mstacks, json_integer(leaf));
        json_array_append_new(mw, json_integer((json_int_t)mappings_site_peak(&pr->maps, mids[i], NULL)));
    }
    free(mids);
    json_t *weights = json_pack(
        "[{s:s, s:s, s:b, s:o}, {s:s, s:s, s:b, s:o}, {s:s, s:s, s:b, s:o}, {s:s, s:s, s:b, s:o},"
        " {s:s, s:s, s:b, s:b, s:o}]",
        "key", "peak", "label", "bytes live at the peak heap", "bytes", 1, "v", w[0], "key", "calls",
        "label", "calls", "bytes", 0, "v", w[1], "key", "leaked", "label", "leaked bytes", "bytes", 1,
        "v", w[2], "key", "temporaries", "label", "temporary allocations", "bytes", 0, "v", w[3],
        "key", "mapped", "label", "bytes mapped at the mapped peak", "bytes", 1, "mapped", 1, "v", mw);
    json_t *d = json_pack("{s:s, s:o, s:o, s:o, s:o}", "names", "flame-names", "nodes", t.nodes,
                          "stacks", stacks, "mstacks", mstacks, "weights", weights);
    char id[32];
    snprintf(id, sizeof id, "flame-%zu", index);
    report_page_data(f, id, d);
    json_decref(d);
    free(t.slots);
    fprintf(f, "<div class=\"flamegraph\" data-src=\"%s\"></div>\n", id);
}
