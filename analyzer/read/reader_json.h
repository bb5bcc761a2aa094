/*
 * reader_json: the lines of a trace the reader's fast path refused,
 * parsed by jansson and checked field by field, so that a problem can be
 * named: object records of every kind, the compact array records of
 * version 3 that the fast path could not read, and thread records (a
 * version 3 trace's index -> tid).  Part of the reader (reader.h): it
 * works on the reader's state and says its problems through it.
 */
#ifndef MEMSIM_ANALYZER_READER_JSON_H
#define MEMSIM_ANALYZER_READER_JSON_H

#include <stddef.h>

#include "analyzer/read/reader.h"

/* line (len bytes, the reader's current one) into *e: 1 when it is a
 * record to return (r->obj holds its parsed object, or NULL), 0 when it
 * is none (a bad line, counted and maybe said; a thread record; a record
 * of an unknown kind): read on. */
int reader_json_line(reader_t *r, const char *line, size_t len, event_t *e);

/* A problem with the current line (reader.c): the first few are said on
 * stderr, the rest counted; nothing when the reader is quiet. */
__attribute__((format(printf, 2, 3)))
void reader_problem(reader_t *r, const char *fmt, ...);

#endif
