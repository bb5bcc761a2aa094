/*
 * run_out: memsim run's output directory (see run_out.h).
 */
#include "cli/run_out.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "cli/run_allocators.h"
#include "cli/run_results.h"

#define CMD RUN_CMD

/* The current directory must exist; without --out it must be writable. */
static int check_cwd(const run_opts_t *o)
{
    char cwd[PATH_MAX];
    struct stat st;
    if (!getcwd(cwd, sizeof cwd) || stat(".", &st) != 0) {
        fprintf(stderr, "%s: the current directory is not usable: %s\n", CMD, strerror(errno));
        return -1;
    }
    if (!o->out && access(".", W_OK | X_OK) != 0) {
        fprintf(stderr, "%s: cannot create the output directory in %s: %s (use --out)\n", CMD,
                cwd, strerror(errno));
        return -1;
    }
    return 0;
}

/* Whether directory path holds anything (a directory that cannot be
 * read counts as holding something). */
static bool dir_has_entries(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return true;
    struct dirent *e;
    bool any = false;
    while (!any && (e = readdir(d)))
        any = strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return any;
}

/* --out: a path we will create, or an empty directory we can write (one
 * that is not empty with --force). */
static int check_out(const run_opts_t *o)
{
    const char *out = o->out;
    struct stat st;
    if (stat(out, &st) != 0) {
        if (errno == ENOENT)
            return 0;
        fprintf(stderr, "%s: --out: \"%s\": %s\n", CMD, out, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        fprintf(stderr, "%s: --out: \"%s\" exists and is not a directory\n", CMD, out);
        return -1;
    }
    if (access(out, W_OK | X_OK) != 0) {
        fprintf(stderr, "%s: --out: \"%s\" is not writable: %s\n", CMD, out, strerror(errno));
        return -1;
    }
    if (!o->force && dir_has_entries(out)) {
        fprintf(stderr, "%s: --out: \"%s\" is not empty (--force reuses it, removing the "
                        "files of the run before)\n", CMD, out);
        return -1;
    }
    return 0;
}

int run_out_check(const run_opts_t *o)
{
    return check_cwd(o) || (o->out && check_out(o)) ? -1 : 0;
}

/* Whether name is one of the files a run writes in its directory. */
static bool run_file(const char *name)
{
    static const char *const mine[] = {"rss.jsonl", "resources.json", "report.txt",
                                       "report.json", "report.html"};
    for (size_t i = 0; i < sizeof mine / sizeof *mine; i++)
        if (strcmp(name, mine[i]) == 0)
            return true;
    return run_results_trace_name(name) || strncmp(name, ".report.", 8) == 0 ||
           run_alloc_file(name);
}

/* --force: the files of the run before in dir go, nothing else.  0, or
 * -1 after one line. */
static int clear_previous(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "%s: --out: cannot read \"%s\": %s\n", CMD, dir, strerror(errno));
        return -1;
    }
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d))) {
        if (!run_file(e->d_name) || unlinkat(dirfd(d), e->d_name, 0) == 0 || errno == ENOENT)
            continue;
        fprintf(stderr, "%s: --force: cannot remove %s/%s: %s\n", CMD, dir, e->d_name,
                strerror(errno));
        rc = -1;
        break;
    }
    closedir(d);
    return rc;
}

/* mkdir -p out, the last component with mode 0700; *created when it was
 * made here. 0, or -1 with errno. */
static int make_dirs(const char *out, bool *created)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s", out) >= (int)sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *s = path + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST)
            return -1;
        *s = '/';
    }
    *created = mkdir(path, 0700) == 0;
    struct stat st;
    if (!*created && errno != EEXIST)
        return -1;
    if (stat(path, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

/* c if it may stand in a directory name, else '_' (as the trace names). */
static char name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                   c == '.' || c == '_' || c == '+' || c == '-'
               ? c
               : '_';
}

/* A new memsim-<exe>-<YYYYmmdd-HHMMSS>[-k]/ in the current directory. */
static int make_default_dir(const char *cmd, char *name, size_t len)
{
    const char *exe = strrchr(cmd, '/');
    exe = exe && exe[1] ? exe + 1 : cmd;
    char safe[65];
    size_t n = 0;
    for (; exe[n] && n < sizeof safe - 1; n++)
        safe[n] = name_char(exe[n]);
    safe[n] = '\0';
    if (strcmp(safe, ".") == 0 || strcmp(safe, "..") == 0 || !n)
        snprintf(safe, sizeof safe, "cmd");

    time_t now = time(NULL);
    struct tm tm;
    char stamp[32];
    localtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    for (int k = 1; k < 1000; k++) {
        if (k == 1)
            snprintf(name, len, "memsim-%s-%s", safe, stamp);
        else
            snprintf(name, len, "memsim-%s-%s-%d", safe, stamp, k);
        if (mkdir(name, 0700) == 0)
            return 0;
        if (errno != EEXIST)
            break;
    }
    fprintf(stderr, "%s: cannot create the output directory %s: %s\n", CMD, name,
            strerror(errno));
    return -1;
}

int run_out_make(const run_opts_t *o, run_paths_t *p)
{
    char name[128];
    const char *path = o->out;
    if (path) {
        if (make_dirs(path, &p->dir_created) != 0) {
            fprintf(stderr, "%s: --out: cannot create \"%s\": %s\n", CMD, path, strerror(errno));
            return -1;
        }
    } else {
        if (make_default_dir(o->argv[0], name, sizeof name) != 0)
            return -1;
        p->dir_created = true;
        path = name;
    }
    if (!realpath(path, p->dir)) {
        fprintf(stderr, "%s: cannot resolve the output directory %s: %s\n", CMD, path,
                strerror(errno));
        return -1;
    }
    return o->force && !p->dir_created ? clear_previous(p->dir) : 0;
}

void run_out_remove(const run_paths_t *p)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/rss.jsonl", p->dir);
    unlink(path);
    if (p->dir_created)
        rmdir(p->dir);
}
