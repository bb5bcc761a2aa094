/*
 * dlswap: dlopen ./libplug_a.so by a relative path, allocate 100 blocks
 * of 111 bytes through it, dlclose it; then the same with ./libplug_b.so
 * (200 blocks of 222 bytes), which the loader usually puts at the address
 * a had.  Every block stays live.  Run from the directory of the plugins.
 */
#include <dlfcn.h>
#include <stdio.h>

static int use(const char *path, const char *sym, int count, int size)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlswap: %s\n", dlerror());
        return 1;
    }
    void *(*f)(int) = (void *(*)(int))dlsym(h, sym);
    if (!f) {
        fprintf(stderr, "dlswap: %s\n", dlerror());
        return 1;
    }
    for (int i = 0; i < count; i++)
        if (!f(size))
            return 1;
    dlclose(h);
    return 0;
}

int main(void)
{
    if (use("./libplug_a.so", "plug_a", 100, 111) || use("./libplug_b.so", "plug_b", 200, 222))
        return 1;
    printf("dlswap: done\n");
    return 0;
}
