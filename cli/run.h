/*
 * run: `memsim run`, a command under libmemsim.so, watched from outside.
 *
 * The command runs in its own process group with the preload in its
 * environment; memsim run polls the RSS of its process tree every 10 ms
 * into DIR/rss.jsonl, ends the group when a wall or RSS budget is
 * exceeded, and writes DIR/resources.json beside the traces; with
 * --analyze, DIR/report.txt and DIR/report.json (run_report.h).
 */
#ifndef MEMSIM_CLI_RUN_H
#define MEMSIM_CLI_RUN_H

/* Exit status: the command's own (0..255), 128+signal when a signal
 * ended it, 127 (not found) or 126 (not executable) when it could not
 * be executed, 2 for bad input (nothing was started), 1 when memsim run
 * could not start it. */
int run_main(int argc, char **argv);

#endif
