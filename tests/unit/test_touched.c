/*
 * touched: the pages of a large block the program touched are the whole
 * pages inside it that are resident, exactly, whatever the partial pages
 * at its ends hold; a block under the threshold is not counted.
 */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "preload/touched.h"
#include "tests/unit/suites.h"

#define PAGE 4096u
#define MIB (1u << 20)

/* A block as glibc maps a 1 MiB one: 16 bytes into a fresh mapping,
 * usable to the mapping's end (256 whole pages inside it). */
START_TEST(resident_whole_pages_are_counted)
{
    char *map = mmap(NULL, MIB + PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(map, MAP_FAILED);
    madvise(map, MIB + PAGE, MADV_NOHUGEPAGE); /* pages of 4 KiB, as counted */
    char *p = map + 16;
    size_t usable = MIB + PAGE - 16;
    ck_assert_uint_eq(touched_count(p, usable), 0 + 1);
    memset(p, 1, 64); /* the head page: the allocator's too */
    ck_assert_uint_eq(touched_count(p, usable), 0 + 1);
    map[PAGE] = 1; /* three whole pages */
    map[10 * PAGE + 5] = 1;
    map[MIB] = 1; /* the last one */
    ck_assert_uint_eq(touched_count(p, usable), 3 + 1);
    memset(map + PAGE, 2, MIB); /* every one */
    ck_assert_uint_eq(touched_count(p, usable), 256 + 1);
    /* a block ending inside a page: that page is not one of its own */
    ck_assert_uint_eq(touched_count(p, MIB - 16 + 100), 255 + 1);
    munmap(map, MIB + PAGE);
}
END_TEST

START_TEST(small_blocks_are_not_counted)
{
    char *map =
        mmap(NULL, TOUCHED_MIN_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(map, MAP_FAILED);
    memset(map, 1, TOUCHED_MIN_BYTES);
    ck_assert_uint_eq(touched_count(map, TOUCHED_MIN_BYTES - 1), 0);
    ck_assert_uint_eq(touched_count(map, TOUCHED_MIN_BYTES), TOUCHED_MIN_BYTES / PAGE + 1);
    munmap(map, TOUCHED_MIN_BYTES);
}
END_TEST

/* Larger than one mincore vector (TOUCHED_VEC pages): counted across. */
START_TEST(blocks_over_a_vector)
{
    size_t bytes = (size_t)(TOUCHED_VEC + 100) * PAGE;
    char *map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(map, MAP_FAILED);
    madvise(map, bytes, MADV_NOHUGEPAGE);
    for (size_t i = 0; i < TOUCHED_VEC + 100; i += 50)
        map[i * PAGE] = 1;
    ck_assert_uint_eq(touched_count(map, bytes), (TOUCHED_VEC + 100 + 49) / 50 + 1);
    munmap(map, bytes);
}
END_TEST

Suite *touched_suite(void)
{
    Suite *s = suite_create("touched");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, resident_whole_pages_are_counted);
    tcase_add_test(tc, small_blocks_are_not_counted);
    tcase_add_test(tc, blocks_over_a_vector);
    suite_add_tcase(s, tc);
    return s;
}
