/* cli.c - sonde's command table and top-level help. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "options.h"

/* The version's one home is pyproject.toml: the Makefile and setup.py pass it. */
#ifndef SONDE_VERSION
#error "SONDE_VERSION is pyproject.toml's version, given by the Makefile or setup.py"
#endif

const char *sonde_version(void)
{
    return SONDE_VERSION;
}

const cli_command *const cli_commands[] = {
    &cmd_run, &cmd_report, &cmd_lines, &cmd_mem, &cmd_view, &cmd_diff, &cmd_record, &cmd_top,
    &cmd_dump, &cmd_timeit, &cmd_merge,
};
const size_t cli_ncommands = sizeof cli_commands / sizeof cli_commands[0];

static void usage(FILE *f)
{
    fputs("usage: sonde COMMAND [OPTIONS] ...\n\n"
          "sonde answers 'where does my Python program spend its time?'\n\n"
          "commands:\n", f);
    for (size_t i = 0; i < cli_ncommands; i++)
        fprintf(f, "  %-8s %s\n", cli_commands[i]->name, cli_commands[i]->summary);
    fputs("\n'sonde COMMAND --help' describes a command.\n", f);
}

int sonde_main(int argc, char **argv, const sonde_env *env)
{
    if (argc < 2) {
        usage(stderr);
        return SONDE_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(name, "-V") == 0 || strcmp(name, "--version") == 0) {
        printf("sonde %s\n", sonde_version());
        return 0;
    }
    for (size_t i = 0; i < cli_ncommands; i++)
        if (strcmp(name, cli_commands[i]->name) == 0)
            return cli_commands[i]->run(argc - 1, argv + 1, env);
    return cli_fail(SONDE_EXIT_USAGE, "unknown command '%s' (see 'sonde --help')", name);
}
