/*
 * tracein: the bytes of a trace file, whatever it is stored as: plain
 * JSON lines, or zstd-compressed (one frame or many, as memsim-recorder
 * writes them: a frame at each flush), told apart by zstd's magic
 * number, not by the name; "-" reads standard input.  Every reader
 * (memsim-analyze, tracecheck, the tests) goes through it.
 *
 * A frame's bytes are handed out once its checksum is checked (up to
 * 4 MiB of it: memsim's frames are at most 1 MiB), so a damaged frame
 * gives none, and the error says where reading stopped.  A compressed
 * trace cut in the middle of a frame (its recorder was killed) reads up
 * to the last byte zstd could give, and says so (tracein_cut).
 */
#ifndef MEMSIM_TRACE_TRACEIN_H
#define MEMSIM_TRACE_TRACEIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct tracein_s tracein_t;

/* Open path ("-": standard input).  NULL with errno set when it cannot
 * be opened. */
tracein_t *tracein_open(const char *path);
/* The same over a stream the caller owns (tests, the fuzzer). */
tracein_t *tracein_from(FILE *f);
void tracein_close(tracein_t *in);

/* Up to n bytes into buf: how many, 0 at the end (or on an error:
 * tracein_error). */
size_t tracein_read(tracein_t *in, void *buf, size_t n);

/* The stream underneath (for its size and position: progress). */
FILE *tracein_file(const tracein_t *in);

/* Whether the input is zstd-compressed. */
bool tracein_compressed(const tracein_t *in);
/* Whether the compressed input ended inside a frame. */
bool tracein_cut(const tracein_t *in);
/* A read error (of the file, or of a frame zstd cannot decode): its
 * description, or NULL. */
const char *tracein_error(const tracein_t *in);

#endif
