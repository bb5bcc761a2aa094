/*
 * touched: a large block's resident pages by mincore.  See touched.h.
 */
#include "preload/touched.h"

#include <sys/syscall.h>
#include <unistd.h>

#include "ipc/seccomp.h"

#define PAGE 4096u

uint64_t touched_count(const void *p, size_t usable)
{
    if (usable < TOUCHED_MIN_BYTES)
        return 0;
    uintptr_t start = ((uintptr_t)p + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
    uintptr_t end = ((uintptr_t)p + usable) & ~(uintptr_t)(PAGE - 1);
    unsigned char vec[TOUCHED_VEC];
    uint64_t pages = 0;
    for (uintptr_t at = start; at < end;) {
        size_t len =
            end - at < (uintptr_t)TOUCHED_VEC * PAGE ? end - at : (size_t)TOUCHED_VEC * PAGE;
        if (seccomp_call(SYS_mincore, (long)at, (long)len, (long)vec, 0, 0, 0))
            return 0;
        for (size_t k = 0; k < len / PAGE; k++)
            pages += vec[k] & 1;
        at += len;
    }
    return pages + 1;
}
