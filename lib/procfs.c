/*
 * procfs: what the operating system charges a process, read from /proc.
 * See procfs.h.
 *
 * Why no stdio and no malloc: these readers run inside the traced
 * process, on the poller thread of libmemsim.so, while the application
 * may hold stdio's or malloc's locks (or be inside our own malloc hook).
 * fopen/fgets allocate and lock; snprintf may allocate.  So every file is
 * read with open/read/close into a buffer on the caller's stack, paths
 * are built by hand (path_*), and directories are listed with the raw
 * getdents64 syscall, since opendir allocates its DIR.  Nothing here
 * keeps state: every function is safe from any thread at any time.
 *
 * The "Name:  N kB" files (status, smaps_rollup) are parsed line by line
 * with one rule: a field counts only when its line is complete up to
 * the "kB" unit, i.e. "Name:", blanks, digits, blanks, "kB", then blanks
 * and the end of the line or of the text.  A text cut anywhere (a full
 * buffer, a test) thus yields each field either absent (0) or its true
 * value, never a prefix of the number.  Values saturate at UINT64_MAX.
 *
 * Bounds: a file larger than its buffer (4 KiB for status and
 * smaps_rollup) is parsed as far as it was read; the fields we want come
 * first.  children/descendants keep what they find in the caller's
 * array, which is also the breadth-first queue and the set used to drop
 * duplicates: O(found x kept) comparisons.  Past max, found pids are
 * counted but not kept, so their own children cannot be visited: *n is
 * then a lower bound (and, only when the tree changes during the walk,
 * may count one pid twice).
 */
#include "lib/procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TEXT_BUF 4096     /* status, smaps_rollup, /proc/self/cgroup */
#define PATH_BUF 4200     /* a cgroup path (<= 4096) plus prefix and file */
#define DIRENT_BUF 2048   /* getdents64 batch */
#define CHILDREN_BUF 1024 /* one read of a children file (about 140 pids) */

/* ---- small helpers ------------------------------------------------------ */

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_blank(char c) { return c == ' ' || c == '\t'; }

static uint64_t mul_sat(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* Decimal digits at s[*i..end) into *v (saturating); false if none. */
static bool parse_u64(const char *s, size_t *i, size_t end, uint64_t *v)
{
    size_t start = *i;
    uint64_t x = 0;
    for (; *i < end && is_digit(s[*i]); (*i)++)
        x = x > (UINT64_MAX - 9) / 10 ? UINT64_MAX : x * 10 + (uint64_t)(s[*i] - '0');
    *v = x;
    return *i > start;
}

/* ---- paths -------------------------------------------------------------- */

/* A path being built; len == sizeof buf marks an overflow. */
typedef struct path_s {
    char buf[PATH_BUF];
    size_t len; /* bytes used, without the NUL */
} path_t;

static void path_add(path_t *p, const char *s, size_t n)
{
    if (p->len >= sizeof p->buf || n >= sizeof p->buf - p->len) {
        p->len = sizeof p->buf;
        return;
    }
    memcpy(p->buf + p->len, s, n);
    p->len += n;
    p->buf[p->len] = '\0';
}

static void path_str(path_t *p, const char *s) { path_add(p, s, strlen(s)); }

static void path_num(path_t *p, uint64_t v)
{
    char d[20];
    size_t n = 0;
    do
        d[sizeof d - ++n] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    path_add(p, d + sizeof d - n, n);
}

/* "/proc/self" or "/proc/<pid>" (pid > 0). */
static void path_proc(path_t *p, pid_t pid)
{
    p->len = 0;
    p->buf[0] = '\0';
    if (pid == 0) {
        path_str(p, "/proc/self");
    } else {
        path_str(p, "/proc/");
        path_num(p, (uint64_t)pid);
    }
}

static bool path_ok(const path_t *p) { return p->len < sizeof p->buf; }

/* ---- files -------------------------------------------------------------- */

static int file_open(const char *path, int flags)
{
    int fd;
    do
        fd = open(path, flags | O_RDONLY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    return fd;
}

/* Read until EOF or cap bytes; returns the length, or -1. */
static ssize_t fd_read_all(int fd, char *buf, size_t cap)
{
    size_t len = 0;
    while (len < cap) {
        ssize_t r = read(fd, buf + len, cap - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        len += (size_t)r;
    }
    return (ssize_t)len;
}

/* The first cap bytes of path into buf: their length, or -1. */
static ssize_t file_read(const char *path, char *buf, size_t cap)
{
    int fd = file_open(path, 0);
    if (fd < 0)
        return -1;
    ssize_t len = fd_read_all(fd, buf, cap);
    close(fd);
    return len;
}

/* /proc/<pid>/<name> into buf; -1 for a bad pid or an unreadable file. */
static ssize_t proc_read(pid_t pid, const char *name, char *buf, size_t cap)
{
    if (pid < 0)
        return -1;
    path_t p;
    path_proc(&p, pid);
    path_str(&p, "/");
    path_str(&p, name);
    return path_ok(&p) ? file_read(p.buf, buf, cap) : -1;
}

/* ---- "Name:  N kB" files ------------------------------------------------ */

typedef struct kb_field_s {
    const char *name;
    size_t offset; /* of its uint64_t in the output struct */
} kb_field_t;

/* The value of a complete "blanks digits blanks kB blanks" rest of a
 * line s[i..end), in bytes; false for anything else. */
static bool parse_kb_value(const char *s, size_t i, size_t end, uint64_t *bytes)
{
    uint64_t kb;
    while (i < end && is_blank(s[i]))
        i++;
    if (!parse_u64(s, &i, end, &kb))
        return false;
    while (i < end && is_blank(s[i]))
        i++;
    if (end - i < 2 || s[i] != 'k' || s[i + 1] != 'B')
        return false;
    for (i += 2; i < end; i++)
        if (!is_blank(s[i]) && s[i] != '\r')
            return false;
    *bytes = mul_sat(kb, 1024);
    return true;
}

/*
 * Fills the fields of out named in fields[0..nfields) from text[0..len),
 * never reading past len.  Returns a mask: bit i set when fields[i] was
 * found (the last occurrence wins).  Fields not found are left alone.
 */
static uint32_t parse_kb_fields(const char *text, size_t len, const kb_field_t *fields,
                                size_t nfields, void *out)
{
    uint32_t found = 0;
    size_t pos = 0;
    while (pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len;
        const char *colon = memchr(text + pos, ':', end - pos);
        if (colon) {
            size_t name_len = (size_t)(colon - (text + pos));
            for (size_t f = 0; f < nfields; f++) {
                uint64_t bytes;
                if (strlen(fields[f].name) != name_len ||
                    memcmp(fields[f].name, text + pos, name_len) != 0)
                    continue;
                if (parse_kb_value(text, pos + name_len + 1, end, &bytes)) {
                    memcpy((char *)out + fields[f].offset, &bytes, sizeof bytes);
                    found |= 1u << f;
                }
                break;
            }
        }
        pos = end + 1;
    }
    return found;
}

#define FIELD(name, member) {name, offsetof(procfs_status_t, member)}
static const kb_field_t status_fields[] = {
    FIELD("VmRSS", rss),
    FIELD("VmHWM", hwm),
    FIELD("VmSize", vm_size),
    FIELD("VmPeak", vm_peak),
};
#undef FIELD

#define FIELD(name, member) {name, offsetof(procfs_rollup_t, member)}
static const kb_field_t rollup_fields[] = {
    FIELD("Rss", rss), /* first: bit 0 */
    FIELD("Pss", pss),
    FIELD("Pss_Anon", pss_anon),
    FIELD("Pss_File", pss_file),
    FIELD("Shared_Clean", shared_clean),
    FIELD("Shared_Dirty", shared_dirty),
    FIELD("Private_Clean", private_clean),
    FIELD("Private_Dirty", private_dirty),
    FIELD("Referenced", referenced),
    FIELD("Anonymous", anonymous),
    FIELD("LazyFree", lazyfree),
    FIELD("AnonHugePages", anon_huge_pages),
    FIELD("Swap", swap),
    FIELD("SwapPss", swap_pss),
};
#undef FIELD

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* 0 when any of the four fields is present; -1 (all zero) when none is. */
int procfs_parse_status(const char *text, size_t len, procfs_status_t *out)
{
    memset(out, 0, sizeof *out);
    if (parse_kb_fields(text, len, status_fields, COUNT(status_fields), out))
        return 0;
    return -1;
}

int procfs_read_status(pid_t pid, procfs_status_t *out)
{
    char buf[TEXT_BUF];
    ssize_t len = proc_read(pid, "status", buf, sizeof buf);
    if (len < 0) {
        memset(out, 0, sizeof *out);
        return -1;
    }
    return procfs_parse_status(buf, (size_t)len, out);
}

/* 0 when Rss is present (other fields may be missing: 0); else -1, all zero. */
int procfs_parse_smaps_rollup(const char *text, size_t len, procfs_rollup_t *out)
{
    memset(out, 0, sizeof *out);
    if (parse_kb_fields(text, len, rollup_fields, COUNT(rollup_fields), out) & 1u)
        return 0;
    memset(out, 0, sizeof *out);
    return -1;
}

int procfs_read_smaps_rollup(pid_t pid, procfs_rollup_t *out)
{
    char buf[TEXT_BUF];
    ssize_t len = proc_read(pid, "smaps_rollup", buf, sizeof buf);
    if (len < 0) {
        memset(out, 0, sizeof *out);
        return -1;
    }
    return procfs_parse_smaps_rollup(buf, (size_t)len, out);
}

/* ---- statm -------------------------------------------------------------- */

/* statm is "size resident shared text lib data dt\n", in pages. */
int procfs_read_rss(pid_t pid, uint64_t *rss)
{
    char buf[256];
    ssize_t len = proc_read(pid, "statm", buf, sizeof buf);
    long page = sysconf(_SC_PAGESIZE);
    uint64_t size, resident;
    size_t i = 0, end = len > 0 ? (size_t)len : 0;
    *rss = 0;
    if (page <= 0 || !parse_u64(buf, &i, end, &size) || i >= end || buf[i++] != ' ' ||
        !parse_u64(buf, &i, end, &resident) || i >= end) /* unterminated: maybe cut */
        return -1;
    *rss = mul_sat(resident, (uint64_t)page);
    return 0;
}

/* ---- children ----------------------------------------------------------- */

/* The pids found so far; out[0..kept) doubles as the BFS queue. */
typedef struct collect_s {
    pid_t *out;
    size_t max;   /* capacity of out */
    size_t kept;  /* pids in out: kept <= max */
    size_t found; /* pids found, kept or not: found >= kept */
    pid_t root;   /* the pid whose tree this is: never its own descendant */
} collect_t;

static void collect_add(collect_t *c, uint64_t v)
{
    if (v == 0 || v > (uint64_t)INT32_MAX || (pid_t)v == c->root)
        return;
    pid_t pid = (pid_t)v;
    for (size_t i = 0; i < c->kept; i++)
        if (c->out[i] == pid)
            return;
    c->found++;
    if (c->kept < c->max)
        c->out[c->kept++] = pid;
}

/* The space-separated pids of one children file, read in chunks (a pid
 * may straddle two reads).  -1 when it cannot be read. */
static int children_file_visit(const char *path, collect_t *c)
{
    int fd = file_open(path, 0);
    if (fd < 0)
        return -1;
    char buf[CHILDREN_BUF];
    uint64_t v = 0;
    bool in_number = false;
    ssize_t r;
    while ((r = fd_read_all(fd, buf, sizeof buf)) > 0) {
        for (ssize_t i = 0; i < r; i++) {
            if (is_digit(buf[i])) {
                v = v > (UINT64_MAX - 9) / 10 ? UINT64_MAX : v * 10 + (uint64_t)(buf[i] - '0');
                in_number = true;
            } else if (in_number) {
                collect_add(c, v);
                v = 0;
                in_number = false;
            }
        }
        if ((size_t)r < sizeof buf)
            break; /* EOF */
    }
    close(fd);
    if (r < 0)
        return -1;
    if (in_number) /* the kernel ends each pid with ' ', but EOF ends one too */
        collect_add(c, v);
    return 0;
}

/* The on-disk layout of getdents64's records (linux_dirent64). */
struct dirent64_s {
    uint64_t d_ino;
    int64_t d_off;
    unsigned short d_reclen; /* 8-aligned size of this record */
    unsigned char d_type;
    char d_name[]; /* NUL-terminated */
};

/*
 * Adds the children of every thread of pid (0: self) to c.  -1 when
 * /proc/<pid>/task cannot be listed; a thread that ends meanwhile is
 * skipped.
 */
static int children_visit(pid_t pid, collect_t *c)
{
    if (pid < 0)
        return -1;
    path_t p;
    path_proc(&p, pid);
    path_str(&p, "/task");
    int dfd = path_ok(&p) ? file_open(p.buf, O_DIRECTORY) : -1;
    if (dfd < 0)
        return -1;
    size_t task_len = p.len;
    _Alignas(8) char buf[DIRENT_BUF];
    long got;
    while ((got = syscall(SYS_getdents64, dfd, buf, sizeof buf)) != 0) {
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            break;
        for (long off = 0; off < got;) {
            unsigned short reclen;
            memcpy(&reclen, buf + off + offsetof(struct dirent64_s, d_reclen), sizeof reclen);
            const char *name = buf + off + offsetof(struct dirent64_s, d_name);
            if (reclen == 0)
                break;
            off += reclen;
            if (!is_digit(name[0]))
                continue; /* "." and ".." */
            p.len = task_len;
            path_str(&p, "/");
            path_str(&p, name);
            path_str(&p, "/children");
            if (path_ok(&p))
                (void)children_file_visit(p.buf, c);
        }
    }
    close(dfd);
    return got < 0 ? -1 : 0;
}

/* Sets up c; false (with *n = 0) for arguments no walk could satisfy. */
static bool collect_init(collect_t *c, pid_t pid, pid_t *out, size_t max, size_t *n)
{
    *n = 0;
    if (pid < 0 || (!out && max))
        return false;
    *c = (collect_t){.out = out, .max = max, .root = pid ? pid : getpid()};
    return true;
}

static int collect_fail(collect_t *c, size_t *n)
{
    if (c->kept)
        memset(c->out, 0, c->kept * sizeof c->out[0]);
    *n = 0;
    return -1;
}

int procfs_children(pid_t pid, pid_t *out, size_t max, size_t *n)
{
    collect_t c;
    if (!collect_init(&c, pid, out, max, n))
        return -1;
    if (children_visit(pid, &c) != 0)
        return collect_fail(&c, n);
    *n = c.found;
    return 0;
}

/* Breadth first: out[0..kept) is the queue, i its head.  Children of a
 * pid that has gone (or has become a zombie) are skipped. */
int procfs_descendants(pid_t pid, pid_t *out, size_t max, size_t *n)
{
    collect_t c;
    if (!collect_init(&c, pid, out, max, n))
        return -1;
    if (children_visit(pid, &c) != 0)
        return collect_fail(&c, n);
    for (size_t i = 0; i < c.kept; i++)
        (void)children_visit(c.out[i], &c);
    *n = c.found;
    return 0;
}

/* ---- memory limit ------------------------------------------------------- */

/* Lowers *limit to the number in a memory.max or memory.limit_in_bytes
 * file; "max", a missing file or anything else leaves it alone. */
static void limit_file_apply(const char *path, uint64_t *limit)
{
    char buf[64];
    ssize_t len = file_read(path, buf, sizeof buf);
    size_t i = 0;
    uint64_t v;
    if (len <= 0 || !parse_u64(buf, &i, (size_t)len, &v))
        return; /* also "max" */
    if (i < (size_t)len && buf[i] != '\n')
        return;
    if (v < *limit)
        *limit = v;
}

/*
 * Applies the limits of cgroup path cg[0..len) and of each of its
 * parents, up to the root: root/<cg>/file, root/<parent>/file, ...,
 * root/file.  A parent's limit binds its children too.  Walking up also
 * finds the limit of a container that sees its own cgroup mounted as
 * root while /proc/self/cgroup still names the host's path.
 */
static void limit_walk(const char *root, const char *cg, size_t len, const char *file,
                       uint64_t *limit)
{
    for (;;) {
        while (len > 0 && cg[len - 1] == '/')
            len--;
        path_t p;
        p.len = 0;
        path_str(&p, root);
        path_add(&p, cg, len);
        path_str(&p, file);
        if (path_ok(&p))
            limit_file_apply(p.buf, limit);
        if (len == 0)
            return;
        while (len > 0 && cg[len - 1] != '/')
            len--;
    }
}

/* True when the comma-separated list s[0..len) has the word "memory". */
static bool has_memory_controller(const char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        size_t j = i;
        while (j < len && s[j] != ',')
            j++;
        if (j - i == 6 && memcmp(s + i, "memory", 6) == 0)
            return true;
        i = j + 1;
    }
    return false;
}

/*
 * Each line of /proc/self/cgroup is "id:controllers:path": "0::path" for
 * cgroup v2 (mounted at /sys/fs/cgroup), "N:...memory...:path" for the
 * v1 memory controller (/sys/fs/cgroup/memory).  Both are tried, so a
 * hybrid system works too.  v1's "unlimited" is a huge number
 * (9223372036854771712), which the minimum with physical memory absorbs.
 */
int procfs_memory_limit(uint64_t *bytes)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t limit = pages > 0 && page > 0 ? mul_sat((uint64_t)pages, (uint64_t)page) : UINT64_MAX;
    char text[TEXT_BUF];
    ssize_t len = file_read("/proc/self/cgroup", text, sizeof text);
    for (size_t pos = 0; len > 0 && pos < (size_t)len;) {
        const char *nl = memchr(text + pos, '\n', (size_t)len - pos);
        if (!nl)
            break; /* a line cut by the buffer: its path may be too */
        size_t end = (size_t)(nl - text);
        const char *c1 = memchr(text + pos, ':', end - pos);
        const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(text + end - (c1 + 1))) : NULL;
        if (c2) {
            const char *cg = c2 + 1;
            size_t cg_len = (size_t)(text + end - cg);
            size_t ctl_len = (size_t)(c2 - (c1 + 1));
            if (ctl_len == 0 && c1 - (text + pos) == 1 && text[pos] == '0')
                limit_walk("/sys/fs/cgroup", cg, cg_len, "/memory.max", &limit);
            else if (has_memory_controller(c1 + 1, ctl_len))
                limit_walk("/sys/fs/cgroup/memory", cg, cg_len, "/memory.limit_in_bytes",
                           &limit);
        }
        pos = end + 1;
    }
    if (limit == UINT64_MAX) {
        *bytes = 0;
        return -1;
    }
    *bytes = limit;
    return 0;
}
