/* smapsum: the heap's and the anonymous RSS out of smaps, a mapping the
 * kernel shows twice counted once. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "allocators/smapsum.h"
#include "tests/unit/suites.h"

/* Feed text line by line (a copy: lines are cut up in place). */
static void feed(smapsum_t *s, const char *text)
{
    static char buf[8192];
    snprintf(buf, sizeof buf, "%s", text);
    smapsum_init(s);
    for (char *line = buf, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
        *nl = '\0';
        smapsum_line(s, line);
    }
}

#define MAPPING(range, perms, name, rss, anon)                                                  \
    range " " perms " 00000000 00:00 0          " name "\n"                                      \
    "Size:              65536 kB\n"                                                             \
    "Rss:             " rss " kB\n"                                                             \
    "Anonymous:       " anon " kB\n"                                                            \
    "VmFlags: rd wr mr mw me ac sd\n"

#define FILE_MAPPING(range, rss, anon)                                                          \
    range " r-xp 00000000 08:01 1234       /usr/bin/python3.11\n"                               \
    "Rss:             " rss " kB\n"                                                             \
    "Anonymous:       " anon " kB\n"

START_TEST(heap_and_anonymous)
{
    smapsum_t s;
    feed(&s, FILE_MAPPING("00400000-00500000", "800", "4")
             MAPPING("00600000-00700000", "rw-p", "[heap]", "1000", "1000")
             MAPPING("7f0000000000-7f0000100000", "rw-p", "", "200", "200")
             MAPPING("7f0000200000-7f0000300000", "rw-p", "[stack]", "30", "30"));
    ck_assert_uint_eq(s.heap, (1000 + 200) * 1024);
    ck_assert_uint_eq(s.anon, (4 + 1000 + 200 + 30) * 1024);
}
END_TEST

/* glibc's arena [7f..00, 7f..80000) shown, then grown by mprotect to
 * 7f..c0000 before the next page of smaps: shown again, whole.  The
 * newer view replaces the first; the arena counts once. */
START_TEST(a_mapping_shown_again_counts_once)
{
    smapsum_t s;
    feed(&s, MAPPING("7f0000000000-7f0000080000", "rw-p", "", "512", "512")
             MAPPING("7f0000000000-7f00000c0000", "rw-p", "", "768", "768")
             MAPPING("7f00000c0000-7f0004000000", "---p", "", "0", "0")
             MAPPING("7f0010000000-7f0010001000", "rw-p", "", "4", "4"));
    ck_assert_uint_eq(s.heap, (768 + 4) * 1024);
    ck_assert_uint_eq(s.anon, (768 + 4) * 1024);
}
END_TEST

/* A mapping shown, then split (its upper half made read-only) before
 * the next page: the half starting inside it, shown again, is left out. */
START_TEST(a_part_split_off_is_left_out)
{
    smapsum_t s;
    feed(&s, MAPPING("7f0000000000-7f0000100000", "rw-p", "", "1024", "1024")
             MAPPING("7f0000080000-7f0000100000", "r--p", "", "512", "512")
             MAPPING("7f0000100000-7f0000101000", "rw-p", "", "4", "4"));
    ck_assert_uint_eq(s.heap, (1024 + 4) * 1024);
    ck_assert_uint_eq(s.anon, (1024 + 4) * 1024);
}
END_TEST

Suite *smapsum_suite(void)
{
    Suite *s = suite_create("smapsum");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, heap_and_anonymous);
    tcase_add_test(tc, a_mapping_shown_again_counts_once);
    tcase_add_test(tc, a_part_split_off_is_left_out);
    suite_add_tcase(s, tc);
    return s;
}
