/*
 * strategy: the table of strategies and lookups by name.
 */
#include "sim/strategy.h"

#include <stdio.h>
#include <string.h>

static const strategy_ops_t *(*const getters[])(void) = {
#define STRATEGY(getter, name) getter,
#include "sim/strategies.def"
#undef STRATEGY
};

size_t strategy_count(void) { return sizeof getters / sizeof getters[0]; }

const strategy_ops_t *strategy_at(size_t i)
{
    return i < strategy_count() ? getters[i]() : NULL;
}

const strategy_ops_t *strategy_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < strategy_count(); i++)
        if (strcmp(getters[i]()->name, name) == 0)
            return getters[i]();
    return NULL;
}

int strategy_index(const strategy_ops_t *ops)
{
    for (size_t i = 0; i < strategy_count(); i++)
        if (getters[i]() == ops)
            return (int)i;
    return -1;
}

const char *strategy_names(char *buf, size_t len)
{
    size_t at = 0;
    if (len)
        buf[0] = '\0';
    for (size_t i = 0; i < strategy_count() && at < len; i++) {
        int n = snprintf(buf + at, len - at, "%s%s", i ? ", " : "", getters[i]()->name);
        if (n < 0)
            break;
        at += (size_t)n;
    }
    return buf;
}

void strategy_names_help(char *buf, size_t len, const char *fmt)
{
    char names[256];
    snprintf(buf, len, fmt, strategy_names(names, sizeof names));
}
