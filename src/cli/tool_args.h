/* tool_args.h - the command line the in-process line tools share (sonde
 * lines, sonde mem): -o, -f and what runs (SCRIPT | -m MODULE | -c CODE,
 * --python), in each tool's option table beside its own options.  And
 * their common run: the launcher leaves a JSON document, whose table is
 * printed here and which -o receives. */
#ifndef SONDE_TOOL_ARGS_H
#define SONDE_TOOL_ARGS_H

#include <stddef.h>

#include "../core/buf.h"
#include "../formats/json_read.h"
#include "cli.h"
#include "launcher.h"
#include "options.h"
#include "output.h"

typedef struct tool_args {
    const char *out;       /* -o as given */
    cli_output output;     /* -o, checked */
    sonde_buf functions;   /* the -f values as JSON strings, ", "-separated */
    cli_program prog;
    const char *deliver;   /* the launcher's file -o receives as it is (the
                            * tool chose another format), or NULL: the
                            * document, with "about" */
    int subprocesses;      /* --subprocesses: each child that runs Python
                            * counted too, the documents summed */
} tool_args;

/* -f's reader (a cli_call_fn): appends the value to the sonde_buf dest. */
int tool_args_function(const char *cmd, void *dest, const char *value);

/* -f, for the table of the tool whose options struct T holds its
 * tool_args in `field` (which also has CLI_PROGRAM_OPTIONS(T, field.prog)). */
#define TOOL_ARGS_FUNCTION(T, field)                                                          \
    { .short_name = 'f', .long_name = "function", .arg = "FUNC", .type = CLI_CALL,            \
      .offset = offsetof(T, field.functions), .call = tool_args_function,                     \
      .help = "a qualified name or pattern (Class.method, work*), or\n"                       \
              "module:qualname for a module the program imports" }

/* --subprocesses, for the table of a tool whose options struct T holds
 * its tool_args in `field`. */
#define TOOL_ARGS_SUBPROCESSES(T, field)                                                      \
    { .long_name = "subprocesses", .type = CLI_FLAG, .offset = offsetof(T, field.subprocesses), \
      .set = 1,                                                                               \
      .help = "count every child that runs Python too (fork, spawn and\n"                     \
              "forkserver workers, subprocesses): one table, their sum" }

/* Parses argv (argv[0] = the command's name) against cmd's table into
 * opts, the tool's options struct, which holds *a.  0 to go on, or an
 * exit code (CLI_DONE after --help) after printing why not (also when
 * the script or -o cannot be used).  tool_args_free() after, either way. */
int tool_args_parse(tool_args *a, const cli_command *cmd, int argc, char **argv, void *opts);
void tool_args_free(tool_args *a);

/* Draws a tool's document: its table into table, and what else the tool
 * makes of it (mem's --plot).  0, or an exit code after printing why. */
typedef int (*tool_draw_fn)(sonde_buf *table, const sonde_jtree *doc, void *ctx);

/* Runs the program under the launcher's tool (prog), prints the table
 * draw() makes of the document the launcher left (with --subprocesses,
 * prog->children: the sum of the program's and its children's, and a
 * line counting the processes), and copies the document to -o with what
 * was profiled ("about": launcher_about), or with a->deliver set, that
 * file of the launcher's as it is.  The command's exit code. */
int tool_args_run(const tool_args *a, const sonde_env *env, const launcher_program *prog,
                  tool_draw_fn draw, void *ctx);

#endif
