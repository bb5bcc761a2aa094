/*
 * run_report: `memsim run --analyze`, the report written into the run
 * directory and shown.
 *
 * memsim-analyze (beside memsim) runs on DIR twice: its text into
 * DIR/report.txt, then its --json into DIR/report.json.  Each goes
 * through memsim run into a temporary DIR/.report.*.XXXXXX, renamed into
 * place only once the analyzer has ended well and every byte is written:
 * a report file with its final name is always a whole one, from this
 * run.  report.txt is shown on stdout when stdout is a terminal, else on
 * stderr (a pipeline reading the program's stdout gets only the
 * program's output), followed by one line saying where it is and how to
 * see it again.  A failure is one line naming the cause; memsim run's
 * exit status does not change.
 */
#ifndef MEMSIM_CLI_RUN_REPORT_H
#define MEMSIM_CLI_RUN_REPORT_H

/* Analyze dir (absolute) with self_dir/memsim-analyze; messages prefixed
 * cmd.  A signal memsim run would forward (SIGINT, SIGTERM, SIGHUP,
 * SIGQUIT) received meanwhile goes on to the analyzer; the temporary
 * file is removed and memsim run then ends by that signal, as it did
 * before it wrote reports. */
void run_report(const char *cmd, const char *self_dir, const char *dir);

#endif
