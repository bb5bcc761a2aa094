/*
 * dlrules: dlopen ./librules_a.so, allocate 50 blocks through its
 * rules_f (kept live), dlclose it; then the same with ./librules_b.so,
 * which the loader puts at the address a had (tests/programs/plugins/
 * rules.S: the same code layout, other frame rules at the same return
 * address).
 * Both rounds go through the same call sites, so no stack is new in the
 * second.  Exits 3 if b did not load where a was (the test would prove
 * nothing).  Run from the directory of the plugins.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    static const char *const names[] = {"./librules_a.so", "./librules_b.so"};
    uintptr_t at[2] = {0, 0};
    size_t total = 0;
    for (int r = 0; r < 2; r++) {
        void *h = dlopen(names[r], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "dlrules: %s\n", dlerror());
            return 1;
        }
        void *(*f)(size_t) = (void *(*)(size_t))dlsym(h, "rules_f");
        if (!f) {
            fprintf(stderr, "dlrules: %s\n", dlerror());
            return 1;
        }
        at[r] = (uintptr_t)f;
        for (int i = 0; i < 50; i++) {
            void *p = f((size_t)(24 + i));
            if (!p)
                return 1;
            total += 24 + (size_t)i; /* kept: each a live block of its site */
        }
        dlclose(h);
    }
    if (at[0] != at[1]) {
        fprintf(stderr, "dlrules: librules_b.so loaded at %#lx, not at a's %#lx\n",
                (unsigned long)at[1], (unsigned long)at[0]);
        return 3;
    }
    printf("dlrules: %zu bytes in 100 blocks\n", total);
    return 0;
}
