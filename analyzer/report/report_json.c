/*
 * report_json: the report for tools (docs/analysis-format.md).  See
 * report.h.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "analyzer/escape.h"
#include "analyzer/report/groups.h"
#include "analyzer/report/report.h"
#include "analyzer/report/report_allocators.h"

/* Names read from a module's file may be any bytes: escape_json. */
static json_t *frame_json(const symbols_frame_t *f)
{
    return json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:b}", "address", (json_int_t)f->address,
                     "module", escape_json(f->module), "offset",
                     f->module ? json_integer((json_int_t)f->offset) : json_null(), "function",
                     escape_json(f->function), "file", escape_json(f->file), "line",
                     f->line ? json_integer(f->line) : json_null(), "inlined", f->inlined);
}

static json_t *frames_json(process_t *pr, symbols_t *store, uint64_t id, frames_t *fr)
{
    json_t *frames = json_array();
    size_t nf = pr->have_sites ? frames_of(store, sites_get(&pr->sites, id), fr) : 0;
    for (size_t k = 0; k < nf; k++)
        json_array_append_new(frames, frame_json(&fr->v[k]));
    return frames;
}

/* A sampled trace's standard errors of a site's or function's bytes. */
static void estimate_errors(json_t *o, double var_peak, double var_allocated, double var_leaked)
{
    json_object_set_new(o, "peak_bytes_se", json_integer((json_int_t)llround(summary_se(var_peak))));
    json_object_set_new(o, "allocated_bytes_se",
                        json_integer((json_int_t)llround(summary_se(var_allocated))));
    json_object_set_new(o, "leaked_bytes_se",
                        json_integer((json_int_t)llround(summary_se(var_leaked))));
}

/* The top sites by peak. */
static json_t *sites_json(process_t *pr, symbols_t *store, const analyze_opts_t *o, frames_t *fr)
{
    json_t *out = json_array();
    if (!pr->have_sites)
        return out;
    uint64_t *ids;
    size_t n = sites_top(&pr->sites, SITES_BY_PEAK, o->sites, &ids);
    for (size_t i = 0; i < n; i++) {
        const site_t *st = sites_get(&pr->sites, ids[i]);
        json_t *site = json_pack(
            "{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:o}", "id", (json_int_t)ids[i], "calls",
            (json_int_t)sites_calls(st), "allocated_bytes", (json_int_t)st->allocated, "peak_bytes",
            (json_int_t)sites_peak_bytes(&pr->sites, ids[i]), "leaked_bytes", (json_int_t)st->live,
            "leaked_allocations", (json_int_t)st->live_blocks, "temporary_allocations",
            (json_int_t)st->temporaries, "leak_suppressed", st->suppressed, "frames",
            frames_json(pr, store, ids[i], fr));
        if (pr->s.sample_bytes) {
            /* a sampled trace does not see them */
            json_object_set_new(site, "temporary_allocations", json_null());
            estimate_errors(site, sites_key_var(&pr->sites, ids[i], SITES_BY_PEAK),
                            st->var_allocated, st->var_live);
        }
        json_array_append_new(out, site);
    }
    free(ids);
    return out;
}

/* The top allocating functions (analyzer/report/groups.h: each function's
 * figures summed over all its stacks) by peak, allocated bytes, calls,
 * temporaries and leaked bytes: one grouping, sorted once per list.  A
 * sampled trace counts no temporaries: by_temporaries is empty. */
static json_t *functions_json(process_t *pr, symbols_t *store, const analyze_opts_t *o,
                              frames_t *fr)
{
    static const struct {
        const char *name;
        sites_key_t key;
    } lists[] = {{"by_peak", SITES_BY_PEAK},
                 {"by_allocated", SITES_BY_ALLOCATED},
                 {"by_calls", SITES_BY_CALLS},
                 {"by_temporaries", SITES_BY_TEMPORARIES},
                 {"by_leaked", SITES_BY_LEAKED}};
    bool sampled = pr->s.sample_bytes != 0;
    json_t *out = json_object();
    groups_t g = {0};
    bool have = pr->have_sites && o->sites && groups_build(&g, &pr->sites, store, SITES_BY_PEAK, fr) == 0;
    for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
        json_t *list = json_array();
        if (have && !(sampled && lists[l].key == SITES_BY_TEMPORARIES)) {
            groups_sort(&g, &pr->sites, lists[l].key);
            size_t n = groups_ranked(&g);
            for (size_t i = 0; i < n && i < o->sites; i++) {
                const group_t *gr = &g.v[i];
                json_t *f = json_pack(
                    "{s:o, s:o, s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "function",
                    escape_json(gr->name), "file", gr->file[0] ? escape_json(gr->file) : json_null(),
                    "line", gr->line ? json_integer(gr->line) : json_null(), "stacks",
                    (json_int_t)gr->nids, "calls", (json_int_t)gr->calls, "peak_bytes",
                    (json_int_t)gr->peak, "allocated_bytes", (json_int_t)gr->allocated,
                    "leaked_bytes", (json_int_t)gr->leaked, "leaked_allocations",
                    (json_int_t)gr->leaked_blocks, "temporary_allocations",
                    (json_int_t)gr->temporaries);
                if (sampled) {
                    json_object_set_new(f, "temporary_allocations", json_null());
                    estimate_errors(f, gr->var_peak, gr->var_allocated, gr->var_leaked);
                }
                json_array_append_new(list, f);
            }
        }
        json_object_set_new(out, lists[l].name, list);
    }
    groups_free(&g);
    return out;
}

/* The top mapping sites by bytes mapped at the mapped peak. */
static json_t *mapping_sites_json(process_t *pr, symbols_t *store, const analyze_opts_t *o,
                                  frames_t *fr)
{
    json_t *out = json_array();
    uint64_t *ids;
    size_t n = mappings_top(&pr->maps, MAPPINGS_BY_PEAK, o->sites, &ids);
    for (size_t i = 0; i < n; i++) {
        const mapping_site_t *ms = &pr->maps.sites[ids[i]];
        uint64_t file;
        uint64_t peak = mappings_site_peak(&pr->maps, ids[i], &file);
        json_array_append_new(
            out, json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:o}", "id", (json_int_t)ids[i],
                           "calls", (json_int_t)ms->calls, "mapped_bytes", (json_int_t)ms->mapped,
                           "peak_bytes", (json_int_t)peak, "peak_file_bytes", (json_int_t)file,
                           "end_bytes", (json_int_t)ms->live, "file", ms->file, "frames",
                           frames_json(pr, store, ids[i], fr)));
    }
    free(ids);
    return out;
}

static json_t *findings_json(process_t *pr, symbols_t *store, frames_t *fr)
{
    json_t *list = json_array();
    for (size_t i = 0; i < pr->findings.n; i++) {
        const finding_t *f = &pr->findings.v[i];
        json_t *ev = json_object();
        for (size_t k = 0; k < f->nevidence; k++)
            json_object_set_new(ev, f->evidence[k].name,
                                f->evidence[k].integer ? json_integer((json_int_t)f->evidence[k].value)
                                                       : json_real(f->evidence[k].value));
        json_t *rem = json_array();
        for (size_t k = 0; k < f->nremediation; k++)
            json_array_append_new(rem, json_string(f->remediation[k]));
        json_t *attr = json_array();
        report_part_t parts[FINDING_MAX_ATTRIBUTION];
        size_t np = report_parts(pr, store, f, fr, parts);
        for (size_t k = 0; k < np; k++) {
            const report_part_t *a = &parts[k];
            json_t *site = a->has_site ? json_pack("{s:I, s:o, s:b}", "id", (json_int_t)a->site,
                                                   "label", escape_json(a->label), "file", a->file)
                                       : json_null();
            json_array_append_new(attr, json_pack("{s:s, s:I, s:f, s:o, s:o}", "kind",
                                                  findings_kind_name(a->kind), "bytes",
                                                  (json_int_t)a->bytes, "share", a->share, "site",
                                                  site, "what",
                                                  a->has_site ? json_null() : escape_json(a->label)));
        }
        char desc[1024];
        report_describe(pr, store, f, fr, desc, sizeof desc);
        json_array_append_new(
            list, json_pack("{s:s, s:s, s:s, s:f, s:I, s:f, s:o, s:o, s:o, s:f, s:I, s:f, s:f, s:o, s:o}",
                            "classification", findings_class_name(f->classification), "series",
                            findings_series_name(f->series), "severity",
                            findings_severity_name(f->severity), "confidence", f->confidence,
                            "bytes", (json_int_t)f->bytes, "share_of_peak_rss", f->share_of_rss,
                            "evidence", ev, "description", escape_json(desc), "remediation", rem,
                            "evidence_at_s", summary_secs(&pr->s, f->t), "evidence_t_ns",
                            (json_int_t)f->t, "start_s", summary_secs(&pr->s, f->start), "end_s",
                            summary_secs(&pr->s, f->end), "phase",
                            f->phase ? escape_json(f->phase) : json_null(), "attribution", attr));
    }
    return list;
}

/* The samples as columns: what a plot draws. */
static json_t *timeline_json(const process_t *pr)
{
    const summary_t *s = &pr->s;
    json_t *t = json_array(), *rss = json_array(), *heap = json_array(), *mapped = json_array(),
           *sum = json_array(), *reserved = json_array();
    for (size_t i = 0; i < s->npoints; i++) {
        const summary_point_t *p = &s->points[i];
        json_array_append_new(t, json_real(summary_secs(s, p->t)));
        json_array_append_new(rss, json_integer((json_int_t)p->used));
        json_array_append_new(heap, json_integer((json_int_t)p->heap_live));
        json_array_append_new(mapped, json_integer((json_int_t)p->mapped));
        json_array_append_new(sum, json_integer((json_int_t)(p->heap_live + p->mapped)));
        json_array_append_new(reserved, json_integer((json_int_t)p->reserved));
    }
    return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "t_s", t, "rss_bytes", rss,
                     "heap_live_bytes", heap, "mapped_live_bytes", mapped,
                     "heap_and_mapped_bytes", sum, "allocator_reserved_bytes", reserved);
}

static json_t *strategies_json(const process_t *pr)
{
    json_t *strategies = json_array();
    for (size_t i = 0; i < pr->nresults; i++) {
        const replay_result_t *r = &pr->results[i];
        uint64_t best = pr->results[0].m.peak_footprint;
        json_array_append_new(
            strategies,
            json_pack("{s:s, s:I, s:I, s:I, s:f, s:I, s:I, s:I, s:f, s:I, s:I, s:I, s:f, s:b}",
                      "name", r->name, "peak_footprint_bytes", (json_int_t)r->m.peak_footprint,
                      "over_best_bytes",
                      (json_int_t)(r->m.peak_footprint > best ? r->m.peak_footprint - best : 0),
                      "peak_live_bytes", (json_int_t)r->m.peak_live_requested,
                      "fragmentation", r->m.jw_fragmentation,
                      "live_at_peak_bytes", (json_int_t)r->m.live_at_peak,
                      "internal_fragmentation_at_peak_bytes", (json_int_t)r->m.internal_at_peak,
                      "external_fragmentation_at_peak_bytes", (json_int_t)r->m.free_at_peak,
                      "external_fragmentation_at_peak", r->m.external_at_peak,
                      "largest_free_bytes", (json_int_t)r->m.largest_free, "failed_requests",
                      (json_int_t)r->failed, "requests", (json_int_t)r->requests,
                      "events_per_s", r->events_per_s, "best", pr->nresults > 1 && i == 0));
    }
    return strategies;
}

static json_t *process_json(process_t *pr, symbols_t *store, const analyze_opts_t *o,
                            frames_t *fr)
{
    const summary_t *s = &pr->s;
    const mappings_t *m = &pr->maps;
    json_t *by_type = json_object();
    for (int t = 0; t < EV_COUNT; t++)
        if (pr->r.by_type[t])
            json_object_set_new(by_type, event_type_name((event_type_t)t),
                                json_integer(pr->r.by_type[t]));
    /* The trace's path is the user's, any bytes: escape_json. */
    json_t *summary = json_pack(
        "{s:o, s:I, s:s, s:s?, s:b, s:I, s:f, s:o, s:I, s:I, s:I, s:I, s:I, s:f, s:I, s:s, s:I,"
        " s:I, s:I, s:I, s:I, s:I, s:I}",
        "trace", escape_json(pr->path), "pid", (json_int_t)s->pid, "exe", s->exe,
        "end_reason", s->end_reason[0] ? s->end_reason : NULL, "truncated", pr->r.truncated,
        "dropped", (json_int_t)s->dropped,
        "duration_s", (double)(s->last_t - s->first_t) / 1e9, "records_by_type", by_type,
        "allocations", (json_int_t)s->allocations, "frees", (json_int_t)s->frees,
        "reallocs", (json_int_t)s->reallocs, "bytes_allocated", (json_int_t)s->bytes_allocated,
        "peak_heap_bytes", (json_int_t)s->peak_heap, "peak_heap_at_s", summary_secs(s, s->peak_heap_t),
        "peak_rss_bytes", (json_int_t)process_peak_rss(pr), "peak_rss_source",
        s->peak_hwm >= s->peak_rss ? "VmHWM" : "VmRSS", "peak_tree_rss_bytes",
        (json_int_t)s->peak_tree_rss, "samples", (json_int_t)s->samples,
        "leaked_bytes", (json_int_t)s->leaked_bytes,
        "leaked_allocations", (json_int_t)s->leaked_allocations,
        "temporary_allocations", (json_int_t)s->temporaries,
        "unknown_frees", (json_int_t)s->unknown_frees, "bad_lines", (json_int_t)pr->r.bad_lines);
    json_object_set_new(summary, "suppressed_leaked_bytes",
                        json_integer((json_int_t)pr->suppressed_bytes));
    json_object_set_new(summary, "suppressed_leaked_allocations",
                        json_integer((json_int_t)pr->suppressed_blocks));
    json_object_set_new(summary, "unknown_records", json_integer(pr->r.unknown));
    if (s->sample_bytes) /* a sampled trace does not see them */
        json_object_set_new(summary, "temporary_allocations", json_null());
    /* A sampled trace: the byte figures are estimates; their standard
     * errors, and what it does not count. */
    json_object_set_new(
        summary, "sampled",
        !s->sample_bytes
            ? json_null()
            : json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "interval_bytes",
                        (json_int_t)s->sample_bytes, "estimated_allocations",
                        (json_int_t)llround(s->est_allocations), "bytes_allocated_se",
                        (json_int_t)llround(summary_se(s->var_allocated)), "peak_heap_bytes_se",
                        (json_int_t)llround(summary_se(s->var_peak_heap)), "leaked_bytes_se",
                        (json_int_t)llround(summary_se(s->var_heap)), "recorded_allocations",
                        (json_int_t)s->allocations));
    json_object_set_new(summary, "untracked_blocks", json_integer((json_int_t)s->untracked));
    json_object_set_new(summary, "stackless_events", json_integer((json_int_t)s->stackless));
    json_object_set_new(summary, "threadless_events", json_integer((json_int_t)s->threadless));
    json_object_set_new(summary, "lost_blocks", json_integer((json_int_t)s->lost_blocks));
    json_object_set_new(summary, "sandbox",
                        s->sandboxed ? json_pack("{s:s, s:f, s:I, s:b, s:s}", "mode",
                                                 s->sandbox_mode, "at_s",
                                                 summary_secs(s, s->sandbox_t), "tid",
                                                 (json_int_t)s->sandbox_tid, "traced",
                                                 s->sandbox_traced, "without",
                                                 s->sandbox_without)
                                     : json_null());
    json_object_set_new(summary, "mapped_calls", json_integer((json_int_t)m->calls));
    json_object_set_new(summary, "munmap_calls", json_integer((json_int_t)m->unmaps));
    json_object_set_new(summary, "mremap_calls", json_integer((json_int_t)m->remaps));
    json_object_set_new(summary, "mapped_peak_bytes", json_integer((json_int_t)m->peak));
    json_object_set_new(summary, "mapped_peak_at_s", json_real(m->calls ? summary_secs(s, m->peak_t) : 0));
    json_object_set_new(summary, "mapped_peak_anon_bytes",
                        json_integer((json_int_t)(m->peak - m->peak_file)));
    json_object_set_new(summary, "mapped_peak_file_bytes", json_integer((json_int_t)m->peak_file));
    json_object_set_new(summary, "mapped_end_bytes", json_integer((json_int_t)m->live));
    json_object_set_new(summary, "mapped_end_file_bytes", json_integer((json_int_t)m->live_file));
    rss_parts_t parts;
    report_rss_parts(pr, &parts);
    if (parts.known)
        json_object_set_new(
            summary, "rss_at_top",
            json_pack("{s:f, s:I, s:I, s:b, s:I, s:I, s:I, s:o, s:I}", "at_s",
                      summary_secs(s, parts.t), "rss_bytes", (json_int_t)parts.rss,
                      "allocator_bytes", (json_int_t)parts.allocator, "allocator_is_heap",
                      parts.allocator_is_heap, "mapped_bytes", (json_int_t)parts.mapped,
                      "mapped_file_bytes", (json_int_t)parts.mapped_file, "mapped_span_bytes",
                      (json_int_t)parts.mapped_span, "file_pages_bytes",
                      parts.have_rollup ? json_integer((json_int_t)parts.file_pages) : json_null(),
                      "other_bytes", (json_int_t)parts.other));
    json_t *out = json_pack("{s:o, s:o, s:o, s:b, s:o, s:o, s:o}", "summary", summary, "findings",
                            findings_json(pr, store, fr), "strategies", strategies_json(pr),
                            "replay_skipped", pr->replay_skipped, "sites",
                            sites_json(pr, store, o, fr), "mapping_sites",
                            mapping_sites_json(pr, store, o, fr), "timeline", timeline_json(pr));
    json_object_set_new(out, "allocators", report_allocators_json(pr));
    json_object_set_new(out, "functions", functions_json(pr, store, o, fr));
    return out;
}

static json_t *tree_json(const process_t *procs, const ptree_t *t, uint64_t run_peak)
{
    json_t *nodes = json_array();
    for (size_t k = 0; k < t->n; k++) {
        size_t i = t->order[k];
        if (!procs[i].ok)
            continue;
        const summary_t *s = &procs[i].s;
        json_t *node = json_pack("{s:I, s:I, s:s, s:I}", "process", (json_int_t)i, "pid",
                                 (json_int_t)s->pid, "exe", s->exe, "depth",
                                 (json_int_t)t->depth[i]);
        json_object_set_new(node, "parent", t->parent[i] == PTREE_NONE
                                                ? json_null()
                                                : json_integer((json_int_t)t->parent[i]));
        json_object_set_new(node, "via", t->via[i] ? json_string(t->via[i]) : json_null());
        json_array_append_new(nodes, node);
    }
    return json_pack("{s:I, s:I, s:o}", "processes", (json_int_t)t->n, "peak_tree_rss_bytes",
                     (json_int_t)report_tree_peak(procs, t->n, run_peak), "nodes", nodes);
}

int report_json(FILE *to, process_t *procs, size_t n, symbols_t *store, const analyze_opts_t *o,
                uint64_t run_peak)
{
    frames_t fr = {0};
    json_t *out;
    if (n == 1) {
        out = procs[0].ok ? process_json(&procs[0], store, o, &fr) : json_object();
    } else {
        /* processes: in the order of the paths (a failed trace is an empty
         * object, so tree indices stay valid); tree: who started whom,
         * depth first. */
        json_t *list = json_array();
        for (size_t i = 0; i < n; i++)
            json_array_append_new(list, procs[i].ok ? process_json(&procs[i], store, o, &fr)
                                                    : json_object());
        ptree_t t;
        if (report_tree(procs, n, &t)) {
            fprintf(stderr, "%s: out of memory\n", ANALYZE_CMD);
            json_decref(list);
            free(fr.v);
            return -1;
        }
        out = json_pack("{s:o, s:o}", "processes", list, "tree", tree_json(procs, &t, run_peak));
        ptree_free(&t);
    }
    json_dumpf(out, to, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', to);
    json_decref(out);
    free(fr.v);
    return 0;
}
