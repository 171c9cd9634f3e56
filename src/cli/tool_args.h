/* tool_args.h - the command line the in-process line tools share (sonde
 * lines, sonde mem): -o, -f, --python, then SCRIPT or -m MODULE and the
 * program's own arguments; each tool adds its own options. */
#ifndef SONDE_TOOL_ARGS_H
#define SONDE_TOOL_ARGS_H

#include "../core/buf.h"
#include "cli.h"

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

#endif
