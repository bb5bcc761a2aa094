/*
 * run_report: `memsim run --analyze`, the report written into the run
 * directory and shown.
 *
 * memsim-analyze (beside memsim) runs on DIR once, with the options of
 * --analyze-opts, and writes the three forms of one analysis: its text
 * (on its stdout, through memsim run into a temporary
 * DIR/.report.txt.XXXXXX, renamed DIR/report.txt once the analyzer has
 * ended well and every byte is written) and, with --output,
 * DIR/report.json and DIR/report.html (each written whole by the
 * analyzer under a temporary name, then renamed).  The old reports are
 * removed first: a report file with its final name is always a whole
 * one, from this run.  report.txt is shown on stdout when stdout is a terminal, else on
 * stderr (a pipeline reading the program's stdout gets only the
 * program's output), followed by one line saying where it is and how to
 * see it again.  A failure is one line naming the cause; memsim run's
 * exit status does not change.
 */
#ifndef MEMSIM_CLI_RUN_REPORT_H
#define MEMSIM_CLI_RUN_REPORT_H

#include <stddef.h>

/* --analyze-opts: memsim-analyze's options for the analysis. */
#define RUN_REPORT_MAX_OPTS 64
typedef struct run_report_opts_s {
    char *v[RUN_REPORT_MAX_OPTS];    /* the words, in order; they point into text[] */
    size_t n;
    char *text[RUN_REPORT_MAX_OPTS]; /* copies of each --analyze-opts value */
    size_t ntext;
} run_report_opts_t;

/* Split text at blanks (spaces, tabs, newlines; no quoting) onto o.
 * 0, or -1 after one line prefixed cmd (empty, too many words). */
int run_report_opts_add(const char *cmd, run_report_opts_t *o, const char *text);
/* Whether memsim-analyze would take o's words: its own parser checks
 * them (its message when not), and memsim run refuses what would change
 * the reports' forms (--json, --html, --collapsed, --flamegraph,
 * --output), --help
 * and anything that is not an option.  0, or -1 after one line. */
int run_report_opts_check(const char *cmd, const run_report_opts_t *o);
void run_report_opts_free(run_report_opts_t *o);

/* Analyze dir (absolute) with self_dir/memsim-analyze; messages prefixed
 * cmd.  A signal memsim run would forward (SIGINT, SIGTERM, SIGHUP,
 * SIGQUIT) received meanwhile goes on to the analyzer; the temporary
 * file is removed and memsim run then ends by that signal, as it did
 * before it wrote reports. */
void run_report(const char *cmd, const char *self_dir, const char *dir,
                const run_report_opts_t *opts);

#endif
