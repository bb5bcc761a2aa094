/*
 * run_opts: memsim run's command line: its options, their checks and
 * its --help.  Every value is checked here, before anything is made or
 * started; a bad one gets one line naming the option.
 */
#ifndef MEMSIM_CLI_RUN_OPTS_H
#define MEMSIM_CLI_RUN_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/run_allocators.h"
#include "cli/run_report.h"

#define RUN_CMD "memsim run" /* the prefix of its messages */

/* memsim run's status when a budget stopped the command (timeout(1)'s). */
#define RUN_BUDGET_EXIT 124

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
    const char *alloc_spec; /* --allocator's SPEC, or NULL */
    run_alloc_t alloc;    /* --allocator, parsed */
    bool compare;         /* --compare-allocators */
    const char *compare_list; /* its list, or NULL: every allocator */
    const char *compare_exe; /* --exe: the executable compared, or NULL: the
                              * process with the most heap operations */
    const char *pass[12]; /* the options a comparison's runs get too */
    size_t npass;
    char **argv;          /* the command, NULL-terminated, argv[0] non-empty */
} run_opts_t;

/* memsim run --help's text. */
void run_usage(FILE *f);

/* Parse argv (argv[0] is "run") into *o: options up to the command,
 * which must be there.  0, or -1 after one line on stderr; --help
 * prints the usage and exits 0.  Free o->aopts with
 * run_report_opts_free. */
int run_opts_parse(int argc, char **argv, run_opts_t *o);

#endif
