/*
 * walk: the program's call stack by the frames' own rules, cached per
 * return address; libunwind for the stacks they do not cover.
 *
 * libunwind's unw_backtrace costs about 5-7 ns a frame even with its
 * caches, and a traced allocation in an interpreter walks 30 to 60 of
 * them.  Ordinary compiled code needs less: at each return address the
 * caller's frame is found from %rsp or %rbp plus a constant, with the
 * return address just below it (preload/ehframe.h).  walk_backtrace
 * keeps that rule per return address in one lock-free table of the
 * process's, so a frame costs a table probe and two loads.
 *
 * Its frames are libunwind's: the same addresses, the same count, the
 * same end (the frame whose return address is undefined: _start, a
 * thread's clone).  A stack holding any frame without such a rule (a
 * signal frame, code without CFI, a realigned stack) is walked by
 * libunwind instead, from the start; libunwind is loaded when the first
 * such stack comes, where that is safe (preload/unwind.h).  Only frames up the stack are
 * followed; a frame that would go down it is left to libunwind too.
 *
 * The rules are forgotten when a library may have been unloaded
 * (walk_forget: at each dlclose, and when the module list shows one
 * gone): a return address in code loaded later at its address gets its
 * own.
 *
 * MEMSIM_UNWIND=libunwind walks every stack with libunwind;
 * MEMSIM_UNWIND=check walks each with both and, where they differ, says
 * so on standard error (once per process, with both stacks) and keeps
 * libunwind's (for tests).
 */
#ifndef MEMSIM_PRELOAD_WALK_H
#define MEMSIM_PRELOAD_WALK_H

#include <stdbool.h>
#include <stdint.h>

typedef enum walk_mode_e {
    WALK_FAST,      /* rules, libunwind where they end (the default) */
    WALK_LIBUNWIND, /* libunwind only */
    WALK_CHECK,     /* both, compared */
} walk_mode_t;

/* The general walker, libunwind's: backtrace is unw_backtrace; stepped
 * gives the same frames by unw_step, and flush empties the caches that
 * unw_step uses (unw_flush_cache).  unw_backtrace's own frame cache, per
 * thread and by return address, is never emptied: once a library is
 * unloaded, stepped walks instead (NULL: backtrace still). */
typedef struct walk_general_s {
    int (*backtrace)(void **buffer, int size);
    int (*stepped)(void **buffer, int size);
    void (*flush)(void);
} walk_general_t;

/* Asked when a stack needs the general walker and it is not there yet:
 * the frames walked (n in frames) and the return address of the frame
 * without a rule (stop; 0 when the walk would have gone down the stack).
 * True once the general walker is set (walk_set_general). */
typedef bool (*walk_demand_t)(uintptr_t stop, void *const *frames, int n);

/* Set up the rule table, with general for the stacks it does not cover:
 * WALK_FAST may start without it (general.backtrace NULL), demand then
 * asked for it at the first such stack; without it that stack ends at
 * the frame without a rule (walk_cuts).  0, or -1 (no memory, no
 * _dl_find_object): walk_backtrace is then general.backtrace. */
int walk_init(walk_mode_t mode, walk_general_t general, walk_demand_t demand);

/* The general walker, once it is loaded (any thread may be walking). */
void walk_set_general(walk_general_t general);

/* The walker to call as unw_backtrace is called: the return addresses
 * of the caller's frames, its own first, at most size. */
int walk_backtrace(void **buffer, int size);

/* A library was unloaded: forget every rule, libunwind's too. */
void walk_forget(void);

/* Stacks that differed from libunwind's under MEMSIM_UNWIND=check, and
 * stacks walked by libunwind because a frame had no rule. */
uint64_t walk_mismatches(void);
uint64_t walk_fallbacks(void);
/* Stacks that needed the general walker when it could not be had: each
 * recorded up to the frame without a rule, that frame included. */
uint64_t walk_cuts(void);

#endif
