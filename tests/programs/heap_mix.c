/*
 * heap_mix: every entry point of the malloc family, mixed.  Built twice:
 * heap_mix with glibc's malloc, heap_mix_je linked with jemalloc
 * (-ljemalloc: a program that brings its own allocator).
 *
 * 10000 rounds over 64 slots: each round either resizes its slot's
 * block (realloc, reallocarray: the first 16 bytes must survive) or
 * frees it and allocates a new one with malloc, calloc (must be zeroed),
 * posix_memalign, aligned_alloc, memalign or valloc (each must honour
 * its alignment); every block's malloc_usable_size must cover the size
 * asked for.  Every size is tagged (size % 4096 == 777).  Prints
 * "calls=N checksum=X bad=0": N the allocation calls that succeeded (each
 * one tagged allocation or reallocation in a trace), X a checksum of the
 * blocks' contents, bad the number of broken promises (exit status 1
 * when not 0).
 */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SLOTS 64
#define ROUNDS 10000

static struct {
    unsigned char *p;
    size_t size;
    unsigned char seed;
} slot[SLOTS];

static unsigned long bad, calls;
static uint64_t sum;

static void fill(unsigned i, unsigned char seed)
{
    slot[i].seed = seed;
    for (unsigned j = 0; j < 16; j++)
        slot[i].p[j] = (unsigned char)(seed + j);
    slot[i].p[slot[i].size - 1] = seed;
}

static void check(unsigned i, size_t upto)
{
    for (unsigned j = 0; j < 16 && j < upto; j++) {
        if (slot[i].p[j] != (unsigned char)(slot[i].seed + j))
            bad++;
        sum = sum * 31 + slot[i].p[j];
    }
}

static void got(unsigned i, void *p, size_t size, size_t align)
{
    if (!p) {
        bad++;
        return;
    }
    calls++;
    if (align && (uintptr_t)p % align)
        bad++;
    if (malloc_usable_size(p) < size)
        bad++;
    slot[i].p = p;
    slot[i].size = size;
}

int main(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uint32_t x = 2463534242u;
    for (unsigned long r = 0; r < ROUNDS; r++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        unsigned i = x % SLOTS, op = (x >> 8) % 8;
        size_t size = (size_t)4096 * ((x >> 12) % 6) + 777;
        if (slot[i].p && (op == 2 || op == 3)) {
            size_t keep = slot[i].size;
            void *q = op == 2 ? realloc(slot[i].p, size) : reallocarray(slot[i].p, 1, size);
            if (!q) {
                bad++;
                continue;
            }
            unsigned char seed = slot[i].seed;
            got(i, q, size, 16);
            slot[i].seed = seed;
            check(i, keep);
            fill(i, (unsigned char)r);
            continue;
        }
        if (slot[i].p) {
            check(i, slot[i].size);
            free(slot[i].p);
            slot[i].p = NULL;
        }
        void *p = NULL;
        switch (op) {
        case 0: case 2: got(i, malloc(size), size, 16); break;
        case 1:
            p = calloc(1, size);
            got(i, p, size, 16);
            for (size_t j = 0; p && j < size; j += 97)
                if (((unsigned char *)p)[j])
                    bad++;
            break;
        case 3: got(i, reallocarray(NULL, 1, size), size, 16); break;
        case 4:
            if (posix_memalign(&p, 64, size))
                p = NULL;
            got(i, p, size, 64);
            break;
        case 5: got(i, aligned_alloc(256, size), size, 256); break;
        case 6: got(i, memalign(128, size), size, 128); break;
        default: got(i, valloc(size), size, page); break;
        }
        if (slot[i].p)
            fill(i, (unsigned char)r);
    }
    for (unsigned i = 0; i < SLOTS; i++) {
        if (slot[i].p) {
            check(i, slot[i].size);
            free(slot[i].p);
        }
    }
    printf("calls=%lu checksum=%016llx bad=%lu\n", calls, (unsigned long long)sum, bad);
    return bad ? 1 : 0;
}
