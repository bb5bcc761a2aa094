/*
 * report_text: the report for people.  See report.h.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/escape.h"
#include "analyzer/report/groups.h"
#include "analyzer/report/proctable.h"
#include "analyzer/report/report.h"
#include "analyzer/report/report_allocators.h"
#include "lib/units.h"

#define SHOWN_FRAMES 8 /* frames of a site in the text report; the rest are counted */

static FILE *out; /* where report_text writes (set on entry) */

static const char *plural(uint64_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

static void print_frame(const symbols_frame_t *f)
{
    char label[64];
    if (f->function && f->file)
        escape_line(out, "        %s at %s:%u%s", f->function, frames_base_name(f->file),
                    f->line, f->inlined ? " (inlined)" : "");
    else if (f->function && f->name)
        escape_line(out, "        %s in %s", f->function, f->name);
    else
        escape_line(out, "        %s", symbols_label(f, label, sizeof label));
}

static void print_stack(process_t *pr, symbols_t *store, uint64_t id, frames_t *fr)
{
    size_t nf = pr->have_sites ? frames_of(store, sites_get(&pr->sites, id), fr) : 0;
    if (!nf)
        fprintf(out, "        (%s)\n", id ? "no stack record" : "no stack recorded");
    for (size_t k = 0; k < nf && k < SHOWN_FRAMES; k++)
        print_frame(&fr->v[k]);
    if (nf > SHOWN_FRAMES)
        fprintf(out, "        … %zu more %s\n", nf - SHOWN_FRAMES,
               plural(nf - SHOWN_FRAMES, "frame", "frames"));
}

/* ---- sites ---------------------------------------------------------------------- */

/* Each stack is printed once; a later mention refers to where it was
 * ("the stack under #2 by peak"). */
typedef struct shown_s {
    uint64_t id;
    int list;
    size_t rank;
} shown_t;

/* Indexed by sites_key_t. */
static const char *const list_names[] = {"peak", "calls", "leaked bytes", "temporary allocations",
                                         "allocated bytes"};

/* "1.5 MiB", or in a sampled trace "1.5 MiB ± 80.0 KiB" (one standard
 * error); returns buf. */
static const char *estimate(const summary_t *s, uint64_t bytes, double var, char *buf, size_t len)
{
    char v[32], e[32];
    units_format_bytes(bytes, v, sizeof v);
    if (!s->sample_bytes)
        snprintf(buf, len, "%s", v);
    else
        snprintf(buf, len, "%s ± %s", v,
                 units_format_bytes((uint64_t)llround(summary_se(var)), e, sizeof e));
    return buf;
}

static void sampled_figures(char *buf, size_t len, const summary_t *s, uint64_t peak,
                            double var_peak, uint64_t allocated, double var_allocated,
                            uint64_t leaked, double var_leaked)
{
    char a[80], b[80], c[80];
    char leak[96] = "nothing leaked";
    if (leaked)
        snprintf(leak, sizeof leak, "leaked %s", estimate(s, leaked, var_leaked, c, sizeof c));
    snprintf(buf, len, "%s live at peak, %s allocated, %s",
             estimate(s, peak, var_peak, a, sizeof a),
             estimate(s, allocated, var_allocated, b, sizeof b), leak);
}

#define SHOWN_STACKS 2 /* stacks under a function in the text report */
#define BRIEF_SITES 5  /* functions of a process shown briefly (one line each, no stacks) */

static void site_figures(char *buf, size_t len, uint64_t peak, uint64_t calls, uint64_t allocated,
                         uint64_t leaked, uint64_t blocks, uint64_t temporaries)
{
    char a[32], b[32], c[32];
    char leak[96] = "nothing leaked", temp[48] = "";
    if (leaked)
        snprintf(leak, sizeof leak, "leaked %s in %" PRIu64 " %s",
                 units_format_bytes(leaked, c, sizeof c), blocks, plural(blocks, "block", "blocks"));
    if (temporaries)
        snprintf(temp, sizeof temp, ", %" PRIu64 " temporary", temporaries);
    snprintf(buf, len, "%s live at peak, %" PRIu64 " %s%s, %s allocated, %s",
             units_format_bytes(peak, a, sizeof a), calls, plural(calls, "call", "calls"), temp,
             units_format_bytes(allocated, b, sizeof b), leak);
}

/* One ranking of the groups g (sorted by key): the top max functions,
 * their stacks under them when stacks (each printed once). */
static void print_ranking(process_t *pr, symbols_t *store, const groups_t *g, sites_key_t key,
                          size_t max, bool stacks, shown_t *shown, size_t *nshown, size_t cap,
                          frames_t *fr)
{
    bool sampled = pr->s.sample_bytes != 0;
    size_t ranked = groups_ranked(g);
    size_t n = ranked < max ? ranked : max;
    fprintf(out, "  top allocating functions by %s:%s\n", list_names[key], n ? "" : " none");
    for (size_t i = 0; i < n; i++) {
        const group_t *gr = &g->v[i];
        char figures[320];
        if (sampled)
            sampled_figures(figures, sizeof figures, &pr->s, gr->peak, gr->var_peak, gr->allocated,
                            gr->var_allocated, gr->leaked, gr->var_leaked);
        else
            site_figures(figures, sizeof figures, gr->peak, gr->calls, gr->allocated, gr->leaked,
                         gr->leaked_blocks, gr->temporaries);
        escape_line(out, "    #%zu  %s: %s", i + 1, gr->name, figures);
        if (!stacks)
            continue;
        size_t nk = 0; /* its stacks with a share of the key */
        while (nk < gr->nids && sites_key(&pr->sites, gr->ids[nk], key))
            nk++;
        for (size_t k = 0; k < nk && k < SHOWN_STACKS; k++) {
            uint64_t id = gr->ids[k];
            const site_t *st = sites_get(&pr->sites, id);
            if (nk > 1) {
                if (sampled)
                    sampled_figures(figures, sizeof figures, &pr->s,
                                    sites_peak_bytes(&pr->sites, id),
                                    sites_key_var(&pr->sites, id, SITES_BY_PEAK), st->allocated,
                                    st->var_allocated, sites_key(&pr->sites, id, SITES_BY_LEAKED),
                                    sites_key_var(&pr->sites, id, SITES_BY_LEAKED));
                else
                    site_figures(figures, sizeof figures, sites_peak_bytes(&pr->sites, id),
                                 st->calls, st->allocated, st->suppressed ? 0 : st->live,
                                 st->suppressed ? 0 : st->live_blocks, st->temporaries);
                fprintf(out, "      stack %zu of %zu: %s\n", k + 1, nk, figures);
            }
            const shown_t *seen = NULL;
            for (size_t j = 0; shown && j < *nshown; j++)
                if (shown[j].id == id)
                    seen = &shown[j];
            if (seen) {
                fprintf(out, "        (the stack under #%zu by %s)\n", seen->rank,
                        list_names[seen->list]);
                continue;
            }
            if (shown && *nshown < cap)
                shown[(*nshown)++] = (shown_t){.id = id, .list = key, .rank = i + 1};
            print_stack(pr, store, id, fr);
        }
        if (nk > SHOWN_STACKS)
            fprintf(out, "      … %zu more %s\n", nk - SHOWN_STACKS,
                    plural(nk - SHOWN_STACKS, "stack", "stacks"));
    }
}

/* The functions by peak, by calls, by temporaries (when any), then the
 * leaks (a sampled trace: by peak, allocated bytes and leaks); brief: the
 * top BRIEF_SITES by peak, one line each. */
static void print_sites(process_t *pr, symbols_t *store, const analyze_opts_t *o, frames_t *fr,
                        bool brief)
{
    if (!pr->have_sites || !o->sites)
        return;
    groups_t g;
    if (groups_build(&g, &pr->sites, store, SITES_BY_PEAK, fr)) {
        fprintf(stderr, "%s: out of memory\n", ANALYZE_CMD);
        return;
    }
    if (brief) {
        print_ranking(pr, store, &g, SITES_BY_PEAK, o->sites < BRIEF_SITES ? o->sites : BRIEF_SITES,
                      false, NULL, NULL, 0, fr);
        groups_free(&g);
        return;
    }
    size_t cap = 4 * o->sites * SHOWN_STACKS + 1, nshown = 0;
    shown_t *shown = calloc(cap, sizeof *shown);
    /* A sampled trace counts no calls nor temporaries: its lists are by
     * bytes (the summary says so in one line each). */
    static const sites_key_t full[] = {SITES_BY_PEAK, SITES_BY_CALLS, SITES_BY_TEMPORARIES,
                                       SITES_BY_LEAKED};
    static const sites_key_t sampled[] = {SITES_BY_PEAK, SITES_BY_ALLOCATED, SITES_BY_LEAKED};
    const sites_key_t *keys = pr->s.sample_bytes ? sampled : full;
    size_t nkeys = pr->s.sample_bytes ? sizeof sampled / sizeof sampled[0]
                                      : sizeof full / sizeof full[0];
    for (size_t k = 0; k < nkeys; k++) {
        if (keys[k] == SITES_BY_TEMPORARIES && !pr->s.temporaries)
            continue;
        groups_sort(&g, &pr->sites, keys[k]);
        print_ranking(pr, store, &g, keys[k], o->sites, true, shown, &nshown, cap, fr);
    }
    free(shown);
    groups_free(&g);
}

static void print_mapping_sites(process_t *pr, symbols_t *store, const analyze_opts_t *o,
                                frames_t *fr)
{
    const mappings_t *m = &pr->maps;
    if (!o->sites || !m->calls)
        return;
    uint64_t *ids;
    size_t n = mappings_top(m, MAPPINGS_BY_PEAK, o->sites, &ids);
    fprintf(out, "  top mapping sites by mapped at peak:%s\n", n ? "" : " none");
    for (size_t i = 0; i < n; i++) {
        const mapping_site_t *ms = &m->sites[ids[i]];
        char a[32], b[32], c[32];
        fprintf(out, "    #%zu  %s mapped at peak, %" PRIu64 " mmap %s, %s mapped in all, %s still "
               "mapped at the end (%s)\n",
               i + 1, units_format_bytes(mappings_site_peak(m, ids[i], NULL), a, sizeof a),
               ms->calls, plural(ms->calls, "call", "calls"),
               units_format_bytes(ms->mapped, b, sizeof b), units_format_bytes(ms->live, c, sizeof c),
               ms->file ? "file-backed" : "anonymous");
        print_stack(pr, store, ids[i], fr);
    }
    free(ids);
}

/* ---- strategies ----------------------------------------------------------------- */

static void print_strategies(const process_t *pr)
{
    char a[32], b[32], c[32];
    if (pr->s.sample_bytes && pr->o->replay) {
        fprintf(out, "  strategies:     not replayed: a sampled trace does not hold every request\n");
        return;
    }
    if (pr->replay_skipped) {
        fprintf(out, "  strategies:     not replayed: the peak heap is under %s (-s replays anyway)\n",
               units_format_bytes(ANALYZE_REPLAY_MIN_HEAP, a, sizeof a));
        return;
    }
    if (!pr->nresults)
        return;
    fprintf(out, "  strategies (the trace's allocations replayed, best first):\n");
    fprintf(out, "    %-10s %11s %13s %9s %11s %10s %8s\n", "strategy", "peak foot", "over best",
           "J-W frag", "int@peak", "ext@peak", "failed");
    const replay_result_t *best = &pr->results[0];
    for (size_t i = 0; i < pr->nresults; i++) {
        const replay_result_t *r = &pr->results[i];
        char over[40] = "best";
        if (i > 0 && r->m.peak_footprint < best->m.peak_footprint)
            snprintf(over, sizeof over, "-"); /* it failed more requests */
        else if (i > 0)
            snprintf(over, sizeof over, "+%s",
                     units_format_bytes(r->m.peak_footprint > best->m.peak_footprint
                                            ? r->m.peak_footprint - best->m.peak_footprint : 0,
                                        b, sizeof b));
        /* J-W as a percentage up to 999.9%; beyond, the footprint as a
         * multiple of the peak live bytes (no five-digit percentages) */
        char jw[32];
        if (r->m.jw_fragmentation < 9.995)
            snprintf(jw, sizeof jw, "%.1f%%", 100 * r->m.jw_fragmentation);
        else
            snprintf(jw, sizeof jw, "%.0fx live", r->m.jw_fragmentation + 1);
        char e[32];
        fprintf(out, "    %-10s %11s %13s %9s %11s %10s %8" PRIu64 "\n", r->name,
               units_format_bytes(r->m.peak_footprint, a, sizeof a), over, jw,
               units_format_bytes(r->m.internal_at_peak, c, sizeof c),
               units_format_bytes(r->m.free_at_peak, e, sizeof e), r->failed);
    }
    fprintf(out, "    peak foot: the most device bytes the strategy held at once; J-W frag: peak foot\n"
           "    / peak live - 1 (Johnstone-Wilson; past 999%% the footprint as a multiple of\n"
           "    the live bytes, \"Nx live\"); int@peak: bytes lost inside blocks (rounding,\n"
           "    alignment) at the peak; ext@peak: free bytes inside the footprint at the peak\n"
           "    (peak foot = live + int@peak + ext@peak); failed: requests the device could\n"
           "    not serve.\n");
}

/* ---- findings ------------------------------------------------------------------- */

static void print_findings(process_t *pr, symbols_t *store, frames_t *fr)
{
    const findings_t *fs = &pr->findings;
    fprintf(out, "  findings:       %s\n", fs->n ? "" : "none");
    for (size_t i = 0; i < fs->n; i++) {
        const finding_t *f = &fs->v[i];
        char a[32], b[32];
        escape_line(out, "    [%s] %s in %s (%s, %.0f%% of peak RSS, confidence %.2f, from %.3f s "
                    "to %.3f s, peak at %.3f s%s%s)",
                    findings_severity_name(f->severity), findings_class_words(f->classification),
                    findings_series_words(f->series), units_format_bytes(f->bytes, a, sizeof a),
                    100 * f->share_of_rss, f->confidence, summary_secs(&pr->s, f->start),
                    summary_secs(&pr->s, f->end), summary_secs(&pr->s, f->t),
                    f->phase ? ", phase " : "", f->phase ? f->phase : "");
        char desc[1024];
        report_describe(pr, store, f, fr, desc, sizeof desc);
        escape_line(out, "    %s", desc);
        report_part_t parts[FINDING_MAX_ATTRIBUTION];
        size_t np = report_parts(pr, store, f, fr, parts);
        if (np)
            fprintf(out, "      what it is made of at its peak:\n");
        for (size_t k = 0; k < np; k++) {
            const report_part_t *at = &parts[k];
            if (at->kind == ATTRIBUTION_MAPPING && at->has_site)
                escape_line(out, "        %3.0f%%  %9s  %s mappings made at %s", 100 * at->share,
                            units_format_bytes(at->bytes, b, sizeof b),
                            at->file ? "file" : "anonymous", at->label);
            else
                escape_line(out, "        %3.0f%%  %9s  %s", 100 * at->share,
                            units_format_bytes(at->bytes, b, sizeof b), at->label);
        }
        for (size_t k = 0; k < f->nremediation; k++)
            escape_line(out, "      - %s", f->remediation[k]);
    }
}

/* ---- a process ------------------------------------------------------------------ */

/* The process's heading, how it ended, and what its trace lacks. */
static void print_ending(process_t *pr)
{
    const summary_t *s = &pr->s;
    escape_line(out, "== %s (pid %" PRId64 ") — %s", s->exe[0] ? s->exe : "?", s->pid,
                pr->path);
    char lost[96] = "";
    if (s->dropped)
        snprintf(lost, sizeof lost, "; %" PRIu64 " records dropped: the figures are of what "
                 "was written", s->dropped);
    if (s->argv[0])
        escape_line(out, "  command:        %s", s->argv);
    escape_line(out, "  ended:          %s%s%s",
                pr->r.truncated ? "truncated (no end record)" : s->end_reason, lost,
                pr->r.bad_lines ? " — some lines could not be read" : "");
    if (s->sandboxed && s->sandbox_traced)
        escape_line(out, "  sandbox:        seccomp %s mode from %.3f s (thread %" PRId64
                    "): traced on, memsim going without %s", s->sandbox_mode,
                    summary_secs(s, s->sandbox_t), s->sandbox_tid,
                    s->sandbox_without[0] ? s->sandbox_without : "nothing");
    else if (s->sandboxed)
        escape_line(out, "  sandbox:        seccomp %s mode from %.3f s (thread %" PRId64
                    "): tracing stopped there (the events' clock would need a system call it "
                    "forbids): what follows is not in the trace, and the leaks are the blocks "
                    "live then", s->sandbox_mode, summary_secs(s, s->sandbox_t), s->sandbox_tid);
    if (s->untracked)
        fprintf(out, "  untracked:      %" PRIu64 " %s the recorder had no memory for: the samples' "
               "heap figures leave %s out\n",
               s->untracked, plural(s->untracked, "block", "blocks"),
               s->untracked == 1 ? "it" : "them");
    if (s->lost_blocks)
        fprintf(out, "  incomplete:     %" PRIu64 " %s this analysis had no memory to track: the live "
               "heap, its peak, the leaks and the sites are not exact\n",
               s->lost_blocks, plural(s->lost_blocks, "block", "blocks"));
    if (s->stackless)
        fprintf(out, "  stackless:      %" PRIu64 " %s recorded without a stack (no memory for the "
               "stack table): the sites count %s as \"no stack recorded\"\n",
               s->stackless, plural(s->stackless, "event", "events"),
               s->stackless == 1 ? "it" : "them");
    if (s->threadless)
        fprintf(out, "  threadless:     %" PRIu64 " %s recorded without a thread (no memory for the "
               "recorder's thread table)\n",
               s->threadless, plural(s->threadless, "event", "events"));
}

/* Its duration and its allocations, calls and temporaries. */
static void print_allocations(process_t *pr)
{
    const summary_t *s = &pr->s;
    char a[32];
    fprintf(out, "  duration:       %.3f s\n", (double)(s->last_t - s->first_t) / 1e9);
    char est[80];
    if (s->sample_bytes) {
        fprintf(out, "  sampled:        an allocation in about every %s (%" PRIu64 " recorded): the "
                "bytes below are estimates ± one standard error\n",
                units_format_bytes(s->sample_bytes, a, sizeof a), s->allocations);
        fprintf(out, "  allocations:    %s in all\n",
                estimate(s, s->bytes_allocated, s->var_allocated, est, sizeof est));
        fprintf(out, "  calls:          not counted: a sampled trace has no exact call counts\n");
        fprintf(out, "  temporaries:    not counted: a sampled trace does not see them\n");
    } else {
        fprintf(out, "  allocations:    %" PRIu64 " (%" PRIu64 " %s), %s in all; %" PRIu64 " %s; %" PRIu64
                " temporary\n",
                s->allocations, s->reallocs, plural(s->reallocs, "realloc", "reallocs"),
                units_format_bytes(s->bytes_allocated, a, sizeof a), s->frees,
                plural(s->frees, "free", "frees"), s->temporaries);
    }
}

/* Its peaks: heap, mappings, RSS and what the RSS is made of; its leaks. */
static void print_peaks(process_t *pr)
{
    const summary_t *s = &pr->s;
    const mappings_t *m = &pr->maps;
    char a[32], b[32], c[32];
    char est[80];
    fprintf(out, "  peak heap:      %s at %.3f s\n",
            estimate(s, s->peak_heap, s->var_peak_heap, est, sizeof est),
           summary_secs(s, s->peak_heap_t));
    if (m->calls)
        fprintf(out, "  mapped:         %" PRIu64 " mmap %s; peak %s at %.3f s (%s anonymous, %s "
               "file-backed); %s still mapped at the end\n",
               m->calls, plural(m->calls, "call", "calls"),
               units_format_bytes(m->peak, a, sizeof a), summary_secs(s, m->peak_t),
               units_format_bytes(m->peak - m->peak_file, b, sizeof b),
               units_format_bytes(m->peak_file, c, sizeof c),
               units_format_bytes(m->live, (char[32]){0}, 32));
    else
        fprintf(out, "  mapped:         no mappings of the program's own\n");
    if (s->samples)
        fprintf(out, "  peak RSS:       %s (VmHWM; tree %s; %" PRIu64 " %s)\n",
               units_format_bytes(process_peak_rss(pr), a, sizeof a),
               units_format_bytes(s->peak_tree_rss, b, sizeof b), s->samples,
               plural(s->samples, "sample", "samples"));
    rss_parts_t parts;
    report_rss_parts(pr, &parts);
    if (parts.known && parts.rss) {
        char e[32], f[32];
        fprintf(out, "  RSS at its top: %s at %.3f s: %s %s, %s the program's mappings",
               units_format_bytes(parts.rss, a, sizeof a), summary_secs(s, parts.t),
               units_format_bytes(parts.allocator, b, sizeof b),
               parts.allocator_is_heap ? "heap" : "held by the allocator",
               units_format_bytes(parts.mapped, c, sizeof c));
        if (parts.mapped_span > parts.mapped) /* mapped, not all of it resident */
            fprintf(out, " (of %s mapped)", units_format_bytes(parts.mapped_span, e, sizeof e));
        if (parts.have_rollup)
            fprintf(out, ", %s file pages (code, libraries, files read)",
                   units_format_bytes(parts.file_pages, e, sizeof e));
        fprintf(out, ", %s other%s\n", units_format_bytes(parts.other, f, sizeof f),
               parts.have_rollup ? " (stacks, the allocator's own mappings)" : "");
    }
    char supp[160] = "";
    if (pr->suppressed_blocks)
        snprintf(supp, sizeof supp, "; %s in %" PRIu64 " %s suppressed (the C runtime's and the "
                 "loader's one-time allocations, --suppressions)",
                 units_format_bytes(pr->suppressed_bytes, b, sizeof b), pr->suppressed_blocks,
                 plural(pr->suppressed_blocks, "block", "blocks"));
    if (s->sample_bytes)
        fprintf(out, "  leaked:         %s%s%s\n",
                estimate(s, s->leaked_bytes, s->var_heap, est, sizeof est),
                s->lost_blocks ? " (incomplete: see above)" : "", supp);
    else
        fprintf(out, "  leaked:         %s in %" PRIu64 " %s%s%s\n",
                units_format_bytes(s->leaked_bytes, a, sizeof a), s->leaked_allocations,
                plural(s->leaked_allocations, "block", "blocks"),
                s->lost_blocks ? " (incomplete: see above)" : "", supp);
}

/* One process: its figures, its findings, its functions and leaks, its
 * mapping sites, then the strategies; brief (a process of a tree beside
 * the program the user ran): the figures, the findings and its top
 * functions by peak, one line each, and the real allocators in a line
 * (under sh -c, the shell is the program run: the replays that matter
 * are the others'). */
static void print_process(process_t *pr, symbols_t *store, const analyze_opts_t *o, frames_t *fr,
                          bool brief)
{
    print_ending(pr);
    print_allocations(pr);
    print_peaks(pr);
    print_findings(pr, store, fr);
    print_sites(pr, store, o, fr, brief);
    if (brief) {
        report_allocators_text_brief(out, pr);
        return;
    }
    print_mapping_sites(pr, store, o, fr);
    print_strategies(pr);
    report_allocators_text(out, pr);
}

/* ---- several processes ------------------------------------------------------------ */

/* The process table: the tree's rows (analyzer/report/proctable.h), indented,
 * exec chains and small processes folded, heaviest first. */
static void print_table(const process_t *procs, const proctable_t *pt)
{
    char a[32], b[32], c[32], d[32];
    fprintf(out, "process table (heaviest first under each parent; exec chains and processes under "
                 "1%% folded):\n");
    fprintf(out, "  %8s %8s %-24s %10s %10s %10s %10s %10s\n", "pid", "parent", "exe", "calls",
            "peak heap", "peak mapped", "peak RSS", "leaked");
    for (size_t r = 0; r < pt->n; r++) {
        const proctable_row_t *row = &pt->v[r];
        char name[64], parent[24] = "-";
        int ind = (int)(row->depth > 8 ? 8 : row->depth) * 2;
        const proctable_row_t *up = row->parent_row == SIZE_MAX ? NULL : &pt->v[row->parent_row];
        if (up && up->proc != SIZE_MAX)
            snprintf(parent, sizeof parent, "%" PRId64, procs[up->proc].s.pid);
        if (row->proc == SIZE_MAX) {
            snprintf(name, sizeof name, "%*s(%zu smaller)", ind, "", row->nfolded);
            escape_line(out, "  %8s %8s %-24s %10" PRIu64 " %10s %10s %10s %10s  %s", "-", parent,
                        name, row->calls, units_format_bytes(row->peak_heap, a, sizeof a),
                        units_format_bytes(row->peak_mapped, b, sizeof b),
                        units_format_bytes(row->peak_rss, c, sizeof c),
                        units_format_bytes(row->leaked, d, sizeof d), row->names);
            continue;
        }
        const process_t *pr = &procs[row->proc];
        const summary_t *s = &pr->s;
        snprintf(name, sizeof name, "%*s%s", ind, "", s->exe[0] ? frames_base_name(s->exe) : "?");
        char how[300] = "";
        if (row->how || row->via[0])
            snprintf(how, sizeof how, "  %s%s%s%s", row->how ? row->how : "",
                     row->how && row->via[0] ? ", " : "", row->via[0] ? "exec'd via " : "", row->via);
        escape_line(out, "  %8" PRId64 " %8s %-24s %10" PRIu64 " %10s %10s %10s %10s%s", s->pid,
                    parent, name, s->allocations, units_format_bytes(s->peak_heap, a, sizeof a),
                    units_format_bytes(pr->maps.peak, b, sizeof b),
                    s->samples ? units_format_bytes(process_peak_rss(pr), c, sizeof c) : "-",
                    units_format_bytes(s->leaked_bytes, d, sizeof d), how);
    }
}

int report_text(FILE *to, process_t *procs, size_t n, symbols_t *store, const analyze_opts_t *o,
                uint64_t run_peak)
{
    out = to;
    frames_t fr = {0};
    if (n == 1) {
        if (procs[0].ok)
            print_process(&procs[0], store, o, &fr, false);
        free(fr.v);
        return 0;
    }
    ptree_t t;
    proctable_t pt;
    size_t *order = report_order(procs, n);
    if (!order || report_tree(procs, n, &t)) {
        free(order);
        fprintf(stderr, "%s: out of memory\n", ANALYZE_CMD);
        return -1;
    }
    if (proctable_build(&pt, procs, n, &t)) {
        free(order);
        ptree_free(&t);
        fprintf(stderr, "%s: out of memory\n", ANALYZE_CMD);
        return -1;
    }
    uint64_t peak = report_tree_peak(procs, n, run_peak), total = report_total_weight(procs, n);
    char a[32];
    size_t linked = 0, nok = 0;
    for (size_t i = 0; i < t.n; i++) {
        nok += procs[i].ok;
        linked += procs[i].ok && t.parent[i] != PTREE_NONE;
    }
    if (linked)
        fprintf(out, "process tree: %zu %s, peak tree RSS %s (%s)\n", nok,
                plural(nok, "process", "processes"), units_format_bytes(peak, a, sizeof a),
                run_peak > 0 ? "memsim run's polls and each process's VmHWM"
                             : "the samples and each process's VmHWM");
    else
        fprintf(out, "%zu traces of unrelated processes (no one started another)\n", nok);
    if (o->run_command && o->run_command[0])
        escape_line(out, "command: %s", o->run_command);
    fputc('\n', out);
    /* The program the user ran first, in full (unless --pid or --exe
     * leave it out); then the others that matter, heaviest first: in full
     * when chosen (--all, --pid, --exe), else briefly. */
    bool chosen = o->all || o->npids || o->exe;
    size_t hidden = 0, shown = 0, main = pt.main_proc;
    if (main != SIZE_MAX && (!(o->npids || o->exe) || report_shown(&procs[main], o, total))) {
        print_process(&procs[main], store, o, &fr, false);
        shown++;
    }
    for (size_t k = 0; k < n; k++) {
        process_t *pr = &procs[order[k]];
        if (!pr->ok || order[k] == main)
            continue;
        if (!report_shown(pr, o, total)) {
            hidden++;
            continue;
        }
        if (shown++)
            fputc('\n', out);
        print_process(pr, store, o, &fr, !chosen);
    }
    if (hidden && !o->npids && !o->exe)
        fprintf(out, "\n%zu smaller %s not shown (under 1%% of the heap and mappings of all): --all "
                     "shows them, --pid PID or --exe NAME one in full\n", hidden,
                plural(hidden, "process", "processes"));
    else if (!shown)
        fprintf(out, "no process matches --pid or --exe\n");
    fputc('\n', out);
    print_table(procs, &pt);
    proctable_free(&pt);
    ptree_free(&t);
    free(order);
    free(fr.v);
    return 0;
}
