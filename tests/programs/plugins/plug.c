/*
 * A plugin for tests/programs/dlswap: built twice, as libplug_a.so
 * (-DPLUG=plug_a) and libplug_b.so (-DPLUG=plug_b), so the two libraries
 * have the same layout and load at the same address one after the other.
 */
#include <stdlib.h>

#ifndef PLUG
#error "define PLUG"
#endif

void *PLUG(int n);

__attribute__((noinline)) void *PLUG(int n)
{
    void *p = malloc((size_t)n);
    __asm__ volatile("" ::: "memory"); /* keep the call a call */
    return p;
}
