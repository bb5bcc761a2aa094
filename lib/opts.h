/*
 * opts: a command's options as one table, which drives both
 * getopt_long (the long options, the short letters) and the options
 * block of the command's --help.
 *
 * Each entry names the option (long name, short letter, whether it
 * takes a value), where its value goes (a field of the command's
 * options struct, parsed and checked by kind, or a function of the
 * command's), and its help text.  Messages are git's style, prefixed by
 * the command, one line each, and the caller exits 2:
 *
 *   memsim simulate: --ops needs a value
 *   memsim simulate: unknown option "--bogus" (see memsim simulate --help)
 *   memsim simulate: --ops: "abc" is not a whole number     (lib/args.h)
 */
#ifndef MEMSIM_CORE_OPTS_H
#define MEMSIM_CORE_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Whether an option takes a value (getopt_long's has_arg). */
typedef enum opts_arg_e {
    OPTS_NO_ARG,    /* --flag */
    OPTS_ARG,       /* --name VALUE or --name=VALUE */
    OPTS_MAYBE_ARG, /* --name or --name=VALUE (NULL when absent) */
} opts_arg_t;

/* Where the value goes; at is the field's offset in the options struct. */
typedef enum opts_kind_e {
    OPTS_CALL,  /* call does everything */
    OPTS_SET,   /* bool at: true */
    OPTS_CLEAR, /* bool at: false */
    OPTS_TEXT,  /* const char * at: the value as given */
    OPTS_COUNT, /* uint64_t at: a whole number >= min (args_count) */
    OPTS_SIZE,  /* uint64_t at: a byte size >= min (args_size) */
    OPTS_REAL,  /* double at: a finite number in [lo, hi] (args_real) */
} opts_kind_t;

typedef struct opts_opt_s opts_opt_t;
struct opts_opt_s {
    const char *name;  /* the long name, without "--" */
    char letter;       /* the short option, or 0 */
    opts_arg_t arg;
    const char *value; /* the value's name in --help ("DIR"), or NULL; one
                        * starting '[' follows the name without a blank */
    opts_kind_t kind;
    size_t at;         /* OPTS_SET..OPTS_REAL: offsetof the field */
    uint64_t min;      /* OPTS_COUNT, OPTS_SIZE */
    double lo, hi;     /* OPTS_REAL */
    /* OPTS_CALL: o is the options struct, arg the value (NULL when none).
     * 0, or -1 after one line. */
    int (*call)(void *o, const opts_opt_t *opt, const char *arg);
    /* --help's text: lines apart by '\n', each set at the table's column
     * (the first on the option's line when that is short enough). */
    const char *help;
    /* When not NULL: help is a printf format, and this writes the text
     * into buf (snprintf with the values it needs). */
    void (*format)(char *buf, size_t len, const char *help);
};

/* A command's table. */
typedef struct opts_cmd_s {
    const char *cmd;        /* the messages' prefix: "memsim simulate" */
    bool in_order;          /* options end at the first operand (getopt's '+') */
    int column;             /* where --help's texts start */
    const opts_opt_t *opts; /* in --help's order */
    size_t n;
} opts_cmd_t;

/* Most options a table may hold. */
#define OPTS_MAX 64

/* Parse argv's options by c's table into the struct o (getopt_long,
 * from optind as the caller left it; the operands then start at
 * optind).  0, or -1 after one line on stderr. */
int opts_parse(const opts_cmd_t *c, int argc, char **argv, void *o);

/* The options block of --help: a line "  -l, --name VALUE" (or
 * "      --name VALUE") per option with its text beside it at c's
 * column, or below it when the option is too long. */
void opts_help(FILE *f, const opts_cmd_t *c);

#endif
