/*
 * modules: the loaded-object list.  See modules.h.
 */
#include "preload/modules.h"

#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ipc/clock.h"
#include "lib/strcopy.h"
#include "ipc/msg.h"
#include "preload/process.h"
#include "ipc/ring.h"
#include "ipc/seccomp.h"
#include "preload/stacks.h"
#include "ipc/sysmem.h"
#include "preload/thread.h"
#include "preload/walk.h"

#define MODULES_MAX 4096
#define NAME_MAX_ 512

static struct {
    pthread_mutex_t lock;
    const char *exe;
    struct {
        uintptr_t base, size;
        bool seen;
    } known[MODULES_MAX];
    size_t nknown;
    unsigned long long adds, subs; /* the loader's counters at the last look */
} M = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* A snapshot, taken without memsim's lock: dl_iterate_phdr takes the
 * loader's, and a thread inside dlopen holds that lock while it
 * allocates (and so enters memsim). */
typedef struct snapshot_s {
    size_t n, cap;
    unsigned long long adds, subs;
    struct {
        uintptr_t base, size;
        char name[NAME_MAX_];
    } *mods;
} snapshot_t;

static int snap_one(struct dl_phdr_info *info, size_t size, void *data)
{
    snapshot_t *s = data;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        s->adds = info->dlpi_adds;
        s->subs = info->dlpi_subs;
    }
    if (!s->mods)
        return 1; /* the counters only: the first object has them */
    if (s->n == s->cap)
        return 0;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        if (ph->p_vaddr < lo)
            lo = ph->p_vaddr;
        if (ph->p_vaddr + ph->p_memsz > hi)
            hi = ph->p_vaddr + ph->p_memsz;
    }
    if (hi <= lo)
        return 0;
    s->mods[s->n].base = info->dlpi_addr + lo;
    s->mods[s->n].size = hi - lo;
    const char *name = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : M.exe;
    char *dst = s->mods[s->n].name;
    size_t at = 0;
    /* dlopen("./lib.so") leaves the name as given: the analyzer runs
     * elsewhere, so make it absolute (against the directory now).  A name
     * without a slash is no file (linux-vdso.so.1). */
    if (name[0] != '/' && strchr(name, '/') &&
        seccomp_allows(SYS_getcwd, (long)dst, NAME_MAX_ - 2, 0, 0, 0, 0) &&
        getcwd(dst, NAME_MAX_ - 2)) {
        at = strlen(dst);
        dst[at++] = '/';
        if (name[0] == '.' && name[1] == '/')
            name += 2;
    }
    str_copy(dst + at, NAME_MAX_ - at, name ? name : "");
    s->n++;
    return 0;
}

void modules_init(const char *exe) { M.exe = exe; }

static void post(uint8_t kind, uintptr_t base, uintptr_t size, const char *path)
{
    ring_slot_t s = {.kind = kind, .tid = thread_tid(), .t = clock_ticks(), .a = base, .b = size};
    size_t n = path ? strlen(path) : 0;
    ring_post(memsim_proc->region, &s, path, n, 0);
}

/* The walker's rules (and libunwind's caches) go with every unload the
 * loader counts, traced or not, once: whichever look sees it first.
 * Unloads before the first look (when tracing starts) precede every
 * walk of the program's stacks. */
static void forget_if_unloaded(unsigned long long subs)
{
    static _Atomic unsigned long long seen = ULLONG_MAX; /* no look yet */
    unsigned long long was = atomic_exchange(&seen, subs);
    if (was != ULLONG_MAX && was != subs)
        walk_forget();
}

/* Post what changed since the last look; counters: the loader's now. */
static void post_changes(const snapshot_t *counters)
{
    if (M.nknown && counters->adds == M.adds && counters->subs == M.subs)
        return;
    snapshot_t snap = {.cap = MODULES_MAX};
    size_t bytes = snap.cap * sizeof *snap.mods;
    snap.mods = sysmem_alloc(bytes);
    if (!snap.mods)
        return;
    dl_iterate_phdr(snap_one, &snap);
    pthread_mutex_lock(&M.lock);
    M.adds = snap.adds;
    M.subs = snap.subs;
    for (size_t i = 0; i < M.nknown; i++)
        M.known[i].seen = false;
    for (size_t k = 0; k < snap.n; k++) {
        size_t i;
        for (i = 0; i < M.nknown; i++)
            if (M.known[i].base == snap.mods[k].base && M.known[i].size == snap.mods[k].size)
                break;
        if (i < M.nknown) {
            M.known[i].seen = true;
            continue;
        }
        if (M.nknown < MODULES_MAX)
            M.known[M.nknown++] = (__typeof__(M.known[0])){
                .base = snap.mods[k].base, .size = snap.mods[k].size, .seen = true};
        post(MSG_MODULE_LOAD, snap.mods[k].base, snap.mods[k].size, snap.mods[k].name);
    }
    for (size_t i = 0; i < M.nknown;) {
        if (M.known[i].seen) {
            i++;
            continue;
        }
        post(MSG_MODULE_UNLOAD, M.known[i].base, M.known[i].size, NULL);
        stacks_forget_range(M.known[i].base, M.known[i].base + M.known[i].size);
        M.known[i] = M.known[--M.nknown];
    }
    pthread_mutex_unlock(&M.lock);
    sysmem_free(snap.mods, bytes);
}

void modules_changed(void)
{
    int saved = errno;
    snapshot_t counters = {0};
    dl_iterate_phdr(snap_one, &counters); /* the first object has them */
    forget_if_unloaded(counters.subs);
    if (proc_tracing())
        post_changes(&counters);
    errno = saved;
}

void modules_reset(void)
{
    pthread_mutex_init(&M.lock, NULL);
    M.nknown = 0;
    M.adds = M.subs = 0;
}
