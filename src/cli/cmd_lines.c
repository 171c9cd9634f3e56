/* cmd_lines.c - sonde lines: hits and time of every line of the chosen
 * functions (replaces kernprof -l + line_profiler).
 *
 * The program runs under the launcher's line tool (python/sonde/_lines.py
 * chooses the functions, src/ext/lines/ counts), which leaves the counts
 * as JSON (and for -o FILE.lprof, line_profiler's file, written by the
 * writer LineProfiler.dump_stats uses); this side checks the command line,
 * prints the table on stderr, copies the JSON (or the .lprof) to -o and
 * passes the program's exit code on. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../report/lines_table.h"
#include "commands.h"
#include "launcher.h"
#include "options.h"
#include "tool_args.h"

typedef struct lines_opts {
    tool_args a;
    const char *unit;
    int bytecode;
} lines_opts;

/* -u's reader: a unit sonde_lines_unit_parse knows, into the string at dest. */
static int take_unit(const char *cmd, void *dest, const char *value)
{
    double ns;
    char label[64];
    if (sonde_lines_unit_parse(value, &ns, label, sizeof label) < 0)
        return cli_usage_error(cmd, "unknown unit '%s' (use s, ms, us, ns or a number of "
                               "seconds such as 1e-6)", value);
    *(const char **)dest = value;
    return 0;
}

static const cli_opt option_table[] = {
    { .short_name = 'o', .long_name = "output", .arg = "FILE", .type = CLI_OUTPUT,
      .offset = offsetof(lines_opts, a.out),
      .help = "write the counts as JSON (see docs/formats.md), or\n"
              "as line_profiler's file when FILE ends in .lprof\n"
              "(what kernprof -l writes: python -m line_profiler FILE)" },
    TOOL_ARGS_FUNCTION(lines_opts, a),
    TOOL_ARGS_SUBPROCESSES(lines_opts, a),
    { .short_name = 'u', .long_name = "unit", .arg = "UNIT", .type = CLI_CALL,
      .offset = offsetof(lines_opts, unit), .call = take_unit,
      .help = "s, ms, us, ns, or seconds as kernprof takes them (1e-6);\n"
              "default: each time in its own unit, 3 significant digits" },
    { .long_name = "bytecode", .type = CLI_FLAG, .offset = offsetof(lines_opts, bytecode),
      .set = 1,
      .help = "also each bytecode instruction under its line: offset,\n"
              "name, argument (as dis shows them), hits and time" },
    CLI_PROGRAM_OPTIONS(lines_opts, a.prog),
    { 0 },
};

static int cmd_main(int argc, char **argv, const sonde_env *env);

const cli_command cmd_lines = {
    .name = "lines",
    .summary = "hits and time of every line of chosen functions (replaces kernprof)",
    .synopsis = "[-o FILE] [-f FUNC]... [-u UNIT] [--bytecode] [--subprocesses]\n"
                "[--python PY] (SCRIPT | -m MODULE | -c CODE) [ARGS...]",
    .about = "Runs a Python program and counts, for every line of the chosen functions,\n"
             "how often it ran (hits) and the time until the next line of the same call\n"
             "(callees included), then prints line_profiler's table on stderr.\n"
             "\n"
             "Functions: those decorated with @profile (a builtin sonde provides, as\n"
             "kernprof does), those named with -f, and when neither is given every\n"
             "function defined in the script (or in the code -c runs).",
    .words = CLI_WORDS_END,
    .opts = option_table,
    .run = cmd_main,
};

/* Whether -o names line_profiler's file: FILE.lprof. */
static int wants_lprof(const char *out)
{
    size_t n = out ? strlen(out) : 0;
    return n > 6 && strcmp(out + n - 6, ".lprof") == 0;
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

static int cmd_main(int argc, char **argv, const sonde_env *env)
{
    lines_opts o = { .unit = NULL };
    int rc = tool_args_parse(&o.a, &cmd_lines, argc, argv, &o);
    if (rc != 0) {
        tool_args_free(&o.a);
        return cli_exit(rc);
    }
    sonde_buf options;
    sonde_buf_init(&options);
    sonde_buf_printf(&options, "{\"functions\": [%s]",
                     o.a.functions.data ? o.a.functions.data : "");
    if (o.unit)
        sonde_buf_printf(&options, ", \"unit\": \"%s\"", o.unit);
    if (o.bytecode)
        sonde_buf_puts(&options, ", \"bytecode\": true");
    if (o.a.subprocesses)
        sonde_buf_puts(&options, ", \"children\": true");
    if (o.a.subprocesses && wants_lprof(o.a.out)) {
        tool_args_free(&o.a);
        return cli_exit(cli_usage_error("lines", "--subprocesses sums the processes in sonde's "
                                        "JSON: -o %s would hold one process's (write -o "
                                        "FILE.json)", o.a.out));
    }
    if (wants_lprof(o.a.out)) {
        sonde_buf_puts(&options, ", \"lprof\": true"); /* the launcher leaves it as "lprof" */
        o.a.deliver = "lprof";
    }
    sonde_buf_puts(&options, "}");
    launcher_program prog = {
        .python = launch_python(env, o.a.prog.python), .tool = "lines", .format = "",
        .options = options.data, .mode = o.a.prog.mode, .target = o.a.prog.target,
        .args = o.a.prog.args, .nargs = o.a.prog.nargs, .children = o.a.subprocesses,
    };
    rc = sonde_buf_ok(&options) ? tool_args_run(&o.a, env, &prog, draw, &o)
                                : cli_fail(SONDE_EXIT_FAILED, "out of memory");
    sonde_buf_free(&options);
    tool_args_free(&o.a);
    return rc;
}
