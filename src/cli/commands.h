/* commands.h - one entry point per subcommand (cmd_<name>.c), registered
 * in the table in cli.c.  Each takes its own argv (argv[0] = its name)
 * and returns the process exit code. */
#ifndef SONDE_COMMANDS_H
#define SONDE_COMMANDS_H

#include "cli.h"

int cmd_run(int argc, char **argv, const sonde_env *env);
int cmd_report(int argc, char **argv, const sonde_env *env);
int cmd_record(int argc, char **argv, const sonde_env *env);
int cmd_dump(int argc, char **argv, const sonde_env *env);
int cmd_top(int argc, char **argv, const sonde_env *env);
int cmd_lines(int argc, char **argv, const sonde_env *env);
int cmd_mem(int argc, char **argv, const sonde_env *env);
int cmd_view(int argc, char **argv, const sonde_env *env);
int cmd_diff(int argc, char **argv, const sonde_env *env);

#endif
