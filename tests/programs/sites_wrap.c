/*
 * sites_wrap: allocations through a wrapper, for the grouping by
 * allocating function: build() calls my_xmalloc (a wrapper: its name
 * ends in "malloc") from two lines, 1000 and 2000 bytes, kept to the end.
 * Both stacks belong to build, the first frame outside the wrapper.
 */
#include <stdlib.h>

static void *volatile keep[2];

__attribute__((noinline)) static void *my_xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p)
        abort();
    return p;
}

__attribute__((noinline)) static void build(void)
{
    keep[0] = my_xmalloc(1000);
    keep[1] = my_xmalloc(2000);
}

int main(void)
{
    build();
    return 0;
}
