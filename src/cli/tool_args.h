/* tool_args.h - the command line the in-process line tools share (sonde
 * lines, sonde mem): -o, -f, --python, then SCRIPT or -m MODULE and the
 * program's own arguments; each tool adds its own options.  And their
 * common run: the launcher leaves a JSON document, whose table is printed
 * here and which -o receives. */
#ifndef SONDE_TOOL_ARGS_H
#define SONDE_TOOL_ARGS_H

#include "../core/buf.h"
#include "../formats/json_read.h"
#include "cli.h"
#include "launcher.h"

typedef struct tool_args {
    const char *out, *python, *mode, *target;
    sonde_buf functions;   /* the -f values as JSON strings, ", "-separated */
    char **args;           /* the program's own arguments */
    int nargs;
} tool_args;

/* A tool's own option at argv[*i]: 1 when it took it (moving *i past a
 * value), 0 when it is not one of its options, or an exit code above 1
 * after printing why it is wrong. */
typedef int (*tool_option_fn)(int argc, char **argv, int *i, void *ctx);

/* Parses argv (argv[0] = the command's name) into *a.  0 to go on, -1
 * after printing the usage for --help, or an exit code after printing
 * what is wrong (also when the script or -o cannot be used). */
int tool_args_parse(tool_args *a, int argc, char **argv, const char *usage,
                    tool_option_fn own, void *ctx);
void tool_args_free(tool_args *a);

/* Draws a tool's document: its table into table, and what else the tool
 * makes of it (mem's --plot).  0, or an exit code after printing why. */
typedef int (*tool_draw_fn)(sonde_buf *table, const sonde_jtree *doc, void *ctx);

/* Runs the program under the launcher's tool (prog), prints the table
 * draw() makes of the document the launcher left, and copies the
 * document to -o.  The command's exit code. */
int tool_args_run(const tool_args *a, const sonde_env *env, const launcher_program *prog,
                  tool_draw_fn draw, void *ctx);

#endif
