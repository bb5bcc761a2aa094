/* config: memsim's environment variables, read through a fake getenv. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/strategy.h"
#include "ipc/config.h"
#include "tests/unit/helpers.h"
#include "tests/unit/suites.h"

/* ---------------------------------------------------------------------
 * A fake environment: a small table that fake_get reads
 * ------------------------------------------------------------------- */

static struct {
    const char *name, *value;
} env[16];
static size_t nenv;

static void env_clear(void) { nenv = 0; }

static void env_set(const char *name, const char *value)
{
    for (size_t i = 0; i < nenv; i++) {
        if (strcmp(env[i].name, name) == 0) {
            env[i].value = value;
            return;
        }
    }
    ck_assert_uint_lt(nenv, sizeof env / sizeof env[0]);
    env[nenv].name = name;
    env[nenv++].value = value;
}

static const char *fake_get(const char *name)
{
    for (size_t i = 0; i < nenv; i++)
        if (strcmp(env[i].name, name) == 0)
            return env[i].value;
    return NULL;
}

static config_t cfg;
static char err[256];

/* The defaults, as config_defaults computes them and config.h documents. */
static uint64_t physical_memory(void)
{
    return (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
}

static void assert_defaults(const config_t *c)
{
    ck_assert_str_eq(c->output, ".");
    ck_assert(!c->output_is_pattern);
    ck_assert_str_eq(c->strategy, "none"); /* the live shadow device is opt-in */
    ck_assert_uint_eq(c->device_size, physical_memory());
    ck_assert_uint_eq(c->stack_depth, 64);
    ck_assert_uint_eq(c->sample_ms, 100);
    ck_assert(c->trace_children);
    ck_assert(c->mmap);
}

/* Load the fake environment; it must be accepted. */
static const config_t *load_ok(void)
{
    memset(err, 'x', sizeof err);
    int rc = config_load(&cfg, fake_get, err, sizeof err);
    ck_assert_msg(rc == 0, "refused: %s", err);
    ck_assert_str_eq(err, "");
    return &cfg;
}

/* Load with name=value alone in the environment; it must be refused
 * with one line naming the variable, and leave the defaults. */
static const char *load_fails(const char *name, const char *value)
{
    env_clear();
    env_set(name, value);
    int rc = config_load(&cfg, fake_get, err, sizeof err);
    ck_assert_msg(rc == -1, "%s=\"%s\" accepted", name, value);
    ck_assert_uint_lt(strlen(err), sizeof err);
    ck_assert_msg(strncmp(err, "memsim: ", 8) == 0, "%s", err);
    ck_assert_msg(strstr(err, name) != NULL, "%s", err);
    ck_assert_msg(strchr(err, '\n') == NULL, "%s", err);
    size_t n = strlen(err), t = strlen("; tracing is off");
    ck_assert_msg(n > t && strcmp(err + n - t, "; tracing is off") == 0, "%s", err);
    bool plain = strlen(value) < 64;
    for (const char *v = value; *v; v++)
        plain &= (unsigned char)*v >= 0x20 && *v != 0x7F;
    if (plain) {
        char quoted[96];
        snprintf(quoted, sizeof quoted, "=\"%s\" is not ", value);
        ck_assert_msg(strstr(err, quoted) != NULL, "%s", err);
    }
    assert_defaults(&cfg);
    return err;
}

static void setup(void) { env_clear(); }

/* ---------------------------------------------------------------------
 * Defaults and valid values
 * ------------------------------------------------------------------- */

START_TEST(defaults_when_nothing_is_set)
{
    memset(&cfg, 0x5A, sizeof cfg);
    assert_defaults(load_ok());
    config_t d;
    config_defaults(&d);
    assert_defaults(&d);
    /* Unrelated variables change nothing. */
    env_set("MEMSIM_OUTPUTS", "");
    env_set("memsim_stack_depth", "abc");
    assert_defaults(load_ok());
}
END_TEST

START_TEST(load_reads_the_real_environment_with_null_get)
{
    unsetenv("MEMSIM_OUTPUT");
    unsetenv("MEMSIM_STRATEGY");
    unsetenv("MEMSIM_DEVICE_SIZE");
    unsetenv("MEMSIM_SAMPLE_MS");
    unsetenv("MEMSIM_TRACE_CHILDREN");
    unsetenv("MEMSIM_MMAP");
    setenv("MEMSIM_STACK_DEPTH", "12", 1);
    ck_assert_int_eq(config_load(&cfg, NULL, err, sizeof err), 0);
    ck_assert_uint_eq(cfg.stack_depth, 12);
    setenv("MEMSIM_STACK_DEPTH", "x", 1);
    ck_assert_int_eq(config_load(&cfg, NULL, err, sizeof err), -1);
    ck_assert_str_eq(err, "memsim: MEMSIM_STACK_DEPTH=\"x\" is not a whole number from 0 to 256; "
                          "tracing is off");
    unsetenv("MEMSIM_STACK_DEPTH");
}
END_TEST

START_TEST(output_directory_or_pattern)
{
    static const struct {
        const char *value;
        bool pattern;
    } ok[] = {
        {"/tmp/traces", false},     {"/tmp/traces/", false}, {"rel dir", false},
        {"/", false},               {"t.%p.jsonl", true},    {"%e-%p-%n", true},
        {"/tmp/100%%", true},       {"%%", true},            {"/tmp/%p%p%e%e%n%n", true},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        env_set("MEMSIM_OUTPUT", ok[i].value);
        load_ok();
        ck_assert_str_eq(cfg.output, ok[i].value);
        ck_assert_msg(cfg.output_is_pattern == ok[i].pattern, "%s", ok[i].value);
    }
    /* The longest accepted: PATH_MAX - 1 bytes. */
    static char longest[PATH_MAX];
    memset(longest, 'd', sizeof longest - 1);
    longest[sizeof longest - 1] = '\0';
    env_set("MEMSIM_OUTPUT", longest);
    ck_assert_str_eq(load_ok()->output, longest);
}
END_TEST

START_TEST(strategy_every_core_name_and_none)
{
    for (size_t i = 0; i < strategy_count(); i++) {
        env_set("MEMSIM_STRATEGY", strategy_at(i)->name);
        ck_assert_str_eq(load_ok()->strategy, strategy_at(i)->name);
    }
    static const char *const names[] = {"first-fit", "best-fit", "worst-fit",
                                        "next-fit",  "buddy",    "caching"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        env_set("MEMSIM_STRATEGY", names[i]);
        ck_assert_str_eq(load_ok()->strategy, names[i]);
    }
    env_set("MEMSIM_STRATEGY", "none");
    ck_assert_str_eq(load_ok()->strategy, CONFIG_STRATEGY_NONE);
}
END_TEST

START_TEST(device_size_forms)
{
    static const struct {
        const char *value;
        uint64_t bytes;
    } ok[] = {
        {"4096", 4096},         {"4K", 4096},           {"64KiB", 64 * KiB},
        {"512M", 512 * MiB},    {"2G", 2 * GiB},        {"2gib", 2 * GiB},
        {"1T", 1024 * GiB},     {"8192B", 8192},        {"004096", 4096},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        env_set("MEMSIM_DEVICE_SIZE", ok[i].value);
        ck_assert_uint_eq(load_ok()->device_size, ok[i].bytes);
    }
}
END_TEST

START_TEST(stack_depth_and_sample_ms_bounds)
{
    static const struct {
        const char *value;
        unsigned n;
    } depth[] = {{"0", 0}, {"1", 1}, {"64", 64}, {"255", 255}, {"256", 256}, {"007", 7}};
    for (size_t i = 0; i < sizeof depth / sizeof depth[0]; i++) {
        env_set("MEMSIM_STACK_DEPTH", depth[i].value);
        ck_assert_uint_eq(load_ok()->stack_depth, depth[i].n);
    }
    static const struct {
        const char *value;
        unsigned n;
    } ms[] = {{"1", 1}, {"100", 100}, {"3599999", 3599999}, {"3600000", 3600000}, {"01", 1}};
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
        env_set("MEMSIM_SAMPLE_MS", ms[i].value);
        ck_assert_uint_eq(load_ok()->sample_ms, ms[i].n);
    }
}
END_TEST

START_TEST(booleans_in_every_spelling)
{
    static const char *const no[] = {"0", "no", "No", "NO", "false", "False", "FALSE",
                                     "off", "Off", "OFF", "fAlSe"};
    static const char *const yes[] = {"1", "yes", "Yes", "YES", "true", "True", "TRUE",
                                      "on", "On", "ON", "oN"};
    static const char *const vars[] = {"MEMSIM_TRACE_CHILDREN", "MEMSIM_MMAP"};
    for (size_t v = 0; v < 2; v++) {
        env_clear();
        for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
            env_set(vars[v], no[i]);
            load_ok();
            ck_assert_msg(!(v ? cfg.mmap : cfg.trace_children), "%s=%s", vars[v], no[i]);
            ck_assert_msg(v ? cfg.trace_children : cfg.mmap, "the other changed");
            env_set(vars[v], yes[i]);
            load_ok();
            ck_assert_msg(v ? cfg.mmap : cfg.trace_children, "%s=%s", vars[v], yes[i]);
        }
    }
}
END_TEST

START_TEST(everything_set_at_once)
{
    env_set("MEMSIM_OUTPUT", "/var/tmp/%e.%p.%n.jsonl");
    env_set("MEMSIM_STRATEGY", "buddy");
    env_set("MEMSIM_DEVICE_SIZE", "512M");
    env_set("MEMSIM_STACK_DEPTH", "0");
    env_set("MEMSIM_SAMPLE_MS", "3600000");
    env_set("MEMSIM_TRACE_CHILDREN", "no");
    env_set("MEMSIM_MMAP", "off");
    const config_t *c = load_ok();
    ck_assert_str_eq(c->output, "/var/tmp/%e.%p.%n.jsonl");
    ck_assert(c->output_is_pattern);
    ck_assert_str_eq(c->strategy, "buddy");
    ck_assert_uint_eq(c->device_size, 512 * MiB);
    ck_assert_uint_eq(c->stack_depth, 0);
    ck_assert_uint_eq(c->sample_ms, 3600000);
    ck_assert(!c->trace_children);
    ck_assert(!c->mmap);
}
END_TEST

/* ---------------------------------------------------------------------
 * Invalid values
 * ------------------------------------------------------------------- */

#define OUTPUT_WHAT                                                                                \
    "is not a directory or a file pattern with %p (pid), %e (executable), %n (counter), "          \
    "%% (a literal %)"

START_TEST(output_refused)
{
    ck_assert_str_eq(load_fails("MEMSIM_OUTPUT", ""),
                     "memsim: MEMSIM_OUTPUT=\"\" " OUTPUT_WHAT "; tracing is off");
    ck_assert_str_eq(load_fails("MEMSIM_OUTPUT", "t.%x"),
                     "memsim: MEMSIM_OUTPUT=\"t.%x\" " OUTPUT_WHAT
                     ": \"%x\" is unknown; tracing is off");
    ck_assert_str_eq(load_fails("MEMSIM_OUTPUT", "t.%"),
                     "memsim: MEMSIM_OUTPUT=\"t.%\" " OUTPUT_WHAT
                     ": a lone \"%\" at the end; tracing is off");
    static const char *const bad[] = {"%", "%%%", "%P", "%d", "%s.jsonl", "a%%%x", "%\x01",
                                      "%\xc3\xa9", "/tmp/% p"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        load_fails("MEMSIM_OUTPUT", bad[i]);
    ck_assert_msg(strstr(load_fails("MEMSIM_OUTPUT", "%\x01"), "\"%?\" is unknown"), "%s", err);

    /* PATH_MAX bytes: one too many. */
    static char too_long[PATH_MAX + 1];
    memset(too_long, 'd', sizeof too_long - 1);
    too_long[sizeof too_long - 1] = '\0';
    ck_assert_msg(strstr(load_fails("MEMSIM_OUTPUT", too_long), "is not a path shorter than"),
                  "%s", err);
}
END_TEST

START_TEST(strategy_refused)
{
    ck_assert_str_eq(load_fails("MEMSIM_STRATEGY", "fastest"),
                     "memsim: MEMSIM_STRATEGY=\"fastest\" is not a strategy (none, first-fit, "
                     "best-fit, worst-fit, next-fit, buddy, caching); tracing is off");
    static const char *const bad[] = {"",          "Best-Fit", "best-fit ", " best-fit", "NONE",
                                      "best_fit",  "bestfit",  "none,buddy",
                                      "first-fit-first-fit-first-fit-first-fit"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        load_fails("MEMSIM_STRATEGY", bad[i]);
}
END_TEST

START_TEST(device_size_refused)
{
    ck_assert_str_eq(load_fails("MEMSIM_DEVICE_SIZE", "4095"),
                     "memsim: MEMSIM_DEVICE_SIZE=\"4095\" is not a size of at least 4096 bytes "
                     "(4096, 64KiB, 512M, 2G); tracing is off");
    static const char *const bad[] = {"",     "0",   "1K",  "3K",   "2X",    "-1",   " 4096",
                                      "4096 ", "1.5G", "0x1000", "G",  "2GG",
                                      "99999999999999999999", "16384P"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        load_fails("MEMSIM_DEVICE_SIZE", bad[i]);
}
END_TEST

START_TEST(whole_numbers_refused)
{
    ck_assert_str_eq(load_fails("MEMSIM_STACK_DEPTH", "abc"),
                     "memsim: MEMSIM_STACK_DEPTH=\"abc\" is not a whole number from 0 to 256; "
                     "tracing is off");
    ck_assert_str_eq(load_fails("MEMSIM_SAMPLE_MS", "0"),
                     "memsim: MEMSIM_SAMPLE_MS=\"0\" is not a whole number from 1 to 3600000; "
                     "tracing is off");
    static const char *const bad[] = {"",      "257",   "-1",  "+1",   " 1",   "1 ",
                                      "0x10",  "1e2",   "1.0", "١",    "99999999999999999999999",
                                      "4294967296", "18446744073709551617"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        load_fails("MEMSIM_STACK_DEPTH", bad[i]);
    static const char *const bad_ms[] = {"", "0", "3600001", "-5", "100ms", "1 000",
                                         "4294967396", "18446744073709551716"};
    for (size_t i = 0; i < sizeof bad_ms / sizeof bad_ms[0]; i++)
        load_fails("MEMSIM_SAMPLE_MS", bad_ms[i]);
}
END_TEST

START_TEST(booleans_refused)
{
    ck_assert_str_eq(load_fails("MEMSIM_MMAP", "maybe"),
                     "memsim: MEMSIM_MMAP=\"maybe\" is not a boolean (0/1, no/yes, false/true, "
                     "off/on); tracing is off");
    static const char *const bad[] = {"", "2", "01", "y", "n", "yep", "enable", " 1", "1 ",
                                      "truee", "of", "onn", "-1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        load_fails("MEMSIM_TRACE_CHILDREN", bad[i]);
        load_fails("MEMSIM_MMAP", bad[i]);
    }
}
END_TEST

/* The order of the checks: OUTPUT, STRATEGY, DEVICE_SIZE, STACK_DEPTH,
 * SAMPLE_MS, TRACE_CHILDREN, MMAP.  All invalid, then fixed one by one. */
START_TEST(first_invalid_variable_wins)
{
    static const struct {
        const char *name, *bad, *good;
    } vars[] = {
        {"MEMSIM_OUTPUT", "%x", "/tmp"},       {"MEMSIM_STRATEGY", "fastest", "none"},
        {"MEMSIM_DEVICE_SIZE", "1", "2G"},     {"MEMSIM_STACK_DEPTH", "999", "8"},
        {"MEMSIM_SAMPLE_MS", "0", "50"},       {"MEMSIM_TRACE_CHILDREN", "2", "no"},
        {"MEMSIM_MMAP", "2", "no"},
    };
    size_t n = sizeof vars / sizeof vars[0];
    /* Set in reverse so table order cannot be what decides. */
    for (size_t i = n; i-- > 0;)
        env_set(vars[i].name, vars[i].bad);
    for (size_t i = 0; i < n; i++) {
        ck_assert_int_eq(config_load(&cfg, fake_get, err, sizeof err), -1);
        char head[64];
        snprintf(head, sizeof head, "memsim: %s=\"%s\" ", vars[i].name, vars[i].bad);
        ck_assert_msg(strncmp(err, head, strlen(head)) == 0, "want %s..., got %s", head, err);
        assert_defaults(&cfg);
        env_set(vars[i].name, vars[i].good);
    }
    const config_t *c = load_ok();
    ck_assert_str_eq(c->output, "/tmp");
    ck_assert_str_eq(c->strategy, "none");
    ck_assert_uint_eq(c->device_size, 2 * GiB);
    ck_assert_uint_eq(c->stack_depth, 8);
    ck_assert_uint_eq(c->sample_ms, 50);
    ck_assert(!c->trace_children && !c->mmap);
}
END_TEST

/* ---------------------------------------------------------------------
 * Messages: truncation, control characters, small buffers
 * ------------------------------------------------------------------- */

START_TEST(long_value_is_cut_with_dots)
{
    static char big[10000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    const char *m = load_fails("MEMSIM_STACK_DEPTH", big);
    ck_assert_uint_eq(strlen(m), sizeof err - 1); /* uses the room it has */
    ck_assert_msg(strncmp(m, "memsim: MEMSIM_STACK_DEPTH=\"xxxxxxxx", 36) == 0, "%s", m);
    ck_assert_msg(strstr(m, "xxx...\" is not a whole number from 0 to 256; tracing is off"),
                  "%s", m);

    /* Exactly: room for 10 bytes of value, so 7 of them and "...". */
    static const char want[] =
        "memsim: MEMSIM_STACK_DEPTH=\"xxxxxxx...\" is not a whole number from 0 to 256; "
        "tracing is off";
    char small[sizeof want + 8];
    memset(small, '#', sizeof small);
    env_clear();
    env_set("MEMSIM_STACK_DEPTH", big);
    ck_assert_int_eq(config_load(&cfg, fake_get, small, sizeof want), -1);
    ck_assert_str_eq(small, want);
    for (size_t i = sizeof want; i < sizeof small; i++)
        ck_assert_int_eq(small[i], '#');

    /* A value that just fits is shown whole. */
    env_set("MEMSIM_STACK_DEPTH", "xxxxxxxxxx");
    ck_assert_int_eq(config_load(&cfg, fake_get, small, sizeof want), -1);
    ck_assert_str_eq(small, "memsim: MEMSIM_STACK_DEPTH=\"xxxxxxxxxx\" is not a whole number "
                            "from 0 to 256; tracing is off");
    /* One more byte and it is cut. */
    env_set("MEMSIM_STACK_DEPTH", "xxxxxxxxxxy");
    ck_assert_int_eq(config_load(&cfg, fake_get, small, sizeof want), -1);
    ck_assert_str_eq(small, want);
}
END_TEST

START_TEST(cut_keeps_utf8_whole)
{
    /* "é" is 2 bytes; 7 bytes of room would split the 4th one. */
    static const char want[] =
        "memsim: MEMSIM_STACK_DEPTH=\"\xc3\xa9\xc3\xa9\xc3\xa9...\" is not a whole number "
        "from 0 to 256; tracing is off";
    char small[sizeof want + 1];
    env_set("MEMSIM_STACK_DEPTH", "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
    ck_assert_int_eq(config_load(&cfg, fake_get, small, sizeof small), -1);
    ck_assert_str_eq(small, want);
}
END_TEST

START_TEST(control_characters_do_not_break_the_line)
{
    const char *m = load_fails("MEMSIM_STRATEGY", "best\nfit\r\t\x7f");
    ck_assert_msg(strstr(m, "MEMSIM_STRATEGY=\"best?fit???\" is not a strategy"), "%s", m);
    m = load_fails("MEMSIM_OUTPUT", "/tmp/\n%q");
    ck_assert_msg(strstr(m, "MEMSIM_OUTPUT=\"/tmp/?%q\""), "%s", m);
}
END_TEST

START_TEST(tiny_error_buffers_do_not_overflow)
{
    env_set("MEMSIM_SAMPLE_MS", "bad");
    for (size_t len = 1; len < 40; len++) {
        char buf[48];
        memset(buf, '#', sizeof buf);
        ck_assert_int_eq(config_load(&cfg, fake_get, buf, len), -1);
        ck_assert_uint_eq(strlen(buf), len - 1);
        /* The value gives way first ("..."), then the line is cut. */
        static const char head[] = "memsim: MEMSIM_SAMPLE_MS=\"";
        size_t n = len - 1 < sizeof head - 1 ? len - 1 : sizeof head - 1;
        ck_assert_int_eq(strncmp(buf, head, n), 0);
        for (size_t i = len; i < sizeof buf; i++)
            ck_assert_int_eq(buf[i], '#');
    }
    ck_assert_int_eq(config_load(&cfg, fake_get, NULL, 0), -1);
    env_clear();
    ck_assert_int_eq(config_load(&cfg, fake_get, NULL, 0), 0);
}
END_TEST

/* ---------------------------------------------------------------------
 * Trace paths
 * ------------------------------------------------------------------- */

/* The path tests below are of plain traces; compressed_paths of the
 * default. */
static const config_t *with_output(const char *output)
{
    env_clear();
    env_set("MEMSIM_OUTPUT", output);
    env_set("MEMSIM_COMPRESS", "0");
    return load_ok();
}

static const config_t *with_output_compressed(const char *output)
{
    env_clear();
    env_set("MEMSIM_OUTPUT", output);
    return load_ok();
}

static const char *path(const config_t *c, const char *exe, unsigned counter)
{
    static char out[PATH_MAX];
    ck_assert_int_eq(config_trace_path(c, exe, 1234, counter, out, sizeof out), 0);
    return out;
}

START_TEST(sample_bytes_and_seed)
{
    ck_assert_int_eq(config_load(&cfg, fake_get, err, sizeof err), 0);
    ck_assert_uint_eq(cfg.sample_bytes, 0); /* every allocation, by default */
    ck_assert(!cfg.sample_seeded);
    static const struct {
        const char *v;
        uint64_t bytes;
    } ok[] = {{"0", 0}, {"1", 1}, {"524288", 524288}, {"512K", 524288}, {"512KiB", 524288},
              {"4M", 4u << 20}, {"1G", 1u << 30}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        env_set(CONFIG_ENV_SAMPLE_BYTES, ok[i].v);
        ck_assert_int_eq(config_load(&cfg, fake_get, err, sizeof err), 0);
        ck_assert_uint_eq(cfg.sample_bytes, ok[i].bytes);
    }
    env_set(CONFIG_ENV_SAMPLE_SEED, "4294967295");
    ck_assert_int_eq(config_load(&cfg, fake_get, err, sizeof err), 0);
    ck_assert(cfg.sample_seeded);
    ck_assert_uint_eq(cfg.sample_seed, 4294967295u);
}
END_TEST

START_TEST(sample_bytes_and_seed_refused)
{
    static const char *const bad[] = {"", "-1", "2G", "1025M", "512 K", "x", "0x100"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        env_clear();
        env_set(CONFIG_ENV_SAMPLE_BYTES, bad[i]);
        ck_assert_int_eq(config_load(&cfg, fake_get, err, sizeof err), -1);
        char want[160];
        snprintf(want, sizeof want, "memsim: MEMSIM_SAMPLE_BYTES=\"%s\" is not 0 or a size from 1 "
                 "byte to 1 GiB (524288, 512K, 4M); tracing is off", bad[i]);
        ck_assert_str_eq(err, want);
        assert_defaults(&cfg);
    }
    env_clear();
    env_set(CONFIG_ENV_SAMPLE_SEED, "4294967296");
    ck_assert_int_eq(config_load(&cfg, fake_get, err, sizeof err), -1);
    ck_assert_str_eq(err, "memsim: MEMSIM_SAMPLE_SEED=\"4294967296\" is not a whole number from 0 "
                          "to 4294967295; tracing is off");
}
END_TEST

START_TEST(directory_paths)
{
    const config_t *c = with_output("/tmp/traces");
    ck_assert_str_eq(path(c, "prog", 0), "/tmp/traces/memsim.prog.1234.0.jsonl");
    ck_assert_str_eq(path(c, "prog", 7), "/tmp/traces/memsim.prog.1234.7.jsonl");
    ck_assert_str_eq(path(c, "prog", 4294967295u), "/tmp/traces/memsim.prog.1234.4294967295.jsonl");
    c = with_output("/tmp/traces/");
    ck_assert_str_eq(path(c, "prog", 0), "/tmp/traces/memsim.prog.1234.0.jsonl");
    c = with_output("/");
    ck_assert_str_eq(path(c, "prog", 7), "/memsim.prog.1234.7.jsonl");
    env_clear();
    env_set("MEMSIM_COMPRESS", "0");
    c = load_ok();
    ck_assert_str_eq(path(c, "prog", 0), "./memsim.prog.1234.0.jsonl");

    char out[64];
    ck_assert_int_eq(config_trace_path(c, "p", -1, 0, out, sizeof out), 0);
    ck_assert_str_eq(out, "./memsim.p.-1.0.jsonl");
    ck_assert_int_eq(config_trace_path(c, "p", 2147483647L, 0, out, sizeof out), 0);
    ck_assert_str_eq(out, "./memsim.p.2147483647.0.jsonl");
}
END_TEST

START_TEST(exe_names_never_add_components)
{
    static const struct {
        const char *exe, *as;
    } names[] = {
        {"prog", "prog"},
        {"my prog", "my_prog"},
        {"a/b", "a_b"},
        {"../../etc/passwd", ".._.._etc_passwd"},
        {"caf\xc3\xa9", "caf__"},
        {"x+y-1.2_Z", "x+y-1.2_Z"},
        {"tab\there", "tab_here"},
        {"%p", "_p"},
        {".", "_"},
        {"..", "__"},
        {"...", "..."},
        {".hidden", ".hidden"},
        {"", "unknown"},
        {NULL, "unknown"},
    };
    static config_t dir, pat;
    dir = *with_output("/tmp/t");
    pat = *with_output("/tmp/%e/%e.%p.%n");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char want[128];
        snprintf(want, sizeof want, "/tmp/t/memsim.%s.1234.7.jsonl", names[i].as);
        ck_assert_str_eq(path(&dir, names[i].exe, 7), want);
        snprintf(want, sizeof want, "/tmp/%s/%s.1234.7", names[i].as, names[i].as);
        ck_assert_str_eq(path(&pat, names[i].exe, 7), want);
    }
}
END_TEST

START_TEST(pattern_paths)
{
    const config_t *c = with_output("/tmp/%e-%p-%n.jsonl");
    ck_assert_str_eq(path(c, "prog", 0), "/tmp/prog-1234-0.jsonl");
    ck_assert_str_eq(path(c, "prog", 7), "/tmp/prog-1234-7.jsonl");
    c = with_output("/tmp/100%%-%p");
    ck_assert_str_eq(path(c, "prog", 7), "/tmp/100%-1234");
    c = with_output("%%n%%p%%e%%%%");
    ck_assert_str_eq(path(c, "prog", 7), "%n%p%e%%");
    c = with_output("%p%p.%n%n");
    ck_assert_str_eq(path(c, "prog", 7), "12341234.77");
    c = with_output("/tmp/fixed.%%");
    ck_assert_str_eq(path(c, "prog", 7), "/tmp/fixed.%");
    c = with_output("/tmp/dir/"); /* a directory: no pattern, even with a file-like name */
    ck_assert_str_eq(path(c, "prog", 7), "/tmp/dir/memsim.prog.1234.7.jsonl");
}
END_TEST

START_TEST(compressed_paths)
{
    env_clear();
    const config_t *c = load_ok();
    ck_assert(c->compress);
    ck_assert_str_eq(path(c, "prog", 0), "./memsim.prog.1234.0.jsonl.zst");
    c = with_output_compressed("/tmp/traces/");
    ck_assert_str_eq(path(c, "prog", 3), "/tmp/traces/memsim.prog.1234.3.jsonl.zst");
    /* A pattern gets ".zst" after it, unless it ends so already. */
    c = with_output_compressed("/tmp/%e-%p.jsonl");
    ck_assert_str_eq(path(c, "prog", 0), "/tmp/prog-1234.jsonl.zst");
    c = with_output_compressed("/tmp/%e-%p.zst");
    ck_assert_str_eq(path(c, "prog", 0), "/tmp/prog-1234.zst");
    c = with_output_compressed("/tmp/%p");
    ck_assert_str_eq(path(c, "prog", 0), "/tmp/1234.zst");
}
END_TEST

/* For every len up to the exact size: -1, out "" and nothing past len. */
static void check_fit(const config_t *c, const char *want)
{
    size_t need = strlen(want) + 1;
    char buf[128];
    ck_assert_uint_lt(need + 8, sizeof buf);
    for (size_t len = 0; len <= need; len++) {
        memset(buf, '#', sizeof buf);
        int rc = config_trace_path(c, "prog", 1234, 7, buf, len);
        if (len < need) {
            ck_assert_msg(rc == -1, "len %zu accepted", len);
            if (len)
                ck_assert_str_eq(buf, "");
        } else {
            ck_assert_int_eq(rc, 0);
            ck_assert_str_eq(buf, want);
        }
        for (size_t i = len; i < sizeof buf; i++)
            REQUIRE(buf[i] == '#', "byte %zu written with len %zu", i, len);
    }
}

START_TEST(small_buffers_refused_without_overflow)
{
    check_fit(with_output("/tmp/t/"), "/tmp/t/memsim.prog.1234.7.jsonl");
    check_fit(with_output("/tmp/t"), "/tmp/t/memsim.prog.1234.7.jsonl");
    check_fit(with_output("/tmp/%e-%p-%n%%.jsonl"), "/tmp/prog-1234-7%.jsonl");
    check_fit(with_output_compressed("/tmp/t"), "/tmp/t/memsim.prog.1234.7.jsonl.zst");
    check_fit(with_output_compressed("/tmp/%e-%p-%n%%.jsonl"), "/tmp/prog-1234-7%.jsonl.zst");
}
END_TEST

START_TEST(expansion_longer_than_path_max_refused)
{
    /* PATH_MAX - 1 bytes is accepted by config_load; its expansion is not. */
    static char pat[PATH_MAX];
    memset(pat, 'd', sizeof pat - 1);
    pat[sizeof pat - 1] = '\0';
    memcpy(pat + sizeof pat - 3, "%p", 2);
    const config_t *c = with_output(pat);
    static char out[2 * PATH_MAX];
    ck_assert_int_eq(config_trace_path(c, "prog", 1234, 0, out, sizeof out), -1);
    ck_assert_str_eq(out, "");
    /* One that expands to exactly PATH_MAX - 1 bytes fits. */
    memcpy(pat + sizeof pat - 5, "%p", 3);
    c = with_output(pat);
    ck_assert_int_eq(config_trace_path(c, "prog", 1234, 0, out, sizeof out), 0);
    ck_assert_uint_eq(strlen(out), PATH_MAX - 1);
    /* A long directory: its file name does not fit. */
    memset(pat, 'd', sizeof pat - 1);
    pat[sizeof pat - 1] = '\0';
    c = with_output(pat);
    ck_assert_int_eq(config_trace_path(c, "prog", 1234, 0, out, sizeof out), -1);
}
END_TEST

START_TEST(counter_in_path)
{
    ck_assert(config_path_has_counter(with_output("/tmp/t")));
    env_clear();
    ck_assert(config_path_has_counter(load_ok()));
    ck_assert(config_path_has_counter(with_output("/tmp/%e.%n.jsonl")));
    ck_assert(config_path_has_counter(with_output("%n")));
    ck_assert(config_path_has_counter(with_output("%%%n")));
    ck_assert(!config_path_has_counter(with_output("/tmp/%e.%p.jsonl")));
    ck_assert(!config_path_has_counter(with_output("/tmp/%%n")));
    ck_assert(!config_path_has_counter(with_output("/tmp/n%%")));
}
END_TEST

Suite *config_suite(void)
{
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("config");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, defaults_when_nothing_is_set);
    tcase_add_test(tc, load_reads_the_real_environment_with_null_get);
    tcase_add_test(tc, output_directory_or_pattern);
    tcase_add_test(tc, strategy_every_core_name_and_none);
    tcase_add_test(tc, device_size_forms);
    tcase_add_test(tc, stack_depth_and_sample_ms_bounds);
    tcase_add_test(tc, booleans_in_every_spelling);
    tcase_add_test(tc, everything_set_at_once);
    tcase_add_test(tc, output_refused);
    tcase_add_test(tc, strategy_refused);
    tcase_add_test(tc, device_size_refused);
    tcase_add_test(tc, whole_numbers_refused);
    tcase_add_test(tc, booleans_refused);
    tcase_add_test(tc, first_invalid_variable_wins);
    tcase_add_test(tc, long_value_is_cut_with_dots);
    tcase_add_test(tc, cut_keeps_utf8_whole);
    tcase_add_test(tc, control_characters_do_not_break_the_line);
    tcase_add_test(tc, tiny_error_buffers_do_not_overflow);
    tcase_add_test(tc, sample_bytes_and_seed);
    tcase_add_test(tc, sample_bytes_and_seed_refused);
    tcase_add_test(tc, directory_paths);
    tcase_add_test(tc, exe_names_never_add_components);
    tcase_add_test(tc, pattern_paths);
    tcase_add_test(tc, compressed_paths);
    tcase_add_test(tc, small_buffers_refused_without_overflow);
    tcase_add_test(tc, expansion_longer_than_path_max_refused);
    tcase_add_test(tc, counter_in_path);
    suite_add_tcase(s, tc);
    return s;
}
