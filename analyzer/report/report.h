/*
 * report: what memsim-analyze prints, in five forms, each in a file of
 * its own: the text report (report_text.c), one JSON object
 * (report_json.c, docs/analysis-format.md), a flame graph's collapsed
 * stacks (report_collapsed.c), a self-contained HTML page with plots
 * (report_html.c) and a self-contained SVG flame graph
 * (report_flamegraph.c).  procs are the traces in the order given;
 * those that could not be read (ok false) are left out (JSON keeps an
 * empty object in their place).
 */
#ifndef MEMSIM_ANALYZER_REPORT_H
#define MEMSIM_ANALYZER_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "analyzer/read/frames.h"
#include "analyzer/process.h"
#include "analyzer/read/ptree.h"

/* Onto out; 0, or -1 when the host is out of memory (one line said).
 * run_peak: the peak tree RSS of memsim run's resources.json (0: none). */
int report_text(FILE *out, process_t *procs, size_t n, symbols_t *store, const analyze_opts_t *o,
                uint64_t run_peak);
int report_json(FILE *out, process_t *procs, size_t n, symbols_t *store, const analyze_opts_t *o,
                uint64_t run_peak);
/* A gzipped pprof profile (profile.proto) of every process at path,
 * written whole, then renamed into place; 0, or -1 after one line. */
int report_pprof(process_t *procs, size_t n, symbols_t *store, const char *path);
void report_collapsed(process_t *procs, size_t n, symbols_t *store, sites_key_t key);
/* One self-contained HTML file at path (written whole, then renamed into
 * place); 0, or -1 after one line. */
int report_html(process_t *procs, size_t n, symbols_t *store, const analyze_opts_t *o,
                uint64_t run_peak, const char *path);
/* One self-contained SVG flame graph of every stack at path ("-":
 * stdout; written whole, then renamed into place), weighted by key
 * (flame.h); processes of a tree are a level of their own.  0, or -1
 * after one line. */
int report_flamegraph(process_t *procs, size_t n, symbols_t *store, const char *key,
                      const char *path);

/* Shared by the forms. */

/* A report file: path's temporary name in tmp (len bytes), opened for
 * writing; stdout for "-".  NULL after one line naming opt. */
FILE *report_open(const char *path, char *tmp, size_t len, const char *opt);
/* Close it and rename it into place (flush stdout); 0, or -1 after one
 * line (the temporary removed). */
int report_close(FILE *f, const char *path, const char *tmp, const char *opt);

/* The process tree of the traces that were read; 0 or -1. */
int report_tree(const process_t *procs, size_t n, ptree_t *t);
/* The highest tree RSS of any process or of memsim run's polls, never
 * below a process's own peak. */
uint64_t report_tree_peak(const process_t *procs, size_t n, uint64_t run_peak);
/* What a process weighs in a tree: its peak heap and peak mapped, the
 * memory it asked for (its RSS is mostly the shared libraries in a small
 * process). */
uint64_t report_weight(const process_t *pr);
/* The weights of the traces that were read, summed. */
uint64_t report_total_weight(const process_t *procs, size_t n);
/* The indices 0..n-1, heaviest first, ties by pid (malloc'd; NULL when
 * out of memory). */
size_t *report_order(const process_t *procs, size_t n);
/* Whether a process of a tree gets a full report: --pid and --exe choose
 * when given, else --all, else a weight of at least ANALYZE_SHOWN_SHARE
 * of total. */
bool report_shown(const process_t *pr, const analyze_opts_t *o, uint64_t total);
/* What the RSS was made of at its highest sample, in parts that add up
 * to it exactly: allocator + mapped + file_pages + other == rss.
 *
 * The figures at hand are sizes, not residency: glibc's reserved bytes
 * (or the live heap without them) and the program's mappings as mapped
 * (an mremap to 1 GiB, then MADV_DONTNEED, is 1 GiB mapped and little
 * resident).  So each part is what is left of the RSS for it, in this
 * order.  With the nearest smaps_rollup the RSS splits first into its
 * anonymous pages and the rest (file pages, shared memory): the
 * allocator's part and the anonymous mappings' come out of the first,
 * the file mappings' out of the second, whose remainder is file_pages
 * (code, libraries, files read); other is what is left of the anonymous
 * pages (stacks, the allocator's own mappings).  Without a rollup,
 * allocator, then mappings, out of the whole RSS; other the rest.  When
 * the mappings span more than their part (mapped_span > mapped), their
 * part is at most what they hold: the rest of them is not resident. */
typedef struct rss_parts_s {
    bool known;                 /* a sample exists */
    uint64_t t, rss;
    uint64_t allocator;         /* reserved, or heap live, as far as the RSS holds it */
    bool allocator_is_heap;     /* no allocator figures: the live heap */
    uint64_t mapped, mapped_file; /* the RSS's part in the program's mappings, file-backed */
    uint64_t mapped_span;       /* the program's mappings' size at the sample */
    bool have_rollup;
    uint64_t file_pages;        /* resident file pages not in recorded mappings */
    uint64_t other;             /* the rest */
} rss_parts_t;

void report_rss_parts(const process_t *pr, rss_parts_t *out);

/* A finding's composition as the reports print it: its attribution with
 * the parts that read the same (the same kind, file flag and label, such
 * as two stacks whose innermost frame is one function) made one, largest
 * first.  label: the mapping site's place (report_site_label), else the
 * part's words. */
typedef struct report_part_s {
    attribution_kind_t kind;
    uint64_t bytes;
    double share;
    bool has_site;
    uint64_t site; /* the first of the merged sites */
    bool file;
    char label[512];
} report_part_t;

#define REPORT_PARTS_SHOWN 5

/* The parts of f into out (room for FINDING_MAX_ATTRIBUTION); their
 * number.  Mapping sites beyond the largest REPORT_PARTS_SHOWN parts are
 * summed into one "other mapping sites". */
size_t report_parts(process_t *pr, symbols_t *store, const finding_t *f, frames_t *fr,
                    report_part_t *out);

/* A finding's description for the reports: the finding's own, and for a
 * gap the mappings explain, where the heaviest of them were made. */
void report_describe(process_t *pr, symbols_t *store, const finding_t *f, frames_t *fr,
                     char *buf, size_t len);

/* A site's place in words, from its innermost frame: "main (gap.c:8)",
 * "f in libx.so", or its address; "no stack" for id 0 or without sites. */
void report_site_label(process_t *pr, symbols_t *store, uint64_t id, frames_t *fr, char *buf,
                       size_t len);

#endif
