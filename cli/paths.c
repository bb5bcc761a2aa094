/*
 * paths: where memsim's own files are.  See paths.h.
 */
#include "cli/paths.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int paths_self_dir(const char *cmd, char *buf, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", buf, len - 1);
    if (n <= 0 || (size_t)n >= len - 1) {
        fprintf(stderr, "%s: cannot read /proc/self/exe: %s\n", cmd,
                n < 0 ? strerror(errno) : "path too long");
        return -1;
    }
    buf[n] = '\0';
    char *slash = strrchr(buf, '/');
    if (!slash) {
        fprintf(stderr, "%s: /proc/self/exe is not an absolute path: %s\n", cmd, buf);
        return -1;
    }
    slash[slash == buf] = '\0'; /* "/memsim" keeps its "/" */
    return 0;
}

int paths_preload(const char *cmd, const char *self_dir, char *out)
{
    char here[PATH_MAX + 16], lib[PATH_MAX + 32], parent[PATH_MAX];
    snprintf(here, sizeof here, "%s/libmemsim.so", self_dir);
    snprintf(parent, sizeof parent, "%s", self_dir);
    char *slash = strrchr(parent, '/');
    if (slash)
        slash[slash == parent] = '\0';
    snprintf(lib, sizeof lib, "%s%slib/memsim/libmemsim.so", parent,
             parent[strlen(parent) - 1] == '/' ? "" : "/");
    const char *where[] = {here, lib};
    for (size_t i = 0; i < sizeof where / sizeof *where; i++) {
        if (access(where[i], R_OK) == 0 && realpath(where[i], out)) {
            /* LD_PRELOAD separates its entries with spaces and colons. */
            if (strpbrk(out, " :")) {
                fprintf(stderr, "%s: cannot preload %s: LD_PRELOAD cannot carry a path with a "
                                "space or colon\n", cmd, out);
                return -1;
            }
            return 0;
        }
    }
    fprintf(stderr, "%s: cannot find libmemsim.so: looked for %s and %s (build it with make)\n",
            cmd, here, lib);
    return -1;
}

bool paths_tool(const char *self_dir, const char *name, char *out, size_t len)
{
    int n = snprintf(out, len, "%s%s%s", self_dir, strcmp(self_dir, "/") ? "/" : "", name);
    return n > 0 && (size_t)n < len && access(out, X_OK) == 0;
}
