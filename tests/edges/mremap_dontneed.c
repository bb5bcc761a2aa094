/*
 * mremap_dontneed: a mapping much larger than what it holds.  Maps
 * 16 MiB and touches it, grows it with mremap to 1 GiB and touches
 * 32 MiB more (the RSS's top, with 1 GiB mapped), holds it for HOLD_MS
 * (samples are taken), then gives every page back with MADV_DONTNEED
 * and holds again before unmapping.  What the RSS was made of at its
 * top must add up to the RSS: the mapping's part is what it holds, not
 * the 1 GiB it spans (tests/edges/mremap_dontneed.sh).  Prints
 * "mapped=1024MiB touched=48MiB".
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define MIB (1ul << 20)
#define HOLD_MS 300

static void hold(void)
{
    nanosleep(&(struct timespec){.tv_nsec = HOLD_MS * 1000000l}, NULL);
}

int main(void)
{
    size_t small = 16 * MIB, big = 1024 * MIB;
    char *p = mmap(NULL, small, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    memset(p, 1, small);
    char *q = mremap(p, small, big, MREMAP_MAYMOVE);
    if (q == MAP_FAILED) {
        perror("mremap");
        return 1;
    }
    memset(q + small, 2, 32 * MIB);
    hold();
    if (madvise(q, big, MADV_DONTNEED)) {
        perror("madvise");
        return 1;
    }
    hold();
    munmap(q, big);
    printf("mapped=%zuMiB touched=%zuMiB\n", big / MIB, (small + 32 * MIB) / MIB);
    return 0;
}
