/* catalog: the real allocators' specs, settings and environment. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "allocators/catalog.h"
#include "tests/unit/suites.h"

START_TEST(specs_parse)
{
    catalog_spec_t s[CATALOG_MAX_SPECS];
    size_t n = 0;
    char err[256];
    ck_assert_int_eq(catalog_parse_list("glibc,jemalloc,mimalloc,tcmalloc,glibc:M_ARENA_MAX=1,"
                                        "jemalloc:dirty_decay_ms=0:muzzy_decay_ms=0",
                                        s, CATALOG_MAX_SPECS, &n, err, sizeof err), 0);
    ck_assert_uint_eq(n, 6);
    ck_assert_str_eq(s[0].a->name, "glibc");
    ck_assert_uint_eq(s[0].nsettings, 0);
    ck_assert_str_eq(s[4].label, "glibc:M_ARENA_MAX=1");
    ck_assert_str_eq(s[4].keys[0], "M_ARENA_MAX");
    ck_assert_str_eq(s[4].values[0], "1");
    ck_assert_uint_eq(s[5].nsettings, 2);
    ck_assert_str_eq(s[5].keys[1], "muzzy_decay_ms");
}
END_TEST

START_TEST(bad_specs_say_why)
{
    static const struct {
        const char *list, *words;
    } bad[] = {
        {"hoard", "unknown allocator \"hoard\" (known: glibc, jemalloc, mimalloc, tcmalloc)"},
        {"glibc,", "an empty allocator name"},
        {"glibc,glibc", "\"glibc\" is named twice"},
        {"jemalloc:dirty", "\"dirty\" is not KEY=VALUE"},
        {"jemalloc:a=b c", "\"b c\": a setting's value is letters, digits, '_', '.' and '-'"},
        {"glibc:arena=1", "glibc takes mallopt's names"},
        {"glibc:glibc.malloc.nope=1", "glibc takes mallopt's names"},
        {"glibc:M_ARENA_MAX=abc", "M_ARENA_MAX=abc: glibc's settings take a number"},
        {"glibc:M_MMAP_THRESHOLD=0x", "glibc's settings take a number"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        catalog_spec_t s[CATALOG_MAX_SPECS];
        size_t n;
        char err[256] = "";
        ck_assert_int_eq(catalog_parse_list(bad[i].list, s, CATALOG_MAX_SPECS, &n, err, sizeof err), -1);
        ck_assert_msg(strstr(err, bad[i].words), "%s: \"%s\"", bad[i].list, err);
    }
}
END_TEST

/* Each allocator's settings reach it where it reads them. */
START_TEST(settings_become_environment)
{
    static const struct {
        const char *spec;
        size_t n;
        const char *env[2];
    } cases[] = {
        {"glibc", 0, {NULL}},
        {"glibc:M_ARENA_MAX=1:glibc.malloc.tcache_count=0", 1,
         {"GLIBC_TUNABLES=glibc.malloc.arena_max=1:glibc.malloc.tcache_count=0"}},
        {"jemalloc:dirty_decay_ms=0:narenas=1", 1, {"MALLOC_CONF=dirty_decay_ms:0,narenas:1"}},
        {"mimalloc:purge_delay=0:MIMALLOC_ARENA_EAGER_COMMIT=1", 2,
         {"MIMALLOC_PURGE_DELAY=0", "MIMALLOC_ARENA_EAGER_COMMIT=1"}},
        {"tcmalloc:release_rate=10", 1, {"TCMALLOC_RELEASE_RATE=10"}},
        {"glibc:M_MMAP_THRESHOLD=0x10000", 1, {"GLIBC_TUNABLES=glibc.malloc.mmap_threshold=0x10000"}},
    };
    /* the names, whatever this machine's libraries take (next test) */
    setenv("MEMSIM_ALLOCATOR_DIRS", "/nonexistent", 1);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        catalog_spec_t s;
        char err[256], buf[1024];
        const char *env[CATALOG_MAX_ENV];
        ck_assert_int_eq(catalog_parse_spec(cases[i].spec, &s, err, sizeof err), 0);
        ck_assert_uint_eq(catalog_env(&s, buf, sizeof buf, env), cases[i].n);
        for (size_t k = 0; k < cases[i].n; k++) {
            ck_assert_str_eq(env[k], cases[i].env[k]);
            ck_assert(catalog_env_is_setting(env[k]));
        }
    }
    unsetenv("MEMSIM_ALLOCATOR_DIRS");
    ck_assert(!catalog_env_is_setting("PATH=/bin"));
    ck_assert(catalog_env_is_setting("LD_PRELOAD=/x.so"));
}
END_TEST

/* A setting the installed library does not name is refused: the
 * allocator would ignore it, and its row would be the allocator's own
 * under another name (mimalloc 2.0, Debian's, has no purge_delay). */
static void put_file(const char *dir, const char *name, const char *bytes, size_t n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(bytes, 1, n, f), n);
    fclose(f);
}

START_TEST(settings_checked_against_library)
{
    char dir[] = "/tmp/memsim-catalog.XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    static const char mi[] = "\0segment_decommit_delay\0reset_delay\0eager_commit\0";
    static const char je[] = "\0opt.narenas\0dirty_decay_ms\0";
    static const char tc[] = "\0TCMALLOC_RELEASE_RATE\0";
    put_file(dir, "libmimalloc.so.2", mi, sizeof mi);
    put_file(dir, "libjemalloc.so.2", je, sizeof je);
    put_file(dir, "libtcmalloc_minimal.so.4", tc, sizeof tc);
    setenv("MEMSIM_ALLOCATOR_DIRS", dir, 1);
    static const char *const good[] = {
        "mimalloc:reset_delay=0", "mimalloc:MIMALLOC_EAGER_COMMIT=0",
        "mimalloc:decommit_delay=0", /* the tail of segment_decommit_delay, as linkers merge */
        "jemalloc:narenas=1:dirty_decay_ms=0", "tcmalloc:release_rate=10",
        "tcmalloc:TCMALLOC_RELEASE_RATE=1", "mimalloc", "jemalloc"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        catalog_spec_t s;
        char err[512] = "";
        ck_assert_msg(!catalog_parse_spec(good[i], &s, err, sizeof err), "%s: %s", good[i], err);
    }
    static const struct {
        const char *spec, *words;
    } bad[] = {
        {"mimalloc:purge_delay=0", "mimalloc has no setting \"purge_delay\" (its library "},
        {"mimalloc:MIMALLOC_BOGUS=1", "mimalloc has no setting \"bogus\""},
        {"jemalloc:nonsense=1", "jemalloc has no setting \"nonsense\""},
        {"jemalloc:narenas=1:dirty=0", "jemalloc has no setting \"dirty\""},
        {"tcmalloc:foo=bar", "tcmalloc has no setting \"TCMALLOC_FOO\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        catalog_spec_t s[CATALOG_MAX_SPECS];
        size_t n;
        char err[512] = "";
        ck_assert_int_eq(catalog_parse_list(bad[i].spec, s, CATALOG_MAX_SPECS, &n, err, sizeof err), -1);
        ck_assert_msg(strstr(err, bad[i].words), "%s: \"%s\"", bad[i].spec, err);
        ck_assert_msg(strstr(err, dir), "%s: the library's path: \"%s\"", bad[i].spec, err);
    }
    unsetenv("MEMSIM_ALLOCATOR_DIRS");
    const char *names[] = {"libmimalloc.so.2", "libjemalloc.so.2", "libtcmalloc_minimal.so.4"};
    for (size_t i = 0; i < 3; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}
END_TEST

START_TEST(libraries_and_programs)
{
    char path[4096], line[128];
    ck_assert(catalog_library(catalog_find("glibc"), path, sizeof path));
    ck_assert_str_eq(path, "");
    setenv("MEMSIM_ALLOCATOR_DIRS", "/nonexistent", 1);
    ck_assert(!catalog_library(catalog_find("jemalloc"), path, sizeof path));
    unsetenv("MEMSIM_ALLOCATOR_DIRS");
    ck_assert_str_eq(catalog_install_line(catalog_find("mimalloc"), line, sizeof line),
                     "apt-get install libmimalloc2.0");
    ck_assert_str_eq(catalog_from_library("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2")->name,
                     "jemalloc");
    ck_assert_str_eq(catalog_from_library("libtcmalloc_minimal.so.4")->name, "tcmalloc");
    ck_assert_ptr_null(catalog_from_library("/lib/libc.so.6"));
}
END_TEST

Suite *catalog_suite(void)
{
    Suite *s = suite_create("catalog");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, specs_parse);
    tcase_add_test(tc, bad_specs_say_why);
    tcase_add_test(tc, settings_become_environment);
    tcase_add_test(tc, settings_checked_against_library);
    tcase_add_test(tc, libraries_and_programs);
    suite_add_tcase(s, tc);
    return s;
}
