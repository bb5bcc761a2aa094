/*
 * stack_flood: allocations from 16,384 distinct stacks, made after the
 * program has taken nearly all the address space its limit allows
 * (`ulimit -v`): blocks of 1 MiB until malloc fails, then two given
 * back.  memsim's stack table in the process then has no room to grow,
 * and the events past it are recorded without their stack
 * (tests/integration/test_transparency.sh).  Prints "walks=16384".
 */
#include <stdio.h>
#include <stdlib.h>

#define DEPTH 14
#define FILL 65536

static void *fill[FILL];

static void walk(unsigned bits, int depth);

__attribute__((noinline)) static void left(unsigned bits, int depth)
{
    walk(bits, depth);
    __asm__ volatile("" ::: "memory"); /* no tail call: a frame of its own */
}

__attribute__((noinline)) static void right(unsigned bits, int depth)
{
    walk(bits, depth);
    __asm__ volatile("" ::: "memory");
}

/* Down DEPTH levels through left or right by the bits: 2^DEPTH stacks. */
__attribute__((noinline)) static void walk(unsigned bits, int depth)
{
    if (!depth) {
        void *volatile p = malloc(16);
        free(p);
    } else if (bits & 1) {
        left(bits >> 1, depth - 1);
    } else {
        right(bits >> 1, depth - 1);
    }
    __asm__ volatile("" ::: "memory");
}

int main(void)
{
    size_t n = 0;
    while (n < FILL && (fill[n] = malloc(1 << 20)))
        n++;
    if (n >= 2) { /* room for the program's own small blocks */
        free(fill[--n]);
        free(fill[--n]);
    }
    unsigned walks = 0;
    for (unsigned i = 0; i < 1u << DEPTH; i++, walks++)
        walk(i, DEPTH);
    while (n)
        free(fill[--n]);
    printf("walks=%u\n", walks);
    return 0;
}
