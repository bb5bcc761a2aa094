/*
 * report: what the three forms share.  See report.h.
 */
#include "analyzer/report/report.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyzer/escape.h"

FILE *report_open(const char *path, char *tmp, size_t len, const char *opt)
{
    if (!strcmp(path, "-"))
        return stdout;
    snprintf(tmp, len, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        escape_line(stderr, "%s: %s: cannot write %s: %s", ANALYZE_CMD, opt, tmp, strerror(errno));
    return f;
}

int report_close(FILE *f, const char *path, const char *tmp, const char *opt)
{
    bool bad = ferror(f);
    if (f == stdout) {
        if (fflush(f) || bad) {
            escape_line(stderr, "%s: %s: cannot write the standard output: %s", ANALYZE_CMD, opt,
                        strerror(errno));
            return -1;
        }
        return 0;
    }
    if (fclose(f) || bad || rename(tmp, path)) {
        escape_line(stderr, "%s: %s: cannot write %s: %s", ANALYZE_CMD, opt, path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

int report_tree(const process_t *procs, size_t n, ptree_t *t)
{
    ptree_item_t *items = calloc(n ? n : 1, sizeof *items);
    if (!items)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const summary_t *s = &procs[i].s;
        items[i] = procs[i].ok ? (ptree_item_t){.pid = s->pid, .ppid = s->ppid,
                                                .start = s->start_unix_ns, .forked = s->forked}
                               : (ptree_item_t){.start = UINT64_MAX};
    }
    int rc = ptree_build(t, items, n);
    free(items);
    return rc;
}

uint64_t report_weight(const process_t *pr) { return pr->s.peak_heap + pr->maps.peak; }

uint64_t report_total_weight(const process_t *procs, size_t n)
{
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += procs[i].ok ? report_weight(&procs[i]) : 0;
    return total;
}

static const process_t *sort_base; /* report_order's, for qsort */

static int by_weight(const void *a, const void *b)
{
    const process_t *x = &sort_base[*(const size_t *)a], *y = &sort_base[*(const size_t *)b];
    uint64_t wx = report_weight(x), wy = report_weight(y);
    if (wx != wy)
        return wx < wy ? 1 : -1;
    return (x->s.pid > y->s.pid) - (x->s.pid < y->s.pid);
}

size_t *report_order(const process_t *procs, size_t n)
{
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    if (!order)
        return NULL;
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    sort_base = procs;
    qsort(order, n, sizeof *order, by_weight);
    return order;
}

bool report_shown(const process_t *pr, const analyze_opts_t *o, uint64_t total)
{
    if (o->npids || o->exe) {
        for (size_t i = 0; i < o->npids; i++)
            if (pr->s.pid == o->pids[i])
                return true;
        return o->exe && (!strcmp(pr->s.exe, o->exe) ||
                          !strcmp(pr->s.exe[0] ? frames_base_name(pr->s.exe) : "?", o->exe));
    }
    return o->all || (double)report_weight(pr) >= ANALYZE_SHOWN_SHARE * (double)total;
}

uint64_t report_tree_peak(const process_t *procs, size_t n, uint64_t run_peak)
{
    uint64_t peak = run_peak;
    for (size_t i = 0; i < n; i++) {
        if (!procs[i].ok)
            continue;
        if (procs[i].s.peak_tree_rss > peak)
            peak = procs[i].s.peak_tree_rss;
        if (process_peak_rss(&procs[i]) > peak)
            peak = process_peak_rss(&procs[i]);
    }
    return peak;
}

void report_site_label(process_t *pr, symbols_t *store, uint64_t id, frames_t *fr, char *buf,
                       size_t len)
{
    size_t n = id && pr->have_sites ? frames_of(store, sites_get(&pr->sites, id), fr) : 0;
    if (!n) {
        snprintf(buf, len, "%s", id ? "a stack without frames" : "no stack");
        return;
    }
    const symbols_frame_t *f = &fr->v[0];
    char label[64];
    if (f->function && f->file)
        snprintf(buf, len, "%s (%s:%u)", f->function, frames_base_name(f->file), f->line);
    else if (f->function && f->name)
        snprintf(buf, len, "%s in %s", f->function, f->name);
    else
        snprintf(buf, len, "%s", symbols_label(f, label, sizeof label));
}

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

void report_rss_parts(const process_t *pr, rss_parts_t *out)
{
    const summary_t *s = &pr->s;
    *out = (rss_parts_t){0};
    size_t top = SIZE_MAX;
    for (size_t i = 0; i < s->npoints; i++)
        if (top == SIZE_MAX || s->points[i].used > s->points[top].used)
            top = i;
    if (top == SIZE_MAX)
        return;
    const summary_point_t *p = &s->points[top];
    out->known = true;
    out->t = p->t;
    out->rss = p->used;
    out->allocator_is_heap = !p->reserved;
    out->mapped_span = p->mapped;
    const summary_point_t *r = NULL; /* the rollup at the peak, else the nearest */
    for (size_t d = 0; d < s->npoints && !r; d++) {
        if (top >= d && s->points[top - d].rollup_rss)
            r = &s->points[top - d];
        else if (top + d < s->npoints && s->points[top + d].rollup_rss)
            r = &s->points[top + d];
    }
    /* anon: what the allocator and the anonymous mappings may hold;
     * file: what the file mappings may (without a rollup, one pool). */
    uint64_t file = 0, anon = out->rss;
    uint64_t map_file = min_u64(p->mapped_file, p->mapped), map_anon = p->mapped - map_file;
    if (r) {
        out->have_rollup = true;
        file = min_u64(r->rollup_rss > r->rollup_anon ? r->rollup_rss - r->rollup_anon : 0,
                       out->rss);
        anon -= file;
    } else {
        map_anon += map_file; /* every mapping out of the one pool */
        map_file = 0;
    }
    out->allocator = min_u64(p->reserved ? p->reserved : p->heap_live, anon);
    anon -= out->allocator;
    uint64_t in_anon = min_u64(map_anon, anon);
    anon -= in_anon;
    out->mapped_file = r ? min_u64(map_file, file) : min_u64(p->mapped_file, in_anon);
    out->mapped = in_anon + (r ? out->mapped_file : 0);
    out->file_pages = file - (r ? out->mapped_file : 0);
    out->other = anon;
}

void report_describe(process_t *pr, symbols_t *store, const finding_t *f, frames_t *fr,
                     char *buf, size_t len)
{
    snprintf(buf, len, "%s", f->description);
    for (size_t i = 0; i < f->nattribution; i++) {
        const finding_attribution_t *a = &f->attribution[i];
        if (a->kind != ATTRIBUTION_MAPPING || !a->has_site || a->share < 0.1 || !pr->have_sites)
            continue;
        char where[512];
        report_site_label(pr, store, a->site, fr, where, sizeof where);
        size_t n = strlen(buf);
        snprintf(buf + n, len - n, " Most were made at %s.", where);
        return;
    }
}

size_t report_parts(process_t *pr, symbols_t *store, const finding_t *f, frames_t *fr,
                    report_part_t *out)
{
    size_t n = 0;
    for (size_t i = 0; i < f->nattribution && i < FINDING_MAX_ATTRIBUTION; i++) {
        const finding_attribution_t *a = &f->attribution[i];
        report_part_t p = {.kind = a->kind, .bytes = a->bytes, .share = a->share,
                           .has_site = a->has_site, .site = a->site, .file = a->file};
        if (a->has_site)
            report_site_label(pr, store, a->site, fr, p.label, sizeof p.label);
        else
            snprintf(p.label, sizeof p.label, "%s", a->what ? a->what : findings_kind_name(a->kind));
        size_t k = 0;
        while (k < n && !(out[k].kind == p.kind && out[k].file == p.file &&
                          out[k].has_site == p.has_site && !strcmp(out[k].label, p.label)))
            k++;
        if (k < n) {
            out[k].bytes += p.bytes;
            out[k].share += p.share;
        } else {
            out[n++] = p;
        }
    }
    for (size_t i = 1; i < n; i++) /* largest first, stable */
        for (size_t k = i; k > 0 && out[k].bytes > out[k - 1].bytes; k--) {
            report_part_t t = out[k];
            out[k] = out[k - 1];
            out[k - 1] = t;
        }
    /* beyond the largest REPORT_PARTS_SHOWN, the mapping sites are one part */
    size_t kept = 0, rest = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        bool fold = out[i].kind == ATTRIBUTION_MAPPING && i >= REPORT_PARTS_SHOWN;
        if (!fold) {
            out[kept++] = out[i];
            continue;
        }
        if (rest == SIZE_MAX) {
            rest = kept++;
            out[rest] = (report_part_t){.kind = ATTRIBUTION_MAPPING};
            snprintf(out[rest].label, sizeof out[rest].label, "other mapping sites");
        }
        out[rest].bytes += out[i].bytes;
        out[rest].share += out[i].share;
    }
    return kept;
}
