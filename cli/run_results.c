/*
 * run_results: memsim run's record of a run and its last line (see
 * run_results.h).
 */
#include "cli/run_results.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "trace/tracefmt.h"

#define CMD RUN_CMD

#define RUN_TRACE_WAIT_S 10.0 /* for the recorders of vanished processes */

/* The Python tool's texts for the record, "interpreter" made "command". */
static const char RUN_SCOPE[] =
    "command launch through exit; simultaneous descendants; observer excluded";
static const char RUN_LIMITATION[] =
    "polled observations do not bound arbitrary transient allocations";
/* s as a JSON string; bytes that are not UTF-8 become '?'. */
static json_t *json_text(const char *s)
{
    json_t *j = json_string(s);
    if (j)
        return j;
    char *copy = strdup(s);
    if (!copy)
        return NULL;
    for (char *c = copy; *c; c++)
        if ((unsigned char)*c >= 0x80)
            *c = '?';
    j = json_string(copy);
    free(copy);
    return j;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

bool run_results_trace_name(const char *name)
{
    size_t len = strlen(name);
    if (strncmp(name, "memsim.", 7) != 0 || len < 13)
        return false;
    return strcmp(name + len - 6, TRACEFMT_SUFFIX) == 0 ||
           (len >= 17 && strcmp(name + len - 10, TRACEFMT_SUFFIX_ZST) == 0);
}

/* The pid in a trace's name (memsim.<exe>.<pid>.<n>.jsonl[.zst]), or 0. */
static long trace_pid(const char *name)
{
    char s[NAME_MAX + 1];
    snprintf(s, sizeof s, "%s", name);
    char *suffix = strstr(s, TRACEFMT_SUFFIX);
    while (suffix && strstr(suffix + 1, TRACEFMT_SUFFIX))
        suffix = strstr(suffix + 1, TRACEFMT_SUFFIX);
    if (!suffix)
        return 0;
    *suffix = '\0';
    char *dot = strrchr(s, '.'); /* before <n> */
    if (!dot)
        return 0;
    *dot = '\0';
    dot = strrchr(s, '.'); /* before <pid> */
    return dot ? strtol(dot + 1, NULL, 10) : 0;
}

/* The trace files in dir (memsim.*.jsonl[.zst]), sorted by name. */
static json_t *list_traces(const char *dir, size_t *count)
{
    json_t *list = json_array();
    DIR *d = opendir(dir);
    *count = 0;
    if (!d || !list)
        return list;
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!run_results_trace_name(e->d_name))
            continue;
        if (n == cap) {
            char **more = realloc(names, (cap = cap ? 2 * cap : 16) * sizeof *more);
            if (!more)
                break;
            names = more;
        }
        if (!(names[n] = strdup(e->d_name)))
            break;
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_names);
    for (size_t i = 0; i < n; i++) {
        json_array_append_new(list, json_text(names[i]));
        free(names[i]);
    }
    free(names);
    *count = n;
    return list;
}

/* Whether trace file name in dir is finished: its recorder has closed
 * it (memsim-recorder holds an exclusive flock on a trace it writes), or
 * its process is still running (an orphan of the command that outlives
 * it: not waited for). */
static bool trace_settled(const char *dir, const char *name)
{
    char path[PATH_MAX + 300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return true;
    struct stat st;
    bool closed = flock(fd, LOCK_SH | LOCK_NB) == 0 && fstat(fd, &st) == 0 && st.st_size > 0;
    close(fd);
    long pid = trace_pid(name);
    return closed || (pid > 0 && kill((pid_t)pid, 0) == 0);
}

/* At most RUN_TRACE_WAIT_S. */
void run_results_wait(const char *dir)
{
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        bool all = true;
        DIR *d = opendir(dir);
        struct dirent *e;
        while (d && all && (e = readdir(d))) {
            if (run_results_trace_name(e->d_name))
                all = trace_settled(dir, e->d_name);
        }
        if (d)
            closedir(d);
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (all || run_watch_since(&start, &now) > RUN_TRACE_WAIT_S)
            return;
        struct timespec nap = {0, 20000000L};
        nanosleep(&nap, NULL);
    }
}

/* The command's exit_code as the Python tool reports it: its exit
 * status, or minus the signal that ended it. */
static int exit_code(int status)
{
    return WIFSIGNALED(status) ? -WTERMSIG(status) : WEXITSTATUS(status);
}

static json_t *budget(double v) { return v > 0 ? json_real(v) : json_null(); }

int run_results_write(const run_opts_t *o, const run_watch_t *w, const char *dir,
                      size_t *ntraces, json_t *allocator)
{
    json_t *cmd = json_array();
    for (char **a = o->argv; *a; a++)
        json_array_append_new(cmd, json_text(*a));
    json_t *root = json_pack(
        "{s:o, s:i, s:s, s:f, s:f, s:I, s:f, s:o, s:o, s:s, s:s, s:o, s:o}",
        "command", cmd,
        "exit_code", exit_code(w->status),
        "reason", w->reason,
        "wall_s", w->wall_s,
        "peak_tree_rss_mb", (double)w->peak / RUN_MIB,
        "peak_tree_rss_bytes", (json_int_t)w->peak,
        "poll_s", RUN_POLL_S,
        "rss_budget_mb", budget(o->rss_mb),
        "wall_budget_s", budget(o->wall_s),
        "scope", RUN_SCOPE,
        "limitation", RUN_LIMITATION,
        "output_dir", json_text(dir),
        "traces", list_traces(dir, ntraces));
    if (root && allocator)
        json_object_set_new(root, "allocator", allocator);
    else
        json_decref(allocator);
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/resources.json", dir);
    FILE *f = root ? fopen(path, "we") : NULL;
    int rc = f ? json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
                                         JSON_REAL_PRECISION(10))
               : -1;
    if (f) {
        fputc('\n', f);
        rc |= fclose(f);
    }
    json_decref(root);
    if (rc) {
        fprintf(stderr, "%s: cannot write %s: %s\n", CMD, path,
                root ? strerror(errno) : "out of memory");
        return -1;
    }
    return 0;
}

/* The reason in words, for people; resources.json keeps the token. */
static void reason_words(const run_opts_t *o, const char *reason, char *out, size_t len)
{
    if (strcmp(reason, "wall_budget_exceeded") == 0)
        snprintf(out, len, "the wall-time budget of %g s was exceeded: stopped, ", o->wall_s);
    else if (strcmp(reason, "rss_budget_exceeded") == 0)
        snprintf(out, len, "the RSS budget of %g MiB was exceeded: stopped, ", o->rss_mb);
    else
        snprintf(out, len, "completed, ");
}

void run_results_say(const run_opts_t *o, const run_watch_t *w, const char *dir, size_t ntraces)
{
    char how[64], why[128];
    if (WIFSIGNALED(w->status))
        snprintf(how, sizeof how, "killed by signal %d (%s)", WTERMSIG(w->status),
                 strsignal(WTERMSIG(w->status)));
    else
        snprintf(how, sizeof how, "exit status %d", WEXITSTATUS(w->status));
    reason_words(o, w->reason, why, sizeof why);
    fprintf(stderr, "%s: %s%s after %.2f s, peak tree RSS %.1f MiB; %zu trace%s in %s\n", CMD,
            why, how, w->wall_s, (double)w->peak / RUN_MIB, ntraces, ntraces == 1 ? "" : "s",
            dir);
}

