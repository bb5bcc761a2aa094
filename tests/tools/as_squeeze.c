/*
 * libas-squeeze.so: an address space that runs out while memsim-analyze
 * resolves line numbers (test_analyze.sh).
 *
 * Preloaded into memsim-analyze, it interposes libdw's
 * dwfl_module_getsrc.  At the first call it maps PROT_NONE regions, from
 * 1 GiB down to a page, until the address-space limit refuses even a
 * page, then gives back AS_SQUEEZE_LEAVE bytes (default 65536) before it
 * calls libdw's own.  From then on, stack growth and every new mapping
 * beyond that room fail, as when the analysis's own data has taken what
 * ulimit -v allows.  Run it only under ulimit -v: without a limit the
 * filling would take the whole of a 47-bit address space.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#define PAGE 4096
#define MAX_PAGES 1024 /* the last single pages, some of which are given back */

static void squeeze(void)
{
    const char *env = getenv("AS_SQUEEZE_LEAVE");
    size_t leave = env ? strtoul(env, NULL, 0) : 65536;
    void *pages[MAX_PAGES];
    size_t npages = 0;
    for (size_t size = (size_t)1 << 30; size >= PAGE; size /= 2)
        for (;;) {
            void *p = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                           -1, 0);
            if (p == MAP_FAILED)
                break;
            if (size == PAGE && npages < MAX_PAGES)
                pages[npages++] = p;
        }
    for (size_t i = 0; i < leave / PAGE && i < npages; i++)
        munmap(pages[i], PAGE);
}

void *dwfl_module_getsrc(void *mod, uint64_t addr);
void *dwfl_module_getsrc(void *mod, uint64_t addr)
{
    static void *(*real)(void *, uint64_t);
    static int done;
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "dwfl_module_getsrc");
    if (!done) {
        done = 1;
        squeeze();
    }
    return real ? real(mod, addr) : NULL;
}
