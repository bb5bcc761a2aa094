/*
 * diff: two runs side by side.  See diff.h.
 */
#include "analyzer/report/diff.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/analysis.h"
#include "analyzer/escape.h"
#include "analyzer/report/flame.h"
#include "analyzer/report/groups.h"
#include "analyzer/report/report.h"
#include "analyzer/report/report_page.h"
#include "lib/grow.h"
#include "lib/units.h"

enum { SIDE_BASE, SIDE_NEW };
enum { T_PEAK_HEAP, T_PEAK_RSS, T_MAPPED, T_LEAKED, T_CALLS, T_TEMPS, T_COUNT };
static const char *const total_names[T_COUNT] = {"peak_heap_bytes", "peak_rss_bytes",
                                                  "mapped_peak_bytes", "leaked_bytes",
                                                  "allocations", "temporary_allocations"};
static const char *const total_words[T_COUNT] = {"peak heap", "peak RSS", "peak mapped",
                                                 "leaked", "calls", "temporary"};
static const bool total_bytes[T_COUNT] = {true, true, true, true, false, false};

/* What is compared per function or site. */
enum { K_PEAK, K_LEAKED, K_CALLS, K_COUNT };
static const char *const key_names[K_COUNT] = {"peak", "leaked", "calls"};
static const char *const key_words[K_COUNT] = {"live at peak", "leaked bytes", "calls"};

typedef struct item_s {
    char *name;               /* the key: "f (file.c)", or a site's frames */
    uint64_t v[2][K_COUNT];   /* base, new */
} item_t;

typedef struct items_s {
    item_t *v;
    size_t n, cap;
    uint32_t *slots;          /* open addressing: index + 1 of v, 0 empty */
    size_t nslots;            /* a power of two, at least 2 n */
} items_t;

typedef struct dfinding_s {
    char key[160];           /* class/series/process */
    const finding_t *f;
    const process_t *pr;
} dfinding_t;

typedef struct side_s {
    const char *input;
    analysis_t a;
    uint64_t totals[T_COUNT];
    uint64_t sample_bytes;   /* a sampled run's interval (its largest); 0: every allocation */
    dfinding_t *findings;
    size_t nfindings;
} side_t;

typedef struct diff_s {
    side_t side[2];
    items_t functions, sites;
    flame_node_t flame;       /* the difference flame graph: the base run in base, the new in w */
    symbols_t *store;
} diff_t;

/* ---- gathering ------------------------------------------------------------------- */

static uint64_t hash_of(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static bool rehash(items_t *it, size_t nslots)
{
    uint32_t *slots = calloc(nslots, sizeof *slots);
    if (!slots)
        return false;
    for (size_t i = 0; i < it->n; i++) {
        size_t at = hash_of(it->v[i].name) & (nslots - 1);
        while (slots[at])
            at = (at + 1) & (nslots - 1);
        slots[at] = (uint32_t)(i + 1);
    }
    free(it->slots);
    it->slots = slots;
    it->nslots = nslots;
    return true;
}

static item_t *item_get(items_t *it, const char *name)
{
    if (2 * (it->n + 1) > it->nslots && !rehash(it, it->nslots ? 2 * it->nslots : 256))
        return NULL;
    size_t at = hash_of(name) & (it->nslots - 1);
    for (; it->slots[at]; at = (at + 1) & (it->nslots - 1))
        if (!strcmp(it->v[it->slots[at] - 1].name, name))
            return &it->v[it->slots[at] - 1];
    if (it->n >= UINT32_MAX - 1 || !grow_room((void **)&it->v, &it->cap, it->n, sizeof *it->v, 64))
        return NULL;
    char *copy = strdup(name);
    if (!copy)
        return NULL;
    it->v[it->n] = (item_t){.name = copy};
    it->slots[at] = (uint32_t)(it->n + 1);
    return &it->v[it->n++];
}

/* The difference flame graph's node n weighs by more on side (0 base, 1 new). */
static void weigh(flame_node_t *n, int side, uint64_t by)
{
    *(side ? &n->w : &n->base) += by;
}

/* A frame as a diff names it: function and file:line, never an address
 * when a name exists. */
static void frame_key(const symbols_frame_t *f, char *buf, size_t len)
{
    char label[64];
    if (f->function && f->file)
        snprintf(buf, len, "%s (%s:%u)", f->function, frames_base_name(f->file), f->line);
    else if (f->function)
        snprintf(buf, len, "%s", f->function);
    else if (f->name)
        snprintf(buf, len, "%s", f->name); /* a rebuilt library moves its offsets */
    else
        snprintf(buf, len, "%s", symbols_label(f, label, sizeof label));
}

static int gather_process(diff_t *d, int side, process_t *pr, frames_t *fr, bool tree)
{
    if (!pr->have_sites)
        return 0;
    groups_t g;
    if (groups_build(&g, &pr->sites, d->store, SITES_BY_PEAK, fr))
        return -1;
    for (size_t i = 0; i < g.n; i++) {
        item_t *it = item_get(&d->functions, g.v[i].name);
        if (!it)
            break;
        it->v[side][K_PEAK] += g.v[i].peak;
        it->v[side][K_LEAKED] += g.v[i].leaked;
        it->v[side][K_CALLS] += g.v[i].calls;
    }
    groups_free(&g);
    const char *exe = pr->s.exe[0] ? frames_base_name(pr->s.exe) : "?";
    for (uint64_t id = 0; id < sites_count(&pr->sites); id++) {
        const site_t *st = sites_get(&pr->sites, id);
        if (!st || !st->calls)
            continue;
        size_t nf = frames_of(d->store, st, fr);
        char key[1024] = "";
        size_t at = 0;
        if (!nf)
            snprintf(key, sizeof key, "%s", id ? "(a stack without frames)" : "(no stack recorded)");
        for (size_t k = groups_alloc_frame(fr, nf), c = 0; k < nf && c < DIFF_SITE_FRAMES; k++, c++) {
            char one[300];
            frame_key(&fr->v[k], one, sizeof one);
            at += (size_t)snprintf(key + at, at < sizeof key ? sizeof key - at : 0, "%s%s",
                                   c ? " < " : "", one);
            if (at >= sizeof key)
                break;
        }
        item_t *it = item_get(&d->sites, key);
        if (!it)
            return -1;
        uint64_t peak = sites_peak_bytes(&pr->sites, id);
        it->v[side][K_PEAK] += peak;
        it->v[side][K_LEAKED] += st->suppressed ? 0 : st->live;
        it->v[side][K_CALLS] += sites_calls(st); /* a sampled trace's: estimated */
        /* the flame graph, by peak: outermost first */
        if (!peak)
            continue;
        flame_node_t *n = &d->flame;
        weigh(n, side, peak);
        if (tree && (n = flame_child(n, exe)))
            weigh(n, side, peak);
        size_t from = nf > FLAME_DEPTH ? nf - FLAME_DEPTH : 0;
        for (size_t k = nf; n && k-- > from;) {
            char label[64];
            const symbols_frame_t *sf = &fr->v[k];
            if ((n = flame_child(n, sf->function ? sf->function : sf->name ? sf->name
                                                              : symbols_label(sf, label, sizeof label))))
                weigh(n, side, peak);
        }
    }
    return 0;
}

static int gather(diff_t *d, int side, bool tree)
{
    side_t *sd = &d->side[side];
    analysis_t *a = &sd->a;
    frames_t fr = {0};
    size_t nok = 0;
    for (size_t i = 0; i < a->n; i++)
        nok += a->procs[i].ok;
    int rc = 0;
    bool named = tree; /* processes named by their exe in keys and the flame graph */
    sd->findings = calloc(FINDINGS_MAX * (a->n ? a->n : 1), sizeof *sd->findings);
    if (!sd->findings)
        return -1;
    for (size_t i = 0; i < a->n && !rc; i++) {
        process_t *pr = &a->procs[i];
        if (!pr->ok)
            continue;
        const summary_t *s = &pr->s;
        sd->totals[T_PEAK_HEAP] += s->peak_heap;
        sd->totals[T_MAPPED] += pr->maps.peak;
        sd->totals[T_LEAKED] += s->leaked_bytes;
        /* A sampled trace: its bytes are estimates already; its calls the
         * estimated number; its temporaries not seen (left at 0). */
        sd->totals[T_CALLS] += s->sample_bytes ? (uint64_t)llround(s->est_allocations) : s->allocations;
        sd->totals[T_TEMPS] += s->sample_bytes ? 0 : s->temporaries;
        if (s->sample_bytes > sd->sample_bytes)
            sd->sample_bytes = s->sample_bytes;
        const char *exe = s->exe[0] ? frames_base_name(s->exe) : "?";
        for (size_t k = 0; k < pr->findings.n; k++) {
            const finding_t *f = &pr->findings.v[k];
            dfinding_t *df = &sd->findings[sd->nfindings++];
            snprintf(df->key, sizeof df->key, "%s/%s%s%s", findings_class_name(f->classification),
                     findings_series_name(f->series), named ? "/" : "", named ? exe : "");
            df->f = f;
            df->pr = pr;
        }
        rc = gather_process(d, side, pr, &fr, named);
    }
    sd->totals[T_PEAK_RSS] = report_tree_peak(a->procs, a->n, a->run_peak);
    if (nok == 1)
        for (size_t i = 0; i < a->n; i++)
            if (a->procs[i].ok)
                sd->totals[T_PEAK_RSS] = process_peak_rss(&a->procs[i]);
    free(fr.v);
    return rc;
}

/* ---- ranking ----------------------------------------------------------------------- */

static int64_t delta(const item_t *it, int k)
{
    return (int64_t)it->v[SIDE_NEW][k] - (int64_t)it->v[SIDE_BASE][k];
}

static int rank_key; /* for qsort */

static int by_delta(const void *a, const void *b)
{
    const item_t *x = *(item_t *const *)a, *y = *(item_t *const *)b;
    int64_t dx = delta(x, rank_key), dy = delta(y, rank_key);
    if (dx != dy)
        return dx > dy ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* The items that changed by key k, grown first (largest growth first),
 * shrunk after (largest shrinkage last); *ngrown of them grew.  malloc'd. */
static item_t **ranked(const items_t *it, int k, size_t *n, size_t *ngrown)
{
    item_t **v = malloc((it->n ? it->n : 1) * sizeof *v);
    *n = *ngrown = 0;
    if (!v)
        return NULL;
    for (size_t i = 0; i < it->n; i++)
        if (delta(&it->v[i], k))
            v[(*n)++] = &it->v[i];
    rank_key = k;
    qsort(v, *n, sizeof *v, by_delta);
    while (*ngrown < *n && delta(v[*ngrown], k) > 0)
        (*ngrown)++;
    return v;
}

/* Growth in percent, INFINITY from nothing to something. */
static double growth_pct(uint64_t base, uint64_t now)
{
    if (now == base)
        return 0;
    if (now < base)
        return -100.0 * (double)(base - now) / (double)base;
    return base ? 100.0 * (double)(now - base) / (double)base : INFINITY;
}

static const char *figure(uint64_t v, bool bytes, char *buf, size_t len)
{
    if (bytes)
        return units_format_bytes(v, buf, len);
    snprintf(buf, len, "%" PRIu64, v);
    return buf;
}

static const char *signed_figure(int64_t d, bool bytes, char *buf, size_t len)
{
    char a[40];
    uint64_t m = d < 0 ? (uint64_t)-d : (uint64_t)d;
    snprintf(buf, len, "%s%.30s", d < 0 ? "-" : d > 0 ? "+" : "", figure(m, bytes, a, sizeof a));
    return buf;
}

static const char *pct_words(double p, char *buf, size_t len)
{
    if (isinf(p))
        snprintf(buf, len, "new");
    else if (p == 0)
        snprintf(buf, len, "0.0%%");
    else
        snprintf(buf, len, "%+.1f%%", p);
    return buf;
}

static bool is_finding_in(const side_t *sd, const char *key)
{
    for (size_t i = 0; i < sd->nfindings; i++)
        if (!strcmp(sd->findings[i].key, key))
            return true;
    return false;
}

/* ---- text -------------------------------------------------------------------------- */

static void text_items(FILE *f, const items_t *it, const char *what, size_t max)
{
    for (int k = 0; k < K_COUNT; k++) {
        size_t n, ngrown;
        item_t **v = ranked(it, k, &n, &ngrown);
        if (!v)
            return;
        bool bytes = k != K_CALLS;
        char a[32], b[32], c[32], p[32];
        fprintf(f, "  %s grown by %s:%s\n", what, key_words[k], ngrown ? "" : " none");
        for (size_t i = 0; i < ngrown && i < max; i++)
            escape_line(f, "    #%zu  %s: %s -> %s (%s, %s)", i + 1, v[i]->name,
                        figure(v[i]->v[SIDE_BASE][k], bytes, a, sizeof a),
                        figure(v[i]->v[SIDE_NEW][k], bytes, b, sizeof b),
                        signed_figure(delta(v[i], k), bytes, c, sizeof c),
                        pct_words(growth_pct(v[i]->v[SIDE_BASE][k], v[i]->v[SIDE_NEW][k]), p, sizeof p));
        size_t nshrunk = n - ngrown;
        fprintf(f, "  %s shrunk by %s:%s\n", what, key_words[k], nshrunk ? "" : " none");
        for (size_t i = 0; i < nshrunk && i < max; i++) {
            const item_t *x = v[n - 1 - i];
            escape_line(f, "    #%zu  %s: %s -> %s (%s, %s)", i + 1, x->name,
                        figure(x->v[SIDE_BASE][k], bytes, a, sizeof a),
                        figure(x->v[SIDE_NEW][k], bytes, b, sizeof b),
                        signed_figure(delta(x, k), bytes, c, sizeof c),
                        pct_words(growth_pct(x->v[SIDE_BASE][k], x->v[SIDE_NEW][k]), p, sizeof p));
        }
        free(v);
    }
}

static void text_findings(FILE *f, const diff_t *d)
{
    for (int s = 0; s < 2; s++) {
        const side_t *sd = &d->side[s], *other = &d->side[!s];
        size_t n = 0;
        fprintf(f, "  findings %s:", s == SIDE_NEW ? "that appeared" : "resolved");
        for (size_t i = 0; i < sd->nfindings; i++) {
            const dfinding_t *df = &sd->findings[i];
            if (is_finding_in(other, df->key))
                continue;
            char a[32];
            if (!n++)
                fputc('\n', f);
            escape_line(f, "    [%s] %s in %s (%s, %.0f%% of peak RSS)%s%s",
                        findings_severity_name(df->f->severity),
                        findings_class_words(df->f->classification),
                        findings_series_words(df->f->series),
                        units_format_bytes(df->f->bytes, a, sizeof a), 100 * df->f->share_of_rss,
                        d->side[s].a.n > 1 ? " in " : "",
                        d->side[s].a.n > 1 ? frames_base_name(df->pr->s.exe) : "");
        }
        if (!n)
            fputs(" none\n", f);
    }
}

static void text_report(FILE *f, const diff_t *d, const analyze_opts_t *o)
{
    escape_line(f, "memsim diff: %s -> %s", d->side[0].input, d->side[1].input);
    for (int s = 0; s < 2; s++)
        if (d->side[s].a.command[0])
            escape_line(f, "  %s command: %s", s ? "new " : "base", d->side[s].a.command);
    fprintf(f, "  %-12s %12s %12s %14s %9s\n", "", "base", "new", "change", "");
    for (int t = 0; t < T_COUNT; t++) {
        char a[32], b[32], c[32], p[32];
        uint64_t x = d->side[0].totals[t], y = d->side[1].totals[t];
        if (t == T_TEMPS && (d->side[0].sample_bytes || d->side[1].sample_bytes)) {
            fprintf(f, "  %-12s not counted: a sampled run does not see them\n", total_words[t]);
            continue;
        }
        fprintf(f, "  %-12s %12s %12s %14s %9s\n", total_words[t],
                figure(x, total_bytes[t], a, sizeof a), figure(y, total_bytes[t], b, sizeof b),
                signed_figure((int64_t)y - (int64_t)x, total_bytes[t], c, sizeof c),
                pct_words(growth_pct(x, y), p, sizeof p));
    }
    if (d->side[0].sample_bytes || d->side[1].sample_bytes)
        fprintf(f, "  sampled:      %s: its bytes and calls are estimates\n", d->side[0].sample_bytes && d->side[1].sample_bytes ? "both runs"
                              : d->side[0].sample_bytes ? "the base run" : "the new run");
    text_findings(f, d);
    size_t max = o->sites ? o->sites : ANALYZE_DEFAULT_SITES;
    text_items(f, &d->functions, "functions", max);
    text_items(f, &d->sites, "sites", max < 5 ? max : 5);
}

/* ---- JSON -------------------------------------------------------------------------- */

static json_t *json_items(const items_t *it, size_t max)
{
    json_t *out = json_object();
    for (int k = 0; k < K_COUNT; k++) {
        size_t n, ngrown;
        item_t **v = ranked(it, k, &n, &ngrown);
        json_t *grown = json_array(), *shrunk = json_array();
        for (size_t i = 0; v && i < n; i++) {
            bool up = i < ngrown;
            const item_t *x = up ? v[i] : v[n - 1 - (i - ngrown)];
            if ((up ? i : i - ngrown) >= max)
                continue;
            json_array_append_new(up ? grown : shrunk,
                                  json_pack("{s:o, s:I, s:I, s:I}", "name", escape_json(x->name),
                                            "base", (json_int_t)x->v[SIDE_BASE][k], "new",
                                            (json_int_t)x->v[SIDE_NEW][k], "delta",
                                            (json_int_t)delta(x, k)));
        }
        free(v);
        json_object_set_new(out, key_names[k], json_pack("{s:o, s:o}", "grown", grown, "shrunk", shrunk));
    }
    return out;
}

static json_t *json_findings(const diff_t *d, int s)
{
    json_t *out = json_array();
    const side_t *sd = &d->side[s];
    for (size_t i = 0; i < sd->nfindings; i++) {
        const dfinding_t *df = &sd->findings[i];
        if (is_finding_in(&d->side[!s], df->key))
            continue;
        json_array_append_new(out, json_pack("{s:s, s:s, s:s, s:I, s:o}", "classification",
                                             findings_class_name(df->f->classification), "series",
                                             findings_series_name(df->f->series), "severity",
                                             findings_severity_name(df->f->severity), "bytes",
                                             (json_int_t)df->f->bytes, "exe",
                                             escape_json(df->pr->s.exe)));
    }
    return out;
}

static void json_report(FILE *f, const diff_t *d, const analyze_opts_t *o, bool failed)
{
    json_t *sides[2], *deltas = json_object();
    for (int s = 0; s < 2; s++) {
        json_t *totals = json_object();
        for (int t = 0; t < T_COUNT; t++)
            json_object_set_new(totals, total_names[t],
                                t == T_TEMPS && d->side[s].sample_bytes
                                    ? json_null() /* a sampled run does not see them */
                                    : json_integer((json_int_t)d->side[s].totals[t]));
        sides[s] = json_pack("{s:o, s:o, s:I, s:o, s:o}", "input", escape_json(d->side[s].input),
                             "command", escape_json(d->side[s].a.command), "processes",
                             (json_int_t)d->side[s].a.n, "totals", totals, "sample_bytes",
                             d->side[s].sample_bytes
                                 ? json_integer((json_int_t)d->side[s].sample_bytes)
                                 : json_null());
    }
    for (int t = 0; t < T_COUNT; t++) {
        double p = growth_pct(d->side[0].totals[t], d->side[1].totals[t]);
        if (t == T_TEMPS && (d->side[0].sample_bytes || d->side[1].sample_bytes)) {
            json_object_set_new(deltas, total_names[t], json_null());
            continue;
        }
        json_object_set_new(deltas, total_names[t],
                            json_pack("{s:I, s:o}", "delta",
                                      (json_int_t)((int64_t)d->side[1].totals[t] -
                                                   (int64_t)d->side[0].totals[t]),
                                      "percent", isinf(p) ? json_null() : json_real(p)));
    }
    size_t max = o->sites ? o->sites : ANALYZE_DEFAULT_SITES;
    json_t *out = json_pack("{s:o, s:o, s:o, s:o, s:o, s:{s:o, s:o}}", "base", sides[0], "new",
                            sides[1], "delta", deltas, "functions", json_items(&d->functions, max),
                            "sites", json_items(&d->sites, max), "findings", "appeared",
                            json_findings(d, SIDE_NEW), "resolved", json_findings(d, SIDE_BASE));
    json_object_set_new(out, "fail_on_growth",
                        o->fail_on_growth >= 0
                            ? json_pack("{s:f, s:b}", "percent", o->fail_on_growth, "failed", failed)
                            : json_null());
    json_dumpf(out, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', f);
    json_decref(out);
}

/* ---- HTML -------------------------------------------------------------------------- */

#define DW 960
#define DROW 17

static void draw_dnode(FILE *f, const flame_node_t *n, double x, double w, int depth)
{
    if (w < 0.3)
        return;
    uint64_t big = n->base > n->w ? n->base : n->w;
    double change = big ? ((double)n->w - (double)n->base) / (double)big : 0;
    char a[32], b[32], c[32];
    /* white when unchanged, red as it grew, blue as it shrank */
    int light = 95 - (int)(45 * fabs(change));
    fprintf(f, "<g class=\"frame\"><title>");
    escape_html(f, n->name ? n->name : "all");
    fprintf(f, " — base %s, new %s (%s)</title><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
               "fill=\"hsl(%d,80%%,%d%%)\" data-change=\"%.3f\"/>",
            units_format_bytes(n->base, a, sizeof a), units_format_bytes(n->w, b, sizeof b),
            signed_figure((int64_t)n->w - (int64_t)n->base, true, c, sizeof c), x, depth * DROW,
            w, DROW - 1, change >= 0 ? 0 : 220, light, change);
    if (w > 40) {
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" class=\"fname\">", x + 3, depth * DROW + 12);
        char cut[256];
        size_t room = (size_t)((w - 6) / 6.5);
        snprintf(cut, sizeof cut, "%s", n->name ? n->name : "all");
        if (strlen(cut) > room && room > 1) {
            size_t at = room - 1;
            while (at > 0 && ((unsigned char)cut[at] & 0xc0) == 0x80)
                at--;
            strcpy(cut + at, "…");
        }
        escape_html(f, cut);
        fputs("</text>", f);
    }
    fputs("</g>\n", f);
    /* a child as wide as the larger of its weights: when the children
     * together outgrow the parent (one grew, another shrank), they share
     * its width */
    uint64_t sum = 0;
    for (size_t i = 0; i < n->nkids; i++)
        sum += n->kids[i].base > n->kids[i].w ? n->kids[i].base : n->kids[i].w;
    double denom = (double)(sum > big ? sum : big);
    double cx = x;
    for (size_t i = 0; i < n->nkids; i++) {
        const flame_node_t *k = &n->kids[i];
        uint64_t kb = k->base > k->w ? k->base : k->w;
        double cw = denom > 0 ? w * (double)kb / denom : 0;
        draw_dnode(f, k, cx, cw, depth + 1);
        cx += cw;
    }
}

static void html_items(FILE *f, const items_t *it, const char *what, size_t max)
{
    for (int k = 0; k < K_COUNT; k++) {
        size_t n, ngrown;
        item_t **v = ranked(it, k, &n, &ngrown);
        if (!v)
            return;
        bool bytes = k != K_CALLS;
        fprintf(f, "<h3>%s that changed by %s</h3>\n", what, key_words[k]);
        if (!n) {
            fputs("<p class=\"none\">None.</p>\n", f);
            free(v);
            continue;
        }
        fprintf(f, "<table class=\"sortable diff-%s\"><thead><tr><th>%s</th><th>base</th><th>new</th>"
                   "<th>change</th><th>%%</th></tr></thead><tbody>\n", key_names[k], what);
        for (size_t i = 0; i < n; i++) {
            bool up = i < ngrown;
            if ((up ? i : n - 1 - i) >= max && (up || n - 1 - i >= max))
                continue;
            const item_t *x = v[i];
            char a[32], b[32], c[32], p[32];
            double pct = growth_pct(x->v[SIDE_BASE][k], x->v[SIDE_NEW][k]);
            fprintf(f, "<tr class=\"%s\"><td>", up ? "grown" : "shrunk");
            escape_html(f, x->name);
            fprintf(f, "</td><td data-v=\"%" PRIu64 "\">%s</td><td data-v=\"%" PRIu64 "\">%s</td>"
                       "<td data-v=\"%" PRId64 "\">%s</td><td data-v=\"%.3f\">%s</td></tr>\n",
                    x->v[SIDE_BASE][k], figure(x->v[SIDE_BASE][k], bytes, a, sizeof a),
                    x->v[SIDE_NEW][k], figure(x->v[SIDE_NEW][k], bytes, b, sizeof b), delta(x, k),
                    signed_figure(delta(x, k), bytes, c, sizeof c), isinf(pct) ? 1e9 : pct,
                    pct_words(pct, p, sizeof p));
        }
        fputs("</tbody></table>\n", f);
        free(v);
    }
}

static int html_report(const diff_t *d, const analyze_opts_t *o, const char *path)
{
    char tmp[4200];
    FILE *f = report_open(path, tmp, sizeof tmp, "--html");
    if (!f)
        return -1;
    char title[2200];
    snprintf(title, sizeof title, "memsim diff: %s → %s", d->side[0].a.command[0] ? d->side[0].a.command
                                                                                  : d->side[0].input,
             d->side[1].a.command[0] ? d->side[1].a.command : d->side[1].input);
    report_page_head(f, title);
    fputs("<section class=\"diff\">\n<table class=\"totals\"><thead><tr><th></th><th>base</th>"
          "<th>new</th><th>change</th><th>%</th></tr></thead><tbody>\n", f);
    for (int t = 0; t < T_COUNT; t++) {
        char a[32], b[32], c[32], p[32];
        uint64_t x = d->side[0].totals[t], y = d->side[1].totals[t];
        fprintf(f, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
                total_words[t], figure(x, total_bytes[t], a, sizeof a),
                figure(y, total_bytes[t], b, sizeof b),
                signed_figure((int64_t)y - (int64_t)x, total_bytes[t], c, sizeof c),
                pct_words(growth_pct(x, y), p, sizeof p));
    }
    fputs("</tbody></table>\n<h3>Findings</h3>\n<ul>", f);
    for (int s = 1; s >= 0; s--) {
        const side_t *sd = &d->side[s];
        for (size_t i = 0; i < sd->nfindings; i++) {
            const dfinding_t *df = &sd->findings[i];
            if (is_finding_in(&d->side[!s], df->key))
                continue;
            char a[32];
            fprintf(f, "<li class=\"%s\">%s: [%s] %s in %s (%s)</li>", s ? "appeared" : "resolved",
                    s ? "appeared" : "resolved", findings_severity_name(df->f->severity),
                    findings_class_words(df->f->classification), findings_series_words(df->f->series),
                    units_format_bytes(df->f->bytes, a, sizeof a));
        }
    }
    fputs("</ul>\n<h3>Flame graph of the difference (live at the peak)</h3>\n<p class=\"legend\">"
          "Each frame as wide as the larger of its two weights; <span style=\"color:#d62728\">"
          "&#9632;</span> red: it grew, <span style=\"color:#1f77b4\">&#9632;</span> blue: it "
          "shrank, white: unchanged. Hover for both figures.</p>\n", f);
    int depth = flame_depth(&d->flame);
    fprintf(f, "<svg id=\"diff-flame\" class=\"plot\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\">\n",
            DW, depth * DROW, DW, depth * DROW);
    draw_dnode(f, &d->flame, 0, DW, 0);
    fputs("</svg>\n", f);
    size_t max = o->sites ? o->sites : ANALYZE_DEFAULT_SITES;
    html_items(f, &d->functions, "Functions", max);
    html_items(f, &d->sites, "Sites", max);
    fputs("</section>\n", f);
    report_page_tail(f);
    return report_close(f, path, tmp, "--html");
}

/* ---- the whole ------------------------------------------------------------------- */

int diff_main(const char *base, const char *new_, const analyze_opts_t *o, symbols_t *store,
              suppress_t *sup)
{
    diff_t d = {.store = store};
    d.side[0].input = base;
    d.side[1].input = new_;
    int rc = 0;
    for (int s = 0; s < 2; s++) {
        char *arg[1] = {(char *)d.side[s].input};
        int r = analysis_run(&d.side[s].a, arg, 1, o, store, sup);
        if (r)
            rc = 2;
    }
    d.flame.name = strdup("all");
    bool tree = d.side[0].a.n > 1 || d.side[1].a.n > 1;
    for (int s = 0; s < 2 && !rc; s++)
        if (gather(&d, s, tree)) {
            fprintf(stderr, "%s: out of memory\n", ANALYZE_CMD);
            rc = 2;
        }
    bool failed = false;
    if (!rc && o->fail_on_growth >= 0) {
        static const int watched[] = {T_PEAK_HEAP, T_LEAKED};
        for (size_t i = 0; i < 2; i++) {
            int t = watched[i];
            double p = growth_pct(d.side[0].totals[t], d.side[1].totals[t]);
            if (p > o->fail_on_growth) {
                char a[32], b[32], c[32];
                failed = true;
                fprintf(stderr, "%s: --fail-on-growth %g: %s grew %s (%s to %s)\n", ANALYZE_CMD,
                        o->fail_on_growth, total_words[t], pct_words(p, c, sizeof c),
                        units_format_bytes(d.side[0].totals[t], a, sizeof a),
                        units_format_bytes(d.side[1].totals[t], b, sizeof b));
            }
        }
    }
    if (!rc) {
        if (o->html) {
            if (html_report(&d, o, o->html))
                rc = 2;
            else if (strcmp(o->html, "-"))
                escape_line(stderr, "%s: the report is in %s", ANALYZE_CMD, o->html);
        } else if (o->json) {
            json_report(stdout, &d, o, failed);
        } else {
            text_report(stdout, &d, o);
        }
    }
    if (!rc && failed)
        rc = 1;
    int want = findings_severity_rank(o->fail_on);
    for (size_t i = 0; !rc && want >= 0 && i < d.side[1].a.n; i++)
        if (d.side[1].a.procs[i].ok && findings_worst(&d.side[1].a.procs[i].findings) >= want)
            rc = 1;
    for (int s = 0; s < 2; s++) {
        analysis_fini(&d.side[s].a);
        free(d.side[s].findings);
    }
    for (size_t i = 0; i < d.functions.n; i++)
        free(d.functions.v[i].name);
    free(d.functions.v);
    free(d.functions.slots);
    free(d.sites.slots);
    for (size_t i = 0; i < d.sites.n; i++)
        free(d.sites.v[i].name);
    free(d.sites.v);
    flame_free(&d.flame);
    return rc;
}
