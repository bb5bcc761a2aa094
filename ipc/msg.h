/*
 * msg: what the traced process tells its recorder, one message per
 * event, through the ring (ipc/ring.h).  The recorder turns them
 * into trace records (docs/trace-format.md); this is the one list both
 * sides compile against.
 *
 * Every message has kind, fn, tid, stack and t (ticks, ipc/clock.h)
 * in its head slot; the words a..e mean what the list below says; some
 * carry bytes after the head slot.  A zeroed slot reads as MSG_LOST, so
 * a claim its thread never filled (settled as lost) says so.
 */
#ifndef MEMSIM_IPC_MSG_H
#define MEMSIM_IPC_MSG_H

#include <stdint.h>

typedef enum msg_kind_e {
    MSG_LOST = 0,      /* a claim never filled (nslots: its size); a 1: the call it was
                          for never returned (the process ended inside it) */
    MSG_ALLOC,         /* fn; a addr, b size, c alignment */
    MSG_FREE,          /* fn; a addr, b the free's caller (before the real free; no
                          stack: frees cost no unwinding), c the block's touched
                          pages + 1, 0: not counted (preload/touched.h) */
    MSG_REALLOC,       /* fn; a old addr, b new addr (0: NULL came back), c size, d the
                          caller, e MSG_REALLOC_* bits and the old block's touched
                          pages + 1 from bit MSG_REALLOC_TOUCHED_SHIFT (0: not
                          counted); b == 0 and c == 0: realloc(p, 0) freed p */
    MSG_REALLOC_DONE,  /* a old addr, b new addr: a realloc that moved its block returned
                          (its MSG_REALLOC slot was claimed before the call) */
    MSG_QUIET,         /* a addr: a block memsim's own work got from the allocator
                          (its free, made later on the program's behalf, is no error) */
    MSG_MMAP,          /* fn; a addr, b length, c prot | flags << 32, d fd */
    MSG_MUNMAP,        /* a addr, b length (before the real munmap) */
    MSG_MREMAP,        /* a old addr, b old length, c new addr (MSG_MAP_FAILED: failed),
                          d new length, e flags */
    MSG_STACK,         /* a id, b frames; bytes: the frames, innermost first */
    MSG_MODULE_LOAD,   /* a base, b size; bytes: the path */
    MSG_MODULE_UNLOAD, /* a base, b size */
    MSG_PHASE,         /* a 1 begin, 0 end; bytes: the name (begin) */
    MSG_MALLINFO,      /* a malloc_reserved, b malloc_in_use, c maxrss_children (bytes);
                          t, d: ticks when mallinfo2 was called and returned;
                          e: the free chunks it walked (ordblks + smblks) */
    MSG_FORK,          /* a the child's region (MSG_NO_REGION: none free), before fork */
    MSG_FORK_DONE,     /* a the child's region, b 1 if fork succeeded, after it */
    MSG_SPAWN,         /* a child pid, b argc; bytes: path NUL, then each arg NUL */
    MSG_EXEC,          /* b argc, c 1 when the new program is traced too;
                          bytes: path NUL, then each arg NUL (before the real exec) */
    MSG_EXEC_FAILED,   /* a errno */
    MSG_END,           /* a reason (msg_end_t), b status or -1, c signal or 0 */
    MSG_SANDBOX,       /* the process locked itself in a seccomp sandbox (after the call):
                          a SANDBOX_MODE_*, b the seccomp flags | MSG_SANDBOX_STOPS,
                          c what memsim goes without (SECCOMP_NO_*), d filters held
                          (preload/sandbox.h) */
    MSG_KINDS
} msg_kind_t;

/* The functions events name (ring_slot_t.fn; the trace's "fn"). */
typedef enum events_fn_e {
    FN_MALLOC,
    FN_CALLOC,
    FN_REALLOC,
    FN_REALLOCARRAY,
    FN_MEMALIGN,
    FN_POSIX_MEMALIGN,
    FN_ALIGNED_ALLOC,
    FN_VALLOC,
    FN_PVALLOC,
    FN_FREE,
    FN_MMAP,
    FN_MMAP64,
    FN_MUNMAP,
    FN_MREMAP,
    FN_COUNT
} events_fn_t;

/* MSG_SANDBOX's a. */
#define SANDBOX_MODE_STRICT 1u
#define SANDBOX_MODE_FILTER 2u

/* MSG_REALLOC's e: posted after its call returned, with one thread in
 * the process: in order as it stands, and no MSG_REALLOC_DONE follows. */
#define MSG_REALLOC_IN_ORDER 1u
/* ...in a sampled trace: the new block is not sampled (the realloc is the
 * old block's free), the old block was not (the realloc is an
 * allocation). */
#define MSG_REALLOC_NEW_UNSAMPLED 2u
#define MSG_REALLOC_OLD_UNSAMPLED 4u

/* Blocks this large (by the allocator's usable size in the process, by
 * the size asked in the recorder) have their touched pages counted
 * (preload/touched.h, recorder/touched.h). */
#define MSG_TOUCHED_MIN_BYTES (64u << 10)

/* MSG_REALLOC's e: the old block's touched pages + 1, counted before the
 * real call, in the high half (at most 2^32 - 1: 16 TiB of pages). */
#define MSG_REALLOC_TOUCHED_SHIFT 32

/* MSG_SANDBOX's b: tracing stops here (the process is untraced after). */
#define MSG_SANDBOX_STOPS (1ull << 32)

#define MSG_MAP_FAILED UINT64_MAX
#define MSG_NO_REGION UINT64_MAX

/* MSG_END's reason; the names are the end record's "reason". */
typedef enum msg_end_e {
    END_EXIT,       /* exit() or return from main; status */
    END__EXIT,      /* _exit, _Exit; status */
    END_QUICK_EXIT, /* quick_exit; status */
    END_SIGNAL,     /* a fatal signal; signal */
    END_REASONS
} msg_end_t;

#endif
