/*
 * untraced: why a command under memsim run left no trace, in one line.
 *
 * LD_PRELOAD reaches only a dynamically linked program that the dynamic
 * loader runs without secure execution: a static program (no PT_INTERP:
 * no loader at all) and a setuid or setgid one, or one with file
 * capabilities (the loader ignores LD_PRELOAD for them) are out of its
 * reach.  The command is looked up as execvp(3) does; a script ("#!")
 * is judged by its interpreter.
 */
#ifndef MEMSIM_CLI_UNTRACED_H
#define MEMSIM_CLI_UNTRACED_H

#include <stddef.h>

/* Why prog (argv[0] of the command) is out of LD_PRELOAD's reach, into
 * why; 0 when it is, -1 when nothing about prog itself explains it. */
int untraced_reason(const char *prog, char *why, size_t len);

/* One line on stderr, prefixed cmd: "no trace: " and the reason, or the
 * causes left when prog itself is not one. */
void untraced_explain(const char *cmd, const char *prog);

#endif
