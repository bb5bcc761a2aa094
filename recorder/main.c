/*
 * memsim-recorder: the process that records a traced process and every
 * descendant that joins its arena (recorder/procs.h).  libmemsim.so starts it
 * (preload/launch.h); nobody else should:
 *
 *   memsim-recorder FD REGION
 *
 * FD is the arena's memfd, REGION the first traced process's region in it.
 * It runs in a session of its own, with 0, 1 and 2 on /dev/null; what
 * goes wrong is told through the region (the traced process prints it).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ipc/arena.h"
#include "recorder/procs.h"

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: memsim-recorder FD REGION (libmemsim.so starts it)\n");
        return 2;
    }
    char *end;
    long fd = strtol(argv[1], &end, 10);
    long idx = strtol(argv[2], &end, 10);
    if (fd < 0 || idx < 0) {
        fprintf(stderr, "memsim-recorder: bad arguments\n");
        return 2;
    }
    /* Started with every signal blocked (the program's thread that
     * started it blocked them): take them back.  A full disk or the file
     * size limit is an error to count, not a reason to die; a child, were
     * there one, would be reaped by the kernel. */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
    signal(SIGCHLD, SIG_IGN);
    /* Its pauses at a hole (20 us, recorder.c) should last what they
     * ask, not the default 50 us of timer slack more. */
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    struct stat st;
    void *arena = fstat((int)fd, &st) == 0 && (size_t)st.st_size >= ARENA_SIZE(1, RING_SLOTS_MIN)
                      ? mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0)
                      : MAP_FAILED;
    /* The magic's last byte is the layout's version: a libmemsim.so of
     * another build says so, not "no arena". */
    const uint64_t kind = 0x00ffffffffffffffull;
    uint64_t magic = arena != MAP_FAILED ? ((arena_t *)arena)->magic : 0;
    if (magic != ARENA_MAGIC && (magic & kind) == (ARENA_MAGIC & kind)) {
        fprintf(stderr,
                "memsim-recorder: this libmemsim.so is of another memsim version (arena "
                "layout %c, this recorder's %c): install both from one build\n",
                (char)(magic >> 56), (char)(ARENA_MAGIC >> 56));
        return 2;
    }
    if (arena == MAP_FAILED || magic != ARENA_MAGIC ||
        arena_bytes(arena) > (size_t)st.st_size || idx >= ((arena_t *)arena)->nregions) {
        fprintf(stderr, "memsim-recorder: FD %ld is no memsim arena\n", fd);
        return 2;
    }
    region_t *r = arena_region(arena, (unsigned)idx);
    atomic_store(&r->rec_exec, 1); /* started: the launcher stops watching */
    atomic_fetch_add(&r->rec_futex, 1);
    region_wake(&r->rec_futex);
    return procs_run(arena, (int)fd, (unsigned)idx) ? 1 : 0;
}
