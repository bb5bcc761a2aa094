/* failmalloc: see failmalloc.h. */
#include "tests/unit/failmalloc.h"

#include <stddef.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);

static long countdown; /* 0: disarmed */
static bool fired;

void failmalloc_arm(long n)
{
    countdown = n;
    fired = false;
}

bool failmalloc_disarm(void)
{
    countdown = 0;
    return fired;
}

static bool should_fail(void)
{
    if (countdown > 0 && --countdown == 0) {
        fired = true;
        return true;
    }
    return false;
}

void *__wrap_malloc(size_t n) { return should_fail() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t k, size_t n) { return should_fail() ? NULL : __real_calloc(k, n); }
void *__wrap_realloc(void *p, size_t n) { return should_fail() ? NULL : __real_realloc(p, n); }
