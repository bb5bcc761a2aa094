/*
 * run_report: `memsim run --analyze`'s reports, report.txt, report.json
 * and report.html in the run directory from one pass of the analyzer,
 * and report.txt shown (see run_report.h).
 */
#include "cli/run_report.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <getopt.h>

#include "analyzer/options.h"
#include "cli/run_signals.h"

extern char **environ;

#define RR_BUF 65536
#define RR_PATH (PATH_MAX + 64)
#define RR_QUOTED (4 * RR_PATH + 3) /* every byte a quote: '\'' */

/* What memsim run forwards to the command (run_signals.h): here
 * to the analyzer, which is also in the terminal's foreground group and
 * usually gets them itself. */
static volatile sig_atomic_t rr_caught; /* the last one caught, or 0 */
static struct sigaction rr_found[RUN_NSIGNALS];

static void rr_on_signal(int sig) { rr_caught = sig; }

/* memsim run's signals (run_signals.h), caught while the analyzer runs. */
static void rr_catch(void)
{
    rr_caught = 0;
    run_signals_catch(rr_on_signal, rr_found);
}

static void rr_restore(void) { run_signals_restore(rr_found); }

/* One analysis: the directory, the tool, its options. */
typedef struct rr_s {
    const char *dir;
    const run_report_opts_t *opts;
    char tool[RR_PATH];
    bool pipe_ignored; /* SIGPIPE was ignored when memsim run started */
} rr_t;

/* ---------------------------------------------------------------------
 * Paths as a user would type them
 * ------------------------------------------------------------------- */

/* abs relative to the current directory when it lies below it ("." when
 * it is it), else abs; "./" before one that would read as an option, or
 * before a command's name without a '/' (the shell would look it up on
 * PATH). */
static void user_path(const char *abs, bool command, char *out, size_t len)
{
    char cwd[PATH_MAX];
    const char *p = abs;
    if (getcwd(cwd, sizeof cwd) && strcmp(cwd, "/") != 0) {
        size_t n = strlen(cwd);
        if (strcmp(abs, cwd) == 0)
            p = ".";
        else if (strncmp(abs, cwd, n) == 0 && abs[n] == '/')
            p = abs + n + 1;
    }
    bool dot = p[0] == '-' || (command && !strchr(p, '/'));
    snprintf(out, len, "%s%s", dot ? "./" : "", p);
}

/* s as one word of the shell: as it is when every byte is plain, else in
 * single quotes (a quote in it as '\''). */
static void shell_word(const char *s, char *out, size_t len)
{
    bool plain = *s != '\0';
    for (const char *c = s; *c && plain; c++)
        plain = isalnum((unsigned char)*c) || strchr("_./+-,:@%", *c);
    if (plain) {
        snprintf(out, len, "%s", s);
        return;
    }
    size_t w = 0;
    if (len < 3) {
        if (len)
            *out = '\0';
        return;
    }
    out[w++] = '\'';
    for (const char *c = s; *c && w + 5 < len; c++) {
        if (*c == '\'') {
            memcpy(out + w, "'\\''", 4);
            w += 4;
        } else {
            out[w++] = *c;
        }
    }
    out[w++] = '\'';
    out[w] = '\0';
}

/* Whether the shell's `memsim-analyze` is tool: the first one on PATH. */
static bool on_path(const char *tool)
{
    const char *path = getenv("PATH");
    char mine[PATH_MAX], found[PATH_MAX], cand[RR_PATH];
    if (!path || !realpath(tool, mine))
        return false;
    for (const char *s = path;; s++) {
        const char *e = strchrnul(s, ':');
        int n = (int)(e - s);
        snprintf(cand, sizeof cand, "%.*s%smemsim-analyze", n, s, n ? "/" : "./");
        struct stat st;
        if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
            return realpath(cand, found) && strcmp(found, mine) == 0;
        if (!*e)
            return false;
        s = e;
    }
}

/* ---------------------------------------------------------------------
 * One report file
 * ------------------------------------------------------------------- */

/* write(2) all of buf; 0 or -1 with errno. */
static int write_all(int fd, const char *buf, size_t n)
{
    while (n) {
        ssize_t w = write(fd, buf, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

/* The child's end, as the one line says it. */
static void ended(int st, const char *what, char *out, size_t len)
{
    if (WIFSIGNALED(st))
        snprintf(out, len, "%s was killed by signal %d (%s)", what, WTERMSIG(st),
                 strsignal(WTERMSIG(st)));
    else
        snprintf(out, len, "%s exited with status %d", what, WEXITSTATUS(st));
}

/* Pass a caught signal on to the analyzer, once. */
static void forward(pid_t pid, int *sent)
{
    int sig = rr_caught;
    if (sig && sig != *sent) {
        kill(pid, sig);
        *sent = sig;
    }
}

/* The analyzer (with the options extra, nextra of them) on r->dir, its stdout through a pipe
 * into a temporary file renamed r->dir/name once it has exited 0 (or 1,
 * a --fail-on finding, not asked here) and every byte is written.  Its
 * stderr goes to errfd, or stays memsim run's when errfd < 0.  0; -1
 * when name was not written: the cause is in *why (empty when a signal
 * for memsim run ended it), an old file of that name removed. */
static int analyze_into(const rr_t *r, char *const *extra, size_t nextra, const char *name,
                        int errfd, char *why, size_t whylen)
{
    char tmp[RR_PATH], final[RR_PATH];
    snprintf(tmp, sizeof tmp, "%s/.%s.XXXXXX", r->dir, name);
    snprintf(final, sizeof final, "%s/%s", r->dir, name);
    *why = '\0';
    int fd = mkostemp(tmp, O_CLOEXEC), p[2] = {-1, -1};
    if (fd < 0 || pipe2(p, O_CLOEXEC) != 0) {
        snprintf(why, whylen, "cannot create %s: %s", fd < 0 ? tmp : "a pipe", strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
        unlink(final);
        return -1;
    }
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask); /* as resources.json: mkstemp's 0600 otherwise */

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO);
    if (errfd >= 0)
        posix_spawn_file_actions_adddup2(&fa, errfd, STDERR_FILENO);
    char *argv[RUN_REPORT_MAX_OPTS + 16];
    size_t k = 0;
    argv[k++] = (char *)r->tool;
    for (size_t i = 0; i < r->opts->n; i++)
        argv[k++] = r->opts->v[i];
    for (size_t i = 0; i < nextra && i < 12; i++)
        argv[k++] = extra[i];
    argv[k++] = (char *)r->dir;
    argv[k] = NULL;
    pid_t pid;
    /* SIGPIPE, ignored here while the report is shown, is the analyzer's
     * as memsim run found it. */
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    if (!r->pipe_ignored) {
        sigset_t def;
        sigemptyset(&def);
        sigaddset(&def, SIGPIPE);
        posix_spawnattr_setsigdefault(&at, &def);
        posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF);
    }
    int e = posix_spawn(&pid, r->tool, &fa, &at, argv, environ);
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    const char *what = "memsim-analyze";
    int st = 0, werr = 0, sent = 0;
    if (e) {
        snprintf(why, whylen, "cannot run %s: %s", r->tool, strerror(e));
    } else {
        static char buf[RR_BUF];
        for (;;) {
            forward(pid, &sent);
            ssize_t n = read(p[0], buf, sizeof buf);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                if (n < 0 && !werr)
                    werr = errno;
                break;
            }
            if (!werr && write_all(fd, buf, (size_t)n) != 0)
                werr = errno; /* the rest is read and dropped: the analyzer ends */
        }
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            forward(pid, &sent);
    }
    close(p[0]);
    if (close(fd) != 0 && !werr)
        werr = errno;
    if (!e && !rr_caught) {
        if (!WIFEXITED(st) || WEXITSTATUS(st) > 1)
            ended(st, what, why, whylen);
        else if (werr)
            snprintf(why, whylen, "cannot write %s: %s", final, strerror(werr));
        else if (rename(tmp, final) != 0)
            snprintf(why, whylen, "cannot rename %s to %s: %s", tmp, name, strerror(errno));
        else
            return 0;
    }
    unlink(tmp);
    unlink(final); /* an old report is not this run's */
    return -1;
}

/* ---------------------------------------------------------------------
 * Showing it
 * ------------------------------------------------------------------- */

/* path's bytes onto fd; a reader gone (EPIPE) ends it quietly. */
static void show(const char *path, int fd)
{
    int in = open(path, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return;
    static char buf[RR_BUF];
    ssize_t n;
    while ((n = read(in, buf, sizeof buf)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || write_all(fd, buf, (size_t)n) != 0)
            break;
    }
    close(in);
}

void run_report(const char *cmd, const char *self_dir, const char *dir,
                const run_report_opts_t *opts)
{
    rr_t r = {.dir = dir, .opts = opts};
    snprintf(r.tool, sizeof r.tool, "%s/memsim-analyze", self_dir);
    if (access(r.tool, X_OK) != 0) {
        fprintf(stderr, "%s: --analyze: memsim-analyze is not built yet; traces are in %s\n", cmd,
                dir);
        return;
    }
    char why[2 * RR_PATH + 128];
    char rel[RR_PATH], txt[RR_PATH + 16], qdir[RR_QUOTED], qtxt[RR_QUOTED], qtool[RR_QUOTED];
    user_path(dir, false, rel, sizeof rel);
    shell_word(rel, qdir, sizeof qdir);
    snprintf(txt, sizeof txt, "%s/report.txt", rel);
    shell_word(txt, qtxt, sizeof qtxt);
    if (on_path(r.tool)) {
        snprintf(qtool, sizeof qtool, "memsim-analyze");
    } else {
        user_path(r.tool, true, rel, sizeof rel);
        shell_word(rel, qtool, sizeof qtool);
    }

    /* A reader of the report gone (a closed pipe) must not end memsim
     * run, whose status is the command's. */
    struct sigaction ign = {.sa_handler = SIG_IGN}, pipe_found;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, &pipe_found);
    r.pipe_ignored = pipe_found.sa_handler == SIG_IGN;
    rr_catch();
    fflush(NULL);

    /* One pass of the analyzer for the three forms: the text on its
     * standard output (into report.txt here), the JSON and the page into
     * their files (each written whole by the analyzer, then renamed into
     * place); its stderr (warnings, progress) is ours.  The old reports go
     * first: a failed analysis leaves none of them. */
    static const char *const names[] = {"report.txt", "report.json", "report.html"};
    char paths[3][RR_PATH];
    for (int i = 0; i < 3; i++) {
        snprintf(paths[i], sizeof paths[i], "%s/%s", dir, names[i]);
        unlink(paths[i]);
    }
    char json_to[RR_PATH + 8], html_to[RR_PATH + 8], out_o[] = "--output", text_to[] = "text=-";
    snprintf(json_to, sizeof json_to, "json=%s", paths[1]);
    snprintf(html_to, sizeof html_to, "html=%s", paths[2]);
    char *extra[] = {out_o, text_to, out_o, json_to, out_o, html_to};
    int out = isatty(STDOUT_FILENO) ? STDOUT_FILENO : STDERR_FILENO;
    bool have_txt = analyze_into(&r, extra, 6, "report.txt", -1, why, sizeof why) == 0;
    struct stat st;
    bool have_json = have_txt && stat(paths[1], &st) == 0;
    bool have_html = have_txt && stat(paths[2], &st) == 0;
    if (!have_txt) {
        unlink(paths[1]);
        unlink(paths[2]);
        if (*why)
            fprintf(stderr, "%s: --analyze: no report.txt nor report.json: %s\n", cmd, why);
    } else {
        show(paths[0], out);
        if (!have_json)
            fprintf(stderr, "%s: --analyze: no report.json\n", cmd);
    }
    if (have_txt && !rr_caught) {
        char line[9 * RR_QUOTED + 64], html[RR_PATH + 16], qhtml[RR_QUOTED] = "";
        if (have_html) {
            user_path(dir, false, rel, sizeof rel);
            snprintf(html, sizeof html, "%s/report.html", rel);
            shell_word(html, qhtml, sizeof qhtml);
        }
        char qopts[4 * RR_QUOTED] = "", word[RR_QUOTED];
        for (size_t i = 0, at = 0; i < opts->n; i++) {
            shell_word(opts->v[i], word, sizeof word);
            int w = snprintf(qopts + at, sizeof qopts - at, "%s ", word);
            if (w < 0 || (size_t)w >= sizeof qopts - at)
                break;
            at += (size_t)w;
        }
        int n = snprintf(line, sizeof line, "%s: report: %s%s%s (again: %s %s%s)\n", cmd, qtxt,
                         have_html ? ", " : "", qhtml, qtool, qopts, qdir);
        fflush(stderr);
        write_all(out, line, n < (int)sizeof line ? (size_t)n : sizeof line - 1);
    }

    int sig = rr_caught;
    rr_restore();
    sigaction(SIGPIPE, &pipe_found, NULL);
    if (sig) /* as before --analyze wrote files: the signal ends memsim run */
        raise(sig);
}

/* ---------------------------------------------------------------------
 * --analyze-opts
 * ------------------------------------------------------------------- */

int run_report_opts_add(const char *cmd, run_report_opts_t *o, const char *text)
{
    if (o->ntext == RUN_REPORT_MAX_OPTS) {
        fprintf(stderr, "%s: --analyze-opts: given more than %d times\n", cmd,
                RUN_REPORT_MAX_OPTS);
        return -1;
    }
    char *copy = strdup(text), *save = NULL;
    if (!copy) {
        fprintf(stderr, "%s: out of memory\n", cmd);
        return -1;
    }
    o->text[o->ntext++] = copy;
    size_t before = o->n;
    for (char *w = strtok_r(copy, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save)) {
        if (o->n == RUN_REPORT_MAX_OPTS) {
            fprintf(stderr, "%s: --analyze-opts: more than %d words\n", cmd, RUN_REPORT_MAX_OPTS);
            return -1;
        }
        o->v[o->n++] = w;
    }
    if (o->n == before) {
        fprintf(stderr, "%s: --analyze-opts: no option given\n", cmd);
        return -1;
    }
    return 0;
}

/* Whether w asks for help: -h, or --help or a prefix of it from --h. */
static bool asks_help(const char *w)
{
    size_t n = strlen(w);
    return !strcmp(w, "-h") || (n >= 3 && !strncmp(w, "--help", n));
}

int run_report_opts_check(const char *cmd, const run_report_opts_t *o)
{
    /* options_parse may write into its arguments (strtok_r on -s). */
    char *argv[RUN_REPORT_MAX_OPTS + 3] = {0}, tool[] = ANALYZE_CMD, dir[] = ".";
    int argc = 0, rc = -1;
    argv[argc++] = tool;
    argv[argc++] = dir; /* first: a last option that wants a value does not take it */
    for (size_t i = 0; i < o->n; i++) {
        if (asks_help(o->v[i])) {
            fprintf(stderr, "%s: --analyze-opts: %s is not an analysis option (see memsim-analyze "
                            "--help)\n", cmd, o->v[i]);
            goto out;
        }
        if (!(argv[argc++] = strdup(o->v[i]))) {
            fprintf(stderr, "%s: out of memory\n", cmd);
            goto out;
        }
    }
    analyze_opts_t ao;
    optind = 0; /* a new argv: getopt starts afresh */
    if (options_parse(argc, argv, &ao))
        goto out;
    const char *form = ao.json ? "--json" : ao.html ? "--html"
                     : ao.collapsed != ANALYZE_NO_COLLAPSED ? "--collapsed"
                     : ao.flamegraph ? "--flamegraph" : ao.out_pprof ? "--pprof"
                     : ao.out_text || ao.out_json ? "--output" : ao.diff ? "--diff" : NULL;
    if (form)
        fprintf(stderr, "%s: --analyze-opts: %s is memsim run's to choose (it writes report.txt, "
                        "report.json and report.html)\n", cmd, form);
    else if (argc - optind != 1)
        fprintf(stderr, "%s: --analyze-opts: \"%s\" is not an option (the run's directory is "
                        "the analyzer's only input)\n", cmd, argv[optind + 1]);
    else
        rc = 0;
    options_fini(&ao);
out:
    for (int i = 1; i < argc; i++)
        if (argv[i] != dir)
            free(argv[i]);
    return rc;
}

void run_report_opts_free(run_report_opts_t *o)
{
    for (size_t i = 0; i < o->ntext; i++)
        free(o->text[i]);
    *o = (run_report_opts_t){0};
}
