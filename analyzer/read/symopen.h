/*
 * symopen: opening a module's file for symbols.c, on the caller's
 * thread or ahead of its first lookup on the store's own (symbols_prewarm):
 * the file opened without blocking (analyzer/read/modfile.h), checked against
 * the recorded span, reported to a Dwfl of its own at the recorded bias,
 * its debug information and symbol-table index loaded; and the bound on
 * calling into libdw under an address-space or data limit.
 */
#ifndef MEMSIM_ANALYZER_SYMOPEN_H
#define MEMSIM_ANALYZER_SYMOPEN_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>

#include "analyzer/read/symbols.h"
#include "analyzer/read/symnames.h"

/* A module's file opened, or the reason it could not be: the work of
 * opening, apart from the store, so that the store's thread can do it
 * ahead (symbols_prewarm) while the main thread goes on. */
typedef struct symopen_s {
    const char *path, *name;   /* the module's (owned by the store; they do not move) */
    uint64_t base, size;
    const symbols_t *store;    /* whose quiet says whether to warn */
    int state;                 /* SYMOPEN_QUEUED, _RUNNING, _DONE, _TAKEN (the caller's own) */
    Dwfl *dwfl;                /* done: reported, its debug information loaded, or NULL */
    Dwfl_Module *mod;          /* done: NULL when the file cannot be used */
    bool warn;                 /* done, mod NULL: why says why, for a warning */
    char why[384];
    symnames_t names;          /* done: the symbol table's names by interval */
    struct symopen_s *next;    /* the queue of the store's thread */
} symopen_t;

enum { SYMOPEN_QUEUED, SYMOPEN_RUNNING, SYMOPEN_DONE, SYMOPEN_TAKEN };

/* Read the process's limits on memory (once, before any other call). */
void symopen_limits(void);

/* Whether libdw may be called now (see symopen.c); the first time it may
 * not, one line on stderr unless s is quiet.  Both threads of the store
 * ask. */
bool symopen_room(const symbols_t *s);

/* Open job's file: a Dwfl of its own with the file reported at the
 * recorded bias, and the debug information and symbol table its first
 * lookup would load (libdw inflates compressed debug sections then: most
 * of what a module costs); or, mod NULL, why not (a warning when
 * job->warn).  It touches nothing but job, so that the store's thread can
 * run it while the main thread goes on. */
void symopen_run(symopen_t *job);

/* Queue job (SYMOPEN_QUEUED) on s's thread, started if need be; -1 when
 * the thread cannot be had (then nothing is opened ahead). */
int symopen_ahead_queue(symbols_t *s, symopen_t *job);

/* job, queued on the store's thread, for the caller: run there (wait
 * for it), or, when the thread has not started it, taken off the queue
 * and run here. */
void symopen_ahead_claim(symbols_t *s, symopen_t *job);

/* Stop the store's thread (after the job it runs, if any) and join it;
 * jobs still queued are never run.  Nothing when there is none. */
void symopen_ahead_stop(symbols_t *s);

#endif
