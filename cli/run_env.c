/*
 * run_env: the command's environment (see run_env.h).
 */
#include "cli/run_env.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/run_allocators.h"
#include "ipc/childenv.h"

extern char **environ;

/* "NAME=value" on the heap, or NULL. */
static char *env_entry(const char *name, const char *value)
{
    size_t len = strlen(name) + strlen(value) + 2;
    char *s = malloc(len);
    if (s)
        snprintf(s, len, "%s=%s", name, value);
    return s;
}

/* MEMSIM_OUTPUT for dir: the directory itself, or, when its path has a
 * '%' (which would make it a pattern), the equivalent pattern. */
static char *env_output(const char *dir)
{
    if (!strchr(dir, '%'))
        return env_entry("MEMSIM_OUTPUT", dir);
    static const char tail[] = "/memsim.%e.%p.%n.jsonl";
    size_t len = 2 * strlen(dir) + sizeof tail;
    char *pat = malloc(len), *w = pat;
    if (!pat)
        return NULL;
    for (const char *s = dir; *s; s++) {
        *w++ = *s;
        if (*s == '%')
            *w++ = '%';
    }
    memcpy(w, tail, sizeof tail);
    char *e = env_entry("MEMSIM_OUTPUT", pat);
    free(pat);
    return e;
}

/* The variables memsim run sets, "NAME=value" each on the heap, into
 * mine; how many, or 0 when out of memory (nothing left allocated). */
#define OWN_VARS (10 + CATALOG_MAX_ENV)
static size_t own_vars(const run_opts_t *o, const run_paths_t *p, char *mine[OWN_VARS])
{
    const char *old = getenv("LD_PRELOAD");
    char num[3][32];
    size_t m = 0;
    if (o->alloc.on) {
        mine[m++] = run_alloc_preload(&o->alloc, p->preload, old);
        size_t k = run_alloc_vars(&o->alloc, p->dir, mine + m);
        if (!k)
            mine[m++] = NULL; /* out of memory: refused below */
        m += k;
    } else if (old && *old) {
        size_t len = strlen(p->preload) + strlen(old) + 2;
        char *v = malloc(len);
        if (v)
            snprintf(v, len, "%s:%s", p->preload, old);
        mine[m++] = v ? env_entry("LD_PRELOAD", v) : NULL;
        free(v);
    } else {
        mine[m++] = env_entry("LD_PRELOAD", p->preload);
    }
    mine[m++] = env_output(p->dir);
    if (o->strategy)
        mine[m++] = env_entry("MEMSIM_STRATEGY", o->strategy);
    if (o->device_size) {
        snprintf(num[0], sizeof num[0], "%" PRIu64, o->device_size);
        mine[m++] = env_entry("MEMSIM_DEVICE_SIZE", num[0]);
    }
    if (o->sample_ms) {
        snprintf(num[1], sizeof num[1], "%" PRIu64, o->sample_ms);
        mine[m++] = env_entry("MEMSIM_SAMPLE_MS", num[1]);
    }
    if (o->sample_bytes) {
        snprintf(num[2], sizeof num[2], "%" PRIu64, o->sample_bytes);
        mine[m++] = env_entry("MEMSIM_SAMPLE_BYTES", num[2]);
    }
    if (o->no_children)
        mine[m++] = env_entry("MEMSIM_TRACE_CHILDREN", "0");
    if (o->no_compress)
        mine[m++] = env_entry("MEMSIM_COMPRESS", "0");
    bool ok = true;
    for (size_t i = 0; i < m; i++)
        ok = ok && mine[i];
    if (ok)
        return m;
    for (size_t i = 0; i < m; i++)
        free(mine[i]);
    return 0;
}

char **run_env_make(const run_opts_t *o, const run_paths_t *p, size_t *own)
{
    const char *drop[] = {"LD_PRELOAD", "MEMSIM_OUTPUT", "MEMSIM_ROOT_PID",
                          o->strategy ? "MEMSIM_STRATEGY" : NULL,
                          o->device_size ? "MEMSIM_DEVICE_SIZE" : NULL,
                          o->sample_ms ? "MEMSIM_SAMPLE_MS" : NULL,
                          o->sample_bytes ? "MEMSIM_SAMPLE_BYTES" : NULL,
                          o->no_children ? "MEMSIM_TRACE_CHILDREN" : NULL,
                          o->no_compress ? "MEMSIM_COMPRESS" : NULL};
    char *mine[OWN_VARS];
    size_t m = own_vars(o, p, mine);
    char **env = m ? calloc(childenv_count(environ) + m + 1, sizeof *env) : NULL;
    if (!env) {
        for (size_t i = 0; i < m; i++)
            free(mine[i]);
        return NULL;
    }
    childenv_merge(environ, drop, sizeof drop / sizeof *drop, mine, m, env);
    *own = childenv_count(env) - m;
    if (o->alloc.on) { /* the allocators' settings inherited go: the run is exactly its spec */
        size_t k = 0;
        for (size_t i = 0; env[i]; i++)
            if (i >= *own || !catalog_env_is_setting(env[i]))
                env[k++] = env[i];
        env[k] = NULL;
        *own = k - m;
    }
    return env;
}

void run_env_free(char **env, size_t own)
{
    for (size_t i = own; env && env[i]; i++)
        free(env[i]);
    free(env);
}
