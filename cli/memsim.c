/*
 * memsim: the front command.  `memsim <command> [options]`.
 */
#include <stdio.h>
#include <string.h>

#include "cli/run.h"
#include "cli/simulate.h"
#include "include/memsim.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: memsim <command> [options]\n"
            "\n"
            "commands:\n"
            "  run        run a program under libmemsim.so, its process tree's RSS watched\n"
            "  simulate   run a seeded workload through the simulated device's strategies\n"
            "  version    print the version\n"
            "  help       this text\n"
            "\n"
            "`memsim <command> --help` describes a command.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "run") == 0)
        return run_main(argc - 1, argv + 1);
    if (strcmp(cmd, "simulate") == 0)
        return simulate_main(argc - 1, argv + 1);
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("memsim %s\n", MEMSIM_VERSION);
        return 0;
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "memsim: unknown command \"%s\" (commands: run, simulate, version, help)\n",
            cmd);
    return 2;
}
