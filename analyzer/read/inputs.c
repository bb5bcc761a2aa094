/*
 * inputs: the trace paths.  See inputs.h.
 */
#include "analyzer/read/inputs.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analyzer/escape.h"
#include "analyzer/options.h"
#include "lib/grow.h"

static int add_path(paths_t *p, const char *path)
{
    if (!grow_room((void **)&p->v, &p->cap, p->n, sizeof *p->v, 16))
        return -1;
    p->v[p->n] = strdup(path);
    return p->v[p->n] ? (int)++p->n * 0 : -1;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool ends_with(const char *s, size_t len, const char *tail)
{
    size_t n = strlen(tail);
    return len >= n && strcmp(s + len - n, tail) == 0;
}

int inputs_collect(const char *arg, paths_t *p)
{
    if (strcmp(arg, "-") == 0) { /* standard input */
        for (size_t i = 0; i < p->n; i++)
            if (strcmp(p->v[i], "-") == 0) {
                escape_line(stderr, "%s: standard input (-) is given twice", ANALYZE_CMD);
                return -1;
            }
        return add_path(p, arg);
    }
    struct stat st;
    if (stat(arg, &st)) {
        escape_line(stderr, "%s: cannot read %s: %s", ANALYZE_CMD, arg, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        return add_path(p, arg);
    DIR *d = opendir(arg);
    if (!d) {
        escape_line(stderr, "%s: cannot read %s: %s", ANALYZE_CMD, arg, strerror(errno));
        return -1;
    }
    size_t first = p->n;
    char path[4096];
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (strncmp(e->d_name, "memsim.", 7) ||
            !(ends_with(e->d_name, len, ".jsonl") || ends_with(e->d_name, len, ".jsonl.zst")))
            continue;
        snprintf(path, sizeof path, "%s/%s", arg, e->d_name);
        if (add_path(p, path)) {
            closedir(d);
            return -1;
        }
    }
    closedir(d);
    snprintf(path, sizeof path, "%s/resources.json", arg);
    struct stat rs; /* only a regular file: a FIFO would block the read */
    json_t *res = stat(path, &rs) == 0 && S_ISREG(rs.st_mode) ? json_load_file(path, 0, NULL) : NULL;
    json_t *peak = json_object_get(res, "peak_tree_rss_bytes");
    if (json_is_integer(peak) && json_integer_value(peak) > 0 &&
        (uint64_t)json_integer_value(peak) > p->run_peak_tree_rss)
        p->run_peak_tree_rss = (uint64_t)json_integer_value(peak);
    const json_t *cmd = json_object_get(res, "command");
    bool had = p->run_command[0] != '\0';
    for (size_t i = 0, at = 0; !had && json_is_array(cmd) && i < json_array_size(cmd) &&
                               at + 2 < sizeof p->run_command; i++) {
        const char *w = json_string_value(json_array_get(cmd, i));
        if (!w)
            continue;
        if (at)
            p->run_command[at++] = ' ';
        escape_copy(p->run_command + at, sizeof p->run_command - at, w);
        at += strlen(p->run_command + at);
    }
    json_decref(res);
    if (p->n == first) {
        escape_line(stderr, "%s: %s holds no memsim traces (memsim.*.jsonl[.zst])", ANALYZE_CMD, arg);
        return -1;
    }
    qsort(p->v + first, p->n - first, sizeof *p->v, by_name);
    return 0;
}

void inputs_free(paths_t *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->v[i]);
    free(p->v);
    *p = (paths_t){0};
}
