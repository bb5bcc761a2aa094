/*
 * progress: a one-line status on stderr while a long analysis reads its
 * traces ("memsim-analyze: t.jsonl: 41% (2.1 M records, 10.3 M/s)"),
 * redrawn in place at most four times a second and erased at the end.
 *
 * By default it appears only when stderr is a terminal and only once the
 * work has taken PROGRESS_AFTER_NS (short runs stay silent); --progress
 * shows it from the start whatever stderr is, --no-progress never.
 */
#ifndef MEMSIM_ANALYZER_PROGRESS_H
#define MEMSIM_ANALYZER_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#define PROGRESS_AFTER_NS 2000000000ull /* 2 s */

typedef enum progress_mode_e { PROGRESS_AUTO, PROGRESS_ALWAYS, PROGRESS_NEVER } progress_mode_t;

typedef struct progress_s {
    bool enabled;         /* may draw at all */
    const char *label;    /* the trace's path */
    uint64_t total;       /* bytes of the trace, 0 when unknown */
    uint64_t start_ns, last_ns, after_ns;
    bool shown;           /* a line is on the screen */
} progress_t;

void progress_begin(progress_t *p, progress_mode_t mode, const char *label, uint64_t total);
/* done: bytes read so far; records: records read.  Cheap to call often. */
void progress_update(progress_t *p, uint64_t done, uint64_t records);
/* Erase the line, if one was drawn. */
void progress_end(progress_t *p);
/* Before any other message on stderr: erase the line being shown (it is
 * drawn again at the next update). */
void progress_interrupt(void);

#endif
