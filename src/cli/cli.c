/* cli.c - sonde's command table and top-level help. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "options.h"

#define SONDE_VERSION "0.1.0"

static const struct command {
    const char *name;
    int (*run)(int argc, char **argv, const sonde_env *env);
    const char *summary;
} commands[] = {
    { "run", cmd_run, "profile every call of a Python program (replaces cProfile)" },
    { "report", cmd_report, "print or convert a .prof file (sonde's or cProfile's)" },
    { "lines", cmd_lines, "hits and time of every line of chosen functions (replaces kernprof)" },
    { "mem", cmd_mem, "memory each line allocates and keeps, RSS over time (replaces memory_profiler)" },
    { "view", cmd_view, "any profile as one HTML page: flame graph, sunburst, table (replaces snakeviz)" },
    { "diff", cmd_diff, "what changed between two profiles, as a table and a flame graph" },
    { "record", cmd_record, "sample a running Python process from outside (replaces py-spy record)" },
    { "top", cmd_top, "live view of a running Python process (replaces py-spy top)" },
    { "dump", cmd_dump, "print every thread's current Python stack (replaces py-spy dump)" },
};

static void usage(FILE *f)
{
    fputs("usage: sonde COMMAND [OPTIONS] ...\n\n"
          "sonde answers 'where does my Python program spend its time?'\n\n"
          "commands:\n", f);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fputs("\n'sonde COMMAND --help' describes a command.\n", f);
}

int sonde_main(int argc, char **argv, const sonde_env *env)
{
    if (argc < 2) {
        usage(stderr);
        return SONDE_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (cli_flag(name, "-h", "--help") || strcmp(name, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (cli_flag(name, "-V", "--version")) {
        printf("sonde %s\n", SONDE_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(name, commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1, env);
    fprintf(stderr, "sonde: unknown command '%s' (see 'sonde --help')\n", name);
    return SONDE_EXIT_USAGE;
}
