/*
 * childenv: children's environments.  See childenv.h.
 */
#include "ipc/childenv.h"

#include <string.h>

#define LIB_NAME "libmemsim.so"

size_t childenv_count(char *const *envp)
{
    size_t n = 0;
    while (envp && envp[n])
        n++;
    return n;
}

/* Whether entry ("NAME=value") is named name (n bytes, without '='). */
static bool named(const char *entry, const char *name, size_t n)
{
    return strncmp(entry, name, n) == 0 && entry[n] == '=';
}

static size_t name_len(const char *assignment)
{
    const char *eq = strchr(assignment, '=');
    return eq ? (size_t)(eq - assignment) : strlen(assignment);
}

char **childenv_merge(char *const *envp, const char *const *drop, size_t ndrop,
                      char *const *set, size_t nset, char **out)
{
    size_t k = 0;
    for (size_t i = 0; envp && envp[i]; i++) {
        bool gone = false;
        for (size_t j = 0; j < ndrop && !gone; j++)
            gone = drop[j] && named(envp[i], drop[j], strlen(drop[j]));
        for (size_t j = 0; j < nset && !gone; j++)
            gone = set[j] && named(envp[i], set[j], name_len(set[j]));
        if (!gone)
            out[k++] = envp[i];
    }
    for (size_t j = 0; j < nset; j++)
        if (set[j])
            out[k++] = set[j];
    out[k] = NULL;
    return out;
}

const char *childenv_get(char *const *envp, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; envp && envp[i]; i++)
        if (named(envp[i], name, n))
            return envp[i] + n + 1;
    return NULL;
}

bool childenv_preloads_memsim(char *const *envp)
{
    const char *v = childenv_get(envp, "LD_PRELOAD");
    while (v && *v) {
        size_t n = strcspn(v, ": ");
        /* The entry's last component, compared with the library's name. */
        const char *base = v;
        for (size_t i = 0; i < n; i++)
            if (v[i] == '/')
                base = v + i + 1;
        size_t bn = (size_t)(v + n - base);
        if (bn == sizeof LIB_NAME - 1 && memcmp(base, LIB_NAME, bn) == 0)
            return true;
        v += n;
        v += strspn(v, ": ");
    }
    return false;
}
