/*
 * untraced: why a command left no trace, from its file: a static ELF (no
 * PT_INTERP), a setuid one, a script whose interpreter is static; a
 * dynamic program or a plain file is no reason of its own.
 */
#include <check.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/untraced.h"
#include "tests/unit/suites.h"

static char dir[PATH_MAX / 2];

static void setup(void)
{
    snprintf(dir, sizeof dir, "%s/memsim-untraced.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* dir/name: a 64-bit ELF whose one program header has type pt, mode 0755. */
static const char *elf(const char *name, uint32_t pt, char *path)
{
    snprintf(path, PATH_MAX, "%s/%s", dir, name);
    Elf64_Ehdr h = {.e_phoff = sizeof h, .e_phnum = 1, .e_phentsize = sizeof(Elf64_Phdr)};
    memcpy(h.e_ident, ELFMAG, SELFMAG);
    h.e_ident[EI_CLASS] = ELFCLASS64;
    Elf64_Phdr ph = {.p_type = pt};
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fwrite(&h, sizeof h, 1, f);
    fwrite(&ph, sizeof ph, 1, f);
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_int_eq(chmod(path, 0755), 0);
    return path;
}

static const char *script(const char *name, const char *interp, char *path)
{
    snprintf(path, PATH_MAX, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "#! %s -x\necho hi\n", interp);
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_int_eq(chmod(path, 0755), 0);
    return path;
}

START_TEST(static_elf)
{
    char path[PATH_MAX], why[3 * PATH_MAX], want[2 * PATH_MAX];
    elf("st", PT_LOAD, path);
    ck_assert_int_eq(untraced_reason(path, why, sizeof why), 0);
    snprintf(want, sizeof want, "%s is statically linked: no dynamic loader runs in it, so "
                                "LD_PRELOAD cannot bring libmemsim.so in", path);
    ck_assert_str_eq(why, want);
}
END_TEST

START_TEST(dynamic_elf)
{
    char path[PATH_MAX], why[3 * PATH_MAX];
    elf("dyn", PT_INTERP, path);
    ck_assert_int_eq(untraced_reason(path, why, sizeof why), -1);
    ck_assert_int_eq(untraced_reason("/bin/sh", why, sizeof why), -1);
}
END_TEST

START_TEST(script_of_a_static_interpreter)
{
    char interp[PATH_MAX], path[PATH_MAX], why[3 * PATH_MAX];
    elf("st", PT_LOAD, interp);
    script("s", interp, path);
    ck_assert_int_eq(untraced_reason(path, why, sizeof why), 0);
    ck_assert_ptr_nonnull(strstr(why, "/st is statically linked"));
    char dyn[PATH_MAX];
    elf("dyn", PT_INTERP, dyn);
    script("s2", dyn, path);
    ck_assert_int_eq(untraced_reason(path, why, sizeof why), -1);
}
END_TEST

START_TEST(found_on_path)
{
    char path[PATH_MAX], why[3 * PATH_MAX];
    elf("st", PT_LOAD, path);
    char *old = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
    char p[PATH_MAX + 16];
    snprintf(p, sizeof p, "/nonexistent:%s", dir);
    setenv("PATH", p, 1);
    int rc = untraced_reason("st", why, sizeof why);
    int missing = untraced_reason("no-such-program", why + PATH_MAX, sizeof why - PATH_MAX);
    if (old)
        setenv("PATH", old, 1);
    free(old);
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(strncmp(why, path, strlen(path)), 0);
    ck_assert_int_eq(missing, -1);
}
END_TEST

START_TEST(plain_file)
{
    char path[PATH_MAX], why[3 * PATH_MAX];
    snprintf(path, sizeof path, "%s/text", dir);
    FILE *f = fopen(path, "w");
    fputs("not a program\n", f);
    fclose(f);
    chmod(path, 0755);
    ck_assert_int_eq(untraced_reason(path, why, sizeof why), -1);
}
END_TEST

START_TEST(setuid_file)
{
    char path[PATH_MAX], why[3 * PATH_MAX], want[2 * PATH_MAX];
    elf("su", PT_INTERP, path);
    uid_t other = geteuid() == 0 ? 65534 : 0;
    if (chown(path, other, (gid_t)-1) != 0)
        return; /* not root: cannot give the file to another user */
    ck_assert_int_eq(chmod(path, 04755), 0);
    ck_assert_int_eq(untraced_reason(path, why, sizeof why), 0);
    snprintf(want, sizeof want, "%s is setuid: the dynamic loader ignores LD_PRELOAD for it "
                                "(secure execution)", path);
    ck_assert_str_eq(why, want);
}
END_TEST

Suite *untraced_suite(void)
{
    Suite *s = suite_create("untraced");
    TCase *tc = tcase_create("reason");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, static_elf);
    tcase_add_test(tc, dynamic_elf);
    tcase_add_test(tc, script_of_a_static_interpreter);
    tcase_add_test(tc, found_on_path);
    tcase_add_test(tc, plain_file);
    tcase_add_test(tc, setuid_file);
    suite_add_tcase(s, tc);
    return s;
}
