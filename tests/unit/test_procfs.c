/*
 * procfs: the parsers on exact texts this machine's kernel wrote (cut at
 * every length, in heap buffers of exactly that length so that ASan
 * catches a read past len), then the readers on this process and on a
 * tree of children it forks.  The tree tests count on Check's fork mode
 * (the default): the test process then has no children but its own.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/procfs.h"
#include "tests/unit/helpers.h"
#include "tests/unit/suites.h"

#define NO_SUCH_PID ((pid_t)0x7ffffff0) /* above any pid_max (at most 2^22) */

/* ---- samples ------------------------------------------------------------ */

/* `cat /proc/self/status` on the development machine (Linux 6.18). */
static const char status_sample[] =
    "Name:\tcat\n"
    "Umask:\t0022\n"
    "State:\tR (running)\n"
    "Tgid:\t16829\n"
    "Ngid:\t0\n"
    "Pid:\t16829\n"
    "PPid:\t16826\n"
    "TracerPid:\t0\n"
    "Uid:\t0\t0\t0\t0\n"
    "Gid:\t0\t0\t0\t0\n"
    "FDSize:\t256\n"
    "Groups:\t \n"
    "NStgid:\t16829\n"
    "NSpid:\t16829\n"
    "NSpgid:\t16826\n"
    "NSsid:\t15268\n"
    "Kthread:\t0\n"
    "VmPeak:\t    3060 kB\n"
    "VmSize:\t    3060 kB\n"
    "VmLck:\t       0 kB\n"
    "VmPin:\t       0 kB\n"
    "VmHWM:\t    1772 kB\n"
    "VmRSS:\t    1772 kB\n"
    "RssAnon:\t     116 kB\n"
    "RssFile:\t    1656 kB\n"
    "RssShmem:\t       0 kB\n"
    "VmData:\t     360 kB\n"
    "VmStk:\t     132 kB\n"
    "VmExe:\t      20 kB\n"
    "VmLib:\t    1528 kB\n"
    "VmPTE:\t      44 kB\n"
    "VmSwap:\t       0 kB\n"
    "HugetlbPages:\t       0 kB\n"
    "CoreDumping:\t0\n"
    "THP_enabled:\t1\n"
    "untag_mask:\t0xffffffffffffffff\n"
    "Threads:\t1\n"
    "SigQ:\t0/96364\n"
    "SigPnd:\t0000000000000000\n"
    "ShdPnd:\t0000000000000000\n"
    "SigBlk:\t0000000000000000\n"
    "SigIgn:\t0000000000000000\n"
    "SigCgt:\t0000000000000000\n"
    "CapInh:\t0000000000000000\n"
    "CapPrm:\t000001fffeffffff\n"
    "CapEff:\t000001fffeffffff\n"
    "CapBnd:\t000001fffeffffff\n"
    "CapAmb:\t0000000000000000\n"
    "NoNewPrivs:\t0\n"
    "Seccomp:\t0\n"
    "Seccomp_filters:\t0\n"
    "Speculation_Store_Bypass:\tvulnerable\n"
    "SpeculationIndirectBranch:\talways enabled\n"
    "Cpus_allowed:\t3\n"
    "Cpus_allowed_list:\t0-1\n"
    "Mems_allowed:\t00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
    "00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
    "00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
    "00000000,00000000,00000000,00000001\n"
    "Mems_allowed_list:\t0\n"
    "voluntary_ctxt_switches:\t0\n"
    "nonvoluntary_ctxt_switches:\t0\n";

/* `cat /proc/self/smaps_rollup`, same machine. */
static const char rollup_sample[] =
    "55dde8d4b000-7ffdead92000 ---p 00000000 00:00 0                          [rollup]\n"
    "Rss:                1640 kB\n"
    "Pss:                 552 kB\n"
    "Pss_Dirty:           116 kB\n"
    "Pss_Anon:            116 kB\n"
    "Pss_File:            436 kB\n"
    "Pss_Shmem:             0 kB\n"
    "Shared_Clean:       1392 kB\n"
    "Shared_Dirty:          0 kB\n"
    "Private_Clean:       132 kB\n"
    "Private_Dirty:       116 kB\n"
    "Referenced:         1640 kB\n"
    "Anonymous:           116 kB\n"
    "KSM:                   0 kB\n"
    "LazyFree:              0 kB\n"
    "AnonHugePages:         0 kB\n"
    "ShmemPmdMapped:        0 kB\n"
    "FilePmdMapped:         0 kB\n"
    "Shared_Hugetlb:        0 kB\n"
    "Private_Hugetlb:       0 kB\n"
    "Swap:                  0 kB\n"
    "SwapPss:               0 kB\n"
    "Locked:                0 kB\n";

/* Every field by name, for the loops below. */
typedef struct field_s {
    const char *name;
    size_t offset; /* of its uint64_t in the struct */
} field_t;

static const field_t status_fields[] = {
    {"VmRSS", offsetof(procfs_status_t, rss)},
    {"VmHWM", offsetof(procfs_status_t, hwm)},
    {"VmSize", offsetof(procfs_status_t, vm_size)},
    {"VmPeak", offsetof(procfs_status_t, vm_peak)},
};

static const field_t rollup_fields[] = {
    {"Rss", offsetof(procfs_rollup_t, rss)},
    {"Pss", offsetof(procfs_rollup_t, pss)},
    {"Pss_Anon", offsetof(procfs_rollup_t, pss_anon)},
    {"Pss_File", offsetof(procfs_rollup_t, pss_file)},
    {"Shared_Clean", offsetof(procfs_rollup_t, shared_clean)},
    {"Shared_Dirty", offsetof(procfs_rollup_t, shared_dirty)},
    {"Private_Clean", offsetof(procfs_rollup_t, private_clean)},
    {"Private_Dirty", offsetof(procfs_rollup_t, private_dirty)},
    {"Referenced", offsetof(procfs_rollup_t, referenced)},
    {"Anonymous", offsetof(procfs_rollup_t, anonymous)},
    {"LazyFree", offsetof(procfs_rollup_t, lazyfree)},
    {"AnonHugePages", offsetof(procfs_rollup_t, anon_huge_pages)},
    {"Swap", offsetof(procfs_rollup_t, swap)},
    {"SwapPss", offsetof(procfs_rollup_t, swap_pss)},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static uint64_t field_get(const void *s, const field_t *f)
{
    uint64_t v;
    memcpy(&v, (const char *)s + f->offset, sizeof v);
    return v;
}

/* The end of "name:...kB" in text: the shortest prefix holding the
 * field's whole line up to its unit.  Fails the test when absent. */
static size_t field_end(const char *text, const char *name)
{
    size_t n = strlen(name);
    for (const char *line = text; *line; line = strchr(line, '\n') + 1) {
        if (!strncmp(line, name, n) && line[n] == ':') {
            const char *kb = strstr(line, "kB");
            ck_assert_ptr_nonnull(kb);
            return (size_t)(kb + 2 - text);
        }
        if (!strchr(line, '\n'))
            break;
    }
    ck_abort_msg("no field %s", name);
    return 0;
}

/* text[0..len) in a heap block of exactly len bytes (ASan's redzone
 * right after it). */
static char *heap_copy(const char *text, size_t len)
{
    char *p = malloc(len ? len : 1);
    ck_assert_ptr_nonnull(p);
    memcpy(p, text, len);
    return p;
}

static int parse_status_heap(const char *text, size_t len, procfs_status_t *out)
{
    char *p = heap_copy(text, len);
    memset(out, 0xa5, sizeof *out);
    int r = procfs_parse_status(p, len, out);
    free(p);
    return r;
}

static int parse_rollup_heap(const char *text, size_t len, procfs_rollup_t *out)
{
    char *p = heap_copy(text, len);
    memset(out, 0xa5, sizeof *out);
    int r = procfs_parse_smaps_rollup(p, len, out);
    free(p);
    return r;
}

/* ---- procfs_parse_status ------------------------------------------------ */

START_TEST(status_sample_exact)
{
    procfs_status_t s;
    ck_assert_int_eq(parse_status_heap(status_sample, strlen(status_sample), &s), 0);
    ck_assert_uint_eq(s.rss, 1772 * KiB);
    ck_assert_uint_eq(s.hwm, 1772 * KiB);
    ck_assert_uint_eq(s.vm_size, 3060 * KiB);
    ck_assert_uint_eq(s.vm_peak, 3060 * KiB);
}
END_TEST

START_TEST(status_any_order_any_blanks)
{
    /* Distinct values, so a field read into the wrong member shows. */
    static const char text[] = "Name:\tx\n"
                               "VmRSS:1 kB\n"
                               "VmRSSX:\t99 kB\n"
                               " VmHWM:\t99 kB\n"
                               "vmhwm:\t99 kB\n"
                               "VmSize: 99 MB\n"
                               "VmSize:  kB\n"
                               "VmSize\t3 kB\n"
                               "\n"
                               "VmPeak: \t 4\t kB \r\n"
                               "Threads:\t1\n"
                               "VmHWM:2kB\n"
                               "VmSize:\t\t3 kB  "; /* last line, no '\n' */
    procfs_status_t s;
    ck_assert_int_eq(parse_status_heap(text, strlen(text), &s), 0);
    ck_assert_uint_eq(s.rss, 1 * KiB);
    ck_assert_uint_eq(s.hwm, 2 * KiB);
    ck_assert_uint_eq(s.vm_size, 3 * KiB);
    ck_assert_uint_eq(s.vm_peak, 4 * KiB);

    /* The sample's lines reversed. */
    char rev[sizeof status_sample];
    size_t len = strlen(status_sample), w = 0;
    for (size_t end = len; end > 0;) {
        size_t start = end - 1;
        while (start > 0 && status_sample[start - 1] != '\n')
            start--;
        memcpy(rev + w, status_sample + start, end - start);
        w += end - start;
        end = start;
    }
    ck_assert_uint_eq(w, len);
    ck_assert_int_eq(parse_status_heap(rev, len, &s), 0);
    ck_assert_uint_eq(s.rss, 1772 * KiB);
    ck_assert_uint_eq(s.vm_peak, 3060 * KiB);

    /* The last occurrence wins; a number too large saturates. */
    static const char twice[] = "VmRSS:\t1 kB\nVmRSS:\t5 kB\n"
                                "VmPeak:\t99999999999999999999999 kB\n";
    ck_assert_int_eq(parse_status_heap(twice, strlen(twice), &s), 0);
    ck_assert_uint_eq(s.rss, 5 * KiB);
    ck_assert_uint_eq(s.vm_peak, UINT64_MAX);
    static const char big[] = "VmSize:\t18014398509481983 kB\n"  /* (2^64 - 1) / 1024 */
                              "VmHWM:\t18014398509481984 kB\n"; /* 2^54: 2^64 overflows */
    ck_assert_int_eq(parse_status_heap(big, strlen(big), &s), 0);
    ck_assert_uint_eq(s.vm_size, 18014398509481983ull * 1024);
    ck_assert_uint_eq(s.hwm, UINT64_MAX);
}
END_TEST

START_TEST(status_missing_fields)
{
    procfs_status_t s;
    static const char only_rss[] = "Name:\tx\nVmRSS:\t  12 kB\nThreads:\t1\n";
    ck_assert_int_eq(parse_status_heap(only_rss, strlen(only_rss), &s), 0);
    ck_assert_uint_eq(s.rss, 12 * KiB);
    ck_assert_uint_eq(s.hwm, 0);
    ck_assert_uint_eq(s.vm_size, 0);
    ck_assert_uint_eq(s.vm_peak, 0);

    /* A kernel thread's status has none of them: -1, all zero. */
    static const char none[] = "Name:\tkthreadd\nState:\tS (sleeping)\nVmLck:\t0 kB\n";
    static const procfs_status_t zero;
    ck_assert_int_eq(parse_status_heap(none, strlen(none), &s), -1);
    ck_assert_mem_eq(&s, &zero, sizeof s);
    ck_assert_int_eq(parse_status_heap("", 0, &s), -1);
    ck_assert_mem_eq(&s, &zero, sizeof s);
    memset(&s, 0xa5, sizeof s);
    ck_assert_int_eq(procfs_parse_status(NULL, 0, &s), -1);
    ck_assert_mem_eq(&s, &zero, sizeof s);
}
END_TEST

/*
 * The sample cut at every length: a field is either absent (0) or, once
 * its line is complete up to "kB", its true value; never a prefix of
 * the number ("VmRSS:\t    17" is ignored: no unit).  -1 exactly when
 * no field is complete yet.
 */
START_TEST(status_cut_everywhere)
{
    size_t len = strlen(status_sample), first = len;
    procfs_status_t full, s;
    ck_assert_int_eq(procfs_parse_status(status_sample, len, &full), 0);
    size_t ends[COUNT(status_fields)];
    for (size_t f = 0; f < COUNT(status_fields); f++) {
        ends[f] = field_end(status_sample, status_fields[f].name);
        first = ends[f] < first ? ends[f] : first;
    }
    for (size_t cut = 0; cut <= len; cut++) {
        int r = parse_status_heap(status_sample, cut, &s);
        EXPECT_INT(r, ==, cut < first ? -1 : 0);
        for (size_t f = 0; f < COUNT(status_fields); f++) {
            uint64_t want = cut >= ends[f] ? field_get(&full, &status_fields[f]) : 0;
            EXPECT(field_get(&s, &status_fields[f]) == want, "cut %zu: %s = %ju, want %ju", cut,
                   status_fields[f].name, (uintmax_t)field_get(&s, &status_fields[f]),
                   (uintmax_t)want);
        }
    }
}
END_TEST

/* Random texts built of the tokens that matter: no crash, no read past
 * len (ASan), and a result that is 0 or -1. */
START_TEST(parsers_survive_noise)
{
    static const char *const tokens[] = {
        "VmRSS", "VmHWM", "Rss", "Pss", "Swap", ":", " ", "\t", "kB", "k", "B", "\n", "\r",
        "0",     "7",     "18446744073709551615", "99999999999999999999999", "\0", "x", "::"};
    uint64_t seed = 88172645463325252ull;
    char buf[256];
    for (int round = 0; round < 20000; round++) {
        size_t len = 0;
        for (;;) {
            seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17; /* xorshift64 */
            const char *t = tokens[seed % COUNT(tokens)];
            size_t n = *t ? strlen(t) : 1;
            if (len + n > sizeof buf || (seed >> 32) % 40 == 0)
                break;
            memcpy(buf + len, t, n);
            len += n;
        }
        procfs_status_t s;
        procfs_rollup_t r;
        int a = parse_status_heap(buf, len, &s), b = parse_rollup_heap(buf, len, &r);
        EXPECT(a == 0 || a == -1, "status: %d", a);
        EXPECT(b == 0 || b == -1, "rollup: %d", b);
        EXPECT(b == 0 || r.pss == 0, "rollup -1 but pss %ju", (uintmax_t)r.pss);
    }
}
END_TEST

/* ---- procfs_parse_smaps_rollup ------------------------------------------ */

START_TEST(rollup_sample_exact)
{
    procfs_rollup_t r;
    ck_assert_int_eq(parse_rollup_heap(rollup_sample, strlen(rollup_sample), &r), 0);
    ck_assert_uint_eq(r.rss, 1640 * KiB);
    ck_assert_uint_eq(r.pss, 552 * KiB);
    ck_assert_uint_eq(r.pss_anon, 116 * KiB);
    ck_assert_uint_eq(r.pss_file, 436 * KiB);
    ck_assert_uint_eq(r.shared_clean, 1392 * KiB);
    ck_assert_uint_eq(r.shared_dirty, 0);
    ck_assert_uint_eq(r.private_clean, 132 * KiB);
    ck_assert_uint_eq(r.private_dirty, 116 * KiB);
    ck_assert_uint_eq(r.referenced, 1640 * KiB);
    ck_assert_uint_eq(r.anonymous, 116 * KiB);
    ck_assert_uint_eq(r.lazyfree, 0);
    ck_assert_uint_eq(r.anon_huge_pages, 0);
    ck_assert_uint_eq(r.swap, 0);
    ck_assert_uint_eq(r.swap_pss, 0);
    ck_assert_uint_eq(r.shared_clean + r.shared_dirty + r.private_clean + r.private_dirty, r.rss);
}
END_TEST

START_TEST(rollup_any_order)
{
    /* Every field a distinct value, shuffled among the fields we skip
     * (Pss_Dirty, Pss_Shmem, KSM, ...), which share their prefixes. */
    static const char text[] = "SwapPss:              14 kB\n"
                               "Pss_Shmem:            99 kB\n"
                               "Private_Dirty:         8 kB\n"
                               "Pss_File:              4 kB\n"
                               "KSM:                  99 kB\n"
                               "AnonHugePages:        12 kB\n"
                               "Shared_Hugetlb:       99 kB\n"
                               "Anonymous:            10 kB\n"
                               "Pss:                   2 kB\n"
                               "Pss_Dirty:            99 kB\n"
                               "Shared_Dirty:          6 kB\n"
                               "LazyFree:             11 kB\n"
                               "Referenced:            9 kB\n"
                               "Rss:                   1 kB\n"
                               "Locked:               99 kB\n"
                               "Shared_Clean:          5 kB\n"
                               "Swap:                 13 kB\n"
                               "Pss_Anon:              3 kB\n"
                               "7f0000000000-7fff00000000 ---p 00000000 00:00 0  [rollup]\n"
                               "Private_Clean:         7 kB";
    procfs_rollup_t r;
    ck_assert_int_eq(parse_rollup_heap(text, strlen(text), &r), 0);
    for (size_t f = 0; f < COUNT(rollup_fields); f++)
        ck_assert_msg(field_get(&r, &rollup_fields[f]) == (f + 1) * KiB, "%s = %ju",
                      rollup_fields[f].name, (uintmax_t)field_get(&r, &rollup_fields[f]));
}
END_TEST

START_TEST(rollup_missing_fields)
{
    static const procfs_rollup_t zero;
    procfs_rollup_t r;
    static const char no_rss[] = "00400000-7fff0000 ---p 00000000 00:00 0 [rollup]\n"
                                 "Pss:                 552 kB\n"
                                 "Anonymous:           116 kB\n";
    ck_assert_int_eq(parse_rollup_heap(no_rss, strlen(no_rss), &r), -1);
    ck_assert_mem_eq(&r, &zero, sizeof r);
    ck_assert_int_eq(parse_rollup_heap("", 0, &r), -1);
    ck_assert_mem_eq(&r, &zero, sizeof r);

    /* An older kernel: no Pss_Anon, Pss_File (5.8), no LazyFree. */
    static const char old[] = "00400000-7fff0000 ---p 00000000 00:00 0 [rollup]\n"
                              "Rss:                 884 kB\n"
                              "Pss:                 200 kB\n"
                              "Swap:                  4 kB\n";
    ck_assert_int_eq(parse_rollup_heap(old, strlen(old), &r), 0);
    ck_assert_uint_eq(r.rss, 884 * KiB);
    ck_assert_uint_eq(r.pss, 200 * KiB);
    ck_assert_uint_eq(r.swap, 4 * KiB);
    ck_assert_uint_eq(r.pss_anon, 0);
    ck_assert_uint_eq(r.pss_file, 0);
    ck_assert_uint_eq(r.lazyfree, 0);
}
END_TEST

START_TEST(rollup_cut_everywhere)
{
    size_t len = strlen(rollup_sample);
    procfs_rollup_t full, r;
    ck_assert_int_eq(procfs_parse_smaps_rollup(rollup_sample, len, &full), 0);
    size_t ends[COUNT(rollup_fields)];
    for (size_t f = 0; f < COUNT(rollup_fields); f++)
        ends[f] = field_end(rollup_sample, rollup_fields[f].name);
    for (size_t cut = 0; cut <= len; cut++) {
        int rc = parse_rollup_heap(rollup_sample, cut, &r);
        bool have_rss = cut >= ends[0];
        EXPECT_INT(rc, ==, have_rss ? 0 : -1);
        for (size_t f = 0; f < COUNT(rollup_fields); f++) {
            uint64_t want = have_rss && cut >= ends[f] ? field_get(&full, &rollup_fields[f]) : 0;
            EXPECT(field_get(&r, &rollup_fields[f]) == want, "cut %zu: %s = %ju, want %ju", cut,
                   rollup_fields[f].name, (uintmax_t)field_get(&r, &rollup_fields[f]),
                   (uintmax_t)want);
        }
    }
}
END_TEST

/* ---- readers on this process -------------------------------------------- */

START_TEST(status_of_self)
{
    procfs_status_t before, after, by_pid;
    ck_assert_int_eq(procfs_read_status(0, &before), 0);
    ck_assert_uint_gt(before.rss, 0);
    ck_assert_uint_ge(before.hwm, before.rss);
    ck_assert_uint_gt(before.vm_size, 0);
    ck_assert_uint_ge(before.vm_peak, before.vm_size);
    ck_assert_int_eq(procfs_read_status(getpid(), &by_pid), 0);
    ck_assert_uint_ge(by_pid.vm_peak, by_pid.vm_size);

    size_t size = 64 * MiB;
    char *p = malloc(size);
    ck_assert_ptr_nonnull(p);
    memset(p, 1, size);
    __asm__ volatile("" : : "r"(p) : "memory"); /* keep the stores */
    ck_assert_int_eq(procfs_read_status(0, &after), 0);
    free(p);

    ck_assert_msg(after.rss >= before.rss + 60 * MiB, "rss %ju -> %ju", (uintmax_t)before.rss,
                  (uintmax_t)after.rss);
    ck_assert_msg(after.hwm >= before.hwm && after.hwm >= before.rss + 60 * MiB,
                  "hwm %ju -> %ju (rss %ju)", (uintmax_t)before.hwm, (uintmax_t)after.hwm,
                  (uintmax_t)before.rss);
    ck_assert_uint_ge(after.hwm, after.rss);
    ck_assert_uint_ge(after.vm_size, before.vm_size + 64 * MiB);
    ck_assert_uint_ge(after.vm_peak, after.vm_size);
}
END_TEST

/* statm and status count the same pages, but the kernel's per-CPU RSS
 * counters are approximate (off by up to a few hundred KiB) and the
 * process faults pages in between the reads: hold 32 MiB so that 10%
 * is far above that noise, and bracket the statm read by two status
 * reads. */
START_TEST(rss_agrees_with_status)
{
    size_t size = 32 * MiB;
    char *p = malloc(size);
    ck_assert_ptr_nonnull(p);
    memset(p, 1, size);
    __asm__ volatile("" : : "r"(p) : "memory");
    procfs_status_t s0, s1;
    uint64_t rss = 0, by_pid = 0;
    ck_assert_int_eq(procfs_read_status(0, &s0), 0);
    ck_assert_int_eq(procfs_read_rss(0, &rss), 0);
    ck_assert_int_eq(procfs_read_rss(getpid(), &by_pid), 0);
    ck_assert_int_eq(procfs_read_status(0, &s1), 0);
    free(p);
    uint64_t lo = s0.rss < s1.rss ? s0.rss : s1.rss, hi = s0.rss < s1.rss ? s1.rss : s0.rss;
    ck_assert_uint_ge(lo, size);
    ck_assert_uint_eq(rss % (uint64_t)sysconf(_SC_PAGESIZE), 0);
    ck_assert_msg(rss * 10 >= lo * 9 && rss * 10 <= hi * 11, "statm %ju, status %ju..%ju",
                  (uintmax_t)rss, (uintmax_t)lo, (uintmax_t)hi);
    ck_assert_msg(by_pid * 10 >= lo * 9 && by_pid * 10 <= hi * 11, "statm %ju, status %ju..%ju",
                  (uintmax_t)by_pid, (uintmax_t)lo, (uintmax_t)hi);
}
END_TEST

START_TEST(rollup_of_self)
{
    procfs_rollup_t r;
    ck_assert_int_eq(procfs_read_smaps_rollup(0, &r), 0);
    ck_assert_uint_gt(r.rss, 0);
    ck_assert_uint_gt(r.pss, 0);
    ck_assert_uint_le(r.pss, r.rss);
    ck_assert_uint_gt(r.anonymous, 0);
    ck_assert_uint_le(r.pss_anon + r.pss_file, r.pss);
    ck_assert_uint_le(r.referenced, r.rss);
    ck_assert_uint_eq(r.shared_clean + r.shared_dirty + r.private_clean + r.private_dirty, r.rss);
    ck_assert_int_eq(procfs_read_smaps_rollup(getpid(), &r), 0);
    ck_assert_uint_gt(r.rss, 0);
}
END_TEST

START_TEST(no_such_process)
{
    static const procfs_status_t zs;
    static const procfs_rollup_t zr;
    const pid_t bad[] = {NO_SUCH_PID, -1};
    for (size_t i = 0; i < COUNT(bad); i++) {
        procfs_status_t s;
        procfs_rollup_t r;
        uint64_t rss = 7;
        pid_t out[4] = {0};
        size_t n = 7;
        memset(&s, 0xa5, sizeof s);
        memset(&r, 0xa5, sizeof r);
        ck_assert_int_eq(procfs_read_status(bad[i], &s), -1);
        ck_assert_mem_eq(&s, &zs, sizeof s);
        ck_assert_int_eq(procfs_read_smaps_rollup(bad[i], &r), -1);
        ck_assert_mem_eq(&r, &zr, sizeof r);
        ck_assert_int_eq(procfs_read_rss(bad[i], &rss), -1);
        ck_assert_uint_eq(rss, 0);
        ck_assert_int_eq(procfs_children(bad[i], out, COUNT(out), &n), -1);
        ck_assert_uint_eq(n, 0);
        n = 7;
        ck_assert_int_eq(procfs_descendants(bad[i], out, COUNT(out), &n), -1);
        ck_assert_uint_eq(n, 0);
    }
}
END_TEST

START_TEST(memory_limit_is_sane)
{
    uint64_t limit = 0;
    uint64_t phys = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
    ck_assert_int_eq(procfs_memory_limit(&limit), 0);
    ck_assert_uint_gt(limit, 0);
    ck_assert_uint_le(limit, phys);
}
END_TEST

/* ---- process trees ------------------------------------------------------ */

/* A child of this process and the grandchild it forked.  Both die with
 * their parent thread (PR_SET_PDEATHSIG), so a failing test leaks none. */
typedef struct family_s {
    pid_t child, grandchild;
} family_t;

/* Forks a family; 0 or -1.  Calls no Check assertion, so any thread may
 * call it; the children call only async-signal-safe functions. */
static int family_spawn(family_t *f)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    pid_t parent = getpid();
    pid_t child = fork();
    if (child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(1);
        pid_t me = getpid();
        pid_t grandchild = fork();
        if (grandchild == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != me)
                _exit(1);
            for (;;)
                pause();
        }
        if (write(fds[1], &grandchild, sizeof grandchild) != sizeof grandchild)
            _exit(1);
        /* Lives until its grandchild is killed, then ends: reaping is
         * then one waitpid on the child. */
        while (grandchild > 0 && waitpid(grandchild, NULL, 0) < 0 && errno == EINTR)
            ;
        _exit(0);
    }
    close(fds[1]);
    pid_t grandchild = -1;
    ssize_t got;
    do
        got = read(fds[0], &grandchild, sizeof grandchild);
    while (got < 0 && errno == EINTR);
    close(fds[0]);
    if (child < 0 || got != sizeof grandchild || grandchild <= 0)
        return -1;
    f->child = child;
    f->grandchild = grandchild;
    return 0;
}

/* Kills the grandchild and reaps the child (any thread of the process may). */
static void family_reap(const family_t *f)
{
    int status;
    ck_assert_int_eq(kill(f->grandchild, SIGKILL), 0);
    ck_assert_int_eq(waitpid(f->child, &status, 0), f->child);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static int pid_cmp(const void *a, const void *b)
{
    pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
    return (x > y) - (x < y);
}

/* got[0..n) and want[0..n) hold the same pids (both get sorted). */
static void assert_same_pids(pid_t *got, size_t n_got, pid_t *want, size_t n_want)
{
    ck_assert_uint_eq(n_got, n_want);
    qsort(got, n_got, sizeof *got, pid_cmp);
    qsort(want, n_want, sizeof *want, pid_cmp);
    for (size_t i = 0; i < n_got; i++)
        ck_assert_int_eq(got[i], want[i]);
}

static bool pid_in(pid_t pid, const pid_t *set, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (set[i] == pid)
            return true;
    return false;
}

/* The tree the family tests look at: 3 children, 3 grandchildren. */
static void assert_tree(const family_t *fam, size_t nfam)
{
    pid_t kids[8], all[16], out[64];
    size_t n;
    for (size_t i = 0; i < nfam; i++) {
        kids[i] = fam[i].child;
        all[2 * i] = fam[i].child;
        all[2 * i + 1] = fam[i].grandchild;
    }
    const pid_t selves[] = {0, getpid()};
    for (size_t s = 0; s < COUNT(selves); s++) {
        ck_assert_int_eq(procfs_children(selves[s], out, COUNT(out), &n), 0);
        assert_same_pids(out, n, kids, nfam);
        ck_assert_int_eq(procfs_descendants(selves[s], out, COUNT(out), &n), 0);
        assert_same_pids(out, n, all, 2 * nfam);
    }
    for (size_t i = 0; i < nfam; i++) {
        ck_assert_int_eq(procfs_children(fam[i].child, out, COUNT(out), &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_int_eq(out[0], fam[i].grandchild);
        ck_assert_int_eq(procfs_descendants(fam[i].child, out, COUNT(out), &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_int_eq(out[0], fam[i].grandchild);
        /* A pid without children. */
        ck_assert_int_eq(procfs_children(fam[i].grandchild, out, COUNT(out), &n), 0);
        ck_assert_uint_eq(n, 0);
        ck_assert_int_eq(procfs_descendants(fam[i].grandchild, out, COUNT(out), &n), 0);
        ck_assert_uint_eq(n, 0);
    }
}

START_TEST(tree_of_three_families)
{
    family_t fam[3];
    for (size_t i = 0; i < COUNT(fam); i++)
        ck_assert_int_eq(family_spawn(&fam[i]), 0);
    assert_tree(fam, COUNT(fam));
    for (size_t i = 0; i < COUNT(fam); i++)
        family_reap(&fam[i]);
    pid_t out[4];
    size_t n = 7;
    ck_assert_int_eq(procfs_children(0, out, COUNT(out), &n), 0);
    ck_assert_uint_eq(n, 0);
}
END_TEST

/* Two families forked by a second thread: they are children of that
 * thread's task, listed in /proc/self/task/<its tid>/children only. */
typedef struct spawner_s {
    family_t fam[2];
    int ok;
    pid_t tid;
    pthread_barrier_t ready, done;
} spawner_t;

static void *spawner_main(void *arg)
{
    spawner_t *s = arg;
    s->tid = (pid_t)syscall(SYS_gettid);
    s->ok = family_spawn(&s->fam[0]) == 0 && family_spawn(&s->fam[1]) == 0;
    pthread_barrier_wait(&s->ready);
    pthread_barrier_wait(&s->done); /* the families die with this thread */
    return NULL;
}

/* The pids in /proc/self/task/<tid>/children (the test may use stdio). */
static size_t task_children(pid_t tid, pid_t *out, size_t max)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)tid);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = 0;
    int pid;
    while (n < max && fscanf(f, "%d", &pid) == 1)
        out[n++] = pid;
    fclose(f);
    return n;
}

START_TEST(children_of_every_thread)
{
    static spawner_t s;
    pthread_t th;
    family_t fam[3];
    ck_assert_int_eq(pthread_barrier_init(&s.ready, NULL, 2), 0);
    ck_assert_int_eq(pthread_barrier_init(&s.done, NULL, 2), 0);
    ck_assert_int_eq(family_spawn(&fam[0]), 0);
    ck_assert_int_eq(pthread_create(&th, NULL, spawner_main, &s), 0);
    pthread_barrier_wait(&s.ready);
    ck_assert(s.ok);
    fam[1] = s.fam[0];
    fam[2] = s.fam[1];

    /* The premise: the main task's file lists only the main thread's child. */
    pid_t listed[8];
    size_t n = task_children(getpid(), listed, COUNT(listed));
    ck_assert_uint_eq(n, 1);
    ck_assert_int_eq(listed[0], fam[0].child);
    n = task_children(s.tid, listed, COUNT(listed));
    ck_assert_uint_eq(n, 2);
    ck_assert(pid_in(fam[1].child, listed, n) && pid_in(fam[2].child, listed, n));

    assert_tree(fam, COUNT(fam));
    for (size_t i = 0; i < COUNT(fam); i++)
        family_reap(&fam[i]);
    pthread_barrier_wait(&s.done);
    ck_assert_int_eq(pthread_join(th, NULL), 0);
    pthread_barrier_destroy(&s.ready);
    pthread_barrier_destroy(&s.done);
}
END_TEST

START_TEST(max_keeps_the_first)
{
    family_t fam[3];
    pid_t kids[3], out[8];
    size_t n;
    for (size_t i = 0; i < COUNT(fam); i++) {
        ck_assert_int_eq(family_spawn(&fam[i]), 0);
        kids[i] = fam[i].child;
    }
    /* children: 3 found, 2 kept, nothing written past max. */
    out[2] = -42;
    ck_assert_int_eq(procfs_children(0, out, 2, &n), 0);
    ck_assert_uint_eq(n, 3);
    ck_assert(pid_in(out[0], kids, 3) && pid_in(out[1], kids, 3) && out[0] != out[1]);
    ck_assert_int_eq(out[2], -42);
    ck_assert_int_eq(procfs_children(0, NULL, 0, &n), 0); /* count only */
    ck_assert_uint_eq(n, 3);

    /* descendants, breadth first: the children come first. */
    out[4] = -42;
    ck_assert_int_eq(procfs_descendants(0, out, 4, &n), 0);
    ck_assert_uint_eq(n, 6);
    for (size_t i = 0; i < 3; i++)
        ck_assert(pid_in(out[i], kids, 3));
    ck_assert(out[3] == fam[0].grandchild || out[3] == fam[1].grandchild ||
              out[3] == fam[2].grandchild);
    ck_assert_int_eq(out[4], -42);

    /* Past max, a pid that was not kept cannot be walked: n is then a
     * lower bound, but always more than max. */
    ck_assert_int_eq(procfs_descendants(0, out, 2, &n), 0);
    ck_assert_uint_ge(n, 3);
    ck_assert_uint_le(n, 6);
    ck_assert(pid_in(out[0], kids, 3) && pid_in(out[1], kids, 3));
    ck_assert_int_eq(procfs_descendants(0, NULL, 0, &n), 0);
    ck_assert_uint_eq(n, 3);

    for (size_t i = 0; i < COUNT(fam); i++)
        family_reap(&fam[i]);
}
END_TEST

/* A zombie is still a child (until reaped); it has no children to walk. */
START_TEST(zombie_child)
{
    pid_t z = fork();
    if (z == 0)
        _exit(0);
    ck_assert_int_gt(z, 0);
    siginfo_t info;
    ck_assert_int_eq(waitid(P_PID, (id_t)z, &info, WEXITED | WNOWAIT), 0); /* not reaped */
    pid_t out[4];
    size_t n;
    ck_assert_int_eq(procfs_children(0, out, COUNT(out), &n), 0);
    ck_assert_uint_eq(n, 1);
    ck_assert_int_eq(out[0], z);
    ck_assert_int_eq(procfs_descendants(0, out, COUNT(out), &n), 0);
    ck_assert_uint_eq(n, 1);
    ck_assert_int_eq(out[0], z);
    ck_assert_int_eq(waitpid(z, NULL, 0), z);
}
END_TEST

Suite *procfs_suite(void)
{
    Suite *s = suite_create("procfs");
    TCase *parse = tcase_create("parse");
    tcase_add_test(parse, status_sample_exact);
    tcase_add_test(parse, status_any_order_any_blanks);
    tcase_add_test(parse, status_missing_fields);
    tcase_add_test(parse, status_cut_everywhere);
    tcase_add_test(parse, parsers_survive_noise);
    tcase_add_test(parse, rollup_sample_exact);
    tcase_add_test(parse, rollup_any_order);
    tcase_add_test(parse, rollup_missing_fields);
    tcase_add_test(parse, rollup_cut_everywhere);
    suite_add_tcase(s, parse);

    TCase *read = tcase_create("read");
    tcase_set_timeout(read, 60);
    tcase_add_test(read, status_of_self);
    tcase_add_test(read, rss_agrees_with_status);
    tcase_add_test(read, rollup_of_self);
    tcase_add_test(read, no_such_process);
    tcase_add_test(read, memory_limit_is_sane);
    suite_add_tcase(s, read);

    TCase *tree = tcase_create("tree");
    tcase_set_timeout(tree, 60);
    tcase_add_test(tree, tree_of_three_families);
    tcase_add_test(tree, children_of_every_thread);
    tcase_add_test(tree, max_keeps_the_first);
    tcase_add_test(tree, zombie_child);
    suite_add_tcase(s, tree);
    return s;
}
