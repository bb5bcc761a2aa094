/*
 * findings_compose: attribution and remediation.  See findings_compose.h
 * and docs/findings.md.
 */
#include "analyzer/consume/findings_compose.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- remediation: by class and by what the bytes at stake are made of ----------------- */

typedef struct remedy_s {
    finding_class_t c;
    attribution_kind_t kind; /* the largest part of the bytes at stake */
    const char *text[2];
} remedy_t;

static const remedy_t remedies[] = {
    {FINDING_SPIKE, ATTRIBUTION_ALLOCATOR,
     {"Look at what the program does at the spike's time and phase: a burst of short-lived "
      "allocations or a large temporary buffer.",
      "Reuse buffers across iterations, or cap the size of the burst."}},
    {FINDING_SPIKE, ATTRIBUTION_MAPPING,
     {"The spike is the program's own mappings (the mapping sites below): unmap a region as "
      "soon as it is done with.",
      "Map and touch less at once, or reuse one region instead of mapping new ones."}},
    {FINDING_DRIFT, ATTRIBUTION_ALLOCATOR,
     {"The footprint grows steadily: look for caches without a bound, lists that only grow, "
      "or allocations never freed (the leaks and sites).",
      "Compare two runs of different lengths: a leak grows with the run."}},
    {FINDING_DRIFT, ATTRIBUTION_MAPPING,
     {"The program maps memory and does not unmap it (the mapping sites below): munmap the "
      "regions it no longer uses.",
      "Reuse a region instead of mapping a new one each time, or bound how many stay mapped."}},
    {FINDING_FRAGMENTATION, ATTRIBUTION_ALLOCATOR,
     {"The allocator holds much more than it hands out: freed memory is not returned or not "
      "reusable.",
      "Try malloc_trim, another allocator, or the strategies ranked by the replay."}},
    /* the gap's other parts: the same advice whatever the class */
    {FINDING_SPIKE, ATTRIBUTION_FILE,
     {"Most of it is file pages: the program's code, its libraries and the files it reads, "
      "paged in as they are used; not the heap, not a leak.",
      "Read large files in pieces (or map them and drop the pages with madvise), and load "
      "fewer or smaller libraries."}},
    {FINDING_SPIKE, ATTRIBUTION_OTHER,
     {"Most of it is memory outside the heap and the program's recorded mappings: thread "
      "stacks, another allocator's or a runtime's own memory, shared memory.",
      "Look at the threads the program starts (their stack size) and at the libraries that "
      "manage memory themselves."}},
};

static const char *kind_key[] = {
    [ATTRIBUTION_MAPPING] = "mapping", [ATTRIBUTION_ALLOCATOR] = "allocator",
    [ATTRIBUTION_OTHER] = "other", [ATTRIBUTION_FILE] = "file_pages"};

static const char no_rollup[] = "not in the recorded mappings (the trace has no smaps_rollup)";

/* The largest kind in the finding's composition (a part of unknown make
 * counts as the heap's: the class's general advice). */
static attribution_kind_t main_kind(const finding_t *f)
{
    uint64_t by[4] = {0};
    for (size_t i = 0; i < f->nattribution; i++)
        by[f->attribution[i].what == no_rollup ? ATTRIBUTION_ALLOCATOR : f->attribution[i].kind] +=
            f->attribution[i].bytes;
    attribution_kind_t best = f->series == SERIES_MAPPED ? ATTRIBUTION_MAPPING
                                                         : ATTRIBUTION_ALLOCATOR;
    for (int k = 0; k < 4; k++)
        if (by[k] > by[best])
            best = (attribution_kind_t)k;
    return best;
}

void findings_remediate(const findings_config_t *c, finding_t *f)
{
    attribution_kind_t kind = main_kind(f);
    const char *name = findings_class_name(f->classification);
    char key[64];
    snprintf(key, sizeof key, "%s/%s", name, kind_key[kind]);
    json_t *custom = NULL;
    if (c->remediation) {
        custom = json_object_get(c->remediation, key);
        if (!json_is_array(custom))
            custom = json_object_get(c->remediation, name);
    }
    f->nremediation = 0;
    if (json_is_array(custom)) {
        for (size_t i = 0; i < json_array_size(custom) && f->nremediation < FINDING_MAX_REMEDIATION; i++) {
            const char *t = json_string_value(json_array_get(custom, i));
            if (t)
                f->remediation[f->nremediation++] = t;
        }
        return;
    }
    /* The class's own text for the kind; for file pages and other memory
     * the same text whatever the class; else the class's heap text. */
    const remedy_t *pick = NULL;
    for (size_t i = 0; i < sizeof remedies / sizeof remedies[0] && !pick; i++)
        if (remedies[i].c == f->classification && remedies[i].kind == kind)
            pick = &remedies[i];
    for (size_t i = 0; i < sizeof remedies / sizeof remedies[0] && !pick; i++)
        if (remedies[i].kind == kind &&
            (kind == ATTRIBUTION_FILE || kind == ATTRIBUTION_OTHER))
            pick = &remedies[i];
    for (size_t i = 0; i < sizeof remedies / sizeof remedies[0] && !pick; i++)
        if (remedies[i].c == f->classification)
            pick = &remedies[i];
    if (pick) {
        f->remediation[f->nremediation++] = pick->text[0];
        f->remediation[f->nremediation++] = pick->text[1];
    }
}

/* ---- composition ---------------------------------------------------------------------- */

void findings_attribute(finding_t *f, attribution_kind_t kind, uint64_t bytes, const char *what)
{
    if (!bytes || f->nattribution >= FINDING_MAX_ATTRIBUTION)
        return;
    f->attribution[f->nattribution++] = (finding_attribution_t){
        .kind = kind, .bytes = bytes, .share = f->bytes ? (double)bytes / (double)f->bytes : 0,
        .what = what};
}

#define SHOWN_MAPPING_SITES 32 /* (the reports merge those that read the same) */

/* `bytes` of mappings over the mapping sites: in proportion to their
 * bytes at the mapped peak or at the end, whichever total is nearer the
 * mappings live at the time (`mapped`). */
void findings_attribute_mappings(finding_t *f, const mappings_t *m, uint64_t mapped,
                                 uint64_t bytes)
{
    if (!bytes)
        return;
    if (!m) {
        findings_attribute(f, ATTRIBUTION_MAPPING, bytes, "the program's mappings");
        return;
    }
    uint64_t d_peak = m->peak > mapped ? m->peak - mapped : mapped - m->peak;
    uint64_t d_end = m->live > mapped ? m->live - mapped : mapped - m->live;
    mappings_key_t key = d_peak <= d_end ? MAPPINGS_BY_PEAK : MAPPINGS_BY_END;
    uint64_t total = key == MAPPINGS_BY_PEAK ? m->peak : m->live;
    uint64_t *ids = NULL;
    size_t n = total ? mappings_top(m, key, SHOWN_MAPPING_SITES, &ids) : 0;
    uint64_t given = 0;
    for (size_t i = 0; i < n && f->nattribution < FINDING_MAX_ATTRIBUTION; i++) {
        uint64_t file = 0;
        uint64_t k = key == MAPPINGS_BY_PEAK ? mappings_site_peak(m, ids[i], &file)
                                             : m->sites[ids[i]].live;
        if (key == MAPPINGS_BY_END)
            file = m->sites[ids[i]].live_file;
        uint64_t b = (uint64_t)((double)bytes * ((double)k / (double)total));
        if (b > bytes - given)
            b = bytes - given;
        if (!b)
            continue;
        f->attribution[f->nattribution++] = (finding_attribution_t){
            .kind = ATTRIBUTION_MAPPING, .bytes = b,
            .share = f->bytes ? (double)b / (double)f->bytes : 0, .has_site = true,
            .site = ids[i], .file = file * 2 > k};
        given += b;
    }
    free(ids);
    if (given < bytes)
        findings_attribute(f, ATTRIBUTION_MAPPING, bytes - given, "other mapping sites");
}

/* The clean file pages near point i: the latest smaps_rollup at or before
 * it, else the first after; 0 when none. */
static uint64_t clean_near(const summary_t *s, size_t i)
{
    for (size_t k = i + 1; k-- > 0;)
        if (s->points[k].rollup_rss)
            return s->points[k].rollup_clean;
    for (size_t k = i + 1; k < s->npoints; k++)
        if (s->points[k].rollup_rss)
            return s->points[k].rollup_clean;
    return 0;
}

static bool has_rollup(const summary_t *s)
{
    for (size_t i = 0; i < s->npoints; i++)
        if (s->points[i].rollup_rss)
            return true;
    return false;
}

/* What a gap finding's bytes are made of: what grew between its base
 * (point b) and its peak (point p).  Returns the clean file pages' part. */
uint64_t findings_explain_gap(finding_t *f, const summary_t *s, const mappings_t *m, size_t b,
                              size_t p)
{
    const summary_point_t *P = &s->points[p], *B = &s->points[b];
    uint64_t left = f->bytes;
    uint64_t mapped = P->mapped > B->mapped ? P->mapped - B->mapped : 0;
    if (mapped > left)
        mapped = left;
    findings_attribute_mappings(f, m, P->mapped, mapped);
    f->mapping_share = f->bytes ? (double)mapped / (double)f->bytes : 0;
    left -= mapped;
    if (!P->reserved && left) { /* no allocator figures: the heap is in the gap */
        uint64_t heap = P->heap_max > B->heap_max ? P->heap_max - B->heap_max : 0;
        heap = heap < left ? heap : left;
        findings_attribute(f, ATTRIBUTION_ALLOCATOR, heap,
                  "the heap's blocks (the allocator's own figures are unknown)");
        left -= heap;
    }
    if (!left)
        return 0;
    if (!has_rollup(s)) {
        findings_attribute(f, ATTRIBUTION_OTHER, left, no_rollup);
        return 0;
    }
    uint64_t cp = clean_near(s, p), cb = clean_near(s, b);
    uint64_t file = cp > cb ? cp - cb : 0;
    if (file > left)
        file = left;
    findings_attribute(f, ATTRIBUTION_FILE, file,
              "file pages: code, libraries and files read, not in recorded mappings");
    left -= file;
    findings_attribute(f, ATTRIBUTION_OTHER, left,
              "memory outside the heap and the recorded mappings: thread stacks, another "
              "allocator's or a runtime's memory, shared memory");
    return file;
}

void findings_describe_gap(finding_t *f, const mappings_t *m)
{
    if (f->mapping_share < 0.01)
        return;
    size_t len = strlen(f->description);
    uint64_t anon = 0, all = 0;
    for (size_t i = 0; i < f->nattribution; i++)
        if (f->attribution[i].kind == ATTRIBUTION_MAPPING) {
            all += f->attribution[i].bytes;
            anon += f->attribution[i].file ? 0 : f->attribution[i].bytes;
        }
    const char *what = anon == all ? "anonymous mappings" : anon == 0 ? "file mappings"
                                                                        : "mappings";
    uint64_t calls = m ? m->calls : 0;
    snprintf(f->description + len, sizeof f->description - len,
             " %.0f%% of it is the program's own %s (%" PRIu64 " mmap call%s).",
             100 * f->mapping_share, what, calls, calls == 1 ? "" : "s");
}
