/*
 * opts: table-driven option parsing and --help's options block (see
 * opts.h).
 */
#include "lib/opts.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lib/args.h"

/* getopt_long's val for the table's entry i (a short letter is looked
 * up apart): above every character. */
#define OPTS_VAL 256

/* getopt_long's arguments for c: "+:" or ":" then the short letters
 * (each with ':' when it takes a value, "::" when it may). */
static void build(const opts_cmd_t *c, struct option *longopts, char *shorts)
{
    size_t k = 0;
    if (c->in_order)
        shorts[k++] = '+';
    shorts[k++] = ':';
    for (size_t i = 0; i < c->n; i++) {
        const opts_opt_t *p = &c->opts[i];
        int has = p->arg == OPTS_ARG ? required_argument
                  : p->arg == OPTS_MAYBE_ARG ? optional_argument : no_argument;
        longopts[i] = (struct option){p->name, has, NULL, OPTS_VAL + (int)i};
        if (!p->letter)
            continue;
        shorts[k++] = p->letter;
        if (p->arg != OPTS_NO_ARG)
            shorts[k++] = ':';
        if (p->arg == OPTS_MAYBE_ARG)
            shorts[k++] = ':';
    }
    longopts[c->n] = (struct option){NULL, 0, NULL, 0};
    shorts[k] = '\0';
}

/* The entry getopt_long's return value v stands for, or NULL. */
static const opts_opt_t *entry(const opts_cmd_t *c, int v)
{
    if (v >= OPTS_VAL && (size_t)(v - OPTS_VAL) < c->n)
        return &c->opts[v - OPTS_VAL];
    for (size_t i = 0; i < c->n; i++)
        if (c->opts[i].letter && c->opts[i].letter == v)
            return &c->opts[i];
    return NULL;
}

/* Store arg by p's kind into o.  0, or -1 after one line. */
static int store(const opts_cmd_t *c, const opts_opt_t *p, void *o, const char *arg)
{
    char *field = (char *)o + p->at;
    char opt[80];
    snprintf(opt, sizeof opt, "--%s", p->name);
    switch (p->kind) {
    case OPTS_CALL: return p->call(o, p, arg);
    case OPTS_SET: *(bool *)field = true; return 0;
    case OPTS_CLEAR: *(bool *)field = false; return 0;
    case OPTS_TEXT: *(const char **)field = arg; return 0;
    case OPTS_COUNT: return args_count(c->cmd, opt, arg, p->min, (uint64_t *)field);
    case OPTS_SIZE: return args_size(c->cmd, opt, arg, p->min, (uint64_t *)field);
    case OPTS_REAL: return args_real(c->cmd, opt, arg, p->lo, p->hi, (double *)field);
    }
    return -1;
}

int opts_parse(const opts_cmd_t *c, int argc, char **argv, void *o)
{
    struct option longopts[OPTS_MAX + 1];
    char shorts[3 * OPTS_MAX + 3];
    if (c->n > OPTS_MAX)
        return -1;
    build(c, longopts, shorts);
    opterr = 0;
    int v;
    while ((v = getopt_long(argc, argv, shorts, longopts, NULL)) != -1) {
        const opts_opt_t *p = v == ':' || v == '?' ? NULL : entry(c, v);
        if (v == ':') {
            fprintf(stderr, "%s: %s needs a value\n", c->cmd, argv[optind - 1]);
            return -1;
        }
        if (!p) {
            fprintf(stderr, "%s: unknown option \"%s\" (see %s --help)\n", c->cmd,
                    argv[optind - 1], c->cmd);
            return -1;
        }
        if (store(c, p, o, optarg))
            return -1;
    }
    return 0;
}

/* An option's help text (lines apart by '\n'), each line set at column
 * col; the first on the option's line, which is at wide, unless that
 * leaves no blank before col. */
static void help_text(FILE *f, const char *text, int col, int at)
{
    for (const char *s = text; *s;) {
        const char *nl = strchr(s, '\n');
        int len = nl ? (int)(nl - s) : (int)strlen(s);
        if (at >= col) {
            fputc('\n', f);
            at = 0;
        }
        fprintf(f, "%*s%.*s\n", col - at, "", len, s);
        at = 0;
        s += len + (nl != NULL);
    }
}

void opts_help(FILE *f, const opts_cmd_t *c)
{
    for (size_t i = 0; i < c->n; i++) {
        const opts_opt_t *p = &c->opts[i];
        char left[128], text[1024];
        const char *v = p->value;
        int n = p->letter ? snprintf(left, sizeof left, "  -%c, --%s", p->letter, p->name)
                          : snprintf(left, sizeof left, "      --%s", p->name);
        if (v)
            snprintf(left + n, sizeof left - (size_t)n, "%s%s", *v == '[' ? "" : " ", v);
        fputs(left, f);
        const char *help = p->help;
        if (p->format) {
            p->format(text, sizeof text, p->help);
            help = text;
        }
        help_text(f, help, c->column, (int)strlen(left));
    }
}
