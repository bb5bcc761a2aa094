/*
 * untraced: why a command left no trace.  See untraced.h.
 */
#include "cli/untraced.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

/* prog's file as execvp would find it, into out; 0 or -1. */
static int resolve(const char *prog, char *out, size_t len)
{
    if (strchr(prog, '/')) {
        snprintf(out, len, "%s", prog);
        return access(out, X_OK);
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/bin:/usr/bin";
    for (const char *s = path;; s++) {
        const char *e = strchrnul(s, ':');
        int n = (int)(e - s);
        snprintf(out, len, "%.*s%s%s", n, s, n ? "/" : "", prog);
        struct stat st;
        if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
            return 0;
        if (!*e)
            return -1;
        s = e;
    }
}

/* 1 when the ELF file on fd has no PT_INTERP (static), 0 when it has
 * one, -1 when it is not an ELF file that can be read. */
static int elf_static(int fd)
{
    unsigned char id[EI_NIDENT];
    if (pread(fd, id, sizeof id, 0) != (ssize_t)sizeof id || memcmp(id, ELFMAG, SELFMAG) != 0)
        return -1;
    bool is64 = id[EI_CLASS] == ELFCLASS64;
    uint64_t phoff;
    unsigned phnum, phentsize;
    if (is64) {
        Elf64_Ehdr h;
        if (pread(fd, &h, sizeof h, 0) != (ssize_t)sizeof h)
            return -1;
        phoff = h.e_phoff, phnum = h.e_phnum, phentsize = h.e_phentsize;
    } else {
        Elf32_Ehdr h;
        if (pread(fd, &h, sizeof h, 0) != (ssize_t)sizeof h)
            return -1;
        phoff = h.e_phoff, phnum = h.e_phnum, phentsize = h.e_phentsize;
    }
    if (!phentsize)
        return -1;
    for (unsigned i = 0; i < phnum; i++) {
        uint32_t type;
        if (pread(fd, &type, sizeof type, (off_t)(phoff + (uint64_t)i * phentsize)) !=
            (ssize_t)sizeof type)
            return -1;
        if (type == PT_INTERP)
            return 0;
    }
    return 1;
}

/* The reason for file (resolved), looking through one "#!" line when
 * depth allows. */
static int reason_of(const char *file, char *why, size_t len, int depth)
{
    struct stat st;
    if (stat(file, &st) != 0)
        return -1;
    if ((st.st_mode & S_ISUID) && st.st_uid != geteuid()) {
        snprintf(why, len, "%s is setuid: the dynamic loader ignores LD_PRELOAD for it "
                           "(secure execution)", file);
        return 0;
    }
    if ((st.st_mode & S_ISGID) && st.st_gid != getegid()) {
        snprintf(why, len, "%s is setgid: the dynamic loader ignores LD_PRELOAD for it "
                           "(secure execution)", file);
        return 0;
    }
    if (getxattr(file, "security.capability", NULL, 0) > 0) {
        snprintf(why, len, "%s has file capabilities: the dynamic loader ignores LD_PRELOAD "
                           "for it (secure execution)", file);
        return 0;
    }
    int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return -1;
    char head[PATH_MAX + 2];
    ssize_t n = pread(fd, head, sizeof head - 1, 0);
    int st_static = elf_static(fd);
    close(fd);
    if (st_static == 1) {
        snprintf(why, len, "%s is statically linked: no dynamic loader runs in it, so "
                           "LD_PRELOAD cannot bring libmemsim.so in", file);
        return 0;
    }
    if (st_static == 0 || n < 3 || head[0] != '#' || head[1] != '!' || depth == 0)
        return -1;
    head[n] = '\0';
    char *s = head + 2;
    s += strspn(s, " \t");
    s[strcspn(s, " \t\n")] = '\0';
    return *s == '/' ? reason_of(s, why, len, depth - 1) : -1;
}

int untraced_reason(const char *prog, char *why, size_t len)
{
    char file[PATH_MAX + NAME_MAX + 2];
    if (resolve(prog, file, sizeof file) != 0)
        return -1;
    return reason_of(file, why, len, 1);
}

void untraced_explain(const char *cmd, const char *prog)
{
    char why[3 * PATH_MAX];
    if (untraced_reason(prog, why, sizeof why) == 0)
        fprintf(stderr, "%s: no trace: %s\n", cmd, why);
    else
        fprintf(stderr, "%s: no trace: no process of the command loaded libmemsim.so (it may "
                        "have cleared LD_PRELOAD, or run only static or setuid programs)\n", cmd);
}
