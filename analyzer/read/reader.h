/*
 * reader: a memsim trace, one record at a time (streaming: memory does
 * not grow with the trace), plain or zstd-compressed, from a file or
 * standard input ("-"): trace/tracein.h.  It reads format versions 1 to
 * 3 (docs/trace-format.md).
 *
 * The lines memsim writes most (alloc, free, realloc: the compact
 * arrays of version 3, the objects of versions 1 and 2) are read by a
 * fast path that knows their exact shape; any line it does not
 * recognize exactly goes to jansson, which parses everything else.  Those events have json == NULL.  For every
 * other line the parsed object stays available (json) until the next
 * call.  Bad input never stops the
 * reader: a line that is not a JSON object, misses a field its record
 * type needs, or has a mistyped one is counted and reported once with
 * its file and line (the first few of each kind), and skipped; an
 * unknown record type is counted and skipped; a run of NUL bytes (a
 * trace cut by SIGKILL) ends the trace as truncated, as does a missing
 * end record.
 */
#ifndef MEMSIM_ANALYZER_READER_H
#define MEMSIM_ANALYZER_READER_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "trace/tracefmt.h"
#include "trace/tracein.h"

#define READER_FORMAT_VERSION TRACEFMT_VERSION_MAX
#define READER_DEFAULT_ALIGN TRACEFMT_DEFAULT_ALIGN /* an alloc record without "align" */

typedef enum event_type_e {
    /* The record types of trace/tracefmt.h, but THREAD (the reader keeps
     * thread records to itself). */
    EV_META = TRACEFMT_META,
    EV_MODULE = TRACEFMT_MODULE,
    EV_STACK = TRACEFMT_STACK,
    EV_ALLOC = TRACEFMT_ALLOC,
    EV_FREE = TRACEFMT_FREE,
    EV_REALLOC = TRACEFMT_REALLOC,
    EV_REALLOC_FAILED = TRACEFMT_REALLOC_FAILED,
    EV_MMAP = TRACEFMT_MMAP,
    EV_MUNMAP = TRACEFMT_MUNMAP,
    EV_MREMAP = TRACEFMT_MREMAP,
    EV_MREMAP_FAILED = TRACEFMT_MREMAP_FAILED,
    EV_SAMPLE = TRACEFMT_SAMPLE,
    EV_PHASE = TRACEFMT_PHASE,
    EV_FORK = TRACEFMT_FORK,
    EV_SPAWN = TRACEFMT_SPAWN,
    EV_EXEC = TRACEFMT_EXEC,
    EV_EXEC_FAILED = TRACEFMT_EXEC_FAILED,
    EV_ERROR = TRACEFMT_ERROR,
    EV_END = TRACEFMT_END,
    EV_SANDBOX = TRACEFMT_SANDBOX,
    EV_TOUCHED = TRACEFMT_TOUCHED, /* a block live at the end: addr, touched */
    EV_COUNT = TRACEFMT_THREAD
} event_type_t;

const char *event_type_name(event_type_t t);
/* Member k of record o as a count: its value when an integer >= 0, else
 * 0 (absent, null, negative or of another type). */
uint64_t reader_count(const json_t *o, const char *k);

typedef struct event_s {
    event_type_t type;
    uint64_t t;          /* ns since the trace started */
    int64_t tid;
    /* heap and mappings */
    uint64_t addr, size, align, stack;
    uint64_t old_addr, old_size; /* realloc, mremap */
    uint8_t fn;          /* alloc: the function (tracefmt_fn_t: malloc, calloc, ...) */
    bool has_old_size;
    bool inherited;      /* a free of a block allocated before a fork */
    uint64_t touched;    /* free, realloc: the (old) block's touched pages + 1; 0: not said */
    /* samples */
    uint64_t rss, hwm, tree_rss;
    uint64_t malloc_reserved, malloc_in_use, device_total, heap_live;
    uint64_t heap_live_se; /* a sampled trace's standard error of heap_live */
    const json_t *json;  /* the whole record, valid until the next read */
    long line;           /* the record's line in the trace */
    /* A sampled trace's alloc and realloc (lib/sampling.h), as the
     * analysis takes them (analyzer/process.c; the reader leaves these):
     * size is the weight, the bytes the sampled allocation stands for,
     * rounded; request its own size; var the weight's variance. */
    uint64_t request;
    double var;
} event_t;

/* Bytes read at a time: lines are parsed where they lie in the buffer.
 * The buffer grows (doubling) only for a line longer than it. */
#define READER_CHUNK (256 * 1024)

typedef struct reader_s {
    tracein_t *in;
    const char *path;
    char *buf;                /* the input, buf[pos, end) not yet returned */
    size_t cap, pos, end;
    size_t chunk;             /* bytes per read; 0: READER_CHUNK (tests set it tiny) */
    bool eof;                 /* f has given its last byte */
    long lineno;
    json_t *obj;              /* the current record */
    bool truncated;           /* NUL tail or no end record */
    bool ended;               /* an end record was read */
    long bad_lines;           /* not JSON, missing or mistyped fields */
    long unknown;             /* records of unknown types */
    long by_type[EV_COUNT];
    long messages;            /* problems reported so far */
    int version;              /* from meta; 0 before it */
    bool no_fast;             /* parse every line with jansson (tests compare both ways) */
    bool quiet;               /* count problems, print none (the fuzzer) */
    long fast;                /* lines the fast path read */
    int64_t last_us;          /* version 3: the time of the record before */
    int64_t *tids;            /* version 3: the tid of each thread index */
    size_t ntids, cap_tids;
} reader_t;

/* Open path ("-": standard input); 0, or -1 with a one-line message on
 * stderr. */
int reader_open(reader_t *r, const char *path);
/* The same over a stream the caller owns and closes (the fuzzer, tests). */
int reader_from(reader_t *r, FILE *f, const char *name);
void reader_close(reader_t *r);

/* The next record into *e: 1, or 0 at the end of the trace. */
int reader_next(reader_t *r, event_t *e);

#endif
