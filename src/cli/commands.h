/* commands.h - one command per file (cmd_<name>.c), each described by a
 * cli_command (options.h: its options, its help, its entry point) and
 * registered in the table in cli.c.  An entry point takes its own argv
 * (argv[0] = its name) and returns the process exit code. */
#ifndef SONDE_COMMANDS_H
#define SONDE_COMMANDS_H

#include <stddef.h>

#include "options.h"

extern const cli_command cmd_run, cmd_report, cmd_lines, cmd_mem, cmd_view, cmd_diff,
    cmd_record, cmd_top, cmd_dump, cmd_timeit, cmd_merge;

/* Every command, in the order `sonde --help` lists them. */
extern const cli_command *const cli_commands[];
extern const size_t cli_ncommands;

#endif
