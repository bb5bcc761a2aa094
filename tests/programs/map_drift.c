/*
 * map_drift: the gap a heap profiler misses.  Maps a 2 MiB anonymous
 * region every 50 ms for 3 s (60 in all), touches each, and never
 * unmaps them, but for the first MiB of the first at the end (a partial
 * munmap).  The heap stays tiny: RSS grows ~120 MiB with no heap
 * behind it.  memsim-analyze must report the mappings and explain the
 * gap's drift by them (test_findings.sh).
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define REGION (2u << 20)
#define REGIONS 60

int main(void)
{
    char *first = NULL;
    for (int i = 0; i < REGIONS; i++) {
        char *p = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            perror("mmap");
            return 1;
        }
        memset(p, i + 1, REGION);
        if (!first)
            first = p;
        nanosleep(&(struct timespec){.tv_nsec = 50 * 1000 * 1000}, NULL);
    }
    munmap(first, REGION / 2);
    printf("mapped %d regions\n", REGIONS);
    return 0;
}
