/*
 * memsim: the front command, in the style of git.
 *
 *   memsim <command> [options]      memsim help <command>
 *
 * run and simulate are built in; analyze is memsim-analyze, found beside
 * memsim (build/, or bin/ once installed) and executed with the same
 * arguments, so both names are one program.  `memsim help CMD` prints
 * what `memsim CMD --help` prints.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/paths.h"
#include "cli/run.h"
#include "cli/simulate.h"
#include "include/memsim.h"

#define ANALYZE_TOOL "memsim-analyze"

static int analyze_main(int argc, char **argv);

typedef struct command_s {
    const char *name;
    const char *summary;
    int (*main)(int argc, char **argv); /* argv[0] is the command's name */
} command_t;

static const command_t commands[] = {
    {"run", "run a program under libmemsim.so, its process tree's RSS watched", run_main},
    {"analyze", "report on traces (the same program as memsim-analyze)", analyze_main},
    {"simulate", "run a seeded workload through the simulated device's strategies", simulate_main},
};
#define NCOMMANDS (sizeof commands / sizeof *commands)

static void usage(FILE *f)
{
    fprintf(f, "usage: memsim <command> [options]\n"
               "       memsim help <command>\n"
               "\n"
               "memsim is a memory profiler: it traces what a program asks of its allocator and\n"
               "what the operating system charges it, then replays its allocations through\n"
               "simulated allocation strategies.\n"
               "\n"
               "COMMANDS\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "  %-10s %s\n", "version", "print the version");
    fprintf(f, "  %-10s %s\n", "help", "this text; `memsim help CMD`: that command's help");
    fprintf(f, "\n"
               "`memsim CMD --help` and `memsim help CMD` describe a command.  Exit status: 2\n"
               "for an unknown command; otherwise the command's own.\n"
               "\n"
               "EXAMPLES\n"
               "  memsim run --analyze ./my-program\n"
               "  memsim analyze memsim-my-program-20261130-120000/\n"
               "  memsim simulate -s buddy\n"
               "  memsim help run\n");
}

static const command_t *find(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

static void unknown(const char *what, const char *name)
{
    fprintf(stderr, "memsim: %sunknown command \"%s\" (commands: ", what, name);
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(stderr, "%s, ", commands[i].name);
    fprintf(stderr, "version, help)\n");
}

/* memsim analyze ARGS: exec memsim-analyze ARGS from memsim's directory. */
static int analyze_main(int argc, char **argv)
{
    (void)argc;
    char dir[PATH_MAX], tool[PATH_MAX + 32];
    if (paths_self_dir("memsim analyze", dir, sizeof dir))
        return 2;
    if (!paths_tool(dir, ANALYZE_TOOL, tool, sizeof tool)) {
        fprintf(stderr, "memsim analyze: cannot find %s: looked for %s\n", ANALYZE_TOOL, tool);
        return 2;
    }
    argv[0] = ANALYZE_TOOL;
    execv(tool, argv);
    fprintf(stderr, "memsim analyze: cannot run %s: %s\n", tool, strerror(errno));
    return 2;
}

/* memsim help [CMD]: the command's --help on stdout. */
static int help_main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stdout);
        return 0;
    }
    if (argc > 2) {
        fprintf(stderr, "memsim help: one command at most (usage: memsim help <command>)\n");
        return 2;
    }
    if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "version") == 0) {
        usage(stdout);
        return 0;
    }
    const command_t *c = find(argv[1]);
    if (!c) {
        unknown("help: ", argv[1]);
        return 2;
    }
    char *args[] = {(char *)c->name, "--help", NULL};
    return c->main(2, args);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    const command_t *c = find(cmd);
    if (c)
        return c->main(argc - 1, argv + 1);
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("memsim %s\n", MEMSIM_VERSION);
        return 0;
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0)
        return help_main(argc - 1, argv + 1);
    unknown("", cmd);
    return 2;
}
