/*
 * run: `memsim run` — run a command under libmemsim.so and watch what the
 * operating system charges its process tree.
 *
 * The measurement is that of measure_command in the Python tool memsim
 * started from (its record's field names and reasons are kept): the
 * command runs in a new process group; the parent, which is not traced,
 * sums the RSS of the command and of its current descendants every 10
 * ms; a wall or RSS budget ends the whole group.  Everything is checked before anything is
 * made or started, so bad input leaves nothing behind.
 *
 * Output directory DIR:
 *   memsim.<exe>.<pid>.<n>.jsonl.zst   the traces (written by memsim-recorder; .jsonl with --no-compress)
 *   rss.jsonl                      one poll a line: elapsed_s, tree_rss_bytes, processes
 *   resources.json                 the run's record (write_resources)
 *   report.txt, report.json        with --analyze: memsim-analyze's report (run_report.c)
 */
#include "cli/run.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "lib/args.h"
#include "cli/paths.h"
#include "cli/run_allocators.h"
#include "cli/run_report.h"
#include "cli/untraced.h"
#include "lib/procfs.h"
#include "lib/sampling.h"
#include "trace/tracefmt.h"
#include "sim/strategy.h"
#include "ipc/childenv.h"

#define CMD "memsim run"

#define RUN_POLL_NS 10000000L /* the tree's RSS is read every 10 ms */
#define RUN_POLL_S 0.01       /* the same, as resources.json reports it */
#define RUN_GRACE_S 2.0       /* SIGTERM to SIGKILL, when the group lingers */
#define RUN_MIB (1024.0 * 1024.0)
#define RUN_PIDS_MIN 256 /* first size of the descendants buffer */
#define RUN_TRACE_WAIT_S 10.0 /* for the recorders of vanished processes */

/* What the preload accepts (ipc/config.h): refused here, before the
 * command starts, rather than there, where it would run untraced. */
#define RUN_DEVICE_SIZE_MIN 4096u
#define RUN_SAMPLE_MS_MAX 3600000u
#define RUN_DEVICE_SIZE_MAX (1ull << 50) /* 1 PiB */

/* The budgets' ranges: a poll to a year, a MiB to 16 TiB. */
#define RUN_WALL_S_MIN RUN_POLL_S
#define RUN_WALL_S_MAX (365.0 * 86400.0)
#define RUN_RSS_MB_MIN 1.0
#define RUN_RSS_MB_MAX (16.0 * 1024.0 * 1024.0)
/* memsim run's status when a budget stopped the command (timeout(1)'s). */
#define RUN_BUDGET_EXIT 124

/* The Python tool's texts for the record, "interpreter" made "command". */
static const char RUN_SCOPE[] =
    "command launch through exit; simultaneous descendants; observer excluded";
static const char RUN_LIMITATION[] =
    "polled observations do not bound arbitrary transient allocations";

typedef struct run_opts_s {
    const char *out;      /* --out, or NULL: a new memsim-<exe>-<time>/ here */
    const char *strategy; /* --strategy (a known name or "none"), or NULL */
    uint64_t device_size; /* --device-size in bytes; 0: not given */
    uint64_t sample_ms;   /* --sample-ms; 0: not given */
    uint64_t sample_bytes; /* --sample-bytes or --sample; 0: every allocation traced */
    double wall_s;        /* --wall-s; 0: no budget */
    double rss_mb;        /* --rss-mb in MiB; 0: no budget */
    bool no_children;     /* --no-children */
    bool no_compress;     /* --no-compress */
    bool analyze;         /* --analyze, or --analyze-opts */
    bool force;           /* --force: a non-empty --out is reused */
    run_report_opts_t aopts; /* --analyze-opts, split into words */
    run_alloc_t alloc;    /* --allocator */
    bool compare;         /* --compare-allocators */
    const char *compare_list; /* its list, or NULL: every allocator */
    const char *pass[12]; /* the options a comparison's runs get too */
    size_t npass;
    char **argv;          /* the command, NULL-terminated, argv[0] non-empty */
} run_opts_t;

/* Where things are, resolved before the command starts. */
typedef struct run_paths_s {
    char self_dir[PATH_MAX]; /* directory of the memsim executable */
    char preload[PATH_MAX];  /* absolute path of libmemsim.so */
    char dir[PATH_MAX];      /* absolute output directory */
    bool dir_created;        /* memsim run made dir (removed if nothing ran) */
} run_paths_t;

/* The watch of one command; see watch(). */
typedef struct run_watch_s {
    pid_t pid;             /* the command's pid, also its process group */
    struct timespec start; /* CLOCK_MONOTONIC just before the fork */
    FILE *rss;             /* DIR/rss.jsonl */
    pid_t *pids;           /* descendants buffer, cap entries */
    size_t cap;
    uint64_t peak;      /* most tree RSS of any poll, bytes */
    const char *reason; /* "completed" or the budget exceeded */
    int status;         /* the command's wait status */
    double wall_s;      /* start to the command's end */
    bool tty;           /* the terminal was handed to the command's group */
} run_watch_t;

void run_usage(FILE *f)
{
    char names[256];
    fprintf(f,
            "usage: memsim run [options] [--] CMD [ARGS...]\n"
            "\n"
            "Run CMD under libmemsim.so (every process of its tree traced), sum the RSS of\n"
            "its process tree every 10 ms from outside, and stop the tree when a budget is\n"
            "exceeded.  The traces, rss.jsonl (one poll a line) and resources.json (exit\n"
            "code, reason, wall time, peak tree RSS) go into one directory.  `--` is needed\n"
            "only when CMD starts with '-'.\n"
            "\n"
            "  -o, --out DIR          output directory, created if missing; one that exists\n"
            "                         must be empty (default: a new\n"
            "                         memsim-<exe>-<YYYYmmdd-HHMMSS>/ in the current directory)\n"
            "  -f, --force            reuse a --out DIR that is not empty: the files of the\n"
            "                         run before (traces, rss.jsonl, resources.json, reports)\n"
            "                         are removed first, nothing else\n"
            "  -s, --strategy NAME    shadow device strategy, or \"none\"; known: %s\n"
            "  -d, --device-size SIZE shadow device size, 4K to 1P, e.g. 512M (default:\n"
            "                         physical memory)\n"
            "      --sample-ms N      the preload's sampling period, 1 to %u ms (default 100)\n"
            "      --sample-bytes N   a sampled trace: allocations sampled by bytes, one in\n"
            "                         about every N bytes allocated (1 to 1G, e.g. 512K,\n"
            "                         4M): the heap's figures are estimates, cheap enough to\n"
            "                         leave on (MEMSIM_SAMPLE_BYTES)\n"
            "      --sample           the same at 512K\n"
            "      --wall-s S         wall-time budget, %g to %.0f s (365 days)\n"
            "      --rss-mb M         process tree RSS budget, %g to %.0f MiB (16 TiB)\n"
            "      --no-children      trace only CMD itself (RSS still counts the whole tree)\n"
            "      --no-compress      write plain JSON-lines traces (default: zstd, .jsonl.zst)\n"
            "      --analyze          afterwards, memsim-analyze's reports into DIR/report.txt,\n"
            "                         DIR/report.json and DIR/report.html; report.txt shown\n"
            "                         on stdout when it is a terminal, else on stderr (the\n"
            "                         exit status stays CMD's)\n"
            "      --analyze-opts OPTS\n"
            "                         memsim-analyze's options for --analyze (implies it),\n"
            "                         split at blanks, e.g. \"--sites 20 --fail-on warning\";\n"
            "                         not --json, --html, --collapsed nor --flamegraph\n"
            "      --allocator SPEC   run CMD with a real allocator preloaded (glibc,\n"
            "                         jemalloc, mimalloc, tcmalloc; settings after a colon,\n"
            "                         e.g. jemalloc:dirty_decay_ms=0) and measure each\n"
            "                         process's heap RSS into DIR/meter.PID.json and\n"
            "                         resources.json\n"
            "      --compare-allocators[=LIST]\n"
            "                         run CMD once per allocator (default: all four) into\n"
            "                         DIR/SPEC/, replay the first run's trace through each\n"
            "                         (memsim-analyze --allocators) and print predicted\n"
            "                         against measured peak heap RSS (DIR/allocators.json)\n"
            "  -h, --help             this text\n"
            "\n"
            "A budget exceeded sends SIGTERM to CMD's process group, then SIGKILL %.0f s later\n"
            "to what is left; resources.json says which (reason \"wall_budget_exceeded\" or\n"
            "\"rss_budget_exceeded\"; \"completed\" otherwise).  When no trace appeared, one\n"
            "line says why (a static or setuid program is out of LD_PRELOAD's reach).\n"
            "\n"
            "Exit status: CMD's own, or 128+N when signal N ended it; %d when a budget\n"
            "stopped it (as timeout(1) does); 127 when CMD is not found, 126 when it cannot\n"
            "be executed; 2 for bad input (nothing is started); 1 when memsim run could not\n"
            "start it.\n"
            "\n"
            "EXAMPLES\n"
            "  memsim run ./my-program --input data.bin\n"
            "  memsim run --out results --rss-mb 2048 --wall-s 600 -- make -j4\n"
            "  memsim run -s buddy -d 1G --no-children python3 train.py\n"
            "  memsim run --sample --analyze ./my-service   # sampled: cheap, estimates\n"
            "  memsim run --analyze ./my-program >out.txt   # out.txt: the program's output\n"
            "  memsim run --analyze-opts '--sites 20 --fail-on warning' ./my-program\n"
            "  memsim run --allocator jemalloc:dirty_decay_ms=0 ./my-program\n"
            "  memsim run --compare-allocators=glibc,mimalloc ./my-program\n",
            strategy_names(names, sizeof names), RUN_SAMPLE_MS_MAX, RUN_WALL_S_MIN,
            RUN_WALL_S_MAX, RUN_RSS_MB_MIN, RUN_RSS_MB_MAX, RUN_GRACE_S, RUN_BUDGET_EXIT);
}

/* ---------------------------------------------------------------------
 * Options
 * ------------------------------------------------------------------- */

/* A positive finite number in [lo, hi] (unit: what it counts, for the
 * message): refuses 0, negatives, NaN, infinities, text, and what is
 * out of range. */
static int parse_budget(const char *opt, const char *s, double lo, double hi, const char *unit,
                        double *out)
{
    if (args_real(CMD, opt, s, -DBL_MAX, DBL_MAX, out))
        return -1;
    if (*out <= 0) {
        fprintf(stderr, "%s: %s: %s is not a positive number\n", CMD, opt, s);
        return -1;
    }
    if (*out < lo) {
        fprintf(stderr, "%s: %s: %s is below the minimum %g %s\n", CMD, opt, s, lo, unit);
        return -1;
    }
    if (*out > hi) {
        fprintf(stderr, "%s: %s: %s is above the maximum %.0f %s\n", CMD, opt, s, hi, unit);
        return -1;
    }
    return 0;
}

static int parse_strategy(const char *s, run_opts_t *o)
{
    if (strcmp(s, "none") == 0 || strategy_find(s)) {
        o->strategy = s;
        return 0;
    }
    char names[256];
    fprintf(stderr, "%s: --strategy: unknown strategy \"%s\" (known: none, %s)\n", CMD, s,
            strategy_names(names, sizeof names));
    return -1;
}

static int parse(int argc, char **argv, run_opts_t *o)
{
    enum { OPT_SAMPLE = 256, OPT_WALL, OPT_RSS, OPT_NO_CHILDREN, OPT_NO_COMPRESS, OPT_ANALYZE,
           OPT_ANALYZE_OPTS, OPT_ALLOCATOR, OPT_COMPARE, OPT_SAMPLE_BYTES, OPT_SAMPLED };
    static const struct option longopts[] = {
        {"out", required_argument, NULL, 'o'},
        {"strategy", required_argument, NULL, 's'},
        {"device-size", required_argument, NULL, 'd'},
        {"sample-ms", required_argument, NULL, OPT_SAMPLE},
        {"sample-bytes", required_argument, NULL, OPT_SAMPLE_BYTES},
        {"sample", no_argument, NULL, OPT_SAMPLED},
        {"wall-s", required_argument, NULL, OPT_WALL},
        {"rss-mb", required_argument, NULL, OPT_RSS},
        {"no-children", no_argument, NULL, OPT_NO_CHILDREN},
        {"no-compress", no_argument, NULL, OPT_NO_COMPRESS},
        {"analyze", no_argument, NULL, OPT_ANALYZE},
        {"analyze-opts", required_argument, NULL, OPT_ANALYZE_OPTS},
        {"force", no_argument, NULL, 'f'},
        {"allocator", required_argument, NULL, OPT_ALLOCATOR},
        {"compare-allocators", optional_argument, NULL, OPT_COMPARE},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    *o = (run_opts_t){0};
    const char *alloc_spec = NULL;
    opterr = 0;
    optind = 1;
    int c;
    /* '+': options stop at the command, so its own options stay its own. */
    while ((c = getopt_long(argc, argv, "+:o:fs:d:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            if (!*optarg) {
                fprintf(stderr, "%s: --out: the directory name is empty\n", CMD);
                return -1;
            }
            o->out = optarg;
            break;
        case 's':
            if (parse_strategy(optarg, o))
                return -1;
            break;
        case 'd':
            if (args_size(CMD, "--device-size", optarg, RUN_DEVICE_SIZE_MIN, &o->device_size))
                return -1;
            if (o->device_size > RUN_DEVICE_SIZE_MAX) {
                fprintf(stderr, "%s: --device-size: %s is above the maximum 1P\n", CMD, optarg);
                return -1;
            }
            break;
        case OPT_ALLOCATOR: alloc_spec = optarg; break;
        case OPT_COMPARE:
            o->compare = true;
            o->compare_list = optarg;
            break;
        case OPT_SAMPLE:
            o->pass[o->npass++] = "--sample-ms";
            o->pass[o->npass++] = optarg;
            if (args_count(CMD, "--sample-ms", optarg, 1, &o->sample_ms))
                return -1;
            if (o->sample_ms > RUN_SAMPLE_MS_MAX) {
                fprintf(stderr, "%s: --sample-ms: %s is above the maximum %u\n", CMD, optarg,
                        RUN_SAMPLE_MS_MAX);
                return -1;
            }
            break;
        case OPT_SAMPLE_BYTES:
            if (args_size(CMD, "--sample-bytes", optarg, 1, &o->sample_bytes))
                return -1;
            if (o->sample_bytes > SAMPLING_BYTES_MAX) {
                fprintf(stderr, "%s: --sample-bytes: %s is above the maximum 1G\n", CMD, optarg);
                return -1;
            }
            break;
        case OPT_SAMPLED: o->sample_bytes = SAMPLING_BYTES_DEFAULT; break;
        case OPT_WALL:
            o->pass[o->npass++] = "--wall-s";
            o->pass[o->npass++] = optarg;
            if (parse_budget("--wall-s", optarg, RUN_WALL_S_MIN, RUN_WALL_S_MAX, "s", &o->wall_s))
                return -1;
            break;
        case OPT_RSS:
            o->pass[o->npass++] = "--rss-mb";
            o->pass[o->npass++] = optarg;
            if (parse_budget("--rss-mb", optarg, RUN_RSS_MB_MIN, RUN_RSS_MB_MAX, "MiB",
                             &o->rss_mb))
                return -1;
            break;
        case OPT_NO_CHILDREN:
            o->no_children = true;
            o->pass[o->npass++] = "--no-children";
            break;
        case OPT_NO_COMPRESS:
            o->no_compress = true;
            o->pass[o->npass++] = "--no-compress";
            break;
        case OPT_ANALYZE: o->analyze = true; break;
        case OPT_ANALYZE_OPTS:
            if (run_report_opts_add(CMD, &o->aopts, optarg))
                return -1;
            o->analyze = true;
            break;
        case 'f': o->force = true; break;
        case 'h': run_usage(stdout); exit(0);
        case ':':
            fprintf(stderr, "%s: %s needs a value\n", CMD, argv[optind - 1]);
            return -1;
        default:
            fprintf(stderr, "%s: unknown option \"%s\" (see memsim run --help)\n", CMD,
                    argv[optind - 1]);
            return -1;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "%s: no command to run (usage: memsim run [options] [--] CMD [ARGS...])\n",
                CMD);
        return -1;
    }
    if (!*argv[optind]) {
        fprintf(stderr, "%s: the command is an empty string\n", CMD);
        return -1;
    }
    if (o->force && !o->out) {
        fprintf(stderr, "%s: --force needs --out (the default directory is always new)\n", CMD);
        return -1;
    }
    o->argv = argv + optind;
    if (o->aopts.n && run_report_opts_check(CMD, &o->aopts))
        return -1;
    if (o->compare && (alloc_spec || o->analyze)) {
        fprintf(stderr, "%s: --compare-allocators excludes --allocator and --analyze\n", CMD);
        return -1;
    }
    if (o->compare && o->compare_list) {
        catalog_spec_t specs[CATALOG_MAX_SPECS];
        size_t n;
        char err[256];
        if (catalog_parse_list(o->compare_list, specs, CATALOG_MAX_SPECS, &n, err, sizeof err)) {
            fprintf(stderr, "%s: --compare-allocators: %s\n", CMD, err);
            return -1;
        }
    }
    char self_dir[PATH_MAX];
    if (alloc_spec && (paths_self_dir(CMD, self_dir, sizeof self_dir) ||
                       run_alloc_parse(CMD, alloc_spec, self_dir, &o->alloc)))
        return -1;
    return 0;
}

/* ---------------------------------------------------------------------
 * Paths: memsim's own directory, libmemsim.so, the output directory
 * ------------------------------------------------------------------- */

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

static bool trace_name(const char *name);

/* Whether name is one of the files a run writes in its directory. */
static bool run_file(const char *name)
{
    static const char *const mine[] = {"rss.jsonl", "resources.json", "report.txt",
                                       "report.json", "report.html"};
    for (size_t i = 0; i < sizeof mine / sizeof *mine; i++)
        if (strcmp(name, mine[i]) == 0)
            return true;
    return trace_name(name) || strncmp(name, ".report.", 8) == 0 || run_alloc_file(name);
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

/* Create (or take) the output directory; its absolute path into p->dir. */
static int make_out(const run_opts_t *o, run_paths_t *p)
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

/* ---------------------------------------------------------------------
 * The command's environment
 * ------------------------------------------------------------------- */

extern char **environ;

/* "NAME=value" on the heap, or NULL. */
static char *env_entry(const char *name, const char *value)
{
    size_t len = strlen(name) + strlen(value) + 2;
    char *s = malloc(len);
    if (s)
        snprintf(s, len, "%s=%s", name, value);
    return s;
}

/* MEMSIM_OUTPUT for dir: the directory itself, or, when its path has a
 * '%' (which would make it a pattern), the equivalent pattern. */
static char *env_output(const char *dir)
{
    if (!strchr(dir, '%'))
        return env_entry("MEMSIM_OUTPUT", dir);
    static const char tail[] = "/memsim.%e.%p.%n.jsonl";
    size_t len = 2 * strlen(dir) + sizeof tail;
    char *pat = malloc(len), *w = pat;
    if (!pat)
        return NULL;
    for (const char *s = dir; *s; s++) {
        *w++ = *s;
        if (*s == '%')
            *w++ = '%';
    }
    memcpy(w, tail, sizeof tail);
    char *e = env_entry("MEMSIM_OUTPUT", pat);
    free(pat);
    return e;
}

/* The variables memsim run sets, "NAME=value" each on the heap, into
 * mine; how many, or 0 when out of memory (nothing left allocated). */
#define OWN_VARS (10 + CATALOG_MAX_ENV)
static size_t own_vars(const run_opts_t *o, const run_paths_t *p, char *mine[OWN_VARS])
{
    const char *old = getenv("LD_PRELOAD");
    char num[3][32];
    size_t m = 0;
    if (o->alloc.on) {
        mine[m++] = run_alloc_preload(&o->alloc, p->preload, old);
        size_t k = run_alloc_vars(&o->alloc, p->dir, mine + m);
        if (!k)
            mine[m++] = NULL; /* out of memory: refused below */
        m += k;
    } else if (old && *old) {
        size_t len = strlen(p->preload) + strlen(old) + 2;
        char *v = malloc(len);
        if (v)
            snprintf(v, len, "%s:%s", p->preload, old);
        mine[m++] = v ? env_entry("LD_PRELOAD", v) : NULL;
        free(v);
    } else {
        mine[m++] = env_entry("LD_PRELOAD", p->preload);
    }
    mine[m++] = env_output(p->dir);
    if (o->strategy)
        mine[m++] = env_entry("MEMSIM_STRATEGY", o->strategy);
    if (o->device_size) {
        snprintf(num[0], sizeof num[0], "%" PRIu64, o->device_size);
        mine[m++] = env_entry("MEMSIM_DEVICE_SIZE", num[0]);
    }
    if (o->sample_ms) {
        snprintf(num[1], sizeof num[1], "%" PRIu64, o->sample_ms);
        mine[m++] = env_entry("MEMSIM_SAMPLE_MS", num[1]);
    }
    if (o->sample_bytes) {
        snprintf(num[2], sizeof num[2], "%" PRIu64, o->sample_bytes);
        mine[m++] = env_entry("MEMSIM_SAMPLE_BYTES", num[2]);
    }
    if (o->no_children)
        mine[m++] = env_entry("MEMSIM_TRACE_CHILDREN", "0");
    if (o->no_compress)
        mine[m++] = env_entry("MEMSIM_COMPRESS", "0");
    bool ok = true;
    for (size_t i = 0; i < m; i++)
        ok = ok && mine[i];
    if (ok)
        return m;
    for (size_t i = 0; i < m; i++)
        free(mine[i]);
    return 0;
}

/* environ, less what memsim run sets, then LD_PRELOAD, MEMSIM_OUTPUT and
 * the variables of the options given.  MEMSIM_ROOT_PID goes: the command
 * is a new root.  NULL when out of memory; else free with env_free, the
 * entries from *own on being memsim run's. */
static char **child_env(const run_opts_t *o, const run_paths_t *p, size_t *own)
{
    const char *drop[] = {"LD_PRELOAD", "MEMSIM_OUTPUT", "MEMSIM_ROOT_PID",
                          o->strategy ? "MEMSIM_STRATEGY" : NULL,
                          o->device_size ? "MEMSIM_DEVICE_SIZE" : NULL,
                          o->sample_ms ? "MEMSIM_SAMPLE_MS" : NULL,
                          o->sample_bytes ? "MEMSIM_SAMPLE_BYTES" : NULL,
                          o->no_children ? "MEMSIM_TRACE_CHILDREN" : NULL,
                          o->no_compress ? "MEMSIM_COMPRESS" : NULL};
    char *mine[OWN_VARS];
    size_t m = own_vars(o, p, mine);
    char **env = m ? calloc(childenv_count(environ) + m + 1, sizeof *env) : NULL;
    if (!env) {
        for (size_t i = 0; i < m; i++)
            free(mine[i]);
        return NULL;
    }
    childenv_merge(environ, drop, sizeof drop / sizeof *drop, mine, m, env);
    *own = childenv_count(env) - m;
    if (o->alloc.on) { /* the allocators' settings inherited go: the run is exactly its spec */
        size_t k = 0;
        for (size_t i = 0; env[i]; i++)
            if (i >= *own || !catalog_env_is_setting(env[i]))
                env[k++] = env[i];
        env[k] = NULL;
        *own = k - m;
    }
    return env;
}

static void env_free(char **env, size_t own)
{
    for (size_t i = own; env && env[i]; i++)
        free(env[i]);
    free(env);
}

/* ---------------------------------------------------------------------
 * Signals and the terminal
 * ------------------------------------------------------------------- */

/* Signals to memsim run that go on to the command's group: the command
 * then ends as it would, and its traces get their end records. */
const int run_signals[RUN_NSIGNALS] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
static volatile sig_atomic_t run_pending[RUN_NSIGNALS];

static void on_signal(int sig)
{
    for (size_t i = 0; i < RUN_NSIGNALS; i++)
        if (run_signals[i] == sig)
            run_pending[i] = 1;
}

static void forward_pending(pid_t pgid)
{
    for (size_t i = 0; i < RUN_NSIGNALS; i++) {
        if (run_pending[i]) {
            run_pending[i] = 0;
            kill(-pgid, run_signals[i]);
        }
    }
}

void run_signals_catch(void (*fn)(int), struct sigaction found[RUN_NSIGNALS])
{
    struct sigaction sa = {.sa_handler = fn};
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < RUN_NSIGNALS; i++) {
        sigaction(run_signals[i], NULL, &found[i]);
        if (found[i].sa_handler != SIG_IGN)
            sigaction(run_signals[i], &sa, NULL);
    }
}

void run_signals_restore(const struct sigaction found[RUN_NSIGNALS])
{
    for (size_t i = 0; i < RUN_NSIGNALS; i++)
        sigaction(run_signals[i], &found[i], NULL);
}

/* Catch the forwarded signals with on_signal, so that the loop forwards
 * them at once; the dispositions found go to run_found for
 * restore_handlers. */
static struct sigaction run_found[RUN_NSIGNALS];

static void catch_handlers(void) { run_signals_catch(on_signal, run_found); }

static void restore_handlers(void) { run_signals_restore(run_found); }

/* Make pgid the terminal's foreground group.  A process outside the
 * foreground group gets SIGTTOU for that unless it ignores it. */
static void terminal_give(pid_t pgid)
{
    struct sigaction ign = {.sa_handler = SIG_IGN}, old;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGTTOU, &ign, &old);
    tcsetpgrp(STDIN_FILENO, pgid);
    sigaction(SIGTTOU, &old, NULL);
}

/* Whether stdin is a terminal whose foreground group is memsim run's. */
static bool terminal_ours(void)
{
    return isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
}

/* ---------------------------------------------------------------------
 * Starting the command
 * ------------------------------------------------------------------- */

/* In the child: own group, the terminal if handed over, signals as
 * memsim run found them, then exec.  On failure one line, errno down
 * errfd (close-on-exec: EOF tells the parent exec succeeded) and the
 * shells' status: 127 not found, 126 found but not executable. */
static void child_exec(char **argv, char **env, bool tty, const sigset_t *mask, int errfd)
{
    setpgid(0, 0);
    if (tty)
        terminal_give(getpid());
    restore_handlers();
    sigprocmask(SIG_SETMASK, mask, NULL);
    execvpe(argv[0], argv, env);
    int e = errno;
    dprintf(STDERR_FILENO, "%s: cannot run %s: %s\n", CMD, argv[0], strerror(e));
    (void)!write(errfd, &e, sizeof e);
    _exit(e == ENOENT ? 127 : 126);
}

/* Fork and exec the command; w->pid, w->start, w->tty.  0; 1 when the
 * fork failed; 2 when exec failed (w->status then holds the child's). */
static int start(const run_opts_t *o, char **env, run_watch_t *w)
{
    sigset_t block, old;
    sigemptyset(&block);
    for (size_t i = 0; i < RUN_NSIGNALS; i++)
        sigaddset(&block, run_signals[i]);
    /* Blocked across the fork: a signal then waits for the handlers (in
     * the parent) or for the default dispositions (in the child). */
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0) {
        fprintf(stderr, "%s: cannot start %s: pipe: %s\n", CMD, o->argv[0], strerror(errno));
        return 1;
    }
    sigprocmask(SIG_BLOCK, &block, &old);
    catch_handlers();
    w->tty = terminal_ours();
    fflush(NULL);
    clock_gettime(CLOCK_MONOTONIC, &w->start);
    w->pid = fork();
    if (w->pid == 0) {
        close(pfd[0]);
        child_exec(o->argv, env, w->tty, &old, pfd[1]);
    }
    int fork_errno = errno;
    close(pfd[1]);
    if (w->pid < 0) {
        close(pfd[0]);
        restore_handlers();
        sigprocmask(SIG_SETMASK, &old, NULL);
        fprintf(stderr, "%s: cannot start %s: fork: %s\n", CMD, o->argv[0], strerror(fork_errno));
        return 1;
    }
    /* Also here: whichever of the two runs first, the group exists before
     * anything is sent to it (EACCES: the child has exec'd, and did it). */
    setpgid(w->pid, w->pid);
    if (w->tty)
        terminal_give(w->pid);
    sigprocmask(SIG_SETMASK, &old, NULL);

    int e;
    ssize_t n;
    while ((n = read(pfd[0], &e, sizeof e)) < 0 && errno == EINTR)
        forward_pending(w->pid);
    close(pfd[0]);
    if (n != (ssize_t)sizeof e)
        return 0;
    while (waitpid(w->pid, &w->status, 0) < 0 && errno == EINTR)
        ;
    return 2;
}

/* ---------------------------------------------------------------------
 * Watching: polls, budgets, the end of the group
 * ------------------------------------------------------------------- */

static double since(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static double elapsed(const run_watch_t *w)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return since(&w->start, &now);
}

/* The tree's RSS now: the command and every descendant still there.
 * *procs gets how many were read. */
static uint64_t tree_rss(run_watch_t *w, size_t *procs)
{
    size_t n = 0;
    for (;;) {
        if (procfs_descendants(w->pid, w->pids, w->cap, &n) != 0)
            n = 0;
        if (n <= w->cap)
            break;
        pid_t *more = realloc(w->pids, (n + RUN_PIDS_MIN) * sizeof *more);
        if (!more) {
            n = w->cap;
            break;
        }
        w->pids = more;
        w->cap = n + RUN_PIDS_MIN;
    }
    uint64_t sum = 0, rss;
    *procs = 0;
    if (procfs_read_rss(w->pid, &rss) == 0) {
        sum += rss;
        ++*procs;
    }
    for (size_t i = 0; i < n; i++) {
        if (procfs_read_rss(w->pids[i], &rss) == 0) {
            sum += rss;
            ++*procs;
        }
    }
    return sum;
}

static void sample(run_watch_t *w, double t, uint64_t rss, size_t procs)
{
    if (rss > w->peak)
        w->peak = rss;
    fprintf(w->rss, "{\"elapsed_s\": %.6f, \"tree_rss_bytes\": %" PRIu64 ", \"processes\": %zu}\n",
            t, rss, procs);
}

/* The budget exceeded at time t with tree RSS rss, or NULL.  As the
 * Python tool: wall first, each reached at >=. */
static const char *over_budget(const run_opts_t *o, double t, uint64_t rss)
{
    if (o->wall_s > 0 && t >= o->wall_s)
        return "wall_budget_exceeded";
    if (o->rss_mb > 0 && (double)rss >= o->rss_mb * RUN_MIB)
        return "rss_budget_exceeded";
    return NULL;
}

/* The command stopped (^Z reached its group, which holds the terminal):
 * take the terminal back and stop too, so the shell sees the job stop;
 * once continued, hand the terminal over again if it came back to us,
 * and continue the command's group. */
static void suspend(run_watch_t *w)
{
    if (!w->tty)
        return; /* a stop from elsewhere: whoever sent it continues it */
    terminal_give(getpgrp());
    raise(SIGTSTP);
    if (terminal_ours())
        terminal_give(w->pid);
    kill(-w->pid, SIGCONT);
}

/* Whether no process of the command's group is left. */
static bool group_gone(pid_t pgid)
{
    return kill(-pgid, 0) != 0 && errno == ESRCH;
}

/* Poll every RUN_POLL_NS until the command ends: record the tree's RSS,
 * check the budgets, and when one is exceeded, SIGTERM the group, then
 * SIGKILL it after RUN_GRACE_S unless it is gone by then.  The command is
 * the only process reaped (descendants are their own parents' business). */
static void watch(const run_opts_t *o, run_watch_t *w)
{
    struct timespec next = w->start, now;
    bool reaped = false, killing = false;
    double deadline = 0;
    w->reason = "completed";
    for (;;) {
        next.tv_nsec += RUN_POLL_NS;
        if (next.tv_nsec >= 1000000000L) {
            next.tv_sec++;
            next.tv_nsec -= 1000000000L;
        }
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
            forward_pending(w->pid);
        forward_pending(w->pid);
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (since(&next, &now) > RUN_POLL_S) /* a period late (a stop): no catching up */
            next = now;
        double t = since(&w->start, &now);

        if (!reaped) {
            int st;
            pid_t r = waitpid(w->pid, &st, WNOHANG | WUNTRACED);
            if (r == w->pid && WIFSTOPPED(st)) {
                suspend(w);
                continue;
            }
            if (r == w->pid) {
                reaped = true;
                w->status = st;
                w->wall_s = elapsed(w);
            }
        }
        if (reaped && (!killing || group_gone(w->pid)))
            return;
        if (killing && t >= deadline) {
            kill(-w->pid, SIGKILL);
            if (!reaped) {
                while (waitpid(w->pid, &w->status, 0) < 0 && errno == EINTR)
                    ;
                w->wall_s = elapsed(w);
            }
            return;
        }
        if (reaped)
            continue; /* the leader is gone; waiting for the rest of its group */

        size_t procs;
        uint64_t rss = tree_rss(w, &procs);
        sample(w, t, rss, procs);
        const char *why = killing ? NULL : over_budget(o, t, rss);
        if (why) {
            w->reason = why;
            killing = true;
            deadline = t + RUN_GRACE_S;
            kill(-w->pid, SIGTERM);
        }
    }
}

/* ---------------------------------------------------------------------
 * Results
 * ------------------------------------------------------------------- */

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

/* Whether name is a trace's: memsim.<exe>.<pid>.<n>.jsonl[.zst]. */
static bool trace_name(const char *name)
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
        if (!trace_name(e->d_name))
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

/* The recorders, processes apart from the command, finish a trace a
 * moment after its process vanished (SIGKILL, the OOM killer): wait, at
 * most RUN_TRACE_WAIT_S, until every trace in dir is finished. */
static void wait_traces(const char *dir)
{
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        bool all = true;
        DIR *d = opendir(dir);
        struct dirent *e;
        while (d && all && (e = readdir(d))) {
            if (trace_name(e->d_name))
                all = trace_settled(dir, e->d_name);
        }
        if (d)
            closedir(d);
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (all || since(&start, &now) > RUN_TRACE_WAIT_S)
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

/* DIR/resources.json.  0 or -1 (message printed). */
static int write_resources(const run_opts_t *o, const run_watch_t *w, const char *dir,
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

/* One line on stderr at the end: how it ended and where the results are. */
static void report(const run_opts_t *o, const run_watch_t *w, const char *dir, size_t ntraces)
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

/* When the command did not run: take away what memsim run made. */
static void remove_out(const run_paths_t *p)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/rss.jsonl", p->dir);
    unlink(path);
    if (p->dir_created)
        rmdir(p->dir);
}

/* Start, watch and record the command: run_main's exit status. */
static int run_command(const run_opts_t *o, const run_paths_t *p, char **env, run_watch_t *w)
{
    int rc = start(o, env, w);
    if (rc == 1) {
        remove_out(p);
        return 1;
    }
    if (rc == 2) { /* exec failed: the child said why */
        if (w->tty && tcgetpgrp(STDIN_FILENO) == w->pid)
            terminal_give(getpgrp());
        remove_out(p);
        return WIFEXITED(w->status) ? WEXITSTATUS(w->status) : 127;
    }
    watch(o, w);
    /* A command shorter than one poll shows no RSS in the polls: the
     * kernel's peak of the largest waited-for process is a floor. */
    struct rusage ru;
    if (getrusage(RUSAGE_CHILDREN, &ru) == 0 && (uint64_t)ru.ru_maxrss * 1024 > w->peak)
        w->peak = (uint64_t)ru.ru_maxrss * 1024;
    if (w->tty && tcgetpgrp(STDIN_FILENO) == w->pid)
        terminal_give(getpgrp());
    restore_handlers();

    int err = fclose(w->rss);
    w->rss = NULL;
    if (err)
        fprintf(stderr, "%s: cannot write %s/rss.jsonl: %s\n", CMD, p->dir, strerror(errno));
    size_t ntraces = 0;
    wait_traces(p->dir);
    json_t *alloc = o->alloc.on ? run_alloc_collect(CMD, &o->alloc, p->dir) : NULL;
    write_resources(o, w, p->dir, &ntraces, alloc);
    report(o, w, p->dir, ntraces);
    if (!ntraces)
        untraced_explain(CMD, o->argv[0]);
    if (o->analyze && ntraces)
        run_report(CMD, p->self_dir, p->dir, &o->aopts);
    if (strcmp(w->reason, "completed") != 0)
        return RUN_BUDGET_EXIT;
    return WIFSIGNALED(w->status) ? 128 + WTERMSIG(w->status) : WEXITSTATUS(w->status);
}

int run_main(int argc, char **argv)
{
    run_opts_t o;
    static run_paths_t p;
    /* Everything checked before anything is made or started. */
    if (parse(argc, argv, &o) || check_cwd(&o) || (o.out && check_out(&o)) ||
        paths_self_dir(CMD, p.self_dir, sizeof p.self_dir) ||
        paths_preload(CMD, p.self_dir, p.preload) || make_out(&o, &p))
        return 2;
    if (o.compare) {
        o.pass[o.npass] = NULL;
        int rc = run_alloc_compare(CMD, p.self_dir, p.dir, o.compare_list, (char *const *)o.pass,
                                   o.argv);
        run_report_opts_free(&o.aopts);
        return rc;
    }

    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/rss.jsonl", p.dir);
    size_t own = 0;
    run_watch_t w = {.cap = RUN_PIDS_MIN};
    char **env = child_env(&o, &p, &own);
    w.pids = malloc(w.cap * sizeof *w.pids);
    int rc = 1;
    if (!env || !w.pids) {
        fprintf(stderr, "%s: out of memory\n", CMD);
        remove_out(&p);
    } else if (!(w.rss = fopen(path, "we"))) {
        fprintf(stderr, "%s: cannot create %s: %s\n", CMD, path, strerror(errno));
        remove_out(&p);
    } else {
        rc = run_command(&o, &p, env, &w);
    }
    if (w.rss)
        fclose(w.rss);
    free(w.pids);
    env_free(env, own);
    run_report_opts_free(&o.aopts);
    return rc;
}
