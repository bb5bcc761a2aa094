/*
 * escape: strings from a trace made safe to print.
 *
 * A trace is input like any other: its exe, argv, phase names, end
 * reason and module paths, and the function and file names symbolization
 * reads from the files it names, may hold any byte.  Printed raw, an ESC
 * starts a terminal control sequence and a newline forges a line of the
 * report.  So every text printer writes them through escape_write (its
 * wrappers escape_put and escape_line), which writes
 *   - a control character, C0 (bytes 0x00..0x1f, tab and newline
 *     included), DEL (0x7f) or C1 (U+0080..U+009F, which some terminals
 *     obey as well), as \xNN for each of its bytes,
 *   - a byte that is not part of valid UTF-8 as \xNN,
 *   - a backslash as \\, so that an escape always means an escape,
 *   - anything else (valid UTF-8) as it is.
 * The text of a well-behaved trace prints unchanged.
 *
 * JSON needs none of this: jansson writes control characters as \u
 * escapes.
 */
#ifndef MEMSIM_ANALYZER_ESCAPE_H
#define MEMSIM_ANALYZER_ESCAPE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* The n bytes of s, escaped, to f.  also: ASCII characters to escape as
 * \xNN besides (a separator of the output's format), or NULL. */
void escape_write(FILE *f, const char *s, size_t n, const char *also);

/* s, escaped, to f. */
void escape_put(FILE *f, const char *s);

/* One line: the text fmt formats, all of it escaped, then a newline.
 * fmt itself holds no newline. */
__attribute__((format(printf, 2, 3)))
void escape_line(FILE *f, const char *fmt, ...);
void escape_vline(FILE *f, const char *fmt, va_list ap);

#endif
