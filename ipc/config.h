/*
 * config: memsim's environment variables, read inside the traced process.
 *
 * The preload calls config_load once at start-up (its reentrancy guard
 * held) and, on failure, writes the message to stderr with write(2) and
 * runs untraced.  Nothing here allocates or touches stdio streams: every
 * string lives in a fixed buffer of config_t or of the caller.
 *
 *   variable               accepted                                  default
 *   MEMSIM_OUTPUT          a directory, or a file pattern with %p    "."
 *                          (pid), %e (executable), %n (counter),
 *                          %% (a literal %); non-empty, < PATH_MAX
 *   MEMSIM_STRATEGY        a core strategy name, or "none"           "best-fit"
 *   MEMSIM_DEVICE_SIZE     units_parse_size syntax, >= 4096          physical memory
 *   MEMSIM_STACK_DEPTH     whole number 0..256 (0: no stacks)        64
 *   MEMSIM_SAMPLE_MS       whole number 1..3600000                   100
 *   MEMSIM_TRACE_CHILDREN  0/1, no/yes, false/true, off/on (any case) 1
 *   MEMSIM_MMAP            the same                                  1
 *   MEMSIM_COMPRESS        the same (0: plain JSON lines)            1
 *   MEMSIM_UNWIND          fast, libunwind or check (preload/walk.h) fast
 *   MEMSIM_SAMPLE_BYTES    0 (every allocation), or a size from 1     0
 *                          byte to 1 GiB (units_parse_size syntax:
 *                          524288, 512K, 512KiB): a sampled trace
 *                          (preload/sample.h) of that mean interval
 *   MEMSIM_SAMPLE_SEED     whole number 0..4294967295: the samples'    the clock
 *                          generator's seed
 *
 * Variables are checked in that order and the first invalid one is the
 * one reported.  A variable set to the empty string is invalid (it is
 * not unset).  Whole numbers are digits only: no sign, no spaces, no hex.
 */
#ifndef MEMSIM_IPC_CONFIG_H
#define MEMSIM_IPC_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/sampling.h"

#ifndef PATH_MAX /* Linux's value, for builds without _GNU_SOURCE/POSIX */
#define PATH_MAX 4096
#endif

#define CONFIG_ENV_OUTPUT "MEMSIM_OUTPUT"
#define CONFIG_ENV_STRATEGY "MEMSIM_STRATEGY"
#define CONFIG_ENV_DEVICE_SIZE "MEMSIM_DEVICE_SIZE"
#define CONFIG_ENV_STACK_DEPTH "MEMSIM_STACK_DEPTH"
#define CONFIG_ENV_SAMPLE_MS "MEMSIM_SAMPLE_MS"
#define CONFIG_ENV_TRACE_CHILDREN "MEMSIM_TRACE_CHILDREN"
#define CONFIG_ENV_MMAP "MEMSIM_MMAP"
#define CONFIG_ENV_COMPRESS "MEMSIM_COMPRESS"
#define CONFIG_ENV_UNWIND "MEMSIM_UNWIND"
#define CONFIG_ENV_SAMPLE_BYTES "MEMSIM_SAMPLE_BYTES"
#define CONFIG_ENV_SAMPLE_SEED "MEMSIM_SAMPLE_SEED"

#define CONFIG_STRATEGY_NONE "none" /* no shadow simulation */

#define CONFIG_DEFAULT_OUTPUT "."
/* The live shadow device is opt-in: memsim-analyze replays the trace
 * through every strategy offline (the same figures), and the live one
 * cost the recorder about a third of its time per event
 * (docs/preload.md, "Cost"). */
#define CONFIG_DEFAULT_STRATEGY CONFIG_STRATEGY_NONE
#define CONFIG_DEFAULT_STACK_DEPTH 64u
#define CONFIG_DEFAULT_SAMPLE_MS 100u
/* Device size when sysconf cannot tell the physical memory. */
#define CONFIG_DEVICE_SIZE_FALLBACK (4ull << 30)

#define CONFIG_DEVICE_SIZE_MIN 4096ull
#define CONFIG_STACK_DEPTH_MAX 256u
#define CONFIG_SAMPLE_MS_MIN 1u
#define CONFIG_SAMPLE_MS_MAX 3600000u
#define CONFIG_SAMPLE_BYTES_MAX SAMPLING_BYTES_MAX

typedef enum config_unwind_e {
    CONFIG_UNWIND_FAST,      /* cached frame rules, libunwind where they end */
    CONFIG_UNWIND_LIBUNWIND, /* libunwind for every stack */
    CONFIG_UNWIND_CHECK,     /* both, compared (for tests) */
} config_unwind_t;

typedef struct config_s {
    char output[PATH_MAX];  /* MEMSIM_OUTPUT as given (or "."); strlen < PATH_MAX */
    bool output_is_pattern; /* output contains '%': a file pattern, else a directory */
    char strategy[32];      /* a core strategy name, or CONFIG_STRATEGY_NONE */
    uint64_t device_size;   /* bytes of the simulated device; >= CONFIG_DEVICE_SIZE_MIN */
    unsigned stack_depth;   /* frames per stack, 0..CONFIG_STACK_DEPTH_MAX; 0: none */
    unsigned sample_ms;     /* poll interval, CONFIG_SAMPLE_MS_MIN..CONFIG_SAMPLE_MS_MAX */
    bool trace_children;    /* children inherit the preload */
    bool mmap;              /* trace mmap/munmap as well */
    bool compress;          /* zstd-compressed trace (*.jsonl.zst) */
    config_unwind_t unwind; /* how stacks are walked */
    uint64_t sample_bytes;  /* mean interval of a sampled trace, bytes; 0: every allocation */
    uint32_t sample_seed;   /* MEMSIM_SAMPLE_SEED, when sample_seeded */
    bool sample_seeded;
} config_t;

/* Every field at its default (device_size: the machine's physical memory
 * through sysconf, or CONFIG_DEVICE_SIZE_FALLBACK). */
void config_defaults(config_t *c);

/* Fill c from the environment through get (NULL: getenv; tests pass
 * their own).  0 on success, with err set to "".  On the first invalid
 * variable: -1, c back at its defaults, and one line in err (no
 * newline) naming the variable, the value and what is accepted:
 *   memsim: MEMSIM_STACK_DEPTH="abc" is not a whole number from 0 to 256; tracing is off
 * A value too long for err is cut (at a UTF-8 boundary) and followed by
 * "..."; control characters in it show as '?'.  err may be NULL when
 * errlen is 0.  No allocation, no stdio. */
int config_load(config_t *c, const char *(*get)(const char *name), char *err, size_t errlen);

/* The trace file path for this process into out (len bytes).  Directory
 * mode: "<dir>/memsim.<exe>.<pid>.<counter>.jsonl", ".jsonl.zst" when
 * compressed (no double slash when dir ends with '/').  Pattern mode: the
 * expansion of %p, %e, %n, %%, and ".zst" after it when compressed and it
 * does not end so already.
 * exe is the executable's base name; bytes other than [A-Za-z0-9._+-]
 * become '_' in both modes, "." and ".." become "_" and "__", and NULL or
 * "" becomes "unknown", so a name never adds or climbs a path component.
 * Returns 0, or -1 with out set to "" (when len > 0) when the result does
 * not fit in len bytes or is PATH_MAX bytes or longer. */
int config_trace_path(const config_t *c, const char *exe, long pid, unsigned counter, char *out,
                      size_t len);

/* Whether the path can change with the counter (directory mode, or a
 * pattern containing %n): callers retry with counter+1 when a file exists. */
bool config_path_has_counter(const config_t *c);

#endif
