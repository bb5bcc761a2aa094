/*
 * say: memsim's one-line messages to the traced program's stderr.
 *
 * Descriptor 2 is the program's.  A daemon closes it, and the next file
 * it opens (its data file, its log) gets the number; a line of memsim's
 * written there would be in the program's file.  So a line goes out only
 * while descriptor 2 is still the file it was when the process started
 * (the same device and inode, looked at with fstat before each line),
 * and never when it was closed then.  Otherwise the line is not written:
 * what it says is in the trace too (the end record's counts, the meta
 * record's note).  Safe in a signal handler: no lock, no allocation.
 */
#ifndef MEMSIM_PRELOAD_SAY_H
#define MEMSIM_PRELOAD_SAY_H

#include <stdbool.h>

/* Note what descriptor 2 is now (the constructor, first thing). */
void say_init(void);

/* Whether a line written now would reach the stderr the process started
 * with. */
bool say_can(void);

/* line, with a newline added if it has none, on stderr if say_can(). */
void say(const char *line);

#endif
