/* opts: a table drives getopt_long and --help's options block. */
#include <check.h>
#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/run_opts.h"
#include "lib/opts.h"
#include "tests/unit/suites.h"

typedef struct t_opts_s {
    bool flag, on;
    const char *text, *maybe;
    bool maybe_seen;
    uint64_t count, size;
    double real;
} t_opts_t;

static int set_maybe(void *v, const opts_opt_t *opt, const char *arg)
{
    t_opts_t *o = v;
    (void)opt;
    o->maybe_seen = true;
    o->maybe = arg;
    return 0;
}

static void fill(char *buf, size_t len, const char *fmt) { snprintf(buf, len, fmt, 42); }

#define AT(field) offsetof(t_opts_t, field)
static const opts_opt_t t_options[] = {
    {"flag", 'f', OPTS_NO_ARG, NULL, OPTS_SET, AT(flag), .help = "a flag"},
    {"off", 0, OPTS_NO_ARG, NULL, OPTS_CLEAR, AT(on), .help = "clears on\nsecond line"},
    {"text", 't', OPTS_ARG, "TEXT", OPTS_TEXT, AT(text), .help = "some text"},
    {"count", 'n', OPTS_ARG, "N", OPTS_COUNT, AT(count), .min = 2, .help = "a count"},
    {"size", 0, OPTS_ARG, "SIZE", OPTS_SIZE, AT(size), .min = 0, .help = "a size"},
    {"real", 0, OPTS_ARG, "R", OPTS_REAL, AT(real), .lo = 0.0, .hi = 1.0,
     .format = fill, .help = "a real, %d"},
    {"a-rather-long-name", 0, OPTS_MAYBE_ARG, "[=X]", .call = set_maybe, .help = "below"},
};
#undef AT

static const opts_cmd_t t_cmd = {"t", false, 20, t_options, sizeof t_options / sizeof *t_options};
static const opts_cmd_t t_in_order = {"t", true, 20, t_options,
                                      sizeof t_options / sizeof *t_options};

/* Parse the words (NULL-terminated) after "t"; opts_parse's result. */
static int parse(const opts_cmd_t *c, t_opts_t *o, const char *const *words)
{
    static char buf[16][64];
    char *argv[17];
    int argc = 0;
    argv[argc++] = strcpy(buf[0], "t");
    for (; words[argc - 1]; argc++)
        argv[argc] = strcpy(buf[argc], words[argc - 1]);
    argv[argc] = NULL;
    *o = (t_opts_t){.on = true};
    optind = 0;
    int rc = opts_parse(c, argc, argv, o);
    return rc;
}

START_TEST(parse_by_kind)
{
    t_opts_t o;
    const char *const w[] = {"-f", "--off", "-t", "hello", "--count=7", "--size", "4K",
                             "--real", "0.25", "--a-rather", "x", NULL};
    ck_assert_int_eq(parse(&t_cmd, &o, w), 0);
    ck_assert(o.flag);
    ck_assert(!o.on);
    ck_assert_str_eq(o.text, "hello");
    ck_assert_uint_eq(o.count, 7);
    ck_assert_uint_eq(o.size, 4096);
    ck_assert(o.real == 0.25);
    ck_assert(o.maybe_seen);
    ck_assert_ptr_null(o.maybe); /* an optional value only with '=' */
    ck_assert_int_eq(optind, 11); /* "x", the operand, permuted to the end */
}
END_TEST

START_TEST(parse_optional_value_and_order)
{
    t_opts_t o;
    const char *const w[] = {"--a-rather-long-name=v", "op", "-f", NULL};
    ck_assert_int_eq(parse(&t_cmd, &o, w), 0);
    ck_assert_str_eq(o.maybe, "v");
    ck_assert(o.flag); /* permuted past the operand */
    ck_assert_int_eq(parse(&t_in_order, &o, w), 0);
    ck_assert(!o.flag); /* in order: options end at "op" */
    ck_assert_int_eq(optind, 2);
}
END_TEST

START_TEST(parse_refuses)
{
    t_opts_t o;
    static const char *const bad[][3] = {
        {"--count", "1", NULL},    /* below min */
        {"--count", NULL, NULL},   /* a value missing */
        {"-n", NULL, NULL},
        {"--real", "2", NULL},     /* out of range */
        {"--size", "12X", NULL},
        {"--bogus", NULL, NULL},
        {"-x", NULL, NULL},
        {"--flag=1", NULL, NULL},  /* no value taken */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(parse(&t_cmd, &o, bad[i]) == -1, "%s accepted", bad[i][0]);
}
END_TEST

START_TEST(help_block)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(f);
    opts_help(f, &t_cmd);
    fclose(f);
    ck_assert_str_eq(text, "  -f, --flag        a flag\n"
                           "      --off         clears on\n"
                           "                    second line\n"
                           "  -t, --text TEXT   some text\n"
                           "  -n, --count N     a count\n"
                           "      --size SIZE   a size\n"
                           "      --real R      a real, 42\n"
                           "      --a-rather-long-name[=X]\n"
                           "                    below\n");
    free(text);
}
END_TEST

/* memsim run: the options a comparison's runs get too are each in pass
 * once, with their last value, however often they are given (pass has
 * room for each once: repeating them wrote past it). */
START_TEST(run_pass_repeated)
{
    char *argv[40];
    int argc = 0;
    argv[argc++] = "run";
    for (int i = 0; i < 8; i++) {
        argv[argc++] = "--no-compress";
        argv[argc++] = "--wall-s";
        argv[argc++] = i == 7 ? "7" : "5";
    }
    argv[argc++] = "--sample-ms";
    argv[argc++] = "20";
    argv[argc++] = "--";
    argv[argc++] = "true";
    argv[argc] = NULL;
    run_opts_t o;
    memset(&o, 0, sizeof o);
    optind = 0;
    ck_assert_int_eq(run_opts_parse(argc, argv, &o), 0);
    ck_assert_uint_eq(o.npass, 5);
    ck_assert_str_eq(o.pass[0], "--no-compress");
    ck_assert_str_eq(o.pass[1], "--wall-s");
    ck_assert_str_eq(o.pass[2], "7");
    ck_assert_str_eq(o.pass[3], "--sample-ms");
    ck_assert_str_eq(o.pass[4], "20");
}
END_TEST

/* run_opts_parse on the words after "run" (NULL-terminated). */
static int run_parse(run_opts_t *o, const char *const *words)
{
    char *argv[16];
    int argc = 0;
    argv[argc++] = "run";
    while (*words)
        argv[argc++] = (char *)*words++;
    argv[argc] = NULL;
    memset(o, 0, sizeof *o);
    optind = 0;
    return run_opts_parse(argc, argv, o);
}

/* --exe: the executable a comparison compares; only with
 * --compare-allocators, and not empty (one line each, not checked here). */
START_TEST(run_compare_exe)
{
    run_opts_t o;
    ck_assert_int_eq(run_parse(&o, (const char *const[]){"--compare-allocators", "--exe", "cc1",
                                                         "gcc", "-c", "x.c", NULL}),
                     0);
    ck_assert_str_eq(o.compare_exe, "cc1");
    ck_assert(o.compare);
    ck_assert_int_eq(run_parse(&o, (const char *const[]){"--compare-allocators", "gcc", NULL}), 0);
    ck_assert_ptr_null(o.compare_exe);
    ck_assert_int_eq(run_parse(&o, (const char *const[]){"--exe", "cc1", "gcc", NULL}), -1);
    ck_assert_int_eq(run_parse(&o, (const char *const[]){"--compare-allocators", "--exe", "",
                                                         "gcc", NULL}),
                     -1);
}
END_TEST

Suite *opts_suite(void)
{
    Suite *s = suite_create("opts");
    TCase *tc = tcase_create("opts");
    tcase_add_test(tc, parse_by_kind);
    tcase_add_test(tc, parse_optional_value_and_order);
    tcase_add_test(tc, parse_refuses);
    tcase_add_test(tc, help_block);
    tcase_add_test(tc, run_pass_repeated);
    tcase_add_test(tc, run_compare_exe);
    suite_add_tcase(s, tc);
    return s;
}
