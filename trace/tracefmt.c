/*
 * tracefmt: the record names.  See tracefmt.h.
 */
#include "trace/tracefmt.h"

#include <string.h>

const char *const tracefmt_names[TRACEFMT_RECORD_COUNT] = {
#define TRACEFMT_NAME_(id, name) [TRACEFMT_##id] = name,
    TRACEFMT_RECORDS(TRACEFMT_NAME_)
#undef TRACEFMT_NAME_
};

const char *const tracefmt_fn_names[TRACEFMT_FN_COUNT] = {
#define TRACEFMT_FN_NAME_(id, name) [TRACEFMT_FN_##id] = name,
    TRACEFMT_ALLOC_FNS(TRACEFMT_FN_NAME_)
#undef TRACEFMT_FN_NAME_
};

tracefmt_fn_t tracefmt_fn_find(const char *name, size_t len)
{
    for (int i = 0; i < TRACEFMT_FN_COUNT; i++)
        if (strlen(tracefmt_fn_names[i]) == len && !memcmp(tracefmt_fn_names[i], name, len))
            return (tracefmt_fn_t)i;
    return TRACEFMT_FN_MALLOC;
}
