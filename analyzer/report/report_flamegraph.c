/*
 * report_flamegraph: every stack as one self-contained SVG flame graph
 * (an icicle, drawn by flame.h), which any browser or image viewer
 * opens: no script, no outside resource, a tooltip (<title>) on every
 * frame.  No flamegraph.pl needed.  See report.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyzer/escape.h"
#include "analyzer/report/flame.h"
#include "analyzer/report/report.h"
#include "lib/units.h"

#define FG_W 1200  /* px */
#define FG_HEAD 44 /* the title's rows */

/* What key weighs, for the title; sampled: a trace drawn is sampled
 * (its calls are estimates: each sampled call stands for 1 / p). */
static const char *weight_words(const char *key, bool sampled)
{
    if (!strcmp(key, "calls"))
        return sampled ? "allocation calls ESTIMATED from a sampled trace (not counted)"
                       : "allocation calls";
    if (!strcmp(key, "leaked"))
        return "bytes leaked";
    if (!strcmp(key, "mapped"))
        return "bytes of the program's own mappings at their peak";
    return "bytes live at the peak heap";
}

static void draw(FILE *f, process_t *procs, size_t n, symbols_t *store, const char *key)
{
    flame_node_t root = {.name = strdup(strcmp(key, "calls") ? "all" : "all calls")};
    frames_t fr = {0};
    size_t first = SIZE_MAX, traces = 0;
    bool sampled = false;
    for (size_t i = 0; i < n; i++) {
        if (!procs[i].ok)
            continue;
        traces++;
        sampled |= procs[i].s.sample_bytes != 0;
        if (first == SIZE_MAX || report_weight(&procs[i]) > report_weight(&procs[first]))
            first = i;
    }
    if (sampled && !strcmp(key, "calls")) {
        free(root.name);
        root.name = strdup("all calls, estimated");
    }
    for (size_t i = 0; i < n; i++) {
        if (!procs[i].ok)
            continue;
        char prefix[300];
        snprintf(prefix, sizeof prefix, "%s:%" PRId64,
                 procs[i].s.exe[0] ? frames_base_name(procs[i].s.exe) : "?", procs[i].s.pid);
        flame_add(&root, &procs[i], store, &fr, key, traces > 1 ? prefix : NULL);
    }
    free(fr.v);
    int depth = flame_depth(&root);
    int h = FG_HEAD + depth * FLAME_ROW + 4;
    bool bytes = strcmp(key, "calls") != 0;
    const char *exe = first != SIZE_MAX ? procs[first].s.exe : "no trace";
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
               "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"monospace\">\n"
               "<title>memsim flame graph: ", FG_W, h, FG_W, h);
    escape_html(f, exe);
    fprintf(f, "</title>\n<style>.frame rect{stroke:#fff;stroke-width:.5}.frame:hover rect"
               "{stroke:#000}.fname{font-size:11px;pointer-events:none}</style>\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n"
               "<text x=\"%d\" y=\"18\" text-anchor=\"middle\" font-size=\"15\">memsim: ",
            FG_W / 2);
    escape_html(f, exe);
    char a[32];
    fprintf(f, "</text>\n<text x=\"%d\" y=\"36\" text-anchor=\"middle\" font-size=\"12\" "
               "fill=\"#555\">%s, %zu trace%s; total %s; the root on top, each frame as wide "
               "as its share</text>\n<g transform=\"translate(0,%d)\">\n",
            FG_W / 2, weight_words(key, sampled), traces, traces == 1 ? "" : "s",
            bytes ? units_format_bytes(root.w, a, sizeof a) : (snprintf(a, sizeof a, "%" PRIu64,
                                                                        root.w), a),
            FG_HEAD);
    if (root.w)
        flame_draw(f, &root, FG_W, bytes);
    else
        fprintf(f, "<text x=\"10\" y=\"14\" font-size=\"12\">nothing to weigh: no stack has "
                   "%s</text>\n", weight_words(key, sampled));
    fputs("</g>\n</svg>\n", f);
    flame_free(&root);
}

int report_flamegraph(process_t *procs, size_t n, symbols_t *store, const char *key,
                      const char *path)
{
    char tmp[4200];
    bool to_stdout = !strcmp(path, "-");
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = to_stdout ? stdout : fopen(tmp, "w");
    if (!f) {
        escape_line(stderr, "%s: --flamegraph: cannot write %s: %s", ANALYZE_CMD, tmp,
                    strerror(errno));
        return -1;
    }
    draw(f, procs, n, store, key);
    bool bad = ferror(f);
    if (to_stdout) {
        if (fflush(f) || bad) {
            escape_line(stderr, "%s: --flamegraph: cannot write the standard output: %s",
                        ANALYZE_CMD, strerror(errno));
            return -1;
        }
        return 0;
    }
    if (fclose(f) || bad || rename(tmp, path)) {
        escape_line(stderr, "%s: --flamegraph: cannot write %s: %s", ANALYZE_CMD, path,
                    strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}
