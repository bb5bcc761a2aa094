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
 * JSON needs none of this (jansson writes control characters as \u
 * escapes) but takes only valid UTF-8: a name symbolization read, or a
 * trace's path, need not be, and a string that is not makes json_pack
 * fail, losing the whole object it was for.  escape_json gives such a
 * string in its escaped form instead; escape_copy, which the fixed
 * buffers of a trace's strings are filled with, never cuts a character
 * in two.
 */
#ifndef MEMSIM_ANALYZER_ESCAPE_H
#define MEMSIM_ANALYZER_ESCAPE_H

#include <jansson.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* The n bytes of s, escaped, to f.  also: ASCII characters to escape as
 * \xNN besides (a separator of the output's format), or NULL. */
void escape_write(FILE *f, const char *s, size_t n, const char *also);

/* s, escaped, to f. */
void escape_put(FILE *f, const char *s);

/* s for an HTML text or attribute (quoted): escaped as escape_put
 * writes it, and & < > " ' as character references, so that no string
 * of a trace can open markup or script in a report.  NULL: nothing. */
void escape_html(FILE *f, const char *s);

/* One line: the text fmt formats, all of it escaped, then a newline.
 * fmt itself holds no newline. */
__attribute__((format(printf, 2, 3)))
void escape_line(FILE *f, const char *fmt, ...);
void escape_vline(FILE *f, const char *fmt, va_list ap);

/* s as a JSON string: as it is when it is valid UTF-8, else escaped (as
 * escape_put writes it); JSON null for NULL.  A new reference, NULL only
 * when the host is out of memory. */
json_t *escape_json(const char *s);

/* src into dst (len bytes, len > 0), NUL-terminated, cut if it is too
 * long at a character's start: a copy of valid UTF-8 stays valid. */
void escape_copy(char *dst, size_t len, const char *src);

#endif
