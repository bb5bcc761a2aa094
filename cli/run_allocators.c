/*
 * run_allocators: memsim run --allocator and --compare-allocators.  See
 * run_allocators.h.
 */
#include "cli/run_allocators.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/paths.h"

#define MIB (1024.0 * 1024.0)

int run_alloc_parse(const char *cmd, const char *spec, const char *self_dir, run_alloc_t *a)
{
    char err[256], line[128];
    if (catalog_parse_spec(spec, &a->spec, err, sizeof err)) {
        fprintf(stderr, "%s: --allocator: %s\n", cmd, err);
        return -1;
    }
    if (!catalog_library(a->spec.a, a->lib, sizeof a->lib)) {
        fprintf(stderr, "%s: --allocator: %s is not installed (its library %s): %s\n", cmd,
                a->spec.a->name, a->spec.a->sonames[0],
                catalog_install_line(a->spec.a, line, sizeof line));
        return -1;
    }
    if (strpbrk(a->lib, " :")) {
        fprintf(stderr, "%s: --allocator: cannot preload %s: LD_PRELOAD cannot carry a path with "
                        "a space or colon\n", cmd, a->lib);
        return -1;
    }
    char here[PATH_MAX + 32], parent[PATH_MAX];
    snprintf(here, sizeof here, "%s/libmemsim-meter.so", self_dir);
    snprintf(parent, sizeof parent, "%s", self_dir);
    char *slash = strrchr(parent, '/');
    if (slash)
        slash[slash == parent] = '\0';
    char lib[PATH_MAX + 32];
    snprintf(lib, sizeof lib, "%s/lib/memsim/libmemsim-meter.so", strcmp(parent, "/") ? parent : "");
    if (!(access(here, R_OK) == 0 && realpath(here, a->meter)) &&
        !(access(lib, R_OK) == 0 && realpath(lib, a->meter))) {
        fprintf(stderr, "%s: --allocator: cannot find libmemsim-meter.so: looked for %s and %s "
                        "(make builds it)\n", cmd, here, lib);
        return -1;
    }
    if (strpbrk(a->meter, " :")) {
        fprintf(stderr, "%s: --allocator: cannot preload %s: LD_PRELOAD cannot carry a path with "
                        "a space or colon\n", cmd, a->meter);
        return -1;
    }
    a->on = true;
    return 0;
}

char *run_alloc_preload(const run_alloc_t *a, const char *memsim_preload, const char *old)
{
    size_t len = strlen(a->meter) + strlen(memsim_preload) + strlen(a->lib) +
                 (old ? strlen(old) : 0) + 16;
    char *v = malloc(len);
    if (v)
        snprintf(v, len, "LD_PRELOAD=%s:%s%s%s%s%s", a->meter, memsim_preload, a->lib[0] ? ":" : "",
                 a->lib, old && *old ? ":" : "", old && *old ? old : "");
    return v;
}

size_t run_alloc_vars(const run_alloc_t *a, const char *dir, char **out)
{
    size_t n = 0;
    size_t len = strlen(dir) + 32;
    if (!(out[n] = malloc(len)))
        return 0;
    snprintf(out[n++], len, "MEMSIM_METER_OUT=%s", dir);
    len = strlen(a->lib) + 32;
    if (!(out[n] = malloc(len))) {
        free(out[0]);
        return 0;
    }
    snprintf(out[n++], len, "MEMSIM_METER_LIB=%s", a->lib);
    char buf[1024];
    const char *env[CATALOG_MAX_ENV];
    size_t ne = catalog_env(&a->spec, buf, sizeof buf, env);
    for (size_t i = 0; i < ne; i++) {
        if (!(out[n] = strdup(env[i]))) {
            while (n)
                free(out[--n]);
            return 0;
        }
        n++;
    }
    return n;
}

bool run_alloc_file(const char *name)
{
    return !strcmp(name, "allocators.json") ||
           (!strncmp(name, "meter.", 6) && strlen(name) > 11 &&
            !strcmp(name + strlen(name) - 5, ".json"));
}

/* The meter's files of dir, each a process's object. */
static json_t *meter_files(const char *dir)
{
    json_t *list = json_array();
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (strncmp(e->d_name, "meter.", 6) || !run_alloc_file(e->d_name))
            continue;
        char path[PATH_MAX + 300];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        json_t *o = json_load_file(path, 0, NULL);
        if (json_is_object(o))
            json_array_append_new(list, o);
        else
            json_decref(o);
    }
    if (d)
        closedir(d);
    return list;
}

static uint64_t num(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
}

json_t *run_alloc_collect(const char *cmd, const run_alloc_t *a, const char *dir)
{
    json_t *procs = meter_files(dir), *settings = json_object();
    for (size_t k = 0; k < a->spec.nsettings; k++)
        json_object_set_new(settings, a->spec.keys[k], json_string(a->spec.values[k]));
    size_t top = SIZE_MAX;
    for (size_t i = 0; i < json_array_size(procs); i++)
        if (top == SIZE_MAX || num(json_array_get(procs, i), "peak_heap_rss_bytes") >
                                   num(json_array_get(procs, top), "peak_heap_rss_bytes"))
            top = i;
    const json_t *t = top == SIZE_MAX ? NULL : json_array_get(procs, top);
    if (t)
        fprintf(stderr, "%s: allocator %s: peak heap RSS %.2f MiB in %s (pid %" PRIu64 "), "
                        "%.2f MiB at its end; %zu process%s measured\n",
                cmd, a->spec.label, (double)num(t, "peak_heap_rss_bytes") / MIB,
                json_string_value(json_object_get(t, "exe")), num(t, "pid"),
                (double)num(t, "end_heap_rss_bytes") / MIB, json_array_size(procs),
                json_array_size(procs) == 1 ? "" : "es");
    else
        fprintf(stderr, "%s: allocator %s: no process was measured (none ended by exit or "
                        "_exit, when the meter writes: a crash is not measured)\n", cmd, a->spec.label);
    return json_pack("{s:s, s:s, s:s, s:o, s:I, s:o}", "name", a->spec.label, "allocator",
                     a->spec.a->name, "library", a->lib, "settings", settings,
                     "peak_heap_rss_bytes", (json_int_t)(t ? num(t, "peak_heap_rss_bytes") : 0),
                     "processes", procs);
}

/* ---- the comparison ------------------------------------------------------------------- */

/* Run argv and wait: its exit status (-1: could not run it). */
static int run_wait(char *const *argv, const char *out)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (out) {
            FILE *f = freopen(out, "w", stdout);
            (void)f;
        }
        execv(argv[0], argv);
        _exit(127);
    }
    if (pid < 0)
        return -1;
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static const char *base_name(const char *path)
{
    const char *s = path ? strrchr(path, '/') : NULL;
    return s ? s + 1 : path ? path : "";
}

/* Whether path (a process's executable) is name: its path or its file name. */
static bool is_exe(const char *path, const char *name)
{
    return path && name && (!strcmp(path, name) || !strcmp(base_name(path), name));
}

/* A report's process: its executable, and its heap operations
 * (allocations, reallocs among them, and frees). */
static const char *proc_exe(const json_t *p)
{
    return json_string_value(json_object_get(json_object_get(p, "summary"), "exe"));
}

static uint64_t heap_ops(const json_t *p)
{
    const json_t *s = json_object_get(p, "summary");
    return num(s, "allocations") + num(s, "frees");
}

/* The executable the comparison is about: exe when given, else that of
 * the recording's process with the most heap operations (ties: the
 * larger peak heap), where the allocator has the most to decide.  Not
 * the largest peak heap: a short process that reads its input into
 * memory and keeps it can hold more live bytes than the one that does
 * the work (gcc's assembler, 31 thousand allocations, against cc1's 3.3
 * million); nor the largest peak RSS, which can be memory the allocator
 * never sees (cc1's collector maps its own).  NULL when the report has
 * no such process. */
static const char *principal(const json_t *report, const char *exe)
{
    const json_t *procs = json_object_get(report, "processes");
    if (!procs)
        return exe && !is_exe(proc_exe(report), exe) ? NULL : proc_exe(report);
    const json_t *best = NULL;
    for (size_t i = 0; i < json_array_size(procs); i++) {
        const json_t *p = json_array_get(procs, i);
        if (exe && !is_exe(proc_exe(p), exe))
            continue;
        uint64_t h = heap_ops(p), b = best ? heap_ops(best) : 0;
        if (!best || h > b ||
            (h == b && num(json_object_get(p, "summary"), "peak_heap_bytes") >
                           num(json_object_get(best, "summary"), "peak_heap_bytes")))
            best = p;
    }
    return best ? proc_exe(best) : NULL;
}

/* The predicted peak heap RSS of allocator label for exe: the largest
 * of its processes' in the report (measured() takes the largest too). */
static uint64_t predicted(const json_t *report, const char *exe, const char *label)
{
    const json_t *procs = json_object_get(report, "processes");
    size_t n = procs ? json_array_size(procs) : 1;
    uint64_t best = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *p = procs ? json_array_get(procs, i) : report;
        if (!is_exe(proc_exe(p), exe))
            continue;
        const json_t *rows = json_object_get(json_object_get(p, "allocators"), "rows");
        for (size_t k = 0; k < json_array_size(rows); k++) {
            const json_t *r = json_array_get(rows, k);
            const char *name = json_string_value(json_object_get(r, "name"));
            if (name && !strcmp(name, label) && num(r, "peak_rss_bytes") > best)
                best = num(r, "peak_rss_bytes");
        }
    }
    return best;
}

/* The measured peak heap RSS of exe's process (the largest of those of
 * its file name) in a run's resources.json; 0 when none. */
static uint64_t measured(const char *dir, const char *exe)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/resources.json", dir);
    json_t *r = json_load_file(path, 0, NULL);
    const json_t *procs = json_object_get(json_object_get(r, "allocator"), "processes");
    uint64_t best = 0;
    for (size_t i = 0; i < json_array_size(procs); i++) {
        const json_t *p = json_array_get(procs, i);
        if (is_exe(json_string_value(json_object_get(p, "exe")), base_name(exe)) &&
            num(p, "peak_heap_rss_bytes") > best)
            best = num(p, "peak_heap_rss_bytes");
    }
    json_decref(r);
    return best;
}

/* One comparison: its allocators and where their runs went. */
typedef struct compare_s {
    const char *cmd, *dir;
    const char *exe;                       /* --exe, or NULL */
    catalog_spec_t specs[CATALOG_MAX_SPECS];
    size_t n;
    char ran[CATALOG_MAX_SPECS][PATH_MAX]; /* dir/SPEC/ of each run */
    bool ok[CATALOG_MAX_SPECS];            /* the run with specs[i] succeeded */
    int status[CATALOG_MAX_SPECS];         /* memsim run's exit status: the command's */
    char list_ran[CATALOG_MAX_SPECS * 162]; /* their labels, comma-separated */
    size_t first;                          /* the first that ran, or SIZE_MAX */
} compare_t;

/* list (NULL: every allocator of the catalog) into c->specs.  0, or 2
 * after one line. */
static int compare_specs(compare_t *c, const char *list)
{
    char err[256], all[256] = "";
    if (!list) {
        for (size_t i = 0; i < catalog_count(); i++)
            snprintf(all + strlen(all), sizeof all - strlen(all), "%s%s", i ? "," : "",
                     catalog_at(i)->name);
        list = all;
    }
    if (catalog_parse_list(list, c->specs, CATALOG_MAX_SPECS, &c->n, err, sizeof err)) {
        fprintf(stderr, "%s: --compare-allocators: %s\n", c->cmd, err);
        return 2;
    }
    return 0;
}

static size_t count_args(char *const *v)
{
    size_t n = 0;
    while (v[n])
        n++;
    return n;
}

/* Whether memsim run wrote dir/resources.json: the command ran (its
 * exit status is then the command's, whatever it is: a program may exit
 * 1 or 2 as memsim run does on bad input). */
static bool run_happened(const char *dir)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/resources.json", dir);
    return access(path, R_OK) == 0;
}

/* Run the command with specs[i] (memsim run --allocator) into
 * c->ran[i], its status into c->status[i].  0 when it ran; -1 when it
 * is left out (one line said why); 1 (out of memory) or 2 (after one
 * line) when the comparison stops. */
static int compare_run(compare_t *c, size_t i, char *self, char *const *run_args,
                       char *const *argv)
{
    char lib[PATH_MAX], line[128];
    const catalog_spec_t *spec = &c->specs[i];
    if (!catalog_library(spec->a, lib, sizeof lib)) {
        fprintf(stderr, "%s: allocator %s is not installed (its library %s): %s; compared "
                        "without it\n", c->cmd, spec->a->name, spec->a->sonames[0],
                catalog_install_line(spec->a, line, sizeof line));
        return -1;
    }
    if (snprintf(c->ran[i], sizeof c->ran[i], "%s/%.159s", c->dir, spec->label) >=
        (int)sizeof c->ran[i]) {
        fprintf(stderr, "%s: --compare-allocators: %s/%s is too long a path\n", c->cmd, c->dir,
                spec->label);
        return 2;
    }
    size_t nargs = count_args(run_args), nargv = count_args(argv);
    char **args = calloc(nargs + nargv + 10, sizeof *args);
    if (!args)
        return 1;
    size_t k = 0;
    args[k++] = self;
    args[k++] = "run";
    args[k++] = "--force";
    args[k++] = "--out";
    args[k++] = c->ran[i];
    args[k++] = "--allocator";
    args[k++] = (char *)spec->label;
    for (size_t j = 0; j < nargs; j++)
        args[k++] = run_args[j];
    args[k++] = "--";
    for (size_t j = 0; j < nargv; j++)
        args[k++] = argv[j];
    fprintf(stderr, "%s: run %zu of %zu: with %s\n", c->cmd, i + 1, c->n, spec->label);
    int rc = run_wait(args, NULL);
    free(args);
    c->status[i] = rc;
    if (rc < 0 || !run_happened(c->ran[i])) {
        fprintf(stderr, "%s: the run with %s failed (status %d); compared without it\n", c->cmd,
                spec->label, rc);
        return -1;
    }
    return 0;
}

/* --exe against the first run: 0 when a process of that executable was
 * measured in it, else 2 after one line naming those that were (the
 * other runs are not made). */
static int compare_exe_check(const compare_t *c, size_t i)
{
    if (!c->exe)
        return 0;
    char path[PATH_MAX + 64], seen[512] = "";
    snprintf(path, sizeof path, "%s/resources.json", c->ran[i]);
    json_t *r = json_load_file(path, 0, NULL);
    const json_t *procs = json_object_get(json_object_get(r, "allocator"), "processes");
    bool found = false;
    for (size_t k = 0; k < json_array_size(procs) && !found; k++) {
        const char *e = json_string_value(json_object_get(json_array_get(procs, k), "exe"));
        found = is_exe(e, c->exe);
        bool again = false; /* each name once */
        for (size_t j = 0; j < k && !again; j++)
            again = !strcmp(base_name(json_string_value(
                                json_object_get(json_array_get(procs, j), "exe"))),
                            base_name(e));
        if (!again)
            snprintf(seen + strlen(seen), sizeof seen - strlen(seen), "%s%s", seen[0] ? ", " : "",
                     base_name(e));
    }
    json_decref(r);
    if (found)
        return 0;
    fprintf(stderr, "%s: --exe: no process of %s was measured in the run with %s (%s%s)\n",
            c->cmd, c->exe, c->specs[i].label, seen[0] ? "its processes: " : "none was",
            seen);
    return 2;
}

/* The runs: one per installed allocator.  0, or memsim run's status
 * when the comparison stops (one line said why). */
static int compare_runs(compare_t *c, char *self, char *const *run_args, char *const *argv)
{
    c->first = SIZE_MAX;
    for (size_t i = 0; i < c->n; i++) {
        int rc = compare_run(c, i, self, run_args, argv);
        if (rc > 0)
            return rc;
        if (rc < 0)
            continue;
        if (c->first == SIZE_MAX && (rc = compare_exe_check(c, i)))
            return rc;
        c->ok[i] = true;
        if (c->first == SIZE_MAX)
            c->first = i;
        snprintf(c->list_ran + strlen(c->list_ran), sizeof c->list_ran - strlen(c->list_ran),
                 "%s%.159s", c->list_ran[0] ? "," : "", c->specs[i].label);
    }
    if (c->first == SIZE_MAX) {
        fprintf(stderr, "%s: --compare-allocators: no run succeeded\n", c->cmd);
        return 1;
    }
    return 0;
}

/* The predicted and measured peak heap RSS of exe for each allocator
 * that ran, a line each on stderr and an entry each of out; pred and
 * meas get the figures of those with both, *m how many.  A figure
 * missing (no process of exe ended by exit in the run, or its replay
 * failed) is "not measured" or "not replayed", null in out, and no
 * error. */
static void compare_rows(const compare_t *c, const json_t *report, const char *exe, json_t *out,
                         double *pred, double *meas, size_t *m)
{
    *m = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (!c->ok[i])
            continue;
        const char *label = c->specs[i].label;
        uint64_t pr = predicted(report, exe, label);
        uint64_t me = measured(c->ran[i], exe);
        char fp[32] = "not replayed", fm[32] = "not measured", fe[16] = "";
        if (pr)
            snprintf(fp, sizeof fp, "%.2f MiB", (double)pr / MIB);
        if (me)
            snprintf(fm, sizeof fm, "%.2f MiB", (double)me / MIB);
        double e = pr && me ? ((double)pr - (double)me) / (double)me : 0;
        if (pr && me)
            snprintf(fe, sizeof fe, "%+.1f%%", 100 * e);
        if (fe[0])
            fprintf(stderr, "  %-28s %13s %13s %8s\n", label, fp, fm, fe);
        else
            fprintf(stderr, "  %-28s %13s %13s\n", label, fp, fm);
        json_array_append_new(out, json_pack("{s:s, s:o, s:o, s:o}", "name", label,
                                             "predicted_peak_heap_rss_bytes",
                                             pr ? json_integer((json_int_t)pr) : json_null(),
                                             "measured_peak_heap_rss_bytes",
                                             me ? json_integer((json_int_t)me) : json_null(),
                                             "error", pr && me ? json_real(e) : json_null()));
        if (!pr || !me)
            continue;
        pred[*m] = (double)pr;
        meas[*m] = (double)me;
        ++*m;
    }
}

/* The same order: every pair ranked alike, where the measured pair
 * differs by more than 1% (closer, a run's noise decides).  How many
 * pairs agree; *pairs gets how many count. */
static size_t compare_order(const double *pred, const double *meas, size_t m, size_t *pairs)
{
    size_t agree = 0;
    *pairs = 0;
    for (size_t i = 0; i < m; i++)
        for (size_t k = i + 1; k < m; k++) {
            double d = meas[i] > meas[k] ? meas[i] - meas[k] : meas[k] - meas[i];
            if (d <= 0.01 * (meas[i] > meas[k] ? meas[i] : meas[k]))
                continue;
            ++*pairs;
            agree += (pred[i] < pred[k]) == (meas[i] < meas[k]);
        }
    return agree;
}

/* The prediction (the first run's trace replayed through every
 * allocator that ran, in dir/prediction.json) against the runs, on
 * stderr and into dir/allocators.json.  0, or 1 after one line. */
static int compare_report(const compare_t *c, char *analyze)
{
    char json_path[PATH_MAX + 32];
    snprintf(json_path, sizeof json_path, "%s/prediction.json", c->dir);
    char *aargs[] = {analyze, "--json", "--sites", "0", "--all", "--allocators",
                     (char *)c->list_ran, (char *)c->ran[c->first], NULL};
    if (run_wait(aargs, json_path)) {
        fprintf(stderr, "%s: memsim-analyze --allocators failed on %s\n", c->cmd,
                c->ran[c->first]);
        return 1;
    }
    json_t *report = json_load_file(json_path, 0, NULL);
    const char *exe = principal(report, c->exe);
    if (!exe) {
        fprintf(stderr, "%s: --compare-allocators: no trace of %s in %s\n", c->cmd,
                c->exe ? c->exe : "any process", c->ran[c->first]);
        json_decref(report);
        return 1;
    }
    json_t *out = json_array();
    fprintf(stderr, "%s: predicted (the replay of the %s run's trace) against measured (a real "
                    "run with each), peak heap RSS of %s (%s):\n", c->cmd,
            c->specs[c->first].label, exe,
            c->exe ? "--exe" : "the process with the most heap operations");
    fprintf(stderr, "  %-28s %13s %13s %8s\n", "allocator", "predicted", "measured", "error");
    double pred[CATALOG_MAX_SPECS] = {0}, meas[CATALOG_MAX_SPECS] = {0};
    size_t m, pairs;
    compare_rows(c, report, exe, out, pred, meas, &m);
    size_t agree = compare_order(pred, meas, m, &pairs);
    fprintf(stderr, "  order: %zu of %zu pairs that differ by over 1%% measured are ranked alike%s\n",
            agree, pairs, agree == pairs ? " (the same order)" : "");
    json_t *doc = json_pack("{s:s?, s:s, s:o, s:I, s:I}", "exe", exe, "recording",
                            c->specs[c->first].label, "allocators", out, "pairs",
                            (json_int_t)pairs, "pairs_in_order", (json_int_t)agree);
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/allocators.json", c->dir);
    if (json_dump_file(doc, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER))
        fprintf(stderr, "%s: cannot write %s\n", c->cmd, path);
    else
        fprintf(stderr, "%s: the comparison is in %s\n", c->cmd, path);
    json_decref(doc);
    json_decref(report);
    return 0;
}

int run_alloc_compare(const char *cmd, const char *self_dir, const char *dir, const char *list,
                      const char *exe, char *const *run_args, char *const *argv)
{
    compare_t c = {.cmd = cmd, .dir = dir, .exe = exe};
    int rc = compare_specs(&c, list);
    if (rc)
        return rc;
    char self[PATH_MAX + 16], analyze[PATH_MAX + 32];
    snprintf(self, sizeof self, "%s/memsim", self_dir);
    if (!paths_tool(self_dir, "memsim-analyze", analyze, sizeof analyze)) {
        fprintf(stderr, "%s: --compare-allocators: memsim-analyze is not beside memsim\n", cmd);
        return 1;
    }
    rc = compare_runs(&c, self, run_args, argv);
    if (rc)
        return rc;
    compare_report(&c, analyze); /* a failed comparison is one line */
    return c.status[c.first];    /* the command's, as without the comparison */
}
