/*
 * allocators: a trace through real allocators.  See allocators.h.  The
 * operation file the replays read is written by allocators_oplog.c.
 */
#include "analyzer/consume/allocators.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "allocators/oplog.h"
#include "analyzer/consume/allocators_oplog.h"
#include "analyzer/consumers.h"
#include "analyzer/escape.h"
#include "lib/grow.h"

extern char **environ;

/* ---- the replays ------------------------------------------------------------------- */

/* memsim-replay: beside this program, or in lib/memsim/ beside its bin/. */
static bool replay_path(char *out, size_t len)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return false;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash)
        return false;
    *slash = '\0';
    snprintf(out, len, "%s/memsim-replay", self);
    if (access(out, X_OK) == 0)
        return true;
    slash = strrchr(self, '/');
    if (slash)
        *slash = '\0';
    snprintf(out, len, "%s/lib/memsim/memsim-replay", self);
    return access(out, X_OK) == 0;
}

typedef struct child_s {
    pid_t pid;
    int out, err;            /* pipes, -1 once closed */
    char *text, *etext;      /* what it printed */
    size_t ntext, cap_text, netext, cap_etext;
    alloc_row_t *row;
} child_t;

static int start_child(const char *replay, int opfd, alloc_row_t *row, const char *lib, child_t *c)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + CATALOG_MAX_ENV + 2, sizeof *env);
    char envbuf[1024], preload[4200], arg[32];
    const char *extra[CATALOG_MAX_ENV];
    if (!env)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!catalog_env_is_setting(environ[i]))
            env[k++] = environ[i];
    if (lib[0]) {
        snprintf(preload, sizeof preload, "LD_PRELOAD=%s", lib);
        env[k++] = preload;
    }
    size_t ne = catalog_env(row->spec, envbuf, sizeof envbuf, extra);
    for (size_t i = 0; i < ne; i++)
        env[k++] = (char *)extra[i];
    env[k] = NULL;
    snprintf(arg, sizeof arg, "fd:%d", opfd);
    char *argv[] = {(char *)replay, "--sample-ms", "10", arg, NULL};
    int po[2], pe[2];
    if (pipe2(po, O_CLOEXEC)) {
        free(env);
        return -1;
    }
    if (pipe2(pe, O_CLOEXEC)) {
        close(po[0]);
        close(po[1]);
        free(env);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        dup2(po[1], 1);
        dup2(pe[1], 2);
        fcntl(opfd, F_SETFD, 0);
        execve(replay, argv, env);
        _exit(127);
    }
    free(env);
    close(po[1]);
    close(pe[1]);
    if (pid < 0) {
        close(po[0]);
        close(pe[0]);
        return -1;
    }
    *c = (child_t){.pid = pid, .out = po[0], .err = pe[0], .row = row};
    return 0;
}

static void drain(int *fd, char **text, size_t *n, size_t *cap)
{
    char buf[65536];
    ssize_t k = read(*fd, buf, sizeof buf);
    if (k <= 0) {
        if (k < 0 && errno == EINTR)
            return;
        close(*fd);
        *fd = -1;
        return;
    }
    if (!grow_room((void **)text, cap, *n + (size_t)k, 1, 65536)) {
        close(*fd);
        *fd = -1;
        return;
    }
    memcpy(*text + *n, buf, (size_t)k);
    *n += (size_t)k;
    (*text)[*n] = '\0';
}

/* Read every child's output until each has closed both pipes. */
static void collect(child_t *c, size_t n)
{
    for (;;) {
        struct pollfd p[2 * CATALOG_MAX_SPECS];
        size_t np = 0;
        for (size_t i = 0; i < n; i++) {
            if (c[i].out >= 0)
                p[np++] = (struct pollfd){.fd = c[i].out, .events = POLLIN};
            if (c[i].err >= 0)
                p[np++] = (struct pollfd){.fd = c[i].err, .events = POLLIN};
        }
        if (!np)
            return;
        if (poll(p, np, -1) < 0 && errno != EINTR)
            return;
        for (size_t i = 0; i < n; i++) {
            for (size_t k = 0; k < np; k++) {
                if (!p[k].revents)
                    continue;
                if (p[k].fd == c[i].out && c[i].out >= 0)
                    drain(&c[i].out, &c[i].text, &c[i].ntext, &c[i].cap_text);
                else if (p[k].fd == c[i].err && c[i].err >= 0)
                    drain(&c[i].err, &c[i].etext, &c[i].netext, &c[i].cap_etext);
            }
        }
    }
}

static int by_time(const void *a, const void *b)
{
    const alloc_point_t *x = a, *y = b;
    return (x->t_s > y->t_s) - (x->t_s < y->t_s);
}

static uint64_t num(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
}

/* The child's JSON into its row. */
static void read_result(child_t *c, int status)
{
    alloc_row_t *r = c->row;
    json_error_t err;
    json_t *o = c->text ? json_loads(c->text, 0, &err) : NULL;
    if (!json_is_object(o) || !WIFEXITED(status) || WEXITSTATUS(status)) {
        r->status = ALLOC_FAILED;
        char line[200] = "";
        if (c->etext) {
            char *nl = strchr(c->etext, '\n');
            snprintf(line, sizeof line, "%.*s", nl ? (int)(nl - c->etext) : (int)c->netext, c->etext);
        }
        if (WIFSIGNALED(status))
            snprintf(r->message, sizeof r->message, "the replay was killed by signal %d (%s)%s%s",
                     WTERMSIG(status), strsignal(WTERMSIG(status)), line[0] ? ": " : "", line);
        else
            snprintf(r->message, sizeof r->message, "the replay failed (exit status %d)%s%s",
                     WIFEXITED(status) ? WEXITSTATUS(status) : -1, line[0] ? ": " : "", line);
        json_decref(o);
        return;
    }
    r->status = ALLOC_OK;
    r->peak_rss = num(o, "peak_rss_bytes");
    r->peak_exact = json_is_true(json_object_get(o, "peak_exact"));
    r->end_rss = num(o, "end_rss_bytes");
    r->minor_faults = num(o, "minor_faults");
    r->major_faults = num(o, "major_faults");
    r->failed = num(o, "failed");
    r->ops = num(o, "ops");
    r->threads = (unsigned)num(o, "threads");
    r->substituted = (unsigned)num(o, "substituted");
    r->cpu_s = json_real_value(json_object_get(o, "cpu_s"));
    r->wall_s = json_real_value(json_object_get(o, "wall_s"));
    const char *lists[] = {"by_count", "by_time"};
    size_t total = 0;
    for (int l = 0; l < 2; l++)
        total += json_array_size(json_object_get(o, lists[l]));
    if (total && (r->series = calloc(total, sizeof *r->series))) {
        for (int l = 0; l < 2; l++) {
            const json_t *a = json_object_get(o, lists[l]);
            for (size_t i = 0; i < json_array_size(a); i++) {
                const json_t *p = json_array_get(a, i);
                r->series[r->nseries++] = (alloc_point_t){
                    .t_s = json_number_value(json_array_get(p, 0)),
                    .ops = (uint64_t)json_integer_value(json_array_get(p, 1)),
                    .rss = (uint64_t)json_integer_value(json_array_get(p, 2))};
            }
        }
        qsort(r->series, r->nseries, sizeof *r->series, by_time);
    }
    json_decref(o);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Whether the line about allocator k's library (missing: the line that
 * installs it) or about memsim-replay (k == catalog_count()) is still to
 * be said: once per analysis, not once per trace of a directory (79
 * traces of a python3 run under pyenv's shims made 158 such lines).  The
 * traces are finished one at a time, on the main thread. */
static bool say_once(size_t k)
{
    static bool said[CATALOG_MAX_SPECS + 1];
    if (k > CATALOG_MAX_SPECS || said[k])
        return false;
    return said[k] = true;
}

/* The same, for what the allocator of the i-th spec said on stderr as
 * its replay ran (jemalloc: "<jemalloc>: Invalid conf value: ..."). */
static bool say_once_spec(size_t i)
{
    static bool said[CATALOG_MAX_SPECS];
    if (i >= CATALOG_MAX_SPECS || said[i])
        return false;
    return said[i] = true;
}

/* The first lines (at most 3) of what a replay that succeeded wrote on
 * stderr: the allocator's own words, about its settings as a rule. */
static void say_stderr(const char *label, const char *text)
{
    for (int k = 0; k < 3 && *text; k++) {
        const char *nl = strchr(text, '\n');
        int n = nl ? (int)(nl - text) : (int)strlen(text);
        escape_line(stderr, "%s: the allocator of %s said: %.*s", ANALYZE_CMD, label, n, text);
        text += n + (nl != NULL);
    }
}

static size_t catalog_index(const catalog_allocator_t *a)
{
    size_t i = 0;
    while (i < catalog_count() && catalog_at(i) != a)
        i++;
    return i;
}

/* Every allocator of the options through the file, in parallel. */
static void run_all(process_t *pr, allocators_t *a, int opfd)
{
    const analyze_opts_t *o = pr->o;
    char replay[4200];
    bool have_replay = replay_path(replay, sizeof replay);
    child_t c[CATALOG_MAX_SPECS];
    size_t nc = 0;
    double t0 = now_s();
    for (size_t i = 0; i < o->nallocators; i++) {
        alloc_row_t *r = &a->rows[a->nrows++];
        *r = (alloc_row_t){.spec = &o->allocators[i]};
        char lib[4096], line[128];
        if (!catalog_library(r->spec->a, lib, sizeof lib)) {
            r->status = ALLOC_MISSING;
            snprintf(r->message, sizeof r->message, "%s",
                     catalog_install_line(r->spec->a, line, sizeof line));
            if (say_once(catalog_index(r->spec->a)))
                fprintf(stderr, "%s: allocator %s is not installed (its library %s): %s\n",
                        ANALYZE_CMD, r->spec->a->name, r->spec->a->sonames[0], r->message);
            continue;
        }
        if (!have_replay) {
            r->status = ALLOC_FAILED;
            snprintf(r->message, sizeof r->message, "memsim-replay is not beside memsim-analyze "
                     "(make builds it)");
            if (say_once(catalog_count()))
                fprintf(stderr, "%s: --allocators: %s\n", ANALYZE_CMD, r->message);
            continue;
        }
        if (start_child(replay, opfd, r, lib, &c[nc])) {
            r->status = ALLOC_FAILED;
            snprintf(r->message, sizeof r->message, "cannot start memsim-replay: %s", strerror(errno));
            continue;
        }
        nc++;
    }
    collect(c, nc);
    for (size_t i = 0; i < nc; i++) {
        int status = 0;
        while (waitpid(c[i].pid, &status, 0) < 0 && errno == EINTR)
            ;
        read_result(&c[i], status);
        c[i].row->substituted &= a->kinds; /* only the kinds the trace has */
        if (c[i].row->status == ALLOC_FAILED)
            escape_line(stderr, "%s: %s: replay through %s: %s", ANALYZE_CMD, pr->path,
                        c[i].row->spec->label, c[i].row->message);
        else if (c[i].netext && say_once_spec((size_t)(c[i].row - a->rows)))
            say_stderr(c[i].row->spec->label, c[i].etext);
        free(c[i].text);
        free(c[i].etext);
    }
    a->wall_s = now_s() - t0;
    /* best first: the lowest peak RSS */
    for (size_t i = 0; i < a->nrows; i++)
        if (a->rows[i].status == ALLOC_OK)
            a->order[a->nordered++] = i;
    for (size_t i = 1; i < a->nordered; i++)
        for (size_t k = i; k > 0 && a->rows[a->order[k]].peak_rss < a->rows[a->order[k - 1]].peak_rss; k--) {
            size_t t = a->order[k];
            a->order[k] = a->order[k - 1];
            a->order[k - 1] = t;
        }
}

/* ---- the consumer ------------------------------------------------------------------ */

static bool wanted(const process_t *pr)
{
    const analyze_opts_t *o = pr->o;
    return o->nallocators && !o->flamegraph && o->collapsed == ANALYZE_NO_COLLAPSED;
}

static int allocators_on_init(process_t *pr)
{
    pr->alloc_writer = NULL;
    pr->allocators = NULL;
    if (!wanted(pr))
        return 0;
    if (!(pr->alloc_writer = alloc_oplog_open(pr->o->allocators_all_pages)) ||
        !(pr->allocators = calloc(1, sizeof *pr->allocators))) {
        alloc_oplog_close(pr->alloc_writer);
        pr->alloc_writer = NULL;
        fprintf(stderr, "%s: out of memory\n", ANALYZE_CMD);
        return -1;
    }
    pr->allocators->ran_with = catalog_find("glibc");
    return 0;
}

static void allocators_on_event(process_t *pr, const event_t *e)
{
    alloc_writer_t *w = pr->alloc_writer;
    if (__builtin_expect(!w, 1) || pr->s.sample_bytes) /* sampled: see on_finish */
        return;
    if (e->type == EV_MODULE) {
        const char *path = e->json ? json_string_value(json_object_get(e->json, "path")) : NULL;
        const catalog_allocator_t *c = path ? catalog_from_library(path) : NULL;
        if (c)
            pr->allocators->ran_with = c;
    } else {
        alloc_oplog_event(w, e);
    }
}

static void allocators_on_finish(process_t *pr)
{
    alloc_writer_t *w = pr->alloc_writer;
    if (!w)
        return;
    allocators_t *a = pr->allocators;
    a->peak_live = pr->s.peak_heap;
    a->all_pages = pr->o->allocators_all_pages;
    oplog_header_t h;
    if (pr->s.sample_bytes) {
        /* A sampled trace holds one allocation in many: no sequence of
         * requests to replay (the reports say so, as for the strategies). */
        snprintf(a->problem, sizeof a->problem, "a sampled trace does not hold every request");
    } else if (alloc_oplog_finish(w, pr->s.peak_heap, &h)) {
        snprintf(a->problem, sizeof a->problem, "%s", alloc_oplog_why(w));
        escape_line(stderr, "%s: %s: allocators: %s: not replayed", ANALYZE_CMD, pr->path,
                    alloc_oplog_why(w));
    } else {
        a->ops = h.nops;
        a->nslots = h.nslots;
        a->windows = h.nwindows;
        a->threads = h.nthreads;
        a->kinds = alloc_oplog_kinds(w);
        run_all(pr, a, alloc_oplog_fd(w));
    }
    alloc_oplog_close(w);
    pr->alloc_writer = NULL;
}

static void allocators_on_fini(process_t *pr)
{
    alloc_oplog_close(pr->alloc_writer);
    pr->alloc_writer = NULL;
    if (pr->allocators)
        for (size_t i = 0; i < pr->allocators->nrows; i++)
            free(pr->allocators->rows[i].series);
    free(pr->allocators);
    pr->allocators = NULL;
}

const consumer_t allocators_consumer = {"allocators", allocators_on_init, allocators_on_event,
                                        allocators_on_finish, allocators_on_fini};

const alloc_row_t *allocators_ran_with_row(const allocators_t *a)
{
    for (size_t i = 0; i < a->nrows; i++)
        if (a->rows[i].status == ALLOC_OK && a->rows[i].spec->a == a->ran_with &&
            !a->rows[i].spec->nsettings)
            return &a->rows[i];
    return NULL;
}

double allocators_ns_per_op(const alloc_row_t *r)
{
    return r->ops ? r->wall_s * 1e9 / (double)r->ops : 0.0;
}
