/*
 * touch_mb: resident memory on demand, for the tests of `memsim run`.
 *
 *   touch_mb MB [HOLD_MS [STATUS]]  allocate MB MiB, write every page,
 *                                   hold them HOLD_MS (default 200), exit
 *                                   with STATUS (default 0)
 *   touch_mb forever                a runaway: one more MiB, written, every
 *                                   millisecond until killed (exits 99 at
 *                                   8 GiB, so a broken budget cannot take
 *                                   the machine)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MIB ((size_t)1 << 20)
#define PAGE 4096

/* A MiB block, every page written; NULL when malloc fails. */
static char *touch(size_t bytes)
{
    volatile char *p = malloc(bytes);
    if (!p)
        return NULL;
    for (size_t i = 0; i < bytes; i += PAGE)
        p[i] = (char)(i / PAGE + 1);
    return (char *)p;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static int forever(void)
{
    static char *keep[8192];
    for (size_t n = 0; n < sizeof keep / sizeof *keep; n++) {
        if (!(keep[n] = touch(MIB)))
            return 1;
        sleep_ms(1);
    }
    return 99;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: touch_mb MB [HOLD_MS [STATUS]] | touch_mb forever\n");
        return 2;
    }
    if (strcmp(argv[1], "forever") == 0)
        return forever();
    size_t mb = strtoul(argv[1], NULL, 10);
    long hold = argc > 2 ? strtol(argv[2], NULL, 10) : 200;
    int status = argc > 3 ? atoi(argv[3]) : 0;
    char *p = touch(mb * MIB);
    if (!p)
        return 1;
    sleep_ms(hold);
    free(p);
    return status;
}
