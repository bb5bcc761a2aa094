/*
 * tracefmt: the record names.  See tracefmt.h.
 */
#include "core/tracefmt.h"

const char *const tracefmt_names[TRACEFMT_RECORD_COUNT] = {
#define TRACEFMT_NAME_(id, name) [TRACEFMT_##id] = name,
    TRACEFMT_RECORDS(TRACEFMT_NAME_)
#undef TRACEFMT_NAME_
};
