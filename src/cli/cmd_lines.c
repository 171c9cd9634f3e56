/* cmd_lines.c - sonde lines: hits and time of every line of the chosen
 * functions (replaces kernprof -l + line_profiler).
 *
 * The program runs under the launcher's line tool (python/sonde/_lines.py
 * chooses the functions, src/ext/lines.c counts), which leaves the counts
 * as JSON; this side checks the command line, prints the table on stderr,
 * copies the JSON to -o and passes the program's exit code on. */
#include <stdio.h>
#include <string.h>

#include "../report/lines_table.h"
#include "commands.h"
#include "launcher.h"
#include "options.h"
#include "tool_args.h"

static const char usage[] =
    "usage: sonde lines [-o FILE] [-f FUNC]... [-u UNIT] [--bytecode] [--python PY]\n"
    "                   (SCRIPT | -m MODULE) [ARGS...]\n"
    "\n"
    "Runs a Python program and counts, for every line of the chosen functions,\n"
    "how often it ran (hits) and the time until the next line of the same call\n"
    "(callees included), then prints line_profiler's table on stderr.\n"
    "\n"
    "Functions: those decorated with @profile (a builtin sonde provides, as\n"
    "kernprof does), those named with -f, and when neither is given every\n"
    "function defined in the script.\n"
    "\n"
    "  -f, --function F   a qualified name or pattern (Class.method, work*), or\n"
    "                     module:qualname for a module the program imports\n"
    "  -u, --unit UNIT    s, ms, us, ns, or seconds as kernprof takes them (1e-6);\n"
    "                     default: each time in its own unit, 3 significant digits\n"
    "      --bytecode     also each bytecode instruction under its line: offset,\n"
    "                     name, argument (as dis shows them), hits and time\n"
    "  -o, --output FILE  write the counts as JSON (see README, Formats)\n"
    "      --python PY    interpreter to run the program with\n";

typedef struct lines_opts {
    const char *unit;
    int bytecode;
} lines_opts;

static int lines_option(int argc, char **argv, int *i, void *ctx)
{
    lines_opts *o = ctx;
    if (cli_flag(argv[*i], NULL, "--bytecode")) {
        o->bytecode = 1;
        return 1;
    }
    int r = cli_option(argc, argv, i, "-u", "--unit", &o->unit);
    if (r < 0)
        return SONDE_EXIT_USAGE;
    double ns;
    char label[64];
    if (r && sonde_lines_unit_parse(o->unit, &ns, label, sizeof label) < 0)
        return cli_usage_error("lines", "unknown unit '%s' (use s, ms, us, ns or a number of "
                               "seconds such as 1e-6)", o->unit);
    return r;
}

/* line_profiler's table of the launcher's document. */
static int draw(sonde_buf *table, const sonde_jtree *doc, void *ctx)
{
    const lines_opts *o = ctx;
    char err[256];
    if (sonde_lines_table_write(table, doc, o->unit, err, sizeof err) < 0)
        return cli_fail(SONDE_EXIT_FAILED, "%s", err);
    return 0;
}

int cmd_lines(int argc, char **argv, const sonde_env *env)
{
    lines_opts o = { NULL, 0 };
    tool_args a;
    int rc = tool_args_parse(&a, argc, argv, usage, lines_option, &o);
    if (rc != 0) {
        tool_args_free(&a);
        return rc < 0 ? 0 : rc;
    }
    sonde_buf options;
    sonde_buf_init(&options);
    sonde_buf_printf(&options, "{\"functions\": [%s]", a.functions.data ? a.functions.data : "");
    if (o.unit)
        sonde_buf_printf(&options, ", \"unit\": \"%s\"", o.unit);
    if (o.bytecode)
        sonde_buf_puts(&options, ", \"bytecode\": true");
    sonde_buf_puts(&options, "}");
    launcher_program prog = {
        .python = launch_python(env, a.python), .tool = "lines", .format = "",
        .options = options.data, .mode = a.mode, .target = a.target, .args = a.args,
        .nargs = a.nargs,
    };
    rc = sonde_buf_ok(&options) ? tool_args_run(&a, env, &prog, draw, &o)
                                : cli_fail(SONDE_EXIT_FAILED, "out of memory");
    sonde_buf_free(&options);
    tool_args_free(&a);
    return rc;
}
