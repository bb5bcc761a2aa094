/*
 * release: a process that will not trace gives back the address space
 * memsim took for tracing, so that under an address-space limit
 * (ulimit -v) the program gets every byte it would get natively.
 *
 * What goes: the arena's mapping (the recorder keeps its own), the
 * process's page (preload/process.h), and every mapping in sysmem's
 * registry: the threads' areas (the calling thread's too, unless it
 * runs on it), the stack table, the frame rules' table.  What stays:
 * the sandbox's copies of filters (sysmem_alloc_kept: memsim's own
 * system calls are judged by them while the process lives), libmemsim.so's
 * own image, and libunwind.so.8 and liblzma.so.5 where they were loaded
 * before tracing failed to start (a library's code may still be in use
 * by the program, and its per-thread state ends with each thread), with
 * the caches libunwind mapped.
 *
 * The process never traces again after it (its caller, process_stop,
 * has put memsim_proc back to its static page of zeros and forgotten
 * the traced pid), and an exec'd image starts over.
 */
#ifndef MEMSIM_PRELOAD_RELEASE_H
#define MEMSIM_PRELOAD_RELEASE_H

/* Release everything above.  arena: the arena this process has mapped,
 * or NULL; its size is read from its header.  Only where nothing else of
 * memsim's may touch them: the process has one thread (the caller) and
 * the caller is outside any post of its own (start-up, a fork's child,
 * a hook back from the post that found the recorder gone).
 * In a seccomp sandbox that forbids munmap, the mappings stay. */
void release_all(void *arena);

#endif
