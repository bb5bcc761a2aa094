/*
 * real: the table of the functions behind the hooks.  See real.h.
 */
#include "preload/real.h"

#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>

real_t real;

static _Atomic int resolving;
static _Atomic bool resolved;

void real_resolve(void)
{
    if (atomic_load_explicit(&resolved, memory_order_acquire))
        return;
    atomic_fetch_add(&resolving, 1);
#define HOOK(ret, name, params, args) \
    if (!real.name)                   \
        real.name = (ret(*) params)dlsym(RTLD_NEXT, #name);
#include "preload/hooks.def"
#undef HOOK
    atomic_fetch_sub(&resolving, 1);
    atomic_store_explicit(&resolved, true, memory_order_release);
}

bool real_resolving(void) { return atomic_load_explicit(&resolving, memory_order_relaxed) != 0; }

/* The object that holds fn named libc.so.  _dl_find_object (glibc 2.35)
 * searches the loaded objects' ranges; dladdr would also walk libc's
 * symbol table for the nearest symbol, some 10 us a call, eleven calls an
 * image (a third of what tracing adds to a short process's own CPU). */
bool real_in_libc(const void *fn)
{
    if (!fn)
        return true;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
    struct dl_find_object found;
    if (_dl_find_object((void *)fn, &found) == 0)
        return found.dlfo_link_map && found.dlfo_link_map->l_name &&
               strstr(found.dlfo_link_map->l_name, "/libc.so");
#endif
    Dl_info info;
    return dladdr(fn, &info) && info.dli_fname && strstr(info.dli_fname, "/libc.so");
}

bool real_heap_is_glibc(void)
{
    real_resolve();
    return real.malloc && real_in_libc((void *)real.malloc) && real_in_libc((void *)real.free) &&
           real_in_libc((void *)real.calloc) && real_in_libc((void *)real.realloc) &&
           real_in_libc((void *)real.reallocarray) && real_in_libc((void *)real.memalign) &&
           real_in_libc((void *)real.posix_memalign) && real_in_libc((void *)real.aligned_alloc) &&
           real_in_libc((void *)real.valloc) && real_in_libc((void *)real.pvalloc);
}

/* ---- the bootstrap buffer ------------------------------------------------------------ */

#define BOOT_BYTES REAL_BOOT_BYTES
#define boot real_boot_

_Alignas(4096) unsigned char real_boot_[BOOT_BYTES];
static _Atomic size_t boot_used;

typedef struct boot_head_s {
    size_t size;
    size_t pad;
} boot_head_t;

void *real_bootstrap_alloc(size_t n, size_t align)
{
    if (align < 16)
        align = 16;
    if (align > 4096 || n > BOOT_BYTES)
        return NULL;
    size_t at = atomic_load(&boot_used), start;
    do {
        start = (at + sizeof(boot_head_t) + align - 1) & ~(align - 1);
        if (start + n > BOOT_BYTES)
            return NULL;
    } while (!atomic_compare_exchange_weak(&boot_used, &at, start + n));
    ((boot_head_t *)(boot + start))[-1].size = n;
    memset(boot + start, 0, n);
    return boot + start;
}

size_t real_bootstrap_size(const void *p) { return ((const boot_head_t *)p)[-1].size; }
