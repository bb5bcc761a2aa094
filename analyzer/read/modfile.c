/*
 * modfile: see modfile.h.
 */
#include "analyzer/read/modfile.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What a file that is not regular is, for a message. */
static const char *kind(mode_t mode)
{
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISSOCK(mode))
        return "a socket";
    return "a special file";
}

static int refuse(mode_t mode, char *why, size_t len)
{
    snprintf(why, len, "%s, not a regular file", kind(mode));
    return -1;
}

int modfile_open(const char *path, char *why, size_t len)
{
    struct stat st;
    /* Looked at first, so that anything but a regular file is never
     * opened at all (opening is what a device acts on). */
    if (stat(path, &st)) {
        snprintf(why, len, "cannot open it: %s", strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode))
        return refuse(st.st_mode, why, len);
    /* The path may be replaced in between, so what was opened is checked
     * again.  O_NONBLOCK: a FIFO put there opens at once instead of
     * waiting for a writer (reading a regular file ignores the flag);
     * O_NOCTTY: a terminal put there does not become ours. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        snprintf(why, len, "cannot open it: %s", strerror(errno));
        return -1;
    }
    if (fstat(fd, &st)) {
        snprintf(why, len, "cannot open it: %s", strerror(errno));
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return refuse(st.st_mode, why, len);
    }
    return fd;
}

/* ---- separate debug information ---------------------------------------------- */

/* The CRC-32 of the file open on fd into *crc (ISO 3309, reflected,
 * polynomial 0xedb88320: gzip's and .gnu_debuglink's).  0, or -1 when it
 * cannot be read. */
static int file_crc32(int fd, uint32_t *crc)
{
    static uint32_t table[256];
    if (!table[1])
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++)
                c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
    unsigned char buf[1 << 16];
    uint32_t c = 0xffffffffu;
    for (off_t at = 0;;) {
        ssize_t n = pread(fd, buf, sizeof buf, at);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        for (ssize_t i = 0; i < n; i++)
            c = table[(c ^ buf[i]) & 0xff] ^ (c >> 8);
        at += n;
    }
    *crc = c ^ 0xffffffffu;
    return 0;
}

/* Whether the file open on fd is mod's debug file: the same build id when
 * mod has one (what elfutils checks), else the CRC-32 .gnu_debuglink
 * records (0: nothing to check, as for a made-up name). */
static bool debug_file_of(Dwfl_Module *mod, int fd, GElf_Word crc)
{
    const unsigned char *id;
    GElf_Addr vaddr;
    int n = dwfl_module_build_id(mod, &id, &vaddr);
    if (n > 0) {
        Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
        const void *theirs = NULL;
        ssize_t m = e ? dwelf_elf_gnu_build_id(e, &theirs) : -1;
        bool same = m == n && !memcmp(id, theirs, (size_t)n);
        elf_end(e);
        return same;
    }
    uint32_t got;
    return !crc || (file_crc32(fd, &got) == 0 && got == crc);
}

/* The debug file of mod at the path fmt formats, if there is one:
 * its descriptor (the path malloc'd in *found), or -1. */
__attribute__((format(printf, 4, 5)))
static int try_at(Dwfl_Module *mod, GElf_Word crc, char **found, const char *fmt, ...)
{
    char *path, why[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&path, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    int fd = modfile_open(path, why, sizeof why);
    if (fd >= 0 && !debug_file_of(mod, fd, crc)) {
        close(fd);
        fd = -1;
    }
    if (fd >= 0)
        *found = path;
    else
        free(path);
    return fd;
}

/* Step 2 of modfile_find_debuginfo: where elfutils' default path
 * (":.debug:/usr/lib/debug") looks. */
static int find_by_name(Dwfl_Module *mod, const char *file, const char *link, GElf_Word crc,
                        char **found)
{
    const char *slash = file ? strrchr(file, '/') : NULL;
    if (!slash)
        return -1;
    char *made = NULL;
    if (!link) {
        if (asprintf(&made, "%s.debug", slash + 1) < 0)
            return -1;
        link = made;
        crc = 0;
    }
    int fd = -1, dir = (int)(slash - file);
    if (!strchr(link, '/')) {
        fd = try_at(mod, crc, found, "%.*s/%s", dir, file, link);
        if (fd < 0)
            fd = try_at(mod, crc, found, "%.*s/.debug/%s", dir, file, link);
        if (fd < 0 && file[0] == '/')
            fd = try_at(mod, crc, found, "/usr/lib/debug%.*s/%s", dir, file, link);
    }
    free(made);
    return fd;
}

int modfile_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
                           Dwarf_Addr base, const char *file, const char *link, GElf_Word crc,
                           char **found)
{
    int fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file, link, crc, found);
    if (fd < 0)
        fd = find_by_name(mod, file, link, crc, found);
    /* Given no file and no link, the standard search searches no path:
     * only by build id again (a few failed opens), then debuginfod. */
    if (fd < 0)
        fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, NULL, NULL, 0, found);
    if (fd < 0) {
        free(*found);
        *found = NULL;
    }
    return fd;
}
